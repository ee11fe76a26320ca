"""Metrics on hand-made equity curves, with values worked out by hand."""

import math

import pytest

from stocker_core.evaluation.metrics import MetricsError, curve_metrics, format_metric, max_drawdown


def _metrics(values, closes=None, positions=None, traded=None, reward=None):
    days = len(values) - 1
    return curve_metrics(
        values, closes or [1.0] * days, positions or [0.0] * days, traded or [0.0] * days, reward
    )


def test_flat_curve_has_no_sharpe_sortino_calmar_or_win_rate():
    m = _metrics([100.0, 100.0, 100.0])
    assert m["total_return"] == 0.0 and m["arr"] == 0.0 and m["mdd"] == 0.0
    assert m["volatility"] == 0.0
    assert m["sharpe"] is None and m["sharpe_annual"] is None
    assert m["sortino"] is None and m["calmar"] is None and m["win_rate"] is None


def test_monotone_curve():
    # r = [0.10, 0.20]: mean 0.15, sample std sqrt(0.005) = 0.0707107
    m = _metrics([100.0, 110.0, 132.0])
    assert m["total_return"] == pytest.approx(0.32)
    assert m["arr"] == pytest.approx(1.32**126 - 1, rel=1e-9)
    assert m["sharpe"] == pytest.approx(0.15 / math.sqrt(0.005))
    assert m["sharpe"] == pytest.approx(2.1213203, rel=1e-7)
    assert m["sharpe_annual"] == pytest.approx(2.1213203 * math.sqrt(252), rel=1e-7)
    assert m["volatility"] == pytest.approx(math.sqrt(0.005) * math.sqrt(252))
    assert m["mdd"] == 0.0 and m["calmar"] is None
    assert m["sortino"] is None  # no losing day
    assert m["win_rate"] == 1.0


def test_one_crash():
    # 100 -> 120 -> 60 -> 90: r = [0.2, -0.5, 0.5]
    m = _metrics([100.0, 120.0, 60.0, 90.0])
    assert m["total_return"] == pytest.approx(-0.1)
    assert m["mdd"] == pytest.approx(0.5)  # (120 - 60) / 120
    assert m["arr"] == pytest.approx(0.9**84 - 1)
    assert m["calmar"] == pytest.approx((0.9**84 - 1) / 0.5)
    assert m["win_rate"] == pytest.approx(2 / 3)
    # mean 0.0666667; sample std sqrt(0.5266667 / 2) = 0.5131601
    assert m["sharpe"] == pytest.approx(0.0666667 / 0.5131601, rel=1e-6)
    # downside deviation sqrt(0.25 / 3) = 0.2886751
    assert m["sortino"] == pytest.approx(0.0666667 / 0.2886751, rel=1e-6)


def test_drawdown_peak_includes_the_starting_cash():
    assert max_drawdown([100.0, 90.0, 95.0]) == pytest.approx(0.10)


def test_single_day():
    up = _metrics([100.0, 105.0])
    assert up["total_return"] == pytest.approx(0.05)
    assert up["arr"] == pytest.approx(1.05**252 - 1)
    assert up["sharpe"] is None and up["volatility"] is None and up["sortino"] is None
    assert up["mdd"] == 0.0 and up["win_rate"] == 1.0
    down = _metrics([100.0, 95.0])
    assert down["mdd"] == pytest.approx(0.05)
    assert down["sortino"] is None  # like Sharpe, needs two days
    assert down["calmar"] == pytest.approx((0.95**252 - 1) / 0.05)


def test_trades_turnover_exposure():
    # buy 5 shares at 10 without costs: value 100 then 150 when the close doubles
    m = _metrics([100.0, 100.0, 150.0], [10.0, 20.0], [5.0, 5.0], [5.0, 0.0], reward=0.25)
    assert m["trades"] == 1
    assert m["turnover"] == pytest.approx(0.5)  # 5 * 10 / 100
    assert m["exposure"] == pytest.approx((0.5 + 100 / 150) / 2)
    assert m["total_reward"] == 0.25 and m["final_value"] == 150.0


@pytest.mark.parametrize("values", [[100.0], [], [100.0, -5.0], [100.0, float("nan")]])
def test_bad_curves_raise_a_clear_error(values):
    with pytest.raises(MetricsError):
        _metrics(values) if len(values) > 1 else curve_metrics(values, [], [], [])


def test_format_metric_shows_a_dash_for_missing_values():
    assert format_metric(None) == "–" and format_metric(float("nan")) == "–"
    assert format_metric(3) == "3" and format_metric(0.123456) == "0.1235"
    assert format_metric(12345.6) == "12,346"
