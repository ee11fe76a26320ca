"""Scored choices for the moderator's training step: each prompt read once with the nine answers
laid after it as a tree (``moderator.answers.answer_logits``) against scoring nine whole sequences
(``full_sequence_logits``), forward and backward, in the same run.

    python bench/bench_scored_choices.py [--states 64] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

from stocker_core.composition import register_all


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--states", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import torch

    from stocker_core.language_model.factory import build_tiny
    from stocker_core.moderator.answers import answer_logits, full_sequence_logits
    from stocker_core.moderator.config import TrainingConfig
    from stocker_core.moderator.prompts import vocabulary

    torch.set_num_threads(1)
    torch.manual_seed(0)
    loaded = build_tiny(TrainingConfig().model_spec())
    words = vocabulary()
    prompts = [" ".join(words[i % 50 : i % 50 + 30]) for i in range(args.states)]
    assert torch.allclose(answer_logits(loaded, prompts), full_sequence_logits(loaded, prompts), atol=1e-4)
    seconds = {}
    for name, score in (("answer tree", answer_logits), ("whole sequences", full_sequence_logits)):
        started = time.perf_counter()
        for _ in range(args.repeats):
            score(loaded, prompts).sum().backward()
        seconds[name] = (time.perf_counter() - started) / args.repeats
        print(f"{name:16s} {seconds[name] * 1000:8.1f} ms per step ({args.states} states x 9 answers)")
    ratio = seconds["whole sequences"] / seconds["answer tree"]
    print(f"ratio: {ratio:.1f}x less time with the answer tree")


if __name__ == "__main__":
    main()
