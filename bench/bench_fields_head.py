"""One candidate the probes point at (issue 50, second part), measured on the valid split only: a
linear head over the adapted blocks' states at the positions that hold the votes' and
portfolio's values, added to the answers' log-likelihoods, against the check's readout alone.

``bench/bench_probe_features.py`` found the planted direction readable from SmolLM2's frozen
value positions at every depth (0.74–0.82 balanced accuracy) but faint at the last position
entering the check's adapted blocks (0.57–0.68). Both arms here start from the same base and a
fresh LoRA on the top ``--top`` blocks (the check's recipe: ``lora_config`` with
``PRETRAINED_MODERATOR``), read the same cached frozen blocks (``language_model.frozen_prefix``, the check's
cache) and fit the check's objective, ``reward_regression`` on its reward table (τ =
``target_temperature``, rewards in units of the train table's spread), for ``--steps`` steps of
``--batch`` states:

- ``answers``: the policy is the nine answers' log-likelihoods (the check's readout);
- ``answers+head``: the same plus ``head(h)`` — a linear map, started at zero, from the final-
  normed states of the last block at the value positions (concatenated) to nine numbers, centred
  over the answers. The model still reads the text prompt and its choice is one of the nine
  answers; the head only adds to their scores. The loss's mass term keeps to the answers'
  log-likelihoods (the head cannot raise it).

Every ``--eval-every`` steps each arm plays its greedy answer on every valid state: the mean
reward a state (the check's valid measure; its standard error on 36 days exceeds the oracle's
edge), its share of the oracle's edge over all in, and the oracle agreement (balanced accuracy of
the side its answers leave each state on against the oracle's long/flat wish).

    python bench/bench_fields_head.py --home /tmp/probe50/home-s7 [--steps 100 --batch 32]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from bench_probe_features import (  # noqa: E402
    States,
    balanced_accuracy,
    build_market,
    cpu,
    split_states,
)


def valid_figures(states: States, scores: np.ndarray) -> dict[str, float]:
    """Greedy play of ``scores`` (``[n, 9]``) on ``states``."""
    from stocker_core.moderator.probes import chosen_reward

    chosen = scores.argmax(axis=1)
    reward = chosen_reward(states.rewards, chosen)
    zero = chosen_reward(states.rewards, states.moves(np.ones(len(chosen), dtype=bool)))
    edge = chosen_reward(states.rewards, states.moves(states.oracle_long)) - zero
    return {
        "reward": reward,
        "share": (reward - zero) / edge if edge > 0 else float("nan"),
        "oracle_agreement": balanced_accuracy(states.oracle_long, states.ends_long(chosen)),
        "trade_share": float(np.mean(chosen != 0)),
    }


class FieldsHead:
    """Nine numbers from the final-normed top states at ``fields`` (zero at the start). Its input
    is divided by the square root of its width: with Adam every weight moves by about the
    learning rate a step, so a 15,552-wide input would otherwise move the output by ~15 a step."""

    def __init__(self, fields: list[int], width: int) -> None:
        import torch

        self.fields = fields
        self.scale = float(len(fields) * width) ** -0.5
        self.linear = torch.nn.Linear(len(fields) * width, 9)
        torch.nn.init.zeros_(self.linear.weight)
        torch.nn.init.zeros_(self.linear.bias)

    def __call__(self, normed: Any) -> Any:
        out = self.linear(self.scale * normed[:, self.fields].reshape(normed.shape[0], -1))
        return out - out.mean(dim=-1, keepdim=True)


def run_arm(
    name: str, policy: Any, prefix: dict[str, Any], train: States, valid: States, args: Any, fields: list[int]
) -> dict[str, Any]:
    import torch

    from stocker_core.language_model.frozen_prefix import decoder_parts
    from stocker_core.moderator.answer_fit import reward_scale

    _, decoder = decoder_parts(policy.model)
    head = FieldsHead(fields, decoder.config.hidden_size) if name == "answers+head" else None
    params = [p for p in policy.model.parameters() if p.requires_grad]
    params += list(head.linear.parameters()) if head is not None else []
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    rewards = torch.tensor(train.rewards, dtype=torch.float32)
    unit = reward_scale(train.rewards)
    rng = np.random.default_rng(args.seed)

    def scores(split: str, index: Any) -> tuple[Any, Any]:
        states = prefix[split].top_states(policy.model, index)
        answers = prefix[split].logits(policy.model, index, states)
        extra = head(decoder.norm(states)) if head is not None else torch.zeros_like(answers)
        return answers, answers + extra

    def evaluate(step: int) -> dict[str, Any]:
        policy.model.eval()
        with torch.no_grad():
            parts = [
                scores("valid", list(range(i, min(i + 64, len(valid.rows)))))
                for i in range(0, len(valid.rows), 64)
            ]
        policy.model.train()
        combined = torch.cat([c for _, c in parts]).numpy()
        return {"step": step, **valid_figures(valid, combined)}

    curve = [evaluate(0)]
    print(name, curve[-1], flush=True)
    started, wall = cpu(), time.perf_counter()
    for step in range(1, args.steps + 1):
        pick = rng.choice(len(train.rows), size=args.batch, replace=False)
        answers, combined = scores("train", pick)
        target = rewards[pick] - rewards[pick].mean(dim=-1, keepdim=True)
        centred = combined - combined.mean(dim=-1, keepdim=True)
        loss = ((centred - target / unit / args.temperature) ** 2).mean() - torch.logsumexp(
            answers, dim=-1
        ).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        if step % args.eval_every == 0 or step == args.steps:
            curve.append(evaluate(step))
            print(name, curve[-1], flush=True)
    return {
        "curve": curve,
        "train_cpu_seconds": round(cpu() - started, 1),
        "train_wall_seconds": round(time.perf_counter() - wall, 1),
        "head_weights": 0 if head is None else sum(p.numel() for p in head.linear.parameters()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="the check's market (built when empty)")
    parser.add_argument("--ic", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--train-states", type=int, default=1200)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3, help="the check's RL learning rate")
    parser.add_argument("--temperature", type=float, default=1.0, help="the check's target_temperature")
    parser.add_argument("--eval-every", type=int, default=25)
    parser.add_argument("--arms", default="answers,answers+head")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import torch
    from peft import get_peft_model

    from stocker_core.composition import register_all
    from stocker_core.language_model.checkpoints import restore_trainable, trainable_state
    from stocker_core.language_model.factory import create_base
    from stocker_core.language_model.frozen_prefix import FrozenPrefix, adapted_from
    from stocker_core.language_model.layer_features import varying_positions
    from stocker_core.language_model.lora import lora_config
    from stocker_core.language_model.runtime import quiet_libraries, seed_everything
    from stocker_core.moderator.answers import _answer_ids, _prompt_ids
    from stocker_core.moderator.generation import render_prompt
    from stocker_core.moderator.learning_check import LearningCheckConfig

    register_all()
    quiet_libraries()
    check = LearningCheckConfig(ic=args.ic, seed=args.seed, model="smollm2")
    if not args.home.exists() or not any(args.home.iterdir()):
        build_market(check, args.home)
    train, valid, config = split_states(check, args.home, args.train_states)
    seed_everything(config.seed, config.threads)
    torch.set_num_threads(1)
    c0 = cpu()
    policy = create_base(config.model_spec())
    policy.prompt_style = "compact"
    policy.model = get_peft_model(policy.model, lora_config(config.lora_spec(), policy))
    start = adapted_from(policy.model)
    heads = {
        split: [
            _prompt_ids(policy, render_prompt(policy, r["prompt_words"], r["prompt_text"])) for r in s.rows
        ]
        for split, s in (("train", train), ("valid", valid))
    }
    fields = varying_positions(heads["train"] + heads["valid"])
    tails = _answer_ids(policy)
    c1 = cpu()
    prefix = {
        split: FrozenPrefix.build(policy.model, ids, tails, start, policy.device)
        for split, ids in heads.items()
    }
    result: dict[str, Any] = {
        "ic": args.ic,
        "seed": args.seed,
        "adapted_from_block": start,
        "train_states": len(train.rows),
        "valid_states": len(valid.rows),
        "valid_days": int(len(np.unique(valid.dates))),
        "load_cpu_seconds": round(c1 - c0, 1),
        "cache_cpu_seconds": round(cpu() - c1, 1),
        "lora_weights": sum(p.numel() for p in policy.model.parameters() if p.requires_grad),
        "settings": {k: str(v) for k, v in vars(args).items()},
        "arms": {},
    }
    print(json.dumps(result), flush=True)
    initial = trainable_state(policy.model)
    for arm in args.arms.split(","):
        restore_trainable(policy.model, initial)
        seed_everything(config.seed, config.threads)
        result["arms"][arm] = run_arm(arm, policy, prefix, train, valid, args, fields)
        if args.out is not None:
            args.out.write_text(json.dumps(result, indent=1, default=str))
    print(json.dumps(result["arms"], default=str))


if __name__ == "__main__":
    main()
