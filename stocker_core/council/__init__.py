"""The council: seven specialist analysts (rule-based or any LLM), their cached votes,
and the moderator that merges them into one trade. The LLM clients and scored choices it
uses live one floor down, in ``stocker_core.lm``.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

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


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "analysts":
        import stocker_core.council.analysts as module
    elif name == "backends":
        import stocker_core.council.backends as module
    elif name == "cache":
        import stocker_core.council.cache as module
    elif name == "models":
        import stocker_core.council.models as module
    elif name == "moderator":
        import stocker_core.council.moderator as module
    elif name == "parsing":
        import stocker_core.council.parsing as module
    elif name == "policy":
        import stocker_core.council.policy as module
    elif name == "roles":
        import stocker_core.council.roles as module
    elif name == "voting":
        import stocker_core.council.voting as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
