"""The ``stocker`` command tree as click sees it: every command with its path, every option."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer

from stocker_assets.cli import app


def stocker_command() -> Any:
    """The click command Typer builds from the ``stocker`` app (a group of groups)."""
    return typer.main.get_command(app)


def leaf_commands(
    command: Any | None = None, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(path, command)`` for every command that runs (not a group), e.g. ``(("episode", "run"), …)``."""
    command = stocker_command() if command is None else command
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    for name, sub in sorted(subcommands.items()):
        yield from leaf_commands(sub, (*path, name))


def all_commands(
    command: Any | None = None, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(path, command)`` for the app, every group and every command."""
    command = stocker_command() if command is None else command
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from all_commands(sub, (*path, name))


def value_type(param: Any) -> Any:
    """The Python type a Typer parameter converts its value to (``int``, ``float``, ``str`` …)."""
    return getattr(getattr(param, "type_descriptor", None), "annotation", None)


def number_options() -> list[tuple[tuple[str, ...], Any]]:
    """``(command path, option)`` for every option or argument that takes an int or a float."""
    return [
        (path, param)
        for path, command in leaf_commands()
        for param in command.params
        if value_type(param) in (int, float)
    ]
