"""The composition root registers every extension (sources, specialists, statistics, every
layer's policies with the facts about them); nothing registers at import, and nothing below
the top imports a project module by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stocker_core.composition import REGISTRATIONS, register_all
from stocker_core.env import policies
from stocker_core.evaluation.report_statistics import BUILTIN as BUILTIN_STATISTICS

ROOT = Path(__file__).resolve().parents[1]
REGISTRIES = (
    "stocker_core.data_sources",
    "stocker_core.env.policies",
    "stocker_core.council.registry",
    "stocker_core.evaluation.report_statistics",
)
"""The registry modules: sources, policies, specialists, report statistics."""
BUILTIN_SPECIALISTS = [
    "chart_pattern",
    "seasonal_trend",
    "indicator",
    "news",
    "forum_sentiment",
    "peer_commodity",
    "geopolitics",
]
COUNT = """
import json
from stocker_core import data_sources
from stocker_core.council import registry
from stocker_core.env import policies
from stocker_core.evaluation import report_statistics


def counts():
    return {
        "policies": sorted(policies.POLICIES),
        "specialists": list(registry.SPECIALIST_NAMES),
        "sources": [s.name for s in data_sources.registered_sources()],
        "statistics": [s.name for s in report_statistics.report_statistics()],
    }
"""


def _fresh(code: str) -> dict:
    """What ``code`` prints (JSON), run in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", COUNT + code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_registries_and_every_layer_registers_nothing():
    """In a fresh interpreter, the registry modules and every module whose function the
    composition root calls are imported: every registry is empty. Then the root runs (twice):
    every source, specialist, statistic and policy is there."""
    layers = sorted({register.__module__ for register in REGISTRATIONS})
    found = _fresh(
        "import importlib\n"
        f"for m in {[*REGISTRIES, *layers]!r}: importlib.import_module(m)\n"
        "before = counts()\n"
        "from stocker_core.composition import register_all\n"
        "register_all()\n"
        "once = counts()\n"
        "register_all()\n"
        "print(json.dumps({'before': before, 'once': once, 'twice': counts()}))\n"
    )
    assert found["before"] == {"policies": [], "specialists": [], "sources": [], "statistics": []}
    after = found["once"]
    assert found["twice"] == after
    assert after["sources"] == ["sample", "files", "yfinance", "synthetic"]
    assert after["specialists"] == BUILTIN_SPECIALISTS
    assert after["statistics"] == [name for name, _ in BUILTIN_STATISTICS]
    assert after["policies"] == sorted(policies.policy_names(opt_in=True))
    assert len(after["policies"]) == 18


def test_the_root_is_cheap_to_import():
    """Importing the root loads no model library and no Dagster (registering is not loading)."""
    found = _fresh(
        "import sys\n"
        "import stocker_core.composition\n"
        "heavy = ('torch', 'transformers', 'dagster', 'trl', 'peft', 'stable_baselines3')\n"
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    assert found == []


def test_every_layer_registers_its_policies_with_their_facts():
    register_all()
    register_all()  # twice changes nothing
    assert policies.policy_names() == sorted(
        ["hold", "buy_and_hold", "random", "ideal", "macd", "zmr", "forecast", "oracle", "a2c", "ppo"]
        + ["council", "moderator_base", "moderator_sft", "moderator_grpo"]
        + ["agent_scripted", "agent_base", "agent_rl"]
    )
    assert set(policies.policy_names(opt_in=True)) - set(policies.policy_names()) == {"agent_trl"}
    assert {
        "moderator_sft",
        "moderator_grpo",
        "agent_base",
        "agent_rl",
        "agent_trl",
        "a2c",
        "ppo",
    } == policies.FITTED_ON_TRAIN
    assert {"ideal"} == policies.UPPER_BOUNDS
    planned = {n for n in policies.policy_names() if policies.has_plan(n)}
    assert planned == {"hold", "buy_and_hold", "macd", "zmr", "forecast", "oracle", "ideal"}
    assert set(policies.BATCH_POLICIES) == {
        "moderator_base",
        "moderator_sft",
        "moderator_grpo",
        "agent_scripted",
        "agent_base",
        "agent_rl",
        "agent_trl",
        "a2c",
        "ppo",
    }


def test_no_module_below_the_top_imports_a_project_module_by_name():
    """Not a registry, not the lazy exports (each package imports its own submodules with
    plain statements, which the import contract sees): nothing imports a module by its name."""
    by_name = ("import_module(", "__import__(")
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "stocker_core").rglob("*.py"))
        if any(call in path.read_text() for call in by_name)
    ]
    assert offenders == []
