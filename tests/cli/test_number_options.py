"""Every number a ``stocker`` command takes has a declared range, and a value outside it is a
usage error naming the option, exit 2, never a traceback (issue 52: ``stocker episode run
--seed -1`` printed numpy's ValueError). The tree is walked, so a new option is covered."""

from __future__ import annotations

import pytest
from cli_testing import number_options, value_type
from typer.testing import CliRunner

from stocker_assets.cli import app

HUGE = "1" + "0" * 30


def _out_of_range(param) -> list[str]:
    """Values the option must refuse: just past each end, far past both, and for a float the
    non-finite ones; other scripts' digits too (``٣`` is not 3)."""
    values = [str(param.min - 1), str(param.max + 1), HUGE, f"-{HUGE}", "٣", "３"]
    if value_type(param) is float:
        values += ["nan", "inf", "-inf"]
    return values


OPTIONS = number_options()
CASES = [
    pytest.param(path, param, value, id=f"{' '.join(path)} {param.opts[0]} {value}")
    for path, param in OPTIONS
    if param.min is not None and param.max is not None
    for value in _out_of_range(param)
]


def test_the_walk_finds_the_options() -> None:
    names = {(" ".join(path), param.opts[0]) for path, param in OPTIONS}
    assert {("episode run", "--seed"), ("serve", "--port"), ("check-learning", "--years")} <= names


@pytest.mark.parametrize(
    ("path", "param"), [pytest.param(p, o, id=f"{' '.join(p)} {o.opts[0]}") for p, o in OPTIONS]
)
def test_every_number_option_declares_its_range(path, param) -> None:
    """``min=`` and ``max=`` on every int and float option: without both a huge, negative or
    non-finite number reaches the code (numpy seeds, ports, sizes)."""
    assert param.min is not None and param.max is not None, f"stocker {' '.join(path)} {param.opts[0]}"


@pytest.mark.parametrize(("path", "param", "value"), CASES)
def test_a_number_out_of_range_is_a_usage_error(path, param, value, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, [*path, param.opts[0], value])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit), result.output
    assert "Invalid value for" in result.output and param.opts[0] in result.output, result.output
    assert not (tmp_path / "home").exists()  # refused before anything ran


@pytest.mark.parametrize("value", ["2016-1", "２０１６-01", "20160101", "2016-W01", "9999-01"])
@pytest.mark.parametrize("option", ["--from", "--to"])
def test_a_month_option_is_yyyy_mm(option: str, value: str, tmp_path, monkeypatch) -> None:
    """``materialize --from/--to`` read a month as the month settings do, and name the option."""
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["materialize", option, value])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"Invalid value for '{option}'" in result.output, result.output


def test_a_negative_seed_is_a_usage_error(tmp_path, monkeypatch) -> None:
    """The issue's case: a traceback from numpy before, a usage line now."""
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["episode", "run", "--policy", "random", "--seed", "-1"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "Invalid value for '--seed'" in result.output
