"""The council: seven specialist analysts (rule-based or any LLM), their cached votes,
and the moderator that merges them into one trade. The LLM clients and scored choices it
uses live one floor down, in ``stocker_core.lm``.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "rule_vote": "analysts",
    "Backend": "backends",
    "RuleBackend": "backends",
    "LLMBackend": "backends",
    "get_backend": "backends",
    "get_moderator": "backends",
    "VoteCache": "cache",
    "SpecialistVote": "models",
    "CouncilDecision": "models",
    "Moderator": "moderator",
    "RuleModerator": "moderator",
    "LLMModerator": "moderator",
    "parse_vote": "parsing",
    "CouncilPolicy": "policy",
    "Role": "roles",
    "Council": "voting",
    "run_votes": "voting",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
