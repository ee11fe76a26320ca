"""What every ``stocker`` command shares: exit codes and the one way to fail.

Exit codes: 0 ok, 1 a check or run failed, 2 bad usage or input.
"""

from __future__ import annotations

import warnings
from typing import NoReturn

import typer

EXIT_OK = 0
EXIT_FAILED = 1
"""A check, a run or a computation failed."""
EXIT_USAGE = 2
"""Bad usage or input: unknown name, malformed value, missing data."""


def fail(problem: Exception | str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``error: <problem>`` on stderr and exit with ``code``."""
    typer.secho(f"error: {problem}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code=code)


LIBRARY_WARNINGS: tuple[tuple[str, type[Warning]], ...] = (
    # peft 0.21.2 reads model.is_gradient_checkpointing in PeftModel.__init__ (transformers 5.x renamed it)
    ("`is_gradient_checkpointing` is deprecated", FutureWarning),
    # trl 1.16's trainers call model.gradient_checkpointing_enable/_disable themselves
    ("`gradient_checkpointing_(enable|disable)` is deprecated", FutureWarning),
)
"""Deprecation warnings raised inside libraries by calls we cannot change (message regex,
category); ours are fixed at the call. pyproject's ``filterwarnings`` ignores the same in tests."""


def ignore_library_warnings() -> None:
    """Keep ``LIBRARY_WARNINGS`` out of every command's output (the main job's, its lanes')."""
    for message, category in LIBRARY_WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=category)
