"""Every command's ``--help`` reads whole in an 80-column terminal (issue 52: ``stocker serve
--help`` cut ``--max-sessions-per-…``, ``STOCKER_MAX_SESSION…`` and ``http://127.0.0.1:30…``,
so the option a trainer needs could not be read). The tree is walked, so a new command or
option is held to the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_testing import all_commands
from typer.testing import CliRunner

from stocker_assets.cli import app

WIDTH = 80
TRUNCATED = re.compile(r"…\s*(│|$)", re.MULTILINE)
"""How rich ends a table cell it cut (an ellipsis at the cell's edge); prose may hold one."""
COMMANDS = [pytest.param(path, command, id=" ".join(path) or "stocker") for path, command in all_commands()]


def shown_default(param) -> str | None:
    """The default ``--help`` shows for ``param`` as a user reads it, or None when none is shown."""
    if param.hidden or not param.show_default or getattr(param, "is_flag", False):
        return None
    if isinstance(param.show_default, str):
        return param.show_default
    default = param.default
    if default is None or isinstance(default, bool | list | tuple) or default == "":
        return None
    return str(default) if not isinstance(default, Path) else str(default)


def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)}, terminal_width=WIDTH)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize(("path", "command"), COMMANDS)
def test_help_fits_80_columns_whole(path, command) -> None:
    text = _help(path)
    assert not TRUNCATED.search(text), text
    assert max(len(line) for line in text.splitlines()) <= WIDTH, text
    words = set(text.replace("[", " ").replace("]", " ").replace(",", " ").split())
    for param in command.params:
        if param.hidden:
            continue
        for name in (*param.opts, *param.secondary_opts):
            if name.startswith("-"):
                assert name in words, f"{name} is not whole in:\n{text}"
        default = shown_default(param)
        if default is not None:
            assert default in text, f"the default of {param.opts[0]} ({default}) is not whole in:\n{text}"
        envvar = param.envvar if param.show_envvar else None
        if isinstance(envvar, str):
            assert envvar in text, f"{envvar} is not whole in:\n{text}"


def test_the_serve_options_of_the_issue_read_whole() -> None:
    text = _help(("serve",))
    for whole in ("--max-sessions-per-client", "STOCKER_MAX_SESSIONS_PER_CLIENT", "generation_batch_size"):
        assert whole in text, text
    assert "http://127.0.0.1:3000" in text
