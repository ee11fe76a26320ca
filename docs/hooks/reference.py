"""MkDocs hook: reference tables generated from the code when the site is built.

A page asks for a table with an HTML comment on a line of its own (invisible wherever the
hook does not run, e.g. on GitHub):

``<!-- reference: fields stocker_core.config:Settings home source files_dir -->``
    the named fields of a pydantic-settings class or a dataclass: variable, type, default
    and description (the field's ``description=``, else its attribute docstring);
``<!-- reference: fields stocker_core.config:Settings * -->``
    every field of the class that no earlier table of the page showed, so a new field
    lands in the reference without anyone listing it;
``<!-- reference: cli -->``
    every ``stocker`` command (``stocker_assets.cli.app``) with its usage, help and options.

``tests/test_docs_reference.py`` holds the tables complete: every field of every
documented class, every command.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import enum
import importlib
import inspect
import json
import re
import textwrap
import types
import typing
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^[ \t]*<!-- reference: (?P<kind>[a-z]+)(?: (?P<args>[^>]*?))? -->[ \t]*$", re.M)
RESOURCES = ROOT / "stocker_assets" / "definitions" / "resources.py"
NONE = "–"
SETTINGS = "stocker_core.config:Settings"


class ReferenceMarkerError(ValueError):
    """A marker the hook cannot expand (unknown kind, class or field): fails the build."""


@dataclass(frozen=True)
class FieldDoc:
    """One documented field."""

    name: str
    anchor: str
    variable: str | None
    type: str
    default: str
    text: str
    run: bool


# --- the classes' fields ---------------------------------------------------------------------


def load_class(path: str) -> type:
    """``module:Class`` imported."""
    module, _, name = path.partition(":")
    if not module or not name:
        raise ReferenceMarkerError(f"expected module:Class, got {path!r}")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ReferenceMarkerError(f"cannot import {path}: {exc}") from exc


def attribute_docstrings(cls: type) -> dict[str, str]:
    """``{field: docstring}`` for the string literals written right under a class's fields,
    its own and those it inherits from the project's classes (``Settings`` composes the
    settings of each area, ``stocker_core.settings``)."""
    found: dict[str, str] = {}
    for owner in reversed(cls.__mro__):
        if owner.__module__.partition(".")[0] not in {"stocker_core", "stocker_assets"} and owner is not cls:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(owner)))
        except (OSError, TypeError):  # made at run time (pydantic's create_model): no source of its own
            continue
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, after in zip(body, body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                found[node.target.id] = inspect.cleandoc(after.value.value)
    return found


def run_fields() -> set[str]:
    """The ``Settings`` fields a Dagster run can override (``RUN_FIELDS`` of the ``stocker``
    resource), read from the module's source so the build does not import Dagster."""
    if not RESOURCES.is_file():
        return set()
    for node in ast.parse(RESOURCES.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "RUN_FIELDS" for t in node.targets
        ):
            return {str(v) for v in ast.literal_eval(node.value)}
    return set()


def type_text(tp: Any) -> str:
    """A type annotation in words: ``str``, ``path``, ``list of str``, ``one of a, b``…"""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        names = [type_text(a) for a in args if a is not type(None)]
        return " or ".join(names) + (" or none" if type(None) in args else "")
    if origin in (list, tuple, set, frozenset):
        items = [a for a in args if a is not Ellipsis]
        inner = type_text(items[0]) if len(set(items)) == 1 else ", ".join(type_text(a) for a in items)
        word = "list" if origin is list else "tuple" if origin is tuple else "set"
        return f"{word} of {inner}" if items else word
    if origin is dict:
        return f"map of {type_text(args[0])} to {type_text(args[1])}" if args else "map"
    if tp is Any:
        return "any"
    if isinstance(tp, type):
        if issubclass(tp, PurePath):
            return "path"
        if issubclass(tp, dt.datetime):
            return "timestamp"
        if issubclass(tp, dt.date):
            return "date"
        return tp.__name__
    return str(tp).replace("typing.", "")


def bounds_text(metadata: list[Any]) -> str:
    """Pydantic's ``gt``/``ge``/``lt``/``le`` constraints, e.g. ``≥ 1, ≤ 16``."""
    words = {"gt": ">", "ge": "≥", "lt": "<", "le": "≤"}
    found = []
    for item in metadata:
        for key, sign in words.items():
            value = getattr(item, key, None)
            if value is not None:
                found.append(f"{sign} {value:g}" if isinstance(value, int | float) else f"{sign} {value}")
    return ", ".join(found)


