"""The agent's decision fit: on decisions whose results follow the news word, the fit learns
to buy on good news and sell on bad (judged on decisions it did not train on), keeps the best
valid checkpoint, and leaves the format tokens as the warm start wrote them."""

from __future__ import annotations

import numpy as np
import torch

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.decision_fit import DecisionBatch, decision_forward, fit_decisions, greedy_results
from stocker_core.agent.model import build_tiny_agent
from stocker_core.agent.parsing import DECISIONS


def planted_decisions(loaded, n: int, seed: int) -> tuple[DecisionBatch, np.ndarray]:
    """``n`` one-tool traces whose news bucket s sets the results: after good news BUY earns
    +1 and SELL −1, after bad news the reverse, HOLD 0, each with noise of the same size."""
    rng = np.random.default_rng(seed)
    tokenizer = loaded.tokenizer
    rows, positions, results, signs = [], [], [], []
    for _ in range(n):
        s = int(rng.choice([-3, -2, -1, 1, 2, 3]))
        seen = "positive" if s > 0 else "negative"
        task = "decide buy sell or hold at the close use tools first"
        context = f"{task} <result> news n2 s{s:+d} left3 </result>"
        written = f"<think> news {seen} </think> <answer> HOLD </answer>"
        head = [tokenizer.bos_token_id] + tokenizer(context, add_special_tokens=False)["input_ids"]
        tail = tokenizer(written, add_special_tokens=False)["input_ids"]
        ids = head + tail
        rows.append((ids, [0] * len(head) + [1] * len(tail)))
        positions.append(len(head) + tail.index(tokenizer.convert_tokens_to_ids("HOLD")))
        sign = 1.0 if s > 0 else -1.0
        results.append([sign + rng.normal(0, 1), -sign + rng.normal(0, 1), rng.normal(0, 1)])
        signs.append(sign)
    return DecisionBatch(rows, positions, np.asarray(results)), np.asarray(signs)


def test_the_fit_reads_the_news_word_and_keeps_the_best_valid_step():
    torch.manual_seed(0)
    config = AgentConfig(
        decision_fit_steps=60,
        decision_fit_batch=32,
        decision_fit_eval_every=20,
        objective="reward_regression",
    )
    loaded = build_tiny_agent(config)
    train, _ = planted_decisions(loaded, 256, seed=1)
    valid, _ = planted_decisions(loaded, 128, seed=2)
    held_out, signs = planted_decisions(loaded, 128, seed=3)
    before = float(greedy_results(loaded, held_out).mean())

    fit = fit_decisions(loaded, train, valid, config)

    assert [step for step, _ in fit.valid_curve] == [0, 20, 40, 60]
    assert fit.best_step == max(fit.valid_curve, key=lambda point: point[1])[0] > 0
    with torch.no_grad():
        choice, _ = decision_forward(loaded, held_out)
    picked = np.array(DECISIONS)[choice.argmax(dim=-1).numpy()]
    expected = np.where(signs > 0, "BUY", "SELL")
    assert (picked == expected).mean() > 0.95
    assert float(greedy_results(loaded, held_out).mean()) > before + 0.5


def test_the_format_tokens_are_kept():
    torch.manual_seed(0)
    config = AgentConfig(decision_fit_steps=40, decision_fit_batch=32, decision_fit_eval_every=40)
    loaded = build_tiny_agent(config)
    train, _ = planted_decisions(loaded, 128, seed=1)
    fit_decisions(loaded, train, None, config)
    with torch.no_grad():
        _, format_loss = decision_forward(loaded, train)
    # the written tokens around the decision ("<think> news positive </think> <answer>", "</answer>")
    # are learned along with it: a random model starts near log(vocabulary) ≈ 5
    assert float(format_loss) < 0.5


def test_no_steps_no_change():
    config = AgentConfig(decision_fit_steps=0)
    loaded = build_tiny_agent(config)
    train, _ = planted_decisions(loaded, 16, seed=1)
    state = {k: v.clone() for k, v in loaded.model.state_dict().items()}
    fit = fit_decisions(loaded, train, train, config)
    assert fit.steps == 0 and fit.valid_curve == []
    assert all(torch.equal(state[k], v) for k, v in loaded.model.state_dict().items())
