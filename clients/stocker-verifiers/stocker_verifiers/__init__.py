"""Stocker as a verifiers (0.4.0) environment package: the id ``stocker-verifiers`` names this
module, which exports the taskset (``StockerTaskset``) and its default harness
(``StockerChatHarness``), as ``verifiers.v1`` loads plugins (``vf-eval stocker-verifiers``).
The code lives in ``stocker_core.agent`` (``vf_taskset``, ``vf_toolset``, ``vf_harness``,
``vf_env``); see docs/use-from-verifiers.md."""

from stocker_core.agent.vf_env import load_environment
from stocker_core.agent.vf_harness import StockerChatHarness
from stocker_core.agent.vf_taskset import StockerTaskset

__all__ = ["StockerChatHarness", "StockerTaskset", "load_environment"]
