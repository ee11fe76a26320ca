"""Linear probes of the moderator's decision on frozen features: is the answer of highest reward
readable from a layer's hidden states at all? (``bench/bench_probe_features.py``)

Two probes, each fitted on one part of a set of states (``chronological_split``: the earlier
days) and scored on the rest by the rewards of the answers it picks:

- ``reward_probe``: ridge regression of every answer's state-centred reward (nine outputs); it
  plays the answer of highest predicted reward.
- ``best_answer_probe``: multinomial logistic regression of the answer of highest reward; it
  plays the most likely one.
- ``direction_probe``: logistic regression of a noise-free label, the oracle's long/flat wish
  (the planted signal's sign as the pre-close headlines carry it); scored by its accuracy, and
  played as the oracle's moves would be.

Each probe's strength (ridge alpha, logistic C) is chosen inside the fit part by the same
rule: fit on its earlier two thirds of days, pick the strength whose answers earn the most on
its last third, refit on the whole fit part. The scored part is never seen before the score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

RIDGE_ALPHAS = (1.0, 10.0, 100.0, 1e3, 1e4, 1e5)
"""Ridge strengths tried (on standardised features: wide, from nearly none to nearly the mean)."""
LOGISTIC_CS = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
"""Inverse logistic strengths tried."""
FIT_SHARE = 2 / 3
MAX_ITER = 200


def chronological_split(dates: Sequence[object], share: float = FIT_SHARE) -> tuple[np.ndarray, np.ndarray]:
    """(fit mask, score mask): the states of the first ``share`` of the distinct days, and the rest."""
    keys = np.asarray([str(d) for d in dates])
    days = np.unique(keys)
    if len(days) < 2:
        raise ValueError("a chronological split needs states of at least two days")
    cut = days[max(1, min(len(days) - 1, int(round(share * len(days)))))]
    fit = keys < cut
    return fit, ~fit


def principal_components(fit: np.ndarray, held: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """``fit`` and ``held`` projected on the top ``dims`` principal components of ``fit``
    (unchanged when they are no wider): keeps a wide readout's probes affordable."""
    if fit.shape[1] <= dims:
        return fit, held
    from sklearn.decomposition import PCA

    pca = PCA(n_components=min(dims, len(fit) - 1), svd_solver="randomized", random_state=0).fit(fit)
    return pca.transform(fit), pca.transform(held)


def chosen_reward(rewards: np.ndarray, chosen: np.ndarray) -> float:
    """Mean reward of the answers ``chosen`` (one index per state)."""
    return float(rewards[np.arange(len(chosen)), chosen].mean()) if len(chosen) else float("nan")


def day_clustered_se(values: np.ndarray, dates: Sequence[object]) -> float:
    """Standard error of the mean of ``values`` with the states of one day as one draw
    (the tickers of a day share its shocks; overlapping horizons make it a floor)."""
    keys = np.asarray([str(d) for d in dates])
    means = np.array([values[keys == day].mean() for day in np.unique(keys)])
    return float(means.std(ddof=1) / np.sqrt(len(means))) if len(means) > 1 else float("nan")


class _Scaler:
    def __init__(self, x: np.ndarray) -> None:
        self.mean = x.mean(axis=0)
        self.std = x.std(axis=0)
        self.std[self.std < 1e-8] = 1.0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.std


Chooser = Callable[[np.ndarray], np.ndarray]
"""Features → the index of the answer played at each state."""


def _ridge(x: np.ndarray, rewards: np.ndarray, alpha: float) -> Chooser:
    from sklearn.linear_model import Ridge

    scale = _Scaler(x)
    centred = rewards - rewards.mean(axis=1, keepdims=True)
    model = Ridge(alpha=alpha).fit(scale(x), centred)
    return lambda z: np.asarray(model.predict(scale(z))).argmax(axis=1)


def _logistic(x: np.ndarray, rewards: np.ndarray, c: float) -> Chooser:
    from sklearn.linear_model import LogisticRegression

    scale = _Scaler(x)
    labels = rewards.argmax(axis=1)
    classes = np.unique(labels)
    if len(classes) == 1:
        only = int(classes[0])
        return lambda z: np.full(len(z), only)
    model = LogisticRegression(C=c, max_iter=MAX_ITER).fit(scale(x), labels)
    return lambda z: model.classes_[np.asarray(model.predict_proba(scale(z))).argmax(axis=1)]


@dataclass(frozen=True)
class ProbeFit:
    """A fitted probe: how it chooses, the strength chosen, its inner-check reward."""

    choose: Chooser
    strength: float
    inner_reward: float


def _fit(
    make: Callable[[np.ndarray, np.ndarray, float], Chooser],
    strengths: Sequence[float],
    x: np.ndarray,
    rewards: np.ndarray,
    dates: Sequence[object],
) -> ProbeFit:
    inner_fit, inner_check = chronological_split(dates)
    scores = []
    for strength in strengths:
        choose = make(x[inner_fit], rewards[inner_fit], strength)
        scores.append(chosen_reward(rewards[inner_check], choose(x[inner_check])))
    best = int(np.nanargmax(scores))
    return ProbeFit(make(x, rewards, strengths[best]), float(strengths[best]), float(scores[best]))


def reward_probe(x: np.ndarray, rewards: np.ndarray, dates: Sequence[object]) -> ProbeFit:
    """Ridge regression of the nine centred rewards on ``x`` (states × features)."""
    return _fit(_ridge, RIDGE_ALPHAS, x, rewards, dates)


def best_answer_probe(x: np.ndarray, rewards: np.ndarray, dates: Sequence[object]) -> ProbeFit:
    """Logistic regression of the answer of highest reward on ``x``."""
    return _fit(_logistic, LOGISTIC_CS, x, rewards, dates)


def direction_probe(x: np.ndarray, wanted: np.ndarray, dates: Sequence[object]) -> ProbeFit:
    """Logistic regression of a binary wish (``wanted``) on ``x``; ``choose`` returns 0/1 and
    ``inner_reward`` is the inner check's accuracy."""
    from sklearn.linear_model import LogisticRegression

    wanted = np.asarray(wanted, dtype=int)

    def make(xs: np.ndarray, ys: np.ndarray, c: float) -> Chooser:
        scale = _Scaler(xs)
        if len(np.unique(ys)) == 1:
            only = int(ys[0])
            return lambda z: np.full(len(z), only)
        model = LogisticRegression(C=c, max_iter=MAX_ITER).fit(scale(xs), ys)
        return lambda z: np.asarray(model.predict(scale(z)))

    inner_fit, inner_check = chronological_split(dates)
    scores = [
        float(np.mean(make(x[inner_fit], wanted[inner_fit], c)(x[inner_check]) == wanted[inner_check]))
        for c in LOGISTIC_CS
    ]
    best = int(np.argmax(scores))
    return ProbeFit(make(x, wanted, LOGISTIC_CS[best]), float(LOGISTIC_CS[best]), scores[best])


PROBES: dict[str, Callable[[np.ndarray, np.ndarray, Sequence[object]], ProbeFit]] = {
    "reward": reward_probe,
    "best": best_answer_probe,
}
