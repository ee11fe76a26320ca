"""Where does a frozen model lose the planted signal? Linear probes per layer on the learning
check's own valid states (issue 50, "Diagnose before training more").

The check's market (``stocker check-learning``'s: the same ``LearningCheckConfig``, its
``materialize`` and splits), its moderator config (the pretrained recipe's compact prompt for
SmolLM2, the word prompt for the tiny model), its valid states along the rule council's path
(``TrainingData.valid_states``) and its reward table (``grpo.reward_table``: the excess over
buy-and-hold, 5 sessions, market-relative: what the check's valid curve scores). Only the valid
split is read; the test split is never touched.

Each prompt runs once through the frozen base model (``lm.layer_features``: every layer's last
position, mean over positions, and the positions that hold the votes' and portfolio's values);
the readouts are cached in ``--cache``. Per model, readout and layer, two probes
(``moderator.probes``: a ridge regression of the nine answers' rewards, a logistic classifier of
the best answer) are fitted on the first two thirds of the valid days and play their answers on
the last third. Each probe's figure is the mean reward of its answers there as a share of the
oracle's (the oracle's move at each state: all in where the day's pre-close headlines read
positive, all out otherwise — the check's ceiling, played state by state).

References on the same states: the oracle, the best answer in hindsight, always hold, the
one-line rule over the prompt (news vote > 0 → all in, else all out), and the same probes on the
prompt's numbers themselves (what a linear probe can read from the inputs with this many states).

    python bench/bench_probe_features.py --model smollm2 --home /tmp/probe50/home-s7 \
        [--ic 0.3 --seed 7] [--cache /tmp/probe50/cache] [--out probes.json]

Without ``--home`` (or with an empty one) it builds the check's market first (~2 min).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from stocker_core.moderator.answers import ANSWERS  # noqa: E402

BUY_ALL, SELL_ALL, HOLD = ANSWERS.index("buy q4"), ANSWERS.index("sell q4"), ANSWERS.index("hold q0")
NUMBER_WORD = re.compile(r"^([mpcdegt])([+-]?\d+)$")


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class ValidStates:
    """The check's valid states, their reward table and the reference moves."""

    rows: list[dict[str, Any]]
    rewards: np.ndarray
    dates: list[str]
    oracle: np.ndarray
    rule: np.ndarray
    episodes: int


def long_flat_answer(want_long: bool, cash: float, position: int, price: float, cost: float) -> int:
    """The long/flat move as one of the nine answers: all in when long is wanted and a share is
    affordable, all out when flat is wanted and shares are held, else hold."""
    from stocker_core.env.portfolio import max_affordable

    if want_long and max_affordable(cash, price, cost) > 0:
        return BUY_ALL
    if not want_long and position > 0:
        return SELL_ALL
    return HOLD


def build_market(check: Any, home: Path) -> None:
    from stocker_assets.learning_check import _materialize

    _materialize(check, home, print)


