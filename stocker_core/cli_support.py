"""What every ``stocker`` command shares: exit codes and the one way to fail.

Exit codes: 0 ok, 1 a check or run failed, 2 bad usage or input.
"""

from __future__ import annotations

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
