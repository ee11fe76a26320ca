"""Parser, result / format / tool scores on hand-made traces (numbers worked out by hand)."""

from __future__ import annotations

import pytest

from stocker_core.agent.config import AgentConfig
from stocker_core.agent.parsing import parse_turn
from stocker_core.agent.rewards import format_parts, label_for, result_score, score_trace, tool_parts
from stocker_core.agent.trace import Trace, Turn

PRICE = '{"name": "get_price_history", "arguments": {"lookback_days": 20}}'
NEWS = '{"name": "get_news", "arguments": {"days": 7}}'


def tool_turn(name: str, args: dict, valid: bool = True) -> Turn:
    return Turn("tool", "", tool_call={"name": name, "arguments": args}, tool_result={}, valid=valid)


def trace_of(*turns: Turn, decision: str | None = None) -> Trace:
    return Trace("SYN", "2023-06-14", "test", [Turn("user", "task"), *turns], decision=decision)


def good_trace() -> Trace:
    return trace_of(
        Turn("assistant", f"<plan> check price then news </plan> <tool>{PRICE}</tool>"),
        tool_turn("get_price_history", {"lookback_days": 20}),
        Turn("assistant", f"<think> trend up </think> <tool>{NEWS}</tool>"),
        tool_turn("get_news", {"days": 7}),
        Turn("assistant", "<think> news positive so buy </think> <answer>BUY</answer>"),
        decision="BUY",
    )


@pytest.mark.parametrize(
    ("forward", "theta", "label"),
    [
        (0.016, 0.015, "BUY"),
        (0.015, 0.015, "HOLD"),
        (-0.015, 0.015, "HOLD"),
        (-0.02, 0.015, "SELL"),
        (0.012, 0.010, "BUY"),
        (0.012, 0.020, "HOLD"),
    ],
)
def test_label_uses_the_theta_band(forward, theta, label):
    assert label_for(forward, theta) == label


def test_result_score():
    assert result_score("BUY", 0.03, 0.015) == 1.0
    assert result_score("HOLD", 0.03, 0.015) == 0.0
    assert result_score("SELL", -0.03, 0.015) == 1.0
    assert result_score("HOLD", 0.001, 0.015) == 1.0
    assert result_score(None, 0.001, 0.015) == 0.0


def test_graded_result_is_the_excess_over_buy_and_hold_in_units_of_theta():
    # BUY is buy-and-hold: no excess, whatever happens next
    assert result_score("BUY", 0.03, 0.015, "graded") == 0.0
    # SELL (flat) before a 0.6% fall avoids it: +0.006 / 0.015 = +0.4
    assert result_score("SELL", -0.006, 0.015, "graded") == pytest.approx(0.4)
    # HOLD counts half invested: -0.5 * 0.009 / 0.015 = -0.3
    assert result_score("HOLD", 0.009, 0.015, "graded") == pytest.approx(-0.3)
    # clipped to [-1, 1]; no answer counts as half invested
    assert result_score("SELL", 0.10, 0.015, "graded") == -1.0
    assert result_score(None, -0.003, 0.015, "graded") == pytest.approx(0.1)
    with pytest.raises(ValueError, match="result mode"):
        result_score("BUY", 0.0, 0.015, "nonsense")


def test_hold_keeps_the_held_position_and_moves_pay_their_cost():
    # long before a 0.9% rise: HOLD is buy-and-hold (0), SELL gives up the rise and pays 0.1%
    assert result_score("HOLD", 0.009, 0.015, "graded", held=1.0, cost=0.001) == 0.0
    assert result_score("SELL", 0.009, 0.015, "graded", held=1.0, cost=0.001) == pytest.approx(
        (-0.009 - 0.001) / 0.015
    )
    # flat before a 0.6% fall: HOLD avoids it for free, BUY takes it and pays to get in
    assert result_score("HOLD", -0.006, 0.015, "graded", held=0.0, cost=0.001) == pytest.approx(0.4)
    assert result_score("BUY", -0.006, 0.015, "graded", held=0.0, cost=0.001) == pytest.approx(-0.001 / 0.015)


