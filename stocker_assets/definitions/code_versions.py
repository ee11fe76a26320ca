"""Code versions derived from the code: a hash of the module that defines an asset and of
every project module it imports, directly or not (``stocker_core`` and ``stocker_assets``,
parsed for ``import`` lines, function-level ones included).

Dagster compares an asset's code version with the one of its last materialization (the UI
shows "code version changed"), and ``stocker materialize`` rebuilds a partition whose code
version changed (``engine/freshness.py``). A hand-bumped string is forgotten; this one
changes whenever a line the asset can run changes, and only then.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

ROOTS = ("stocker_core", "stocker_assets")
_BASE = Path(__file__).resolve().parents[2]

_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.MULTILINE)
_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)", re.M
)


@functools.cache
def _modules() -> dict[str, Path]:
    """{dotted module name: file} of every project module."""
    found: dict[str, Path] = {}
    for root in ROOTS:
        for path in sorted((_BASE / root).rglob("*.py")):
            parts = path.relative_to(_BASE).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The deepest project module ``name`` (a module or ``module.attribute``) refers to."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


@functools.cache
def _imports(module: str) -> frozenset[str]:
    """Project modules that ``module``'s source imports (at any depth of its code)."""
    modules = _modules()
    path = modules[module]
    text = path.read_text(encoding="utf-8")
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    named: set[str] = set()
    for source, names in _FROM.findall(text):
        dots = len(source) - len(source.lstrip("."))
        if dots:
            base = package[: len(package) - (dots - 1)]
            source = ".".join([*base, source[dots:]] if source[dots:] else base)
        named.add(source)
        for item in names.strip("()").replace("\n", " ").split(","):
            word = item.split(" as ")[0].strip()
            if word and word != "*":
                named.add(f"{source}.{word}")
    for group in _IMPORT.findall(text):
        named.update(item.split(" as ")[0].strip() for item in group.split(","))
    found = {_resolve(n, modules) for n in named if n.split(".")[0] in ROOTS}
    return frozenset(m for m in found if m is not None and m != module)


def module_closure(module: str) -> list[str]:
    """``module`` and every project module it imports, directly or not, sorted."""
    seen: set[str] = set()
    stack = [module]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(_imports(name))
    return sorted(seen)


@functools.cache
def module_code_version(module: str) -> str:
    """16 hex digits over the source of ``module`` and of everything it imports."""
    modules = _modules()
    digest = hashlib.sha256()
    for name in module_closure(module):
        digest.update(name.encode() + b"\0" + modules[name].read_bytes() + b"\0")
    return digest.hexdigest()[:16]
