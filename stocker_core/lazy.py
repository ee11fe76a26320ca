"""Lazily resolved public names for packages (PEP 562), so importing a package is cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` that import ``name`` from the
    submodule ``exports[name]`` on first use (and cache it in the package)."""
    module = importlib.import_module(package)

    def __getattr__(name: str) -> Any:
        try:
            submodule = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{package}.{submodule}"), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*module.__dict__, *exports})

    return __getattr__, __dir__
