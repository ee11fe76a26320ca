"""Declarative automation: how the graph follows the 18:30 corpus refresh.

- Partitioned assets downstream of ``prices`` follow new or changed upstream partitions of
  any month (:func:`follows_upstream_partitions`): Dagster's ``eager()`` without its
  "latest time window only" clause, so the episode that *ends* in the refreshed month and
  a corrected older month are followed too, and only the partitions whose inputs changed run.
- Training and whole-history evaluation run weekly (:data:`WEEKLY_RETRAIN`):
  ``on_cron`` on Fridays 18:00 New York, which arms them before the Friday refresh; each
  runs once all its inputs have updated after that tick. An ordinary day's refresh never
  retrains.
- The ``default_automation_condition_sensor`` evaluates both; it ships stopped: turn it on
  under Automation in the UI (the daemon, started by ``dagster dev`` or ``stocker ui``,
  evaluates it every 30 s).
"""

import dagster as dg

REFRESH_CRON = "30 18 * * 1-5"  # 18:30 New York time, after the 16:00 close
REFRESH_TZ = "America/New_York"
"""The corpus refresh's time (``market.refresh.corpus_refresh``), which everything here follows."""

WEEKLY_CRON = "0 18 * * 5"
"""Fridays 18:00 New York: arms the weekly retrain just before that day's refresh."""

TEXT_ASSETS = dg.AssetSelection.assets("news", "forum_posts", "macro_events")
"""Whole-corpus text events: their refresh does not re-run every month of votes."""
MODEL_ASSET_NAMES = ("drl_agents", "moderator_base", "moderator_sft", "moderator_grpo", "agent_policy")
MODEL_ASSETS = dg.AssetSelection.assets(*MODEL_ASSET_NAMES)
"""Trained models: a retrain is scored by the weekly rolling evaluation, not by re-running
every backtest partition."""


def follows_upstream_partitions(ignore_updates_of: dg.AssetSelection | None = None) -> dg.AutomationCondition:
    """``eager()`` over every month: a partition runs when an upstream partition it maps to
    is new or changed (or it becomes missing), once none of its inputs is missing or running.

    ``ignore_updates_of``: upstream assets whose updates do not trigger a run (their
    absence still holds it back).
    """
    updated = dg.AutomationCondition.any_deps_updated()
    if ignore_updates_of is not None:
        updated = updated.ignore(ignore_updates_of)
    return (
        (dg.AutomationCondition.newly_missing() | updated).since_last_handled()
        & ~dg.AutomationCondition.any_deps_missing()
        & ~dg.AutomationCondition.any_deps_in_progress()
        & ~dg.AutomationCondition.in_progress()
    ).with_label("eager (every month)")


FOLLOWS_PRICES = follows_upstream_partitions()
VOTES_FOLLOW_PRICES = follows_upstream_partitions(ignore_updates_of=TEXT_ASSETS)
BACKTESTS_FOLLOW_EPISODES = follows_upstream_partitions().ignore(MODEL_ASSETS)
"""Backtests follow prices, episodes and votes; the (unpartitioned) models are ignored, both
their updates and their absence (a policy whose model is missing is reported, not fatal)."""

WEEKLY_RETRAIN = dg.AutomationCondition.on_cron(WEEKLY_CRON, REFRESH_TZ)
AGENT_WEEKLY_RETRAIN = WEEKLY_RETRAIN.ignore(TEXT_ASSETS)
"""The agent also reads news and forum posts, which are not refreshed weekly."""

automation_sensor = dg.AutomationConditionSensorDefinition(
    "default_automation_condition_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.STOPPED,
    minimum_interval_seconds=30,
    description=(
        "Evaluates every asset's automation condition: partitions follow the corpus refresh; "
        "training and the whole-history evaluation run weekly. Turn on to automate."
    ),
)
