"""The public names of ``stocker_core.agent``, imported on first use (``__init__.py``)."""

from .config import AgentConfig as AgentConfig, agent_config as agent_config, THETA_GRID as THETA_GRID
from .data import AgentData as AgentData, load_agent_data as load_agent_data
from .errors import AgentError as AgentError, AgentNotTrainedError as AgentNotTrainedError
from .tools import AgentTools as AgentTools, ToolOutcome as ToolOutcome
from .tool_catalog import TOOL_NAMES as TOOL_NAMES, tool_schemas as tool_schemas
from .parsing import parse_turn as parse_turn, ParsedTurn as ParsedTurn
from .trace import Trace as Trace, Turn as Turn, Scores as Scores
from .loop import run_decision as run_decision, run_decisions as run_decisions, TurnWriter as TurnWriter
from .scripted import ScriptedWriter as ScriptedWriter, scripted_decision as scripted_decision
from .rewards import (
    label_for as label_for,
    result_score as result_score,
    format_parts as format_parts,
    tool_parts as tool_parts,
    score_trace as score_trace,
)
from .model import ModelWriter as ModelWriter, build_tiny_agent as build_tiny_agent
from .policy import (
    AGENT_POLICIES as AGENT_POLICIES,
    AgentPolicy as AgentPolicy,
    make_agent_policy as make_agent_policy,
    decision_action as decision_action,
)
from .training import train_agent as train_agent, AgentTrainingResult as AgentTrainingResult
from .evaluation import evaluate_split as evaluate_split, theta_table as theta_table
from .store import current_run as current_run
