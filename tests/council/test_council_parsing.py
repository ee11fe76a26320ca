"""Vote and moderator parsers: known shapes and thousands of hostile strings."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stocker_core.council.models import Action, SpecialistVote
from stocker_core.council.parsing import parse_action, parse_vote


@pytest.mark.parametrize(
    ("text", "signal", "confidence"),
    [
        ('{"signal": 0.5, "confidence": 0.8, "rationale": "x"}', 0.5, 0.8),
        ('```json\n{"signal": -0.3, "confidence": 0.6}\n```\nThat is my view.', -0.3, 0.6),
        ("Sure. {'signal': 0.2, 'confidence': 0.9, 'rationale': 'single quotes'} bye", 0.2, 0.9),
        ('{"signal": 7, "confidence": -2}', 1.0, 0.0),
        ('{"signal": "-40%", "confidence": "0.5"}', -0.4, 0.5),
        ('{"Signal": 0.1, "Confidence": 0.2,}', 0.1, 0.2),
        ("signal: -0.6\nconfidence: 0.4\nbecause", -0.6, 0.4),
    ],
)
def test_vote_shapes(text, signal, confidence):
    vote = parse_vote(text, "news")
    assert not vote.parse_error
    assert vote.signal == pytest.approx(signal) and vote.confidence == pytest.approx(confidence)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no idea",
        "{oops",
        '{"signal": NaN}',
        "{'signal': None}",
        '{"signal": 1e999}',
        None,
        42,
        "[1, 2]",
        "{" * 5000,
    ],
)
def test_vote_garbage_is_neutral(text):
    vote = parse_vote(text, "news")
    assert vote.parse_error and vote.signal == 0 and vote.confidence == 0


def test_action_shapes_and_clamping():
    action, _, err = parse_action('```json\n{"side": "BUY", "quantity": 500}\n```', 1000, 0, 100)
    assert (action.side, action.quantity, err) == ("buy", 9, False)
    action, _, _ = parse_action("{'side': 'sell', 'quantity': 99}", 1000, 5, 100)
    assert (action.side, action.quantity) == ("sell", 5)
    action, _, _ = parse_action('{"side": "sell", "quantity": 3}', 1000, 0, 100)
    assert action == Action.hold()
    action, _, _ = parse_action('{"side": "buy", "quantity": -4}', 1000, 0, 100)
    assert action == Action.hold()
    action, _, err = parse_action("I would buy some", 1000, 0, 100)
    assert action == Action.hold() and err


hostile = st.one_of(
    st.text(max_size=300),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.builds(
        lambda a, b, c: f'{{"signal": {a}, "confidence": {b}, "side": "{c}", "quantity": {a}}}',
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.text(max_size=8)),
        st.one_of(st.floats(allow_nan=True), st.text(max_size=8)),
        st.sampled_from(["buy", "sell", "hold", "x", ""]),
    ),
    st.lists(
        st.sampled_from(
            [
                "{",
                "}",
                '"',
                "'",
                "```",
                "json",
                ":",
                ",",
                "signal",
                "side",
                "quantity",
                "1e308",
                "-",
                "nan",
                "\\",
                "\n",
            ]
        ),
        max_size=60,
    ).map("".join),
)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    text=hostile,
    cash=st.floats(-1e9, 1e9),
    position=st.integers(-10, 10**6),
    price=st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)),
)
def test_fuzz_parsers_never_raise(text, cash, position, price):
    vote = parse_vote(text, "indicator")
    assert isinstance(vote, SpecialistVote)
    assert -1 <= vote.signal <= 1 and 0 <= vote.confidence <= 1
    action, rationale, _ = parse_action(text, cash, position, price)
    assert isinstance(action, Action) and isinstance(rationale, str)
    if action.side == "sell":
        assert 0 < action.quantity <= position
    if action.side == "buy":
        assert price and action.quantity * price <= cash


def test_random_strings_never_raise():
    import random

    rng = random.Random(7)
    alphabet = "{}[]\"':,0123456789.-+eE sideqntyculbhor`json\n\\"
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        vote = parse_vote(text, "news")
        assert -1 <= vote.signal <= 1 and 0 <= vote.confidence <= 1
        action, _, _ = parse_action(text, 1000.0, 3, 50.0)
        assert action.side == "hold" or action.quantity > 0
