"""Which tests run in the ``serial`` xdist group, which more tests are ``slow`` (the fast lane
skips them), and which modules go to one worker whole (their module fixtures are built once):
tests/conftest.py applies all three at collection and in its xdist scheduler."""

from __future__ import annotations

SERIAL_GROUP = "serial"
"""The xdist group of tests that need the machine, or a resource, to themselves: with
``--dist loadgroup`` (pyproject's addopts) they all run on one worker, one after another, so
no two of them overlap (the other worker keeps running the rest)."""

SERIAL_TESTS: dict[str, str] = {
    # a file (every test in it) or a file::test (every parametrisation): why it is exclusive
    "tests/assets/test_dagster_dev_smoke.py": "dagster dev: webserver, daemon and code server processes",
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
    "tests/env/test_openenv_live.py": "stocker serve as the image's command, in a subprocess",
    "tests/web/test_peer_addresses.py": "live servers reached from 127.0.0.3, 127.0.0.4 and 127.0.0.1",
}


def _reason(table: dict[str, str], nodeid: str) -> str | None:
    for key, reason in table.items():
        if nodeid == key or nodeid.startswith((key + "::", key + "[")):
            return reason
    return None


def serial_reason(nodeid: str) -> str | None:
    """Why the test ``nodeid`` runs in the serial group, or None when it need not."""
    return _reason(SERIAL_TESTS, nodeid)


SLOW_TESTS: dict[str, str] = {
    # also `slow` (the fast lane, `-m "not slow"`, skips them; CI runs them): the heaviest tests not
    # marked in their files, each 4 s or more on a quiet 2-core machine (12 s or more at load 10)
    "tests/assets/test_synthetic_materialize.py": "every group but training on a synthetic market",
    "tests/assets/test_env_assets.py": "Dagster runs of prices, episodes and ideal trajectories",
    "tests/assets/test_quality_gate.py::test_cli_materialize_exits_1_and_names_the_partition": "a CLI run",
    "tests/assets/test_quality_gate.py::test_corrections_file_fixes_the_value": "Dagster runs",
    "tests/assets/test_quality_gate.py::test_override_builds_clean_months_only": "Dagster runs",
    "tests/assets/test_dg_cli.py": "dg loads the whole project in a subprocess",
    "tests/assets/test_upkeep_checks.py::test_freshness_on_the_fixture_with_a_planted_gap": "Dagster runs",
    "tests/assets/test_upkeep_checks.py::test_agent_checks_read_the_current_manifest": "Dagster runs",
    "tests/assets/test_chart_assets.py::test_charts_asset_writes_every_session_and_is_idempotent": "charts",
    "tests/assets/test_chart_assets.py::test_chart_check_flags_missing_and_unreadable": "charts",
    "tests/assets/test_council_assets.py::test_votes_are_cached_and_the_second_run_computes_nothing": "votes",
    "tests/assets/test_market_assets.py": "Dagster runs of prices and indicators",
    "tests/assets/test_automation.py": "automation ticks over the whole graph",
    "tests/assets/test_freshness_sources.py": "Dagster runs on the sample and the synthetic market",
    "tests/council/test_rule_batch.py::test_every_vote_of_the_sample_equals_the_per_day_path": (
        "every day of three tasks through the frozen per-day path"
    ),
    "tests/council/test_synthetic_point_in_time.py": "a synthetic market's council contexts",
    "tests/council/test_council_transformers.py::test_transformers_backend_generates_on_cpu": "generation",
    "tests/evaluation/test_report.py::test_every_test_split_evaluation_is_a_counted_look": "backtests",
    "tests/evaluation/test_report.py::test_tables_hold_one_row_per_episode_policy_and_window": "backtests",
    "tests/evaluation/test_report.py::test_report_answers_first_with_pooled_statistics": "backtests",
    "tests/evaluation/test_evaluation_cli.py::test_splits_and_report": "CLI backtests",
    "tests/evaluation/test_pooled.py::test_clones_are_named_never_the_best_and_left_out_of_the_family": (
        "backtests"
    ),
    "tests/ledger/test_ledger_report.py::test_the_report_shows_the_forward_record_apart_by_mode": "a ledger",
    "tests/cli/test_cli_startup.py::test_fast_commands_import_nothing_heavy": "a subprocess per command",
    "tests/market/test_charts.py::test_process_pool_gives_the_same_bytes": "a process pool",
    "tests/market/test_chart_pool_orphans.py": "process pools, killed",
    "tests/env/test_server_live.py::test_typed_client_plays_snapshots_and_restores": "a live server",
    "tests/test_readme_examples.py::test_readme_examples_run_as_written": "17 `stocker` commands",
    "tests/test_cli.py::test_materialize_backfills_a_ticker": "a CLI run over months",
    "tests/scale/test_celery_queues.py::test_queue_tags_follow_the_settings": "Dagster definitions per queue",
    "tests/web/test_web_browser.py": "Chromium",
    "tests/web/test_api_fuzz.py": "generated requests against the web API",
    "tests/web/test_web_serve.py::test_serve_answers_the_environment_and_the_page": "a live server",
    "tests/web/test_server_concurrency.py": "concurrent first resets of a live server",
    "tests/market/test_files_source_fuzz.py::"
    "test_corrupted_csv_never_tracebacks_and_bad_months_never_pass_the_gate": "generated bar files",
    "tests/moderator/test_training_stages.py": "trains the moderator's stages once per module",
    "tests/moderator/test_training_assets.py": "the training group through Dagster",
}


