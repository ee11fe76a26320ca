"""The agent's errors: each tells the user what to do next."""

from stocker_core.errors import StockerError


class AgentError(StockerError, ValueError):
    """Bad agent input: an unknown tool or policy, a malformed date, a bad setting."""


class AgentNotTrainedError(StockerError, FileNotFoundError):
    """No trained agent model where a policy looks for one."""


class NoForwardReturnError(StockerError, LookupError):
    """The decision date has too few later bars to score the decision."""
