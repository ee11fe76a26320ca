"""The serial xdist group and the extra slow tests name tests that exist, by file or by test."""

import re
from pathlib import Path

import pytest
from xdist_groups import SERIAL_TESTS, SLOW_TESTS, serial_reason, slow_reason

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("key", sorted({*SERIAL_TESTS, *SLOW_TESTS}))
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
