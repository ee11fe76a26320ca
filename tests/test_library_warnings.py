"""Library deprecations we cannot fix at a call are ignored by name, the same in the CLI and in
pyproject's filterwarnings (the test summary); nothing else is ignored."""

import tomllib
import warnings
from pathlib import Path

from stocker_core.cli_support import LIBRARY_WARNINGS, ignore_library_warnings

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _ini_filters() -> list[str]:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["pytest"]["ini_options"]["filterwarnings"]


def test_pyproject_ignores_the_same_library_warnings_and_no_whole_category():
    filters = _ini_filters()
    for message, category in LIBRARY_WARNINGS:
        assert f"ignore:{message}:{category.__name__}" in filters
    blanket = {f"ignore::{c}" for c in ("DeprecationWarning", "FutureWarning", "PendingDeprecationWarning")}
    assert not blanket & set(filters), "deprecations are ignored by message, never as a whole category"


def test_the_cli_filter_hides_those_and_nothing_else():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ignore_library_warnings()
        for message in (
            "`is_gradient_checkpointing` is deprecated and will be removed in v6.",
            "`gradient_checkpointing_disable` is deprecated and will be removed in v6.",
            "`past_key_values` is deprecated. Use `cache` instead.",
        ):
            warnings.warn(message, FutureWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["`past_key_values` is deprecated. Use `cache` instead."]
