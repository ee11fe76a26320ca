"""What every training stage shares: seeds and threads, quiet libraries, a progress
callback that also records the curve, and the digest of saved adapter weights."""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``."""


class EtaProgress:
    """A ``Progress`` that writes ``stage: step k/n, elapsed, ETA`` lines (to stderr by default),
    at most every ``every`` seconds per stage plus each stage's first and last step; a call with
    ``total`` 0 announces a stage without steps (loading, caching, held-out plays)."""

    def __init__(
        self, say: Callable[[str], None] | None = None, every: float = 10.0, prefix: str = ""
    ) -> None:
        import sys
        import time

        self._clock = time.monotonic
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self.every = every
        self.prefix = prefix
        self._started: dict[str, float] = {}
        self._last: dict[str, float] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = self._clock()
        if total <= 0:
            self.say(f"{self.prefix}{stage} …")
            return
        if done <= 0 or stage not in self._started:
            self._started[stage], self._last[stage] = now, -float("inf")
            if done <= 0:
                self.say(f"{self.prefix}{stage}: {total} steps")
                return
        if done < total and now - self._last[stage] < self.every:
            return
        self._last[stage] = now
        elapsed = now - self._started[stage]
        eta = elapsed / done * (total - done) if done else float("nan")
        self.say(f"{self.prefix}{stage}: step {done}/{total}, {elapsed:.0f} s, ETA {eta:.0f} s")


def seed_everything(seed: int, threads: int = 1) -> None:
    """Fixed seeds (torch, numpy, random via ``transformers.set_seed``) and CPU threads."""
    import torch
    import transformers

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    transformers.set_seed(seed)


def quiet_libraries() -> None:
    """No download/progress chatter from transformers, datasets and tokenizers."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import datasets
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    datasets.utils.logging.set_verbosity_error()
    # peft asks transformers 5.x for the old attribute name on every adapter load
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)


@dataclass
class CurvePoint:
    """One logged training step."""

    step: int
    values: dict[str, float]


@dataclass
class StageLog:
    """Logged values of a stage, step by step."""

    points: list[CurvePoint] = field(default_factory=list)

    def series(self, name: str) -> list[tuple[int, float]]:
        return [(p.step, p.values[name]) for p in self.points if name in p.values]


def stage_callback(stage: str, log: StageLog, progress: Progress | None) -> Any:
    """A ``TrainerCallback`` that records every log line and reports progress."""
    from transformers import TrainerCallback

    class _StageCallback(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            numbers = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, int | float)}
            if numbers:
                log.points.append(CurvePoint(int(state.global_step), numbers))

        def on_step_end(self, args, state, control, **kwargs):
            if progress is not None:
                progress(stage, int(state.global_step), int(state.max_steps))

    return _StageCallback()


def weights_sha256(folder: Path) -> str:
    """sha256 over the weight files of a saved model or adapter (``*.safetensors``, ``*.bin``)."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin"))
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def trainer_precision() -> dict[str, Any]:
    """bf16 on CUDA, fp32 on CPU (TRL's configs default to bf16, which a CPU box refuses)."""
    import torch

    cuda = torch.cuda.is_available()
    return {"bf16": cuda, "fp16": False, "use_cpu": not cuda}


def drop_printer(trainer: Any) -> None:
    """Remove the callback that prints every log dict when tqdm is off (our callback logs)."""
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)


@contextmanager
def library_warnings_silenced() -> Iterator[None]:
    """Hide the deprecation chatter transformers/TRL emit on every training step."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*padding.*")
        yield
