"""The warm start of a moderator that decides with a fields head (``readout: fields_head``):
the head fitted in closed form to the reward table, on the base's own states.

The base is cut after block ``head_layer`` (``language_model.fields_head.truncate``) and gets its LoRA on
the top ``lora_layers`` blocks of what is left (left at zero here: the RL stage trains it).
Every training state's prompt runs once through those blocks; the head's directions are the
top principal component of each value position's states (no label read), and its linear
layer is the exact minimiser of the RL stage's own objective (``reward_regression``: least
squares between the nine scores and the state's centred rewards over ``target_temperature``)
with a ridge penalty. The penalty is chosen inside the train split: fitted on its first two
thirds of days, each candidate's decisions scored by their rewards on the last third
(``moderator.probes.chronological_split``), then refitted on every train state. The valid
split is read once, to record the fitted head's greedy valid reward (step 0 of the curve).

Measured on the learning check's seed-7 market, valid and train only (docs/results.md,
"SmolLM2: a head over the value positions"): the frozen states read this way recover the
planted signal about as well as the tiny model's trained embeddings do.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stocker_core.language_model.checkpoints import StageResult
from stocker_core.language_model.factory import LoadedModel
from stocker_core.language_model.policy_gradient import PgLog
from stocker_core.language_model.runtime import Progress, quiet_libraries, seed_everything
from stocker_core.moderator.answer_fit import FitResult, answer_set, reward_scale
from stocker_core.moderator.answers import ANSWERS, _prompt_ids, decided_indices, frozen_prefix
from stocker_core.moderator.config import TrainingConfig

RIDGE_ALPHAS = (1.0, 10.0, 100.0, 1e3, 1e4, 1e5)
"""Ridge penalties tried on the standardised projections (the probes' grid)."""
CHUNK = 128
"""States per pass when reading the value positions' states."""


def value_states(
    policy: LoadedModel,
    prompts: Sequence[str],
    positions: Sequence[int],
    progress: Progress | None = None,
) -> np.ndarray:
    """The states after the model's last block at ``positions`` for every prompt, ``[n, P, W]``
    (no gradient): through the frozen prefix the RL stage reuses when it applies; ``progress``
    hears ``("sft", prompts read, prompts)`` after each chunk."""
    import torch

    from stocker_core.language_model.fields_head import prompt_states

    prefix = frozen_prefix(policy, list(prompts))
    out = []
    was_training = policy.model.training
    policy.model.eval()
    with torch.no_grad():
        for first in range(0, len(prompts), CHUNK):
            index = list(range(first, min(first + CHUNK, len(prompts))))
            if prefix is not None:
                hidden = prefix.top_states(policy.model, index)
            else:
                ids = [_prompt_ids(policy, prompts[i]) for i in index]
                hidden = prompt_states(policy.model, torch.tensor(ids, device=policy.device))
            out.append(hidden[:, list(positions)].float().cpu().numpy())
            if progress is not None:
                progress("sft", index[-1] + 1, len(prompts))
    policy.model.train(was_training)
    return np.concatenate(out)


def ridge(x: np.ndarray, targets: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(weight ``[answers, P]``, bias ``[answers]``) minimising the squared error to
    ``targets`` plus ``alpha`` times the squared weights (``x`` centred)."""
    mean_x, mean_y = x.mean(axis=0), targets.mean(axis=0)
    xc, yc = x - mean_x, targets - mean_y
    weight = np.linalg.solve(xc.T @ xc + alpha * np.eye(x.shape[1]), xc.T @ yc).T
    return weight, mean_y - weight @ mean_x


def decisions_reward(scores: np.ndarray, rewards: np.ndarray, by_side: bool) -> float:
    """Mean reward of the decisions (``answers.decided_indices``) the scores lead to."""
    shifted = scores - scores.max(axis=1, keepdims=True)
    probabilities = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    chosen = decided_indices(probabilities, by_side)
    return float(rewards[np.arange(len(chosen)), chosen].mean())


def choose_alpha(
    x: np.ndarray, targets: np.ndarray, rewards: np.ndarray, dates: Sequence[Any], by_side: bool
) -> tuple[float, dict[float, float]]:
    """The ridge penalty whose fit on the earlier two thirds of days decides best on the last
    third, and every candidate's inner reward."""
    from stocker_core.moderator.probes import chronological_split

    inner_fit, inner_check = chronological_split([str(d)[:10] for d in dates])
    scores = {}
    for alpha in RIDGE_ALPHAS:
        weight, bias = ridge(x[inner_fit], targets[inner_fit], alpha)
        scores[alpha] = decisions_reward(x[inner_check] @ weight.T + bias, rewards[inner_check], by_side)
    return max(scores, key=lambda a: scores[a]), scores


def run_head_fit(
    base: LoadedModel,
    rows: Sequence[dict[str, Any]],
    contexts: dict[str, Any],
    config: TrainingConfig,
    adapter_dir: Path,
    valid: tuple[Sequence[dict[str, Any]], dict[str, Any]] | None = None,
    progress: Progress | None = None,
) -> StageResult:
    """Cut ``base`` after ``config.head_layer``, give it its LoRA and a fields head fitted to
    the reward table (module doc); save adapter and head to ``adapter_dir``."""
    from peft import get_peft_model

    from stocker_core.language_model.fields_head import (
        FieldsHead,
        attach,
        fit_projection,
        save_head,
        set_linear,
        truncate,
    )
    from stocker_core.language_model.layer_features import varying_positions
    from stocker_core.language_model.lora import lora_config
    from stocker_core.moderator.reward_regression import capped, reward_table

    quiet_libraries()
    seed_everything(config.seed, config.threads)
    started = time.perf_counter()
    truncate(base.model, config.head_layer)
    base.model = get_peft_model(base.model, lora_config(config.lora_spec(), base))
    table = capped(reward_table(rows, contexts, config), config.max_train_states, config.seed)
    if len(table.rows) < 2:
        raise ValueError("a fields head needs at least two training states with a next session")
    train = answer_set(base, table.rows, table.rewards)
    heads = [_prompt_ids(base, p) for p in train.prompts]
    lengths = sorted({len(h) for h in heads})
    if len(lengths) > 1:
        raise ValueError(
            f"a fields head reads prompts of one token length, and this tokenizer gives the "
            f"{config.prompt} prompt {len(lengths)} lengths ({lengths[0]}..{lengths[-1]} tokens): use "
            "readout: answers, or prompt: compact with a tokenizer that reads digits and signs one token each"
        )
    positions = varying_positions(heads)
    if not positions:
        raise ValueError("every training prompt is the same: a fields head has no value position to read")
    if progress is not None:
        progress(f"sft: the states of {len(train.prompts)} prompts after block {config.head_layer}", 0, 0)
    states = value_states(base, train.prompts, positions, progress)
    width = int(states.shape[-1])
    head = FieldsHead(positions, width, len(ANSWERS), config.head_layer)
    x = fit_projection(head, states)
    unit = reward_scale(table.rewards)
    centred = table.rewards - table.rewards.mean(axis=1, keepdims=True)
    targets = centred / unit / config.target_temperature
    by_side = config.decode == "side"
    alpha, inner = choose_alpha(x, targets, table.rewards, [r["date"] for r in table.rows], by_side)
    set_linear(head, *ridge(x, targets, alpha))
    attach(base.model, head, trainable=False)

    fit = FitResult(PgLog())
    if valid is not None and valid[0]:
        from stocker_core.moderator.answers import answer_probabilities

        valid_table = capped(reward_table(valid[0], valid[1], config), config.max_valid_states, config.seed)
        valid_set = answer_set(base, valid_table.rows, valid_table.rewards)
        probabilities = answer_probabilities(base, valid_set.prompts)
        fit.valid_curve.append((0, valid_set.greedy_reward(probabilities, by_side)))
    adapter_dir.mkdir(parents=True, exist_ok=True)
    base.model.save_pretrained(adapter_dir)
    save_head(base.model, adapter_dir)
    fit.log.close()
    details = {
        "head_layer": config.head_layer,
        "value_positions": len(positions),
        "ridge_alpha": alpha,
        "inner_rewards": {str(a): r for a, r in inner.items()},
    }
    return StageResult(adapter_dir, fit.log, time.perf_counter() - started, 1, fit, details)
