"""Every core package declares its public API in ``__all__``, resolved lazily (lazy_loader) or
imported plainly where that is cheap."""

import importlib
import pkgutil
import subprocess
import sys

import pytest

import stocker_core

PACKAGES = sorted(
    f"stocker_core.{info.name}" for info in pkgutil.iter_modules(stocker_core.__path__) if info.ispkg
)


def test_every_core_package_declares_all():
    assert {"stocker_core.env", "stocker_core.council", "stocker_core.market"} <= set(PACKAGES)
    for name in PACKAGES:
        assert getattr(importlib.import_module(name), "__all__", None), f"{name} has no __all__"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_all_imports(package):
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
        assert name in dir(module)
    with pytest.raises(AttributeError, match="attribute"):  # lazy_loader: "No <package> attribute <name>"
        module.not_a_public_name  # noqa: B018


def test_readme_imports_work():
    from stocker_core.env import RewardParams, TradingEnv, load_episode

    assert TradingEnv.__module__ == "stocker_core.env.environment"
    assert callable(load_episode) and RewardParams().w_perf == 0.7


def test_importing_packages_is_cheap():
    """The packages resolve names lazily: importing them pulls in neither dagster nor torch."""
    code = (
        "import sys, importlib\n"
        f"for p in {PACKAGES!r}: importlib.import_module(p)\n"
        "print(sorted(m for m in ('dagster', 'torch', 'transformers', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