def valid_states(check: Any, home: Path) -> tuple[ValidStates, Any]:
    """The valid split's states as the check's moderator sees them (and its config)."""
    from stocker_assets.learning_check import settings_for
    from stocker_core.baselines.oracle import oracle_long, ticker_news
    from stocker_core.config import use_settings
    from stocker_core.evaluation.splits import SplitConfig
    from stocker_core.evaluation.steps import compute_and_store_splits
    from stocker_core.market.validation import parse_partition_key
    from stocker_core.moderator.config import load_config
    from stocker_core.moderator.grpo import reward_table
    from stocker_core.moderator.training import prepare_data
    from stocker_core.warehouse.db import Warehouse

    settings = settings_for(check, home)
    config = load_config(**check.moderator_overrides())
    with use_settings(settings):
        warehouse = Warehouse(settings.warehouse_path)
        compute_and_store_splits(warehouse, SplitConfig(*check.split))
        data = prepare_data(config, settings, warehouse)
        rows, contexts = data.valid_states(config.state_path)
        table = reward_table(rows, contexts, config)
        oracle, rule, dates = [], [], []
        wanted: dict[str, dict[str, bool]] = {}
        for row in table.rows:
            context = contexts[row["episode_key"]]
            env = context.env
            ticker = parse_partition_key(row["episode_key"])[0]
            if ticker not in wanted:
                days = sorted({str(d.date()) for c in contexts.values() for d in c.env.episode.dates})
                wanted[ticker] = dict(
                    zip(days, oracle_long(ticker_news(ticker, settings), days), strict=True)
                )
            snap = json.loads(row["snapshot"])
            price, cost = float(env.episode.closes[row["step"]]), env.params.transaction_cost
            day = str(row["date"])[:10]
            dates.append(day)
            oracle.append(long_flat_answer(wanted[ticker][day], snap["cash"], snap["position"], price, cost))
            news = {role: signal for role, signal, _ in context.votes[row["step"]]}.get("news", 0.0)
            rule.append(long_flat_answer(news > 0, snap["cash"], snap["position"], price, cost))
    states = ValidStates(
        table.rows, table.rewards, dates, np.asarray(oracle), np.asarray(rule), len(contexts)
    )
    return states, config


def input_numbers(rows: list[dict[str, Any]]) -> np.ndarray:
    """The prompt's bucket values as numbers (votes' signals and confidences, move, exposure,
    pnl, step): the inputs themselves, for the reference probe."""
    out = []
    for row in rows:
        values = []
        for word in row["prompt_words"].split():
            match = NUMBER_WORD.match(word)
            if match:
                sign = -1.0 if match.group(1) == "m" else 1.0
                values.append(sign * float(match.group(2)))
        out.append(values)
    return np.asarray(out, dtype=np.float64)


def readouts(
    config: Any, rows: list[dict[str, Any]], cache: Path, threads: int
) -> tuple[Any, dict[str, Any]]:
    """Every layer's readouts of the rows' prompts (cached in ``cache``) and what they cost."""
    from stocker_core.lm.layer_features import LayerReadouts, layer_readouts

    cached = LayerReadouts.load(cache)
    if cached is not None:
        return cached, {"cached": str(cache)}
    import torch

    from stocker_core.lm.factory import create_base
    from stocker_core.lm.runtime import quiet_libraries
    from stocker_core.moderator.answers import _prompt_ids
    from stocker_core.moderator.generation import render_prompt

    torch.set_num_threads(threads)
    quiet_libraries()
    c, w = cpu(), time.perf_counter()
    loaded = create_base(config.model_spec())
    if loaded.prompt_style != "words" and config.prompt == "compact":
        loaded.prompt_style = "compact"  # as the check's base stage sets it
    load_cost = {
        "load_cpu_seconds": round(cpu() - c, 1),
        "load_wall_seconds": round(time.perf_counter() - w, 1),
    }
    heads = [_prompt_ids(loaded, render_prompt(loaded, r["prompt_words"], r["prompt_text"])) for r in rows]
    c, w = cpu(), time.perf_counter()
    found = layer_readouts(loaded.model, heads, loaded.device)
    found.save(cache)
    example = loaded.tokenizer.convert_ids_to_tokens(heads[0])
    cost = {
        **load_cost,
        "features_cpu_seconds": round(cpu() - c, 1),
        "features_wall_seconds": round(time.perf_counter() - w, 1),
        "prompt_tokens": len(heads[0]),
        "field_tokens": [example[i] for i in found.fields],
        "example_prompt": render_prompt(loaded, rows[0]["prompt_words"], rows[0]["prompt_text"]),
    }
    return found, cost


