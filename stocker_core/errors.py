"""Exceptions with messages that tell the user what to do next."""


class StockerError(Exception):
    """Base class for every error this project raises on purpose."""


class InvalidNameError(StockerError, ValueError):
    """A ticker, partition key or task name that is not allowed."""


class UnknownTickerError(StockerError, LookupError):
    """The data source has no such symbol."""


class DataSourceError(StockerError, RuntimeError):
    """The data source failed (network, malformed file, rate limit) after retries."""


class EmptyDataError(StockerError, ValueError):
    """An empty result where rows were required; nothing was written."""
