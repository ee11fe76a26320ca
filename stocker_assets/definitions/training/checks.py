"""Training checks: what the trained models do on valid, shown on each model's page.

``moderator_sft``, ``moderator_grpo``, ``agent_policy``: parse rate on valid (ERROR below
95%), return vs buy-and-hold on valid with its CI (WARN unless the CI is above zero), and
the share of zero-spread reward groups in the last tenth of training (WARN above 0.5).
Figures from the training report beside the model (``stocker_core.evaluation.model_checks``);
an older report without them gives a WARN that says so.
"""

from collections.abc import Callable
from typing import Any

import dagster as dg

from stocker_assets.definitions.resources import StockerResource
from stocker_core.config import Settings
from stocker_core.errors import StockerError
from stocker_core.evaluation.model_checks import (
    CI_METHOD,
    MAX_ZERO_SPREAD,
    MIN_PARSE_RATE,
    ModelFigures,
    model_figures,
)

PARSE_CHECK = "valid_parse_rate"
DELTA_CHECK = "valid_return_vs_buy_and_hold"
SPREAD_CHECK = "reward_groups_have_spread"
MODEL_CHECK_NAMES = (PARSE_CHECK, DELTA_CHECK, SPREAD_CHECK)

Report = dict[str, Any]


def moderator_report(stage: str) -> Callable[[Settings], Report]:
    def read(settings: Settings) -> Report:
        from stocker_core.moderator.training import read_report

        return read_report(settings, stage)

    return read


def agent_report(settings: Settings) -> Report:
    """The current agent's manifest (``agent.json``), its per-step ``frac_reward_zero_std``
    moved under ``extra`` as in the moderator's report; older manifests derive it from the RL
    log's ``informative_groups``."""
    from stocker_core.agent.store import current_run

    manifest = dict(current_run(settings.home))
    extra = dict(manifest.get("extra") or {})
    log = manifest.get("rl_log") or []
    if "frac_reward_zero_std" not in extra and manifest.get("frac_reward_zero_std") is not None:
        extra["frac_reward_zero_std"] = manifest["frac_reward_zero_std"]
    elif "frac_reward_zero_std" not in extra and log and all("informative_groups" in s for s in log):
        extra["frac_reward_zero_std"] = [1.0 - float(s["informative_groups"]) for s in log]
        extra["zero_std_source"] = "rl_log informative_groups"
    manifest["extra"] = extra
    return manifest


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.4f}"


def _missing(name: str, asset: dg.AssetKey, why: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=name,
        asset_key=asset,
        passed=False,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"figures": "missing", "why": why},
    )


def _parse_result(asset: dg.AssetKey, figures: ModelFigures, source: dict[str, str]) -> dg.AssetCheckResult:
    """The parse rate on valid (ERROR below ``MIN_PARSE_RATE``)."""
    return dg.AssetCheckResult(
        check_name=PARSE_CHECK,
        asset_key=asset,
        passed=bool(figures.parse_ok),
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "parse_rate": figures.parse_rate if figures.parse_rate is not None else float("nan"),
            "threshold": MIN_PARSE_RATE,
            "valid_episodes": figures.episodes,
            "policy": figures.policy,
            **source,
        },
    )


def _delta_result(
    asset: dg.AssetKey, figures: ModelFigures, block: int, source: dict[str, str]
) -> dg.AssetCheckResult:
    """Δ total return vs buy-and-hold on valid with its CI (WARN unless the CI is above zero)."""
    return dg.AssetCheckResult(
        check_name=DELTA_CHECK,
        asset_key=asset,
        passed=bool(figures.beats_buy_and_hold),
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "delta_total_return_mean": _nan(figures.delta_mean),
            "ci_low": _nan(figures.delta_low),
            "ci_high": _nan(figures.delta_high),
            "paired_episodes": figures.paired_episodes,
            "episodes_per_independent_block": block,
            "ci_method": CI_METHOD,
            "verdict": dg.MetadataValue.md(
                f"Δ total return vs buy-and-hold on valid: {_fmt(figures.delta_mean)} "
                f"[{_fmt(figures.delta_low)}, {_fmt(figures.delta_high)}] over "
                f"{figures.paired_episodes} episode(s): "
                + (
                    "above zero"
                    if figures.beats_buy_and_hold
                    else "**not above zero**"
                    if figures.delta_low is not None
                    else "**too few independent episodes for a CI**"
                )
            ),
            **source,
        },
    )


