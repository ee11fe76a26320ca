"""Lazily resolved public names for packages (PEP 562), so importing a package is cheap."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], submodule: Callable[[str], ModuleType]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` that take ``name`` from the submodule
    ``exports[name]`` on first use (and cache it in the package). ``submodule(name)`` imports
    that submodule with a plain import statement, written in the package itself, so the
    import contract sees every edge and nothing is imported by a string."""
    module = sys.modules[package]

    def __getattr__(name: str) -> Any:
        try:
            where = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(submodule(where), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*module.__dict__, *exports})

    return __getattr__, __dir__