def test_held_positions_are_fixed_by_the_pair_and_even():
    from stocker_core.agent.rewards import held_position

    days = [f"2021-{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, 29)]
    held = [held_position("SYN1", day, 0) for day in days]
    assert held == [held_position("SYN1", day, 0) for day in days] and set(held) == {0.0, 1.0}
    assert 0.4 < sum(held) / len(held) < 0.6


def test_parser_lists_problems_and_never_raises():
    assert parse_turn(f"<plan> a b </plan> <tool>{PRICE}</tool>").problems == ()
    two = parse_turn(f"<think> x y </think> <tool>{PRICE}</tool> <tool>{NEWS}</tool>")
    assert len(two.tool_calls) == 2 and "2 tool calls in one turn" in two.problems
    bad_json = parse_turn("<think> x y </think> <tool>{not json</tool>")
    assert bad_json.tool_calls[0].parsed is False
    assert parse_turn("<answer>maybe</answer>").decision is None
    assert parse_turn("<answer> sell </answer>").decision == "SELL"
    junk = parse_turn("just words <think> unclosed")
    assert "unbalanced <think> tags" in junk.problems and "no tool call and no answer" in junk.problems
    assert parse_turn(None).problems  # type: ignore[arg-type]


def test_a_clean_trace_scores_full_format_and_tool_use():
    config = AgentConfig(result_mode="band")
    trace = good_trace()
    scores = score_trace(trace, 0.02, config)
    assert (scores.result, scores.format, scores.tool) == (1.0, 1.0, 1.0)
    assert scores.total == pytest.approx(1.0 + 0.5 + 0.5)
    assert trace.label == "BUY" and trace.theta == 0.015


def test_format_parts_by_hand():
    config = AgentConfig(min_reasoning_words=2, max_reasoning_words=4)
    trace = trace_of(
        Turn("assistant", f"<tool>{PRICE}</tool>"),  # no plan, no reasoning
        tool_turn("get_price_history", {"lookback_days": 20}),
        Turn("assistant", "<think> one two three four five </think> <answer>MAYBE</answer> trailing"),
        Turn("user", "format error"),
        Turn("assistant", "<think> fine words </think> <answer>HOLD</answer>"),
        decision="HOLD",
    )
    parts = format_parts(trace, config)
    assert parts == {
        "valid_label": 1.0,
        "plan": 0.0,
        "reasoning_tags": 2 / 3,
        "reasoning_length": 1 / 2,  # five words is too long, two is fine
        "clean": 2 / 3,  # the MAYBE turn has a bad label and stray text
    }
    assert score_trace(trace, 0.0, config).format == pytest.approx((1 + 0 + 2 / 3 + 1 / 2 + 2 / 3) / 5)


def test_tool_parts_penalise_duplicates_bad_arguments_and_multi_call_turns():
    config = AgentConfig(max_tool_calls=4)
    trace = trace_of(
        Turn("assistant", f"<plan> a b </plan> <tool>{PRICE}</tool> <tool>{NEWS}</tool>"),
        tool_turn("get_price_history", {"lookback_days": 20}),
        Turn("assistant", f"<think> again same </think> <tool>{PRICE}</tool>"),
        tool_turn("get_price_history", {"lookback_days": 20}),
        Turn(
            "assistant",
            '<think> bad args </think> <tool>{"name": "get_news", "arguments": {"days": 0}}</tool>',
        ),
        tool_turn("get_news", {"days": 0}, valid=False),
        Turn("assistant", "<think> done now </think> <answer>HOLD</answer>"),
        decision="HOLD",
    )
    parts = tool_parts(trace, config)
    assert parts == {
        "valid_arguments": 2 / 3,
        "no_duplicates": 1 - 1 / 3,
        "sensible_count": 1.0,
        "one_call_per_turn": 1 - 1 / 3,  # the first of three calling turns made two calls
    }
    single = good_trace()
    assert tool_parts(single, config)["one_call_per_turn"] == 1.0
    assert score_trace(trace, 0.0, config).tool < score_trace(single, 0.0, config).tool


def test_no_calls_or_too_many_calls_is_not_a_sensible_count():
    config = AgentConfig(max_tool_calls=1)
    none = trace_of(Turn("assistant", "<plan> just answer </plan> <answer>HOLD</answer>"), decision="HOLD")
    assert tool_parts(none, config)["sensible_count"] == 0.0
    many = good_trace()  # two calls against a cap of one
    assert tool_parts(many, config)["sensible_count"] == 0.0


def test_an_unanswered_trace_scores_zero_result_and_no_label():
    config = AgentConfig()
    trace = trace_of(Turn("assistant", "<plan> hmm </plan> nothing"), Turn("user", "format error"))
    scores = score_trace(trace, 0.0, config)
    assert scores.result == 0.0 and scores.parts["valid_label"] == 0.0
    assert trace.action == "HOLD"