def slow_reason(nodeid: str) -> str | None:
    """Why the test ``nodeid`` is ``slow`` by this list, or None."""
    return _reason(SLOW_TESTS, nodeid)


SHARED_FIXTURE_MODULES: dict[str, str] = {
    # a file whose tests go to one worker, one after another, as one work unit: the module-scoped
    # fixture they share (or a session fixture only they use) is built once instead of once on
    # each worker (seconds: its setup on a quiet box)
    "tests/moderator/test_training_stages.py": "`trained`: base, SFT, GRPO, ~17 s at load 4",
    "tests/agent/test_agent_scored_answer.py": "the tiny agent model, ~4 s",
    "tests/evaluation/test_drl.py": "trained agents, ~5 s",
    "tests/evaluation/test_report.py": "a rolling evaluation, ~4 s",
    "tests/web/test_web_clones.py": "a home with clone policies, ~2.6 s",
    "tests/web/test_web_council_on_demand.py": "`cli_runs`: the council on the three reference tasks, ~5 s",
    "tests/web/test_training_view.py": "a home with an agent run and its client, ~1 s",
    "tests/web/test_play_owner.py": "`app`: the web app on the tiny home, ~0.7 s",
    "tests/web/test_server_episode_cache.py": "the tiny home, ~2 s",
    "tests/web/test_bad_input_is_4xx.py": "the tiny home, ~1 s",
    "tests/web/test_web_serve.py": "the tiny home, ~1 s",
    "tests/web/test_server_concurrency.py": "the tiny home, ~1 s",
    "tests/web/test_web_guards.py": "the tiny home, ~1 s",
    "tests/web/test_web_play.py": "the tiny home, ~1 s",
    "tests/web/test_web_views.py": "the tiny home, ~0.8 s",
    "tests/web/test_web_charts_on_demand.py": "the tiny home, ~0.8 s",
    "tests/web/test_web_pages.py": "the tiny home, ~0.8 s",
    "tests/web/test_web_errors.py": "the tiny home, ~0.7 s",
    "tests/web/test_session_quotas.py": "the tiny home, ~0.7 s",
    "tests/council/test_council_choices.py": "a scored model, ~0.6 s",
    "tests/cli/test_cli_startup.py": "`probed`: a fresh `stocker` process per command line, 1-3 s each",
    "tests/assets/test_up_to_date_disk.py": "`built`: a synthetic home by `stocker materialize`, ~25 s",
}


def shared_fixture_module(nodeid: str) -> str | None:
    """The module of ``nodeid`` when its tests go to one worker whole, else None."""
    module = nodeid.split("::", 1)[0]
    return module if module in SHARED_FIXTURE_MODULES else None


def queue_rank(nodeid: str, slow_modules: set[str]) -> int:
    """Where the test ``nodeid`` goes in the xdist work queue (``-n``; tests/conftest.py), lowest
    first: the serial group (one worker starts it at once), then whole modules that hold a slow
    test, then the shared-fixture modules, then the rest. The longest work is handed out first,
    so the run does not end on one worker finishing a long test while the other waits."""
    if serial_reason(nodeid) is not None:
        return 0
    module = nodeid.split("::", 1)[0]
    if module in slow_modules:
        return 1
    return 2 if module in SHARED_FIXTURE_MODULES else 3
