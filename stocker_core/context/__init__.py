"""What a decision on day D may see, cut at D's close: bars, indicators, headlines, forum
posts, peer/commodity/rate closes, macro events and the chart.

It sits below ``env`` and ``council`` so both import it from below: the environment's
observation and the council's specialists read the same point-in-time context.
Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "RATE_SYMBOLS": "decision",
    "DecisionContext": "decision",
    "PortfolioState": "decision",
    "CouncilInputs": "decision",
    "build_context": "decision",
    "load_council_inputs": "decision",
    "decision_cutoff": "point_in_time",
    "date_only_published_at": "point_in_time",
    "point_in_time": "point_in_time",
    "published_before": "point_in_time",
    "visible_events": "point_in_time",
}

__all__ = sorted(_EXPORTS)


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "decision":
        import stocker_core.context.decision as module
    elif name == "point_in_time":
        import stocker_core.context.point_in_time as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
