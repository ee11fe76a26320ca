"""train_agent: the whole training of the tool-using agent, from data to a saved adapter.

1. Data: each ticker's AgentData; train / valid pairs from the splits (``pairs``).
2. Base: the model named by ``config.model`` (the tiny word-level Llama by default).
3. Warm start: supervised on the format teacher's traces of the train pairs (its tool
   script, each result read back, a balanced decision with no verdict before it:
   ``scripted.FormatWriter``), or on agent_scripted's (``warm_start_teacher="scripted"``).
   Then, when ``decision_fit_steps`` is set, the decision fit (``decision_fit``): every train
   pair's decision against its three known results, the checkpoint chosen on every valid pair.
4. RL: our rollout loop + GRPO-style update on a LoRA adapter (``grpo``), with held-out
   greedy validation (result / format / tool) at step 0 and every ``eval_every`` steps;
   the checkpoint with the best valid result is kept, step 0 (the adapter untouched: the
   warm start and decision fit alone) included, so RL never leaves the agent worse on valid.
5. Save: ``models/agent_rl/<run>/{base,adapter,agent.json,curves.png}`` and ``current.json``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.data import AgentData, load_agent_data
from stocker_core.agent.pairs import agent_splits, split_pairs
from stocker_core.agent.scoring import run_scored, summarise
from stocker_core.config import Settings
from stocker_core.warehouse.db import Warehouse

if TYPE_CHECKING:
    from stocker_core.agent.trace import Trace
    from stocker_core.agent.warm_start import WarmStartResult
    from stocker_core.language_model.factory import LoadedModel
    from stocker_core.language_model.policy_gradient import PgLog

Progress = Callable[[str], None]
EVERY_PAIR = 1_000_000
"""``split_pairs``' cap for the decision fit, which reads every pair of its splits."""


@dataclass
class AgentTrainingResult:
    """What a training produced, from what, and how it did on the valid split."""

    run_id: str
    run_dir: str
    sha256: str
    base_model: str
    wall_seconds: float
    warm_start_seconds: float
    rl_seconds: float
    train_pairs: int
    valid_pairs: int
    train_span: tuple[str, str]
    valid_span: tuple[str, str]
    splits_origin: str
    tickers: list[str]
    config: dict[str, Any]
    curves: list[dict[str, Any]] = field(default_factory=list)
    """Validation points: step, result, format, tool, total, answered, action shares."""
    kept_step: int = 0
    """The RL step whose checkpoint was kept (the best valid result; 0 without RL)."""
    warm_start_losses: list[tuple[int, float]] = field(default_factory=list)
    decision_fit: dict[str, Any] = field(default_factory=dict)
    """The decision fit: pairs, steps, seconds, valid curve and the kept step (empty when off)."""
    rl_log: list[dict[str, Any]] = field(default_factory=list)
    valid_keys: list[str] = field(default_factory=list)
    """``TICKER|YYYY-MM-DD`` of each held-out decision, in order."""
    valid_decisions: list[str] = field(default_factory=list)
    """The final model's greedy decisions on the valid pairs (a reload must repeat them)."""
    valid_fingerprint: str = ""
    """sha256 of the final model's greedy turns on the valid pairs."""
    frac_reward_zero_std: list[float] = field(default_factory=list)
    """Per RL step, the share of groups whose rollouts all scored the same (no gradient)."""
    frac_reward_zero_std_last_tenth: float | None = None
    heldout_episodes: list[dict[str, Any]] = field(default_factory=list)
    """The valid split in non-overlapping windows, played by the final model and by
    buy-and-hold (``evaluation.valid_window_records``): what the model checks read."""
    created_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def curves_path(self) -> Path:
        return Path(self.run_dir) / "curves.png"


def training_data(
    settings: Settings, warehouse: Warehouse | None, config: AgentConfig
) -> dict[str, AgentData]:
    """AgentData of every ticker to train on (``config.tickers``, else the settings')."""
    tickers = config.tickers or list(settings.default_tickers)
    return {t: load_agent_data(t, settings, warehouse) for t in tickers}


def traces_fingerprint(traces: list) -> str:
    """sha256 over every assistant turn of ``traces`` (identical models write identical turns)."""
    import hashlib

    digest = hashlib.sha256()
    for trace in traces:
        for turn in trace.assistant_turns():
            digest.update(turn.text.encode())
            digest.update(b"\x00")
    return digest.hexdigest()


def _span(pairs: list) -> tuple[str, str]:
    days = sorted(d for _, d in pairs)
    return days[0].date().isoformat(), days[-1].date().isoformat()