def value_text(value: Any) -> str:
    """A default as it is written in a variable or YAML: ``true``, ``data``, ``["GOOGL"]``."""
    if value is None:
        return NONE
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, PurePath | dt.date | dt.datetime):
        return f"`{value}`" if not isinstance(value, dt.date) else f"`{value.isoformat()}`"
    if isinstance(value, list | tuple | dict | set):
        return f"`{json.dumps(list(value) if isinstance(value, tuple | set) else value)}`"
    if isinstance(value, str):
        return f"`{value}`" if value else '`""`'
    return f"`{value}`"


def prose(text: str) -> str:
    """Docstring text for one table cell: one line, ``rst literals`` as code, pipes escaped,
    angle brackets outside code kept as text."""
    text = re.sub(r"``(.+?)``", r"`\1`", " ".join(text.split()))
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts).replace("|", "\\|")


def class_fields(path: str) -> list[FieldDoc]:
    """Every field of the class at ``path`` (a pydantic model or a dataclass), in order."""
    cls = load_class(path)
    docstrings = attribute_docstrings(cls)
    docs: list[FieldDoc] = []
    if hasattr(cls, "model_fields"):
        prefix = (getattr(cls, "model_config", {}) or {}).get("env_prefix", "")
        overridable = run_fields() if path == SETTINGS else set()
        for name, info in cls.model_fields.items():
            if info.default_factory is not None:
                default = value_text(info.default_factory())  # type: ignore[call-arg]
            else:
                required = repr(info.default) == "PydanticUndefined"
                default = "required" if required else value_text(info.default)
            type_ = type_text(info.annotation)
            bounds = bounds_text(info.metadata)
            variable = f"{prefix}{name}".upper() if prefix else None
            docs.append(
                FieldDoc(
                    name=name,
                    anchor=(variable or f"{cls.__name__}-{name}").lower(),
                    variable=variable,
                    type=f"{type_}, {bounds}" if bounds else type_,
                    default=default,
                    text=docstrings.get(name) or info.description or "",
                    run=name in overridable,
                )
            )
    elif dataclasses.is_dataclass(cls):
        hints = typing.get_type_hints(cls)
        for item in dataclasses.fields(cls):
            if not item.init or item.name.startswith("_"):
                continue
            if item.default_factory is not dataclasses.MISSING:
                default = value_text(item.default_factory())
            elif item.default is not dataclasses.MISSING:
                default = value_text(item.default)
            else:
                default = "required"
            docs.append(
                FieldDoc(
                    name=item.name,
                    anchor=f"{cls.__name__}-{item.name}".lower(),
                    variable=None,
                    type=type_text(hints.get(item.name, item.type)),
                    default=default,
                    text=docstrings.get(item.name, ""),
                    run=False,
                )
            )
    else:
        raise ReferenceMarkerError(f"{path} is neither a pydantic model nor a dataclass")
    return docs


def fields_table(fields: list[FieldDoc], settings_class: bool = False) -> str:
    """A Markdown table of ``fields``; each row carries an anchor (``#stocker_home``). A
    ``Settings`` row is named by its variable alone (the field is its lower-case tail); a row of
    another class by its field (its YAML key) with the variable under it."""
    lines = ["| setting | type | default | what |", "|---|---|---|---|"]
    for f in fields:
        if settings_class and f.variable:
            name = f"`{f.variable}`"
        elif f.variable:
            name = f"`{f.name}`<br>`{f.variable}`"
        else:
            name = f"`{f.name}`"
        text = prose(f.text) or NONE
        if f.run:
            text += " *(run config)*"
        lines.append(f'| <span id="{f.anchor}"></span>{name} | {prose(f.type)} | {f.default} | {text} |')
    return "\n".join(lines)


# --- the command line ------------------------------------------------------------------------


def cli_command() -> Any:
    """The ``stocker`` command as the click command Typer builds."""
    import typer.main

    from stocker_assets.cli import app

    return typer.main.get_command(app)


def commands(command: Any, path: tuple[str, ...] = ("stocker",)) -> list[tuple[tuple[str, ...], Any]]:
    """Every command under ``command`` (itself first), depth first, in listing order."""
    found = [(path, command)]
    if hasattr(command, "list_commands"):
        ctx = command.make_context(path[-1], [], resilient_parsing=True)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not getattr(sub, "hidden", False):
                found += commands(sub, (*path, name))
    return found