def _spread_result(
    asset: dg.AssetKey,
    report: Report,
    zero: Any,
    figures: ModelFigures,
    source: dict[str, str],
) -> dg.AssetCheckResult:
    """The share of zero-spread reward groups in the last tenth of training (WARN above
    ``MAX_ZERO_SPREAD``); passed with a note where the stage has no reward groups."""
    supervised = report.get("stage") == "sft"
    if zero is None and not supervised:
        return _missing(SPREAD_CHECK, asset, "the training report has no extra.frac_reward_zero_std")
    if figures.zero_spread_last_tenth is None:
        note = (
            "supervised stage: no reward groups" if supervised else "no policy-gradient steps in this stage"
        )
        return dg.AssetCheckResult(
            check_name=SPREAD_CHECK,
            asset_key=asset,
            passed=True,
            metadata={"training_steps": 0, "note": note, **source},
        )
    return dg.AssetCheckResult(
        check_name=SPREAD_CHECK,
        asset_key=asset,
        passed=bool(figures.groups_have_spread),
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "zero_spread_share_last_tenth": figures.zero_spread_last_tenth,
            "threshold": MAX_ZERO_SPREAD,
            "training_steps": figures.zero_spread_steps,
            "steps_in_last_tenth": -(-figures.zero_spread_steps // 10),
            **source,
        },
    )


def model_check_results(asset: dg.AssetKey, report: Report | None, why: str, block: int) -> list:
    """The three results for ``asset`` from its training ``report`` (None: not readable, ``why``)."""
    if report is None:
        return [_missing(name, asset, why) for name in MODEL_CHECK_NAMES]
    records = report.get("heldout_episodes")
    zero = (report.get("extra") or {}).get("frac_reward_zero_std")
    figures: ModelFigures = model_figures(records, zero, asset.to_user_string(), block)
    source = {"report": str(report.get("path") or report.get("run_dir") or "")}
    results = []
    if records is None or figures.policy is None:
        why = (
            "the training report has no heldout_episodes (an older report): retrain to get the figures"
            if records is None
            else "heldout_episodes holds no records of this model"
        )
        results += [_missing(PARSE_CHECK, asset, why), _missing(DELTA_CHECK, asset, why)]
    else:
        results += [_parse_result(asset, figures, source), _delta_result(asset, figures, block, source)]
    results.append(_spread_result(asset, report, zero, figures, source))
    return results


def _nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _model_checks(
    asset_name: str, read: Callable[[Settings], Report], overlapping: bool
) -> dg.AssetChecksDefinition:
    """The three checks of a model; ``overlapping``: its valid episodes overlap (monthly
    starts of ``episode_months``-long windows), so the CI counts fewer effective episodes."""
    asset = dg.AssetKey(asset_name)
    descriptions = {
        PARSE_CHECK: f"Share of the model's valid-split decisions that parse into an action (ERROR below "
        f"{MIN_PARSE_RATE:.0%}).",
        DELTA_CHECK: "Mean Δ total return vs buy-and-hold over the valid episodes, with its CI (WARN "
        "unless the whole CI is above zero).",
        SPREAD_CHECK: "Share of reward groups with zero spread (no gradient) in the last tenth of "
        f"training (WARN above {MAX_ZERO_SPREAD}).",
    }

    @dg.multi_asset_check(
        specs=[dg.AssetCheckSpec(n, asset=asset, description=descriptions[n]) for n in MODEL_CHECK_NAMES],
        name=f"{asset_name}_model_checks",
        can_subset=True,  # each check can be executed on its own from the UI
    )
    def _check(context: dg.AssetCheckExecutionContext, stocker: StockerResource):
        settings = stocker.settings()
        try:
            report, why = read(settings), ""
        except (StockerError, OSError, ValueError) as exc:
            report, why = None, f"no readable training report: {exc}"
        block = settings.episode_months if overlapping else 1
        selected = context.selected_asset_check_keys
        for result in model_check_results(asset, report, why, block):
            if dg.AssetCheckKey(asset, result.check_name) in selected:
                yield result

    return _check


moderator_sft_checks = _model_checks("moderator_sft", moderator_report("sft"), overlapping=True)
moderator_grpo_checks = _model_checks("moderator_grpo", moderator_report("grpo"), overlapping=True)
agent_policy_checks = _model_checks("agent_policy", agent_report, overlapping=False)  # disjoint windows


MODEL_CHECKS = [moderator_sft_checks, moderator_grpo_checks, agent_policy_checks]
