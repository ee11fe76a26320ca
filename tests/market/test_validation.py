import pytest

from stocker_core.errors import InvalidNameError
from stocker_core.market.validation import parse_partition_key, validate_month, validate_ticker


@pytest.mark.parametrize("good", ["AAPL", "BRK.B", "BRK-B", "^GSPC", "GC=F", "CL=F", "7203.T", "A"])
def test_plausible_symbols_pass(good):
    assert validate_ticker(good) == good


@pytest.mark.parametrize(
    "bad", ["", "../etc", "A;DROP TABLE", "aapl", "AAPL ", "A/B", "A'--", "X" * 16, "..", "A..B", None, 5]
)
def test_hostile_symbols_fail_clearly(bad):
    with pytest.raises(InvalidNameError, match="invalid ticker"):
        validate_ticker(bad)


def test_partition_key_round_trip():
    ticker, month = parse_partition_key("AAPL|2023-08-01")
    assert ticker == "AAPL" and month.isoformat() == "2023-08-01"


@pytest.mark.parametrize(
    "bad", ["AAPL", "AAPL|2023-08", "AAPL|2023-08-15", "aapl|2023-08-01", "A|B|C", "AAPL|2023-13-01"]
)
def test_bad_partition_keys(bad):
    with pytest.raises(InvalidNameError):
        parse_partition_key(bad)


def test_bad_month():
    with pytest.raises(InvalidNameError):
        validate_month("2023-02-30")
