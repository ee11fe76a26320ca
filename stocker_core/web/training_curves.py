"""What the Training view leads with: a run's learning curve (valid reward or return by step,
with the step whose checkpoint was kept) picked from the files its trainer wrote, and its other
series split into curves worth a chart and constants worth one line of text."""

from __future__ import annotations

import math
from typing import Any

Points = list[list[float]]


def pairs(points: Any) -> Points:
    """``[[x, y], ...]`` from a list of pairs, skipping malformed or non-finite entries."""
    out = []
    for point in points or []:
        if isinstance(point, list | tuple) and len(point) == 2:
            x, y = point
            numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y))
            if numbers and math.isfinite(x) and math.isfinite(y):
                out.append([x, y])
    return out


def _curve(name: str, points: Points, kept_step: Any, x: str = "step") -> dict[str, Any] | None:
    if not points:
        return None
    steps = [p[0] for p in points]
    kept = kept_step if isinstance(kept_step, int | float) and kept_step in steps else None
    return {"name": name, "x": x, "points": points, "kept_step": kept}


def learning_curve(model_name: str, kind: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """The run's learning curve from its trainer's file ``data``: the moderators' valid reward
    by step (``extra.valid_curve``, ``kept_step``), the agent's valid result by step
    (``curves``, ``kept_step``; else its decision fit's), deep RL's training-episode return by
    timestep (no checkpoint is picked: the last is kept); None when the run saved none."""
    if kind == "drl":
        return _curve("mean training-episode return", pairs(data.get("reward_curve")), None, "timesteps")
    if model_name == "agent_rl" or kind == "agent_rl":
        valid = [
            [p["step"], p["result"]]
            for p in data.get("curves") or []
            if isinstance(p, dict) and isinstance(p.get("result"), int | float)
        ]
        found = _curve("valid result (mean reward per decision)", pairs(valid), data.get("kept_step"))
        fit = data.get("decision_fit") if isinstance(data.get("decision_fit"), dict) else {}
        fitted = _curve("decision fit: valid result", pairs(fit.get("valid_curve")), fit.get("kept_step"))
        return found or fitted
    extra = data.get("extra") if isinstance(data.get("extra"), dict) else {}
    return _curve("valid reward", pairs(extra.get("valid_curve")), extra.get("kept_step"))


def is_constant(points: Points) -> bool:
    """One point, or every y the same (to 1e-12 of its size)."""
    values = [p[1] for p in points]
    return len(values) <= 1 or max(values) - min(values) <= 1e-12 * max(1.0, *(abs(v) for v in values))


def split_constant(curves: dict[str, Points]) -> tuple[dict[str, Points], list[dict[str, Any]]]:
    """(the curves that move, ``{"name", "value", "points"}`` of those that do not)."""
    moving = {name: points for name, points in curves.items() if points and not is_constant(points)}
    flat = [
        {"name": name, "value": points[0][1], "points": len(points)}
        for name, points in curves.items()
        if points and is_constant(points)
    ]
    return moving, flat