def score(
    x: np.ndarray, states: ValidStates, fit: np.ndarray, held: np.ndarray
) -> dict[str, dict[str, float]]:
    """Both probes fitted on ``fit`` and scored on ``held``: mean reward of their answers there
    and its share of the oracle's."""
    from stocker_core.moderator.probes import PROBES, chosen_reward

    dates = np.asarray(states.dates)
    oracle = chosen_reward(states.rewards[held], states.oracle[held])
    out = {}
    for name, probe in PROBES.items():
        fitted = probe(x[fit], states.rewards[fit], dates[fit])
        chosen = fitted.choose(x[held])
        reward = chosen_reward(states.rewards[held], chosen)
        out[name] = {
            "reward": reward,
            "captured": reward / oracle if oracle > 0 else float("nan"),
            "strength": fitted.strength,
            "trade_share": float(np.mean(chosen != HOLD)),
        }
    return out


def references(states: ValidStates, held: np.ndarray) -> dict[str, dict[str, float]]:
    from stocker_core.moderator.probes import chosen_reward, day_clustered_se

    r = states.rewards[held]
    dates = np.asarray(states.dates)[held]
    oracle = chosen_reward(r, states.oracle[held])
    moves = {
        "oracle": states.oracle[held],
        "hindsight_best": r.argmax(axis=1),
        "always_hold": np.full(len(r), HOLD),
        "news_rule": states.rule[held],
    }
    out = {}
    for name, chosen in moves.items():
        per_state = r[np.arange(len(chosen)), chosen]
        out[name] = {
            "reward": float(per_state.mean()),
            "se": day_clustered_se(per_state, dates),
            "captured": float(per_state.mean()) / oracle if oracle > 0 else float("nan"),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--ic", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--home", type=Path, default=None, help="the check's market (built when empty)")
    parser.add_argument("--cache", type=Path, default=None, help="folder of the cached readouts")
    parser.add_argument("--layers", default="", help="comma-separated layers to probe (default: all)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args()

    import tempfile

    from stocker_core.composition import register_all
    from stocker_core.moderator.learning_check import LearningCheckConfig
    from stocker_core.moderator.probes import chronological_split

    register_all()
    started_cpu, started = cpu(), time.perf_counter()
    check = LearningCheckConfig(ic=args.ic, seed=args.seed, model=args.model)
    home = args.home or Path(tempfile.mkdtemp(prefix="stocker-probe-"))
    if not home.exists() or not any(home.iterdir()):
        build_market(check, home)
    states, config = valid_states(check, home)
    cache = args.cache or Path(tempfile.gettempdir()) / f"stocker-probe-{args.model}-ic{args.ic}-s{args.seed}"
    found, cost = readouts(config, states.rows, cache, args.threads)
    fit, held = chronological_split(states.dates)
    layers = [int(v) for v in args.layers.split(",")] if args.layers else list(range(found.layers + 1))

    result: dict[str, Any] = {
        "model": args.model,
        "ic": args.ic,
        "seed": args.seed,
        "valid_episodes": states.episodes,
        "valid_states": len(states.rows),
        "fit_states": int(fit.sum()),
        "scored_states": int(held.sum()),
        "fit_days": [min(np.asarray(states.dates)[fit]), max(np.asarray(states.dates)[fit])],
        "scored_days": [min(np.asarray(states.dates)[held]), max(np.asarray(states.dates)[held])],
        "features": cost,
        "references": references(states, held),
        "inputs": score(input_numbers(states.rows), states, fit, held),
        "layers": {},
    }
    print(json.dumps({k: v for k, v in result.items() if k != "layers"}, indent=1, default=str), flush=True)
    for readout in ("last", "mean", "fields"):
        for layer in layers:
            figures = score(found.features[readout][layer].astype(np.float64), states, fit, held)
            result["layers"].setdefault(readout, {})[layer] = figures
            print(
                f"{args.model} {readout:<6} layer {layer:>2}: "
                + "  ".join(f"{k} {v['captured']:+.0%} (s {v['strength']:g})" for k, v in figures.items()),
                flush=True,
            )
    result["cpu_seconds"] = round(cpu() - started_cpu, 1)
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(f"took {result['cpu_seconds']} CPU-s, {result['wall_seconds']} s wall")
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
