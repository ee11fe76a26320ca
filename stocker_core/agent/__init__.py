"""The tool-using single agent (SPEC §2): point-in-time tools in four families, a ReAct loop
with a call cap, the result + process reward, the scripted baseline, model policies and RL
training.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "AgentConfig": "config",
    "agent_config": "config",
    "THETA_GRID": "config",
    "AgentData": "data",
    "load_agent_data": "data",
    "AgentError": "errors",
    "AgentNotTrainedError": "errors",
    "AgentTools": "tools",
    "ToolOutcome": "tools",
    "TOOL_NAMES": "tool_catalog",
    "tool_schemas": "tool_catalog",
    "parse_turn": "parsing",
    "ParsedTurn": "parsing",
    "Trace": "trace",
    "Turn": "trace",
    "Scores": "trace",
    "run_decision": "loop",
    "run_decisions": "loop",
    "TurnWriter": "loop",
    "ScriptedWriter": "scripted",
    "scripted_decision": "scripted",
    "label_for": "rewards",
    "result_score": "rewards",
    "format_parts": "rewards",
    "tool_parts": "rewards",
    "score_trace": "rewards",
    "ModelWriter": "model",
    "build_tiny_agent": "model",
    "AGENT_POLICIES": "policy",
    "AgentPolicy": "policy",
    "make_agent_policy": "policy",
    "decision_action": "policy",
    "train_agent": "training",
    "AgentTrainingResult": "training",
    "evaluate_split": "evaluation",
    "theta_table": "evaluation",
    "current_run": "store",
}

__all__ = sorted(_EXPORTS)


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "config":
        import stocker_core.agent.config as module
    elif name == "data":
        import stocker_core.agent.data as module
    elif name == "errors":
        import stocker_core.agent.errors as module
    elif name == "tools":
        import stocker_core.agent.tools as module
    elif name == "tool_catalog":
        import stocker_core.agent.tool_catalog as module
    elif name == "parsing":
        import stocker_core.agent.parsing as module
    elif name == "trace":
        import stocker_core.agent.trace as module
    elif name == "loop":
        import stocker_core.agent.loop as module
    elif name == "scripted":
        import stocker_core.agent.scripted as module
    elif name == "rewards":
        import stocker_core.agent.rewards as module
    elif name == "model":
        import stocker_core.agent.model as module
    elif name == "policy":
        import stocker_core.agent.policy as module
    elif name == "training":
        import stocker_core.agent.training as module
    elif name == "evaluation":
        import stocker_core.agent.evaluation as module
    elif name == "store":
        import stocker_core.agent.store as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
