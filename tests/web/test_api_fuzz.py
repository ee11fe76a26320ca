"""Generated API fuzzing (schemathesis): the environment server and the web API, mounted
together as ``stocker web`` serves them, with and without an API key. Every generated request,
valid or not, gets an answer that is not a 5xx and conforms to the OpenAPI document (status
code documented, content type, body schema). Derandomized and bounded (~1 min in all)."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable

from stocker_core.env.server import create_app
from stocker_core.web.app import create_web_app, mount_web

pytestmark = pytest.mark.timeout(300)
KEY = "fuzz-key"
# checks that judge the API's truthfulness; "positive data accepted" does not apply to an API
# whose well-formed inputs may name episodes that do not exist (a 404 is the right answer)
EXCLUDED = [schemathesis.checks.positive_data_acceptance, schemathesis.checks.negative_data_rejection]


def _document(tiny_settings, api_key: str) -> dict[str, Any]:
    """The OpenAPI document of both APIs as one (the env server's paths and ``/web/api/...``)."""
    document = create_app(tiny_settings, api_key=api_key).openapi()
    web = FastAPI()
    mount_web(web, tiny_settings, "/web", api_key=api_key)
    web_document = web.openapi()
    document["paths"].update(web_document["paths"])
    document.setdefault("components", {}).setdefault("schemas", {}).update(
        web_document.get("components", {}).get("schemas", {})
    )
    return document


def _fuzz(app, document, mode, headers: dict[str, str], examples: int) -> list[str]:
    """Failures (operation: check) of ``examples`` generated requests per operation."""
    schema = schemathesis.openapi.from_dict(document)
    schema.app = app
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 25  # both APIs are there
    for operation in operations:

        @given(operation.as_strategy(mode))
        @settings(
            max_examples=examples,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.generate],
        )
        def run(case) -> None:
            try:
                case.call_and_validate(headers=headers, excluded_checks=EXCLUDED)
            except (AssertionError, BaseExceptionGroup) as exc:
                for failure in getattr(exc, "exceptions", [exc]):
                    first = str(failure).strip().splitlines()[0]
                    failures.append(f"{case.method} {case.path}: {first}\n{exc}")

        try:
            run()
        except Unsatisfiable:  # nothing to make invalid (no parameters, no body)
            assert mode == schemathesis.GenerationMode.NEGATIVE
    return failures


@pytest.mark.parametrize(
    ("api_key", "send_key", "mode", "examples"),
    [
        ("", False, schemathesis.GenerationMode.POSITIVE, 15),
        ("", False, schemathesis.GenerationMode.NEGATIVE, 8),
        (KEY, True, schemathesis.GenerationMode.POSITIVE, 10),
        (KEY, False, schemathesis.GenerationMode.POSITIVE, 3),
    ],
    ids=["open-valid", "open-invalid", "key-sent", "key-missing"],
)
def test_every_generated_request_gets_a_documented_non_5xx_answer(tiny, api_key, send_key, mode, examples):
    app = create_web_app(tiny.settings, api_key=api_key)
    headers = {"Authorization": f"Bearer {api_key}"} if send_key else {}
    failures = _fuzz(app, _document(tiny.settings, api_key), mode, headers, examples)
    assert not failures, "\n\n".join(failures[:5])
