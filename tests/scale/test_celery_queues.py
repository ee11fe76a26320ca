"""Training and council-vote steps carry dagster-celery's queue tag only when a queue is set
(STOCKER_CELERY_GPU_QUEUE / STOCKER_CELERY_LLM_QUEUE where runs are launched)."""

from __future__ import annotations

import json
import subprocess
import sys

from services_testing import stocker_env

PROBE = """
import json
from stocker_assets.definitions.celery_definitions import defs
tags = {}
names = ("moderator_base", "moderator_sft", "moderator_grpo", "agent_policy", "specialist_votes", "prices")
for name in names:
    tags[name] = dict(defs.resolve_assets_def(name).op.tags)
print(json.dumps(tags))
"""


def _tags(env: dict[str, str]) -> dict[str, dict[str, str]]:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_queue_tags_follow_the_settings(tmp_path):
    queued = _tags(stocker_env(tmp_path, STOCKER_CELERY_GPU_QUEUE="gpu", STOCKER_CELERY_LLM_QUEUE="llm"))
    for name in ("moderator_base", "moderator_sft", "moderator_grpo", "agent_policy"):
        assert queued[name].get("dagster-celery/queue") == "gpu", name
    assert queued["specialist_votes"].get("dagster-celery/queue") == "llm"
    assert "dagster-celery/queue" not in queued["prices"]
    plain = _tags(stocker_env(tmp_path))
    assert not any("dagster-celery/queue" in tags for tags in plain.values()), plain
