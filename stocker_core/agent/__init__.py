"""The tool-using single agent (SPEC §2): point-in-time tools in four families, a ReAct loop
with a call cap, the result + process reward, the scripted baseline, model policies and RL
training.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
