"""The composition root registers every layer's policies with the facts about them; nothing
below it registers at import or imports a project module by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from stocker_core.composition import register_all_policies
from stocker_core.env import policies

ROOT = Path(__file__).resolve().parents[1]
LAYERS = (
    "stocker_core.baselines.rules",
    "stocker_core.baselines.forecast",
    "stocker_core.baselines.oracle",
    "stocker_core.baselines.drl.agents",
    "stocker_core.council.policy",
    "stocker_core.moderator.policy",
    "stocker_core.agent.policy",
    "stocker_core.agent.trl_policy",
)


def test_every_layer_registers_its_policies_with_their_facts():
    register_all_policies()
    register_all_policies()  # twice changes nothing
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


def test_importing_a_layer_registers_nothing():
    code = (
        "import importlib\n"
        f"for m in {LAYERS!r}: importlib.import_module(m)\n"
        "from stocker_core.env import policies\n"
        "print(sorted(policies.POLICIES))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "['buy_and_hold', 'hold', 'ideal', 'random']"  # the registry's own


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
