"""Which tests run in the ``serial`` xdist group (tests/conftest.py marks them at collection)."""

from __future__ import annotations

SERIAL_GROUP = "serial"
"""The xdist group of tests that need the machine, or a resource, to themselves: with
``--dist loadgroup`` (pyproject's addopts) they all run on one worker, one after another, so
no two of them overlap (the other worker keeps running the rest)."""

SERIAL_TESTS: dict[str, str] = {
    # a file (every test in it) or a file::test (every parametrisation): why it is exclusive
    "tests/assets/test_dagster_dev_smoke.py": "dagster dev: webserver, daemon and code server processes",
    "tests/cli/test_ui_signals.py::test_sigterm_stops_dagster_dev_and_all_its_children": "dagster dev",
    "tests/assets/test_instance_init_race.py": "three processes racing on a barrier",
    "tests/assets/test_lanes.py::test_two_lanes_build_what_one_builds_and_report_a_failure": "lane processes",
    "tests/assets/test_lane_lifetime.py::test_killed_lanes_die_and_a_rerun_matches_a_clean_run": (
        "lane processes, killed; it looks for leftover processes"
    ),
    "tests/scale/test_celery_materialize.py": "Postgres, Redis and a Celery worker (pg_redis)",
    "tests/scale/test_concurrent_cli_postgres.py": "pg_redis: one server for the session",
    "tests/scale/test_compose_file.py::test_templates_load_against_postgres": "pg_redis",
    "tests/scale/test_deploy_init.py::test_written_files_load_as_a_postgres_instance": "pg_redis",
    "tests/warehouse/test_concurrent_writers.py": "writer and reader processes against a lock",
    "tests/council/test_council_write_lock.py": "another process against the vote lock; read-time bounds",
    "tests/market/test_chart_pool_orphans.py": "kills a process tree and reads /proc",
    "tests/council/test_llm_limits.py": "wall-clock deadlines of a trickling server",
    "tests/cli/test_inverted_range.py": "a wall-clock bound (exits within 5 s)",
    "tests/evaluation/test_forecast.py::test_registry_builds_it_and_a_40_step_episode_runs_fast": "5 s bound",
    "tests/council/test_council_transformers.py::test_transformers_backend_generates_on_cpu": "a 20 s bound",
    "tests/env/test_server_live.py": "live servers with wall-clock limits on uploads",
    "tests/web/test_web_browser.py": "Chromium and a live server",
}


def serial_reason(nodeid: str) -> str | None:
    """Why the test ``nodeid`` runs in the serial group, or None when it need not."""
    for key, reason in SERIAL_TESTS.items():
        if nodeid == key or nodeid.startswith((key + "::", key + "[")):
            return reason
    return None