def _default(param: Any) -> str:
    value = param.default
    if callable(value) or "UNSET" in repr(value) or "Sentinel" in type(value).__name__:
        return NONE
    if getattr(param, "is_flag", False) and value is False:
        return NONE
    if isinstance(value, list | tuple) and not value:
        return NONE
    return value_text(value)


def _param_type(param: Any) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    if annotation is not None:
        text = type_text(annotation)
        return {"str": "text", "int": "integer", "float": "number", "bool": "flag"}.get(text, text)
    return getattr(getattr(param, "type", None), "name", "") or NONE


def _argument_name(param: Any) -> str:
    return (param.metavar or param.name or "").upper()


def command_section(path: tuple[str, ...], command: Any) -> str:
    """One command: a heading, its help, its usage and a table of its arguments and options."""
    depth = min(len(path), 4)
    title = " ".join(path)
    ctx = command.make_context(path[-1], [], resilient_parsing=True)
    params = [
        p
        for p in command.get_params(ctx)
        if not getattr(p, "hidden", False) and p.name not in {"help", "install_completion", "show_completion"}
    ]
    usage = [title, "[OPTIONS]"] if any(p.param_type_name == "option" for p in params) else [title]
    for p in params:
        if p.param_type_name == "argument":
            name = _argument_name(p) + ("..." if getattr(p, "nargs", 1) == -1 else "")
            usage.append(name if p.required else f"[{name}]")
    if hasattr(command, "list_commands"):
        usage.append("COMMAND [ARGS]...")
    help_text = inspect.cleandoc(command.help or "")
    help_text = "\n".join(line for line in help_text.splitlines() if line.strip() != "\b")
    parts = [f"{'#' * (depth + 1)} `{title}`", "", prose_block(help_text), "", f"Usage: `{' '.join(usage)}`"]
    rows = []
    for param in params:
        if param.param_type_name == "argument":
            name = f"`{_argument_name(param)}`"
            note = "" if param.required else " (optional)"
        else:
            name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
            note = " (required)" if param.required else ""
        text = prose(getattr(param, "help", None) or "") + note
        rows.append(f"| {name} | {prose(_param_type(param))} | {_default(param)} | {text.strip() or NONE} |")
    if rows:
        parts += ["", "| argument / option | type | default | what |", "|---|---|---|---|", *rows]
    if hasattr(command, "list_commands"):
        subs = [name for name in command.list_commands(ctx) if command.get_command(ctx, name) is not None]
        parts += ["", "Commands: " + ", ".join(f"[`{n}`](#{anchor((*path, n))})" for n in subs) + "."]
    return "\n".join(parts)


def anchor(path: tuple[str, ...]) -> str:
    """The heading id MkDocs' toc gives ``stocker episode run``: ``stocker-episode-run``."""
    return "-".join(path)


def prose_block(text: str) -> str:
    """Command help as Markdown paragraphs (blank lines kept; `<` outside code escaped)."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "\n\n".join(prose(p).replace("\\|", "|") for p in paragraphs)


def cli_reference() -> str:
    """Every ``stocker`` command, depth first."""
    return "\n\n".join(command_section(path, command) for path, command in commands(cli_command()))


# --- expanding the markers -------------------------------------------------------------------


def expand(markdown: str) -> str:
    """``markdown`` with every reference marker replaced by its table (``*`` takes the fields
    no earlier table of the page showed)."""
    shown: dict[str, set[str]] = {}

    def replace(match: re.Match[str]) -> str:
        kind, args = match["kind"], (match["args"] or "").split()
        if kind == "cli":
            return cli_reference()
        if kind != "fields" or not args:
            raise ReferenceMarkerError(f"unknown reference marker: {match[0]}")
        path, names = args[0], args[1:]
        fields = {f.name: f for f in class_fields(path)}
        done = shown.setdefault(path, set())
        if names == ["*"]:
            chosen = [f for name, f in fields.items() if name not in done]
        else:
            unknown = [n for n in names if n not in fields]
            if unknown:
                raise ReferenceMarkerError(f"{path} has no field {', '.join(unknown)}")
            chosen = [fields[n] for n in names]
        sorted_before = bool(done)
        done.update(f.name for f in chosen)
        if not chosen:
            return ""
        table = fields_table(chosen, settings_class=path == SETTINGS)
        if names == ["*"] and sorted_before:  # fields added since the page was arranged
            return "Not yet sorted into a section above:\n\n" + table
        return table

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, page: Any = None, config: Any = None, files: Any = None) -> str:
    """The MkDocs event: expand the page's reference markers."""
    return expand(markdown) if "<!-- reference:" in markdown else markdown
