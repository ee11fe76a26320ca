"""The serial xdist group, the extra slow tests and the shared-fixture modules name tests that
exist, by file or by test; the work queue's order."""

import re
from pathlib import Path

import pytest
from xdist_groups import (
    SERIAL_TESTS,
    SHARED_FIXTURE_MODULES,
    SLOW_TESTS,
    queue_rank,
    serial_reason,
    shared_fixture_module,
    slow_reason,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("key", sorted({*SERIAL_TESTS, *SLOW_TESTS, *SHARED_FIXTURE_MODULES}))
def test_every_entry_names_a_test_that_exists(key):
    path, _, name = key.partition("::")
    source = ROOT / path
    assert source.is_file(), f"{path} is gone: update tests/xdist_groups.py"
    if name:
        assert re.search(rf"^(async )?def {re.escape(name)}\(", source.read_text(), re.M), (
            f"{name} is not in {path}: update tests/xdist_groups.py"
        )


def test_matching_is_by_file_or_by_test():
    assert serial_reason("tests/assets/test_dagster_dev_smoke.py::anything") is not None
    lanes = "tests/assets/test_lanes.py::test_two_lanes_build_what_one_builds_and_report_a_failure"
    assert serial_reason(lanes) is not None and serial_reason(lanes + "[x]") is not None
    assert serial_reason("tests/assets/test_lanes.py::test_worker_count") is None
    assert serial_reason("tests/assets/test_dagster_dev_smoke.pyc::x") is None
    assert slow_reason("tests/assets/test_dg_cli.py::test_dg_check_defs") is not None
    assert slow_reason("tests/assets/test_lanes.py::test_worker_count") is None


def test_shared_fixture_modules_are_whole_files_outside_the_serial_group():
    for module in SHARED_FIXTURE_MODULES:
        assert "::" not in module and serial_reason(module + "::x") is None, module
    report = "tests/evaluation/test_report.py"
    assert shared_fixture_module(report + "::test_x[1]") == report
    assert shared_fixture_module("tests/evaluation/test_reports.py::test_x") is None


def test_the_queue_starts_with_the_serial_group_then_the_longest_work():
    slow_modules = {"tests/test_readme_examples.py"}
    ranks = [
        queue_rank("tests/assets/test_dagster_dev_smoke.py::test_x", slow_modules),
        queue_rank("tests/test_readme_examples.py::test_the_docs_pages_are_read", slow_modules),
        queue_rank("tests/web/test_web_views.py::test_x", slow_modules),
        queue_rank("tests/test_cli.py::test_x", slow_modules),
    ]
    assert ranks == sorted(ranks) and len(set(ranks)) == 4
