"""Where does a frozen model lose the planted signal? Linear probes per layer on the learning
check's own states (issue 50, "Diagnose before training more").

The check's market (``stocker check-learning``'s: the same ``LearningCheckConfig``, its
``materialize`` and splits), its moderator config (the pretrained recipe's compact prompt for
SmolLM2, the word prompt for the tiny model), its states along the rule council's path
(``prepare_data``: the train rows, a seeded sample of ``--train-states``, and
``TrainingData.valid_states``) and its reward table (``grpo.reward_table``: the excess over
buy-and-hold, 5 sessions, market-relative: what the check's valid curve scores). The test split
is never read.

Each prompt runs once through the frozen base model (``language_model.layer_features``: every layer's last
position, mean over positions, and the positions that hold the votes' and portfolio's values,
concatenated and probed on their top 512 principal components); the readouts are cached in
``--cache``. Per model, readout and layer, three probes (``moderator.probes``): a ridge
regression of the nine answers' rewards and a logistic classifier of the best answer, each
playing its answer; and a logistic classifier of the oracle's long/flat wish (a noise-free
label: the planted signal's sign as the pre-close headlines carry it), scored by accuracy and
played as the oracle's moves. Three protocols (``PROTOCOLS``): fit on the first two thirds of
the valid days and score the last third; fit on the train states and score every valid state;
fit on the first two thirds of the train days and score the last third.

A probe's ``share`` is the mean reward of its answers on the scored states above being all in
(buy-and-hold's exposure), over the oracle's (all in where the day's headlines read positive,
all out otherwise, played from the same states): the check's "captured", state by state.
References on the same states: the oracle, all in, the one-line news rule (news vote > 0),
always hold, the best answer in hindsight; and the same probes on the prompt's numbers
themselves (what a linear probe reads from the inputs with this many states).

    python bench/bench_probe_features.py --model smollm2 --home /tmp/probe50/home-s7 \
        [--ic 0.3 --seed 7] [--cache DIR] [--layers 0,2,...] [--field-layers 0,5,...] [--out F]

Without ``--home`` (or with an empty one) it builds the check's market first (~5 min).
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
WIDEST = 512
"""Readouts wider than this (the fields' concatenated positions) are probed on their top 512
principal components (fitted on the probe's fit part)."""
NUMBER_WORD = re.compile(r"^([mpcdegt])([+-]?\d+)$")


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class States:
    """States of one split as the check's moderator sees them, their reward table, the oracle's
    and the news rule's long/flat wishes, and the portfolio each wish is played from."""

    rows: list[dict[str, Any]]
    rewards: np.ndarray
    dates: np.ndarray
    oracle_long: np.ndarray
    news_long: np.ndarray
    cash: np.ndarray
    position: np.ndarray
    price: np.ndarray
    cost: float
    episodes: int

    def moves(self, want_long: np.ndarray) -> np.ndarray:
        """Each state's answer for a long/flat wish (``long_flat_answer``)."""
        return np.asarray(
            [
                long_flat_answer(bool(w), c, int(p), q, self.cost)
                for w, c, p, q in zip(want_long, self.cash, self.position, self.price, strict=True)
            ]
        )

    def ends_long(self, chosen: np.ndarray) -> np.ndarray:
        """Whether each state ends invested after its answer: a buy is long, a sell flat, a hold
        keeps the state's position (the answer's side read as a long/flat wish)."""
        side = np.asarray([answer.split()[0] for answer in ANSWERS])[chosen]
        return np.where(side == "buy", True, np.where(side == "sell", False, self.position > 0))

    def subset(self, mask: np.ndarray) -> States:
        index = np.flatnonzero(mask)
        return States(
            [self.rows[i] for i in index],
            self.rewards[index],
            self.dates[index],
            self.oracle_long[index],
            self.news_long[index],
            self.cash[index],
            self.position[index],
            self.price[index],
            self.cost,
            self.episodes,
        )


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


def _states(table: Any, contexts: dict[str, Any], settings: Any) -> States:
    from stocker_core.baselines.oracle import oracle_long, ticker_news
    from stocker_core.market.validation import parse_partition_key

    wanted: dict[str, dict[str, bool]] = {}
    days = sorted({str(d.date()) for c in contexts.values() for d in c.env.episode.dates})
    oracle, news, dates, cash, position, price = [], [], [], [], [], []
    for row in table.rows:
        context = contexts[row["episode_key"]]
        ticker = parse_partition_key(row["episode_key"])[0]
        if ticker not in wanted:
            wishes = oracle_long(ticker_news(ticker, settings), days)
            wanted[ticker] = dict(zip(days, wishes, strict=True))
        snap = json.loads(row["snapshot"])
        day = str(row["date"])[:10]
        dates.append(day)
        oracle.append(wanted[ticker][day])
        news.append({r: s for r, s, _ in context.votes[row["step"]]}.get("news", 0.0) > 0)
        cash.append(float(snap["cash"]))
        position.append(int(snap["position"]))
        price.append(float(context.env.episode.closes[row["step"]]))
    cost = next(iter(contexts.values())).env.params.transaction_cost
    return States(
        table.rows,
        table.rewards,
        np.asarray(dates),
        np.asarray(oracle, dtype=bool),
        np.asarray(news, dtype=bool),
        np.asarray(cash),
        np.asarray(position),
        np.asarray(price),
        cost,
        len(contexts),
    )


def split_states(check: Any, home: Path, train_cap: int) -> tuple[States, States, Any]:
    """The check's train states (a seeded sample of ``train_cap``, 0: all) and valid states."""
    from stocker_assets.learning_check import settings_for
    from stocker_core.config import use_settings
    from stocker_core.evaluation.splits import SplitConfig
    from stocker_core.evaluation.steps import compute_and_store_splits
    from stocker_core.moderator.config import load_config
    from stocker_core.moderator.reward_regression import capped, reward_table
    from stocker_core.moderator.training import prepare_data
    from stocker_core.warehouse.db import Warehouse

    settings = settings_for(check, home)
    config = load_config(**check.moderator_overrides())
    with use_settings(settings):
        warehouse = Warehouse(settings.warehouse_path)
        compute_and_store_splits(warehouse, SplitConfig(*check.split))
        data = prepare_data(config, settings, warehouse)
        rows, contexts = data.valid_states(config.state_path)
        valid = _states(reward_table(rows, contexts, config), contexts, settings)
        table = capped(reward_table(data.rows, data.train_contexts, config), train_cap, config.seed)
        train = _states(table, data.train_contexts, settings)
    return train, valid, config


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
    config: Any, splits: dict[str, list[dict[str, Any]]], cache: Path, threads: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every layer's readouts of each split's prompts (cached in ``cache/<split>``), the same
    field positions for every split, and what they cost (the model loaded once)."""
    from stocker_core.language_model.layer_features import LayerReadouts, layer_readouts, varying_positions

    cached = {split: LayerReadouts.load(cache / split) for split in splits}
    if all(found is not None for found in cached.values()):
        return cached, {"cached": str(cache)}
    import torch

    from stocker_core.language_model.factory import create_base
    from stocker_core.language_model.runtime import quiet_libraries
    from stocker_core.moderator.answers import _prompt_ids
    from stocker_core.moderator.generation import render_prompt

    torch.set_num_threads(threads)
    quiet_libraries()
    c, w = cpu(), time.perf_counter()
    loaded = create_base(config.model_spec())
    if loaded.prompt_style != "words" and config.prompt == "compact":
        loaded.prompt_style = "compact"  # as the check's base stage sets it
    cost: dict[str, Any] = {
        "load_cpu_seconds": round(cpu() - c, 1),
        "load_wall_seconds": round(time.perf_counter() - w, 1),
    }
    prompts = {
        split: [render_prompt(loaded, r["prompt_words"], r["prompt_text"]) for r in rows]
        for split, rows in splits.items()
    }
    heads = {split: [_prompt_ids(loaded, p) for p in texts] for split, texts in prompts.items()}
    fields = varying_positions([h for split in heads.values() for h in split])
    found = {}
    c, w = cpu(), time.perf_counter()
    for split, ids in heads.items():
        found[split] = layer_readouts(loaded.model, ids, loaded.device, fields)
        found[split].save(cache / split)
    first = next(iter(heads.values()))[0]
    example = loaded.tokenizer.convert_ids_to_tokens(first)
    cost |= {
        "features_cpu_seconds": round(cpu() - c, 1),
        "features_wall_seconds": round(time.perf_counter() - w, 1),
        "states": sum(len(ids) for ids in heads.values()),
        "prompt_tokens": len(first),
        "field_tokens": [example[i] for i in fields],
        "example_prompt": next(iter(prompts.values()))[0],
    }
    return found, cost


def score(x: np.ndarray, fit: States, held: States, xh: np.ndarray) -> dict[str, dict[str, float]]:
    """The three probes fitted on ``fit`` (features ``x``) and scored on ``held`` (``xh``): the
    mean reward of their answers there and its share of the oracle's edge over being all in."""
    from stocker_core.moderator.probes import PROBES, chosen_reward, direction_probe, principal_components

    x, xh = principal_components(x, xh, WIDEST)
    zero = chosen_reward(held.rewards, held.moves(np.ones(len(held.rows), dtype=bool)))
    edge = chosen_reward(held.rewards, held.moves(held.oracle_long)) - zero
    out = {}
    for name, probe in PROBES.items():
        fitted = probe(x, fit.rewards, fit.dates)
        chosen = fitted.choose(xh)
        reward = chosen_reward(held.rewards, chosen)
        out[name] = {
            "reward": reward,
            "share": (reward - zero) / edge if edge > 0 else float("nan"),
            "strength": fitted.strength,
            "trade_share": float(np.mean(chosen != HOLD)),
            "oracle_agreement": balanced_accuracy(held.oracle_long, held.ends_long(chosen)),
        }
    fitted = direction_probe(x, fit.oracle_long, fit.dates)
    wish = fitted.choose(xh).astype(bool)
    reward = chosen_reward(held.rewards, held.moves(wish))
    out["direction"] = {
        "accuracy": float(np.mean(wish == held.oracle_long)),
        "balanced_accuracy": balanced_accuracy(held.oracle_long, wish),
        "reward": reward,
        "share": (reward - zero) / edge if edge > 0 else float("nan"),
        "strength": fitted.strength,
    }
    return out


def balanced_accuracy(truth: np.ndarray, guess: np.ndarray) -> float:
    """Mean of the accuracy on long days and on flat days (0.5 for a constant guess)."""
    rates = [float(np.mean(guess[truth == side] == side)) for side in (True, False) if (truth == side).any()]
    return float(np.mean(rates))


def references(held: States) -> dict[str, dict[str, float]]:
    """Moves that need no fit, on the scored states: the oracle, all in, the news rule, always
    hold and the best answer in hindsight (mean reward, its day-clustered standard error)."""
    from stocker_core.moderator.probes import day_clustered_se

    r, n = held.rewards, len(held.rows)
    moves = {
        "oracle": held.moves(held.oracle_long),
        "all_in": held.moves(np.ones(n, dtype=bool)),
        "news_rule": held.moves(held.news_long),
        "always_hold": np.full(n, HOLD),
        "hindsight_best": r.argmax(axis=1),
    }
    zero = float(r[np.arange(n), moves["all_in"]].mean())
    edge = float(r[np.arange(n), moves["oracle"]].mean()) - zero
    out = {}
    for name, chosen in moves.items():
        per_state = r[np.arange(n), chosen]
        out[name] = {
            "reward": float(per_state.mean()),
            "se": day_clustered_se(per_state, held.dates),
            "share": (float(per_state.mean()) - zero) / edge if edge > 0 else float("nan"),
        }
    out["news_rule"]["accuracy"] = float(np.mean(held.news_long == held.oracle_long))
    out["news_rule"]["balanced_accuracy"] = balanced_accuracy(held.oracle_long, held.news_long)
    out["oracle"]["long_share"] = float(held.oracle_long.mean())
    return out


PROTOCOLS = ("valid", "train_to_valid", "train")
"""Where each probe is fitted and scored: the first two thirds of the valid days → the last
third; the train states → every valid state; the first two thirds of the train days → the last
third (held out from the probe, not from the check's training)."""


def protocol_parts(name: str, train: States, valid: States) -> tuple[States, np.ndarray, States, np.ndarray]:
    """(fit states, their index in their split, scored states, their index) of a protocol."""
    from stocker_core.moderator.probes import chronological_split

    if name == "train_to_valid":
        return train, np.arange(len(train.rows)), valid, np.arange(len(valid.rows))
    states = valid if name == "valid" else train
    fit, held = chronological_split(states.dates)
    return states.subset(fit), np.flatnonzero(fit), states.subset(held), np.flatnonzero(held)


def describe(states: States) -> dict[str, Any]:
    return {
        "states": len(states.rows),
        "days": int(len(np.unique(states.dates))),
        "span": [str(min(states.dates)), str(max(states.dates))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--ic", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--home", type=Path, default=None, help="the check's market (built when empty)")
    parser.add_argument("--cache", type=Path, default=None, help="folder of the cached readouts")
    parser.add_argument("--train-states", type=int, default=1200, help="train states sampled (0: all)")
    parser.add_argument("--layers", default="", help="comma-separated layers to probe (default: all)")
    parser.add_argument("--field-layers", default="", help="layers of the fields readout (default: --layers)")
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args()

    import tempfile
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from stocker_core.composition import register_all
    from stocker_core.moderator.learning_check import LearningCheckConfig

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    register_all()
    started_cpu, started = cpu(), time.perf_counter()
    check = LearningCheckConfig(ic=args.ic, seed=args.seed, model=args.model)
    home = args.home or Path(tempfile.mkdtemp(prefix="stocker-probe-"))
    if not home.exists() or not any(home.iterdir()):
        build_market(check, home)
    train, valid, config = split_states(check, home, args.train_states)
    cache = args.cache or Path(tempfile.gettempdir()) / f"stocker-probe-{args.model}-ic{args.ic}-s{args.seed}"
    found, cost = readouts(config, {"train": train.rows, "valid": valid.rows}, cache, args.threads)
    numbers = {"train": input_numbers(train.rows), "valid": input_numbers(valid.rows)}
    layers = (
        [int(v) for v in args.layers.split(",")] if args.layers else list(range(found["valid"].layers + 1))
    )
    field_layers = [int(v) for v in args.field_layers.split(",")] if args.field_layers else layers

    result: dict[str, Any] = {
        "model": args.model,
        "ic": args.ic,
        "seed": args.seed,
        "valid": {**describe(valid), "episodes": valid.episodes},
        "train_sample": {**describe(train), "episodes": train.episodes},
        "features": cost,
        "protocols": {},
    }
    print(json.dumps(result, indent=1, default=str), flush=True)
    for protocol in args.protocols.split(","):
        fit, fit_index, held, held_index = protocol_parts(protocol, train, valid)
        fit_split = "valid" if protocol == "valid" else "train"
        held_split = "train" if protocol == "train" else "valid"
        part: dict[str, Any] = {
            "fit": describe(fit),
            "scored": describe(held),
            "references": references(held),
            "inputs": score(numbers[fit_split][fit_index], fit, held, numbers[held_split][held_index]),
            "layers": {},
        }
        print(
            protocol, json.dumps({k: part[k] for k in ("fit", "scored", "references", "inputs")}), flush=True
        )
        for readout in ("last", "mean", "fields"):
            for layer in field_layers if readout == "fields" else layers:
                x = found[fit_split].features[readout][layer][fit_index].astype(np.float64)
                xh = found[held_split].features[readout][layer][held_index].astype(np.float64)
                figures = score(x, fit, held, xh)
                part["layers"].setdefault(readout, {})[layer] = figures
                print(
                    f"{args.model} {protocol} {readout:<6} layer {layer:>2}: "
                    + "  ".join(f"{k} {v['share']:+.0%}" for k, v in figures.items())
                    + f"  direction balanced acc {figures['direction']['balanced_accuracy']:.2f}",
                    flush=True,
                )
        result["protocols"][protocol] = part
        if args.out is not None:
            args.out.write_text(json.dumps(result, indent=1, default=str))
    result["cpu_seconds"] = round(cpu() - started_cpu, 1)
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(f"took {result['cpu_seconds']} CPU-s, {result['wall_seconds']} s wall")
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