def _fit_decisions(
    loaded: Any,
    teacher: Any,
    data: dict[str, AgentData],
    splits: Any,
    config: AgentConfig,
    tools: list,
    say: Progress,
) -> dict[str, Any]:
    """The decision fit on every train pair's teacher trace, checked on every valid pair's
    (``decision_fit``); a summary for the run's record, empty when the stage is off."""
    from stocker_core.agent.decision_fit import decision_batch, fit_decisions

    if config.decision_fit_steps == 0:
        return {}
    started = time.perf_counter()
    every = {
        split: split_pairs(data, splits, split, config.horizon, EVERY_PAIR, config.seed)
        for split in ("train", "valid")
    }
    batches = {}
    for split, pairs in every.items():
        traces = run_scored(teacher, pairs, data, config, "agent_scripted")
        batches[split] = decision_batch(loaded, traces, tools, config)
    if batches["train"] is None:
        say("decision fit: skipped (a chat model writes its decision in more than one token)")
        return {}
    fit = fit_decisions(loaded, batches["train"], batches["valid"], config)
    curve = ", ".join(f"{step}: {score:+.3f}" for step, score in fit.valid_curve)
    say(
        f"decision fit: {fit.steps} steps on {len(batches['train'])} train decisions in "
        f"{time.perf_counter() - started:.1f}s; valid result by step {curve}; kept step {fit.best_step}"
    )
    return {
        "train_pairs": len(batches["train"]),
        "valid_pairs": len(batches["valid"] or ()),
        "steps": fit.steps,
        "seconds": round(time.perf_counter() - started, 1),
        "valid_curve": fit.valid_curve,
        "kept_step": fit.best_step,
    }


def _train_valid_pairs(
    data: dict[str, AgentData], source: Any, config: AgentConfig, say: Progress
) -> tuple[list, list]:
    """The train and valid (ticker, day) pairs of ``source``'s splits, announced."""
    train = split_pairs(data, source.splits, "train", config.horizon, config.max_train_pairs, config.seed)
    valid = split_pairs(data, source.splits, "valid", config.horizon, config.max_valid_pairs, config.seed)
    say(
        f"{len(train)} train pairs {_span(train)}, {len(valid)} valid pairs {_span(valid)} "
        f"({source.origin} splits)"
    )
    return train, valid


def _warm_start(
    loaded: LoadedModel,
    teacher: Any,
    train: list,
    data: dict[str, AgentData],
    config: AgentConfig,
    tools: list,
    say: Progress,
) -> WarmStartResult:
    """Supervised warm start of ``loaded`` on ``teacher``'s traces of the train pairs."""
    from stocker_core.agent.warm_start import warm_start

    scripted = run_scored(teacher, train, data, config, "agent_scripted")
    warm = warm_start(loaded, scripted, config, tools)
    say(
        f"warm start: {warm.steps} steps in {warm.wall_seconds:.1f}s, "
        f"last loss {warm.losses[-1][1] if warm.losses else 0.0:.3f}"
    )
    return warm


@dataclass
class _RlOutcome:
    """What the RL stage left: the valid curve, the kept step, its valid traces, the log."""

    curves: list[dict[str, Any]]
    kept_step: int
    last: list[Trace]
    log: PgLog | None
    seconds: float


def _reinforce(
    loaded: LoadedModel,
    train: list,
    valid: list,
    data: dict[str, AgentData],
    config: AgentConfig,
    say: Progress,
    steps: Callable[[int, int], None] | None,
) -> _RlOutcome:
    """RL with greedy validation on the valid pairs (step 0 included, even without RL);
    the model is left at the checkpoint with the best valid result."""
    from stocker_core.agent.grpo import train_rl
    from stocker_core.agent.model import ModelWriter
    from stocker_core.language_model.checkpoints import restore_trainable, trainable_state

    curves: list[dict[str, Any]] = []
    last: list = []
    kept: dict[str, Any] = {"step": 0, "result": float("-inf"), "state": None, "traces": []}

    def evaluate(step: int) -> None:
        traces = run_scored(ModelWriter(loaded, config), valid, data, config, "agent_rl")
        last[:] = traces
        point = {"step": step, **summarise(traces).as_dict()}
        curves.append(point)
        if point["result"] > kept["result"]:
            kept.update(step=step, result=point["result"], state=trainable_state(loaded.model), traces=traces)
        say(
            f"valid @ step {step}: result {point['result']:.3f} "
            f"format {point['format']:.3f} tool {point['tool']:.3f}"
        )

    started = time.perf_counter()
    log = None
    if config.rl_steps:  # train_rl checks step 0 once its adapter is on, so step 0 can be kept
        log = train_rl(loaded, train, data, config, on_eval=evaluate, on_step=steps)
    else:
        evaluate(0)
    if kept["state"] is not None and kept["step"] != curves[-1]["step"]:
        restore_trainable(loaded.model, kept["state"])
        last[:] = kept["traces"]
        say(f"kept the checkpoint of step {kept['step']} (best valid result {kept['result']:.3f})")
    return _RlOutcome(curves, int(kept["step"]), last, log, time.perf_counter() - started)


