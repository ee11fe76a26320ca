"""Errors of the web API: each becomes a 4xx JSON answer ``{"error": message}``."""

from __future__ import annotations

from stocker_core.errors import EmptyDataError, InvalidNameError, StockerError, UnknownTickerError


class WebError(StockerError):
    """An answer the web API gives as ``{"error": message}`` with an HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class NotFoundError(WebError, LookupError):
    """Nothing stored under that name (episode, run, chart, report): 404."""

    def __init__(self, message: str) -> None:
        super().__init__(404, message)


class BadInputError(WebError, ValueError):
    """A malformed or unknown value in a request: 400."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


class ConflictError(WebError, RuntimeError):
    """A request that does not fit the current state (a finished episode, missing votes): 409."""

    def __init__(self, message: str) -> None:
        super().__init__(409, message)


def as_web_error(exc: Exception) -> WebError:
    """The web answer for a project error: bad names 400, missing data 404, the rest 409."""
    if isinstance(exc, WebError):
        return exc
    if isinstance(exc, InvalidNameError):
        return BadInputError(str(exc))
    if isinstance(exc, EmptyDataError | UnknownTickerError | LookupError | FileNotFoundError):
        return NotFoundError(str(exc))
    return ConflictError(str(exc))