def _save_adapter(loaded: LoadedModel, config: AgentConfig, trained: bool, adapter_dir: Path) -> None:
    """Save the LoRA adapter; without RL (``trained`` false) an untouched one, so the run's
    layout stays the same."""
    if not trained:
        from peft import get_peft_model

        from stocker_core.language_model.lora import lora_config

        loaded.model = get_peft_model(loaded.model, lora_config(config.lora_spec(), loaded))
    loaded.model.save_pretrained(adapter_dir)


def train_agent(
    config: AgentConfig,
    settings: Settings,
    warehouse: Warehouse | None = None,
    data: dict[str, AgentData] | None = None,
    progress: Progress | None = None,
    steps: Callable[[int, int], None] | None = None,
) -> AgentTrainingResult:
    """Warm-start and RL-train the agent on the train split; save it as the current agent.
    ``progress(message)`` gets a line per phase, ``steps(done, total)`` each RL step."""
    from stocker_core.agent.evaluation import valid_window_records
    from stocker_core.agent.model import ModelWriter, create_agent_base
    from stocker_core.agent.plots import curves_png
    from stocker_core.agent.scripted import FormatWriter, ScriptedWriter
    from stocker_core.agent.store import agent_model_dir, publish_run
    from stocker_core.agent.tools import tool_schemas
    from stocker_core.env.rewards import RewardParams
    from stocker_core.language_model.factory import save_base
    from stocker_core.language_model.runtime import quiet_libraries, seed_everything, weights_sha256

    say = progress or (lambda message: None)
    started = time.perf_counter()
    quiet_libraries()
    seed_everything(config.seed, config.threads)
    data = data or training_data(settings, warehouse, config)
    source = agent_splits(warehouse, data)
    train, valid = _train_valid_pairs(data, source, config, say)

    loaded = create_agent_base(config)
    tools = [] if loaded.prompt_style == "words" else tool_schemas()
    teacher = FormatWriter(config) if config.warm_start_teacher == "format" else ScriptedWriter(config)
    warm = _warm_start(loaded, teacher, train, data, config, tools, say)
    fitted = _fit_decisions(loaded, teacher, data, source.splits, config, tools, say)

    run_id = f"agent_rl-{datetime.now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
    run_dir = agent_model_dir(settings.home) / run_id
    save_base(loaded, run_dir / "base")
    rl = _reinforce(loaded, train, valid, data, config, say, steps)
    _save_adapter(loaded, config, rl.log is not None, run_dir / "adapter")

    say("playing the valid split in windows (agent_rl vs buy_and_hold)")
    heldout = valid_window_records(
        ModelWriter(loaded, config), data, source.splits, config, RewardParams.from_settings(settings)
    )
    log_steps = rl.log.steps if rl.log else []
    result = AgentTrainingResult(
        run_id=run_id,
        run_dir=str(run_dir),
        sha256=weights_sha256(run_dir / "adapter"),
        base_model=config.model,
        wall_seconds=time.perf_counter() - started,
        warm_start_seconds=warm.wall_seconds,
        rl_seconds=rl.seconds,
        train_pairs=len(train),
        valid_pairs=len(valid),
        train_span=_span(train),
        valid_span=_span(valid),
        splits_origin=source.origin,
        tickers=sorted(data),
        config=config.public(),
        curves=rl.curves,
        kept_step=rl.kept_step,
        warm_start_losses=warm.losses,
        decision_fit=fitted,
        rl_log=[asdict(s) for s in log_steps],
        valid_keys=[f"{t}|{d.date().isoformat()}" for t, d in valid],
        valid_decisions=[t.action for t in rl.last],
        valid_fingerprint=traces_fingerprint(rl.last),
        frac_reward_zero_std=[s.frac_reward_zero_std for s in log_steps],
        frac_reward_zero_std_last_tenth=rl.log.last_tenth("frac_reward_zero_std") if rl.log else None,
        heldout_episodes=heldout,
        created_at=datetime.now().isoformat(timespec="seconds"),
    )
    (run_dir / "curves.png").write_bytes(
        curves_png(rl.curves, f"agent ({config.model}): held-out scores, {len(valid)} valid decisions")
    )
    publish_run(run_dir, result.to_dict(), settings.home)
    return result
