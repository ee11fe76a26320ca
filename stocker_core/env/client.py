"""A typed Python client of the environment server, for trainers and agents.

>>> with StockerEnvClient("http://127.0.0.1:8000") as env:      # doctest: +SKIP
...     first = env.reset("task_easy")
...     result = env.step({"side": "buy", "quantity": 5})
...     result.reward, result.observation.headlines[:1], env.state().total_reward

The client keeps the session id ``reset`` returned and sends it on every call;
server errors become ``EnvClientError`` with the HTTP status and the server's message.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import httpx
from pydantic import ValidationError

from stocker_core.env.actions import Action
from stocker_core.env.api_models import StateModel, StepResponse
from stocker_core.env.server_sessions import SESSION_HEADER
from stocker_core.errors import StockerError

API_KEY_ENV = "STOCKER_API_KEY"


class EnvClientError(StockerError, RuntimeError):
    """The server refused a call, could not be reached, or answered something unexpected."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class StockerEnvClient:
    """One session on a Stocker environment server (``stocker serve``).

    ``api_key`` defaults to ``$STOCKER_API_KEY`` and is sent as a bearer token.
    Closing the client (or leaving its ``with`` block) ends the session on the server.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV) or None
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self.session_id: str | None = None
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout_s, transport=transport
        )

    # -- plumbing ----------------------------------------------------------------------
    def _call(self, method: str, path: str, body: Any = None, session: bool = True) -> Any:
        """``method path`` with the session header (required when ``session``)."""
        if session and self.session_id is None:
            raise EnvClientError("no session yet: call reset() first")
        headers = {SESSION_HEADER: self.session_id} if self.session_id else {}
        try:
            response = self._http.request(method, path, json=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise EnvClientError(f"{self.base_url}{path} did not answer in time: {exc}") from None
        except httpx.HTTPError as exc:
            raise EnvClientError(
                f"cannot reach the environment server at {self.base_url} ({type(exc).__name__}: {exc}); "
                "is `stocker serve` running?"
            ) from None
        try:
            data = response.json()
        except ValueError:
            data = None
        if response.status_code >= 400:
            message = data.get("error") if isinstance(data, dict) else None
            raise EnvClientError(
                f"{method} {path} failed with HTTP {response.status_code}: {message or response.text[:300]}",
                response.status_code,
            )
        if data is None:
            raise EnvClientError(f"{method} {path} answered no JSON: {response.text[:300]}")
        return data

    @staticmethod
    def _parse(model: type[Any], data: Any) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise EnvClientError(f"unexpected answer from the server: {exc}") from None

    # -- the environment ---------------------------------------------------------------
    def reset(
        self, task_id: str | None = None, *, episode: str | None = None, include_chart: bool = False
    ) -> StepResponse:
        """Start an episode (a task alias or a partition key such as ``AAPL|2023-08-01``);
        the same session is restarted when the client already has one."""
        body: dict[str, Any] = {"include_chart": include_chart}
        if task_id is not None:
            body["task_id"] = task_id
        if episode is not None:
            body["episode"] = episode
        if self.session_id is not None:
            body["session_id"] = self.session_id
        result = self._parse(StepResponse, self._call("POST", "/reset", body, session=False))
        self.session_id = result.session_id
        return result

    def step(self, action: Action | dict[str, Any], *, include_chart: bool | None = None) -> StepResponse:
        """Apply ``action`` (``Action`` or ``{"side", "quantity"}``) at today's close."""
        body = action.model_dump() if isinstance(action, Action) else dict(action)
        if include_chart is not None:
            body["include_chart"] = include_chart
        return self._parse(StepResponse, self._call("POST", "/step", body))

    def state(self) -> StateModel:
        """The current observation and the episode so far."""
        return self._parse(StateModel, self._call("GET", "/state"))

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to resume the current state later (``restore``)."""
        return self._call("GET", "/snapshot")

    def restore(self, snapshot: dict[str, Any]) -> StepResponse:
        """Resume ``snapshot`` in this client's session (a new one if it has none)."""
        data = self._call("POST", "/restore", snapshot, session=False)
        self.session_id = data["session_id"]
        return self._parse(StepResponse, data)

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/health", session=False)

    def metadata(self) -> dict[str, Any]:
        return self._call("GET", "/metadata", session=False)

    def schema(self) -> dict[str, Any]:
        return self._call("GET", "/schema", session=False)

    def close(self) -> None:
        """End the session on the server (if any) and close the connections."""
        if self.session_id is not None:
            with contextlib.suppress(EnvClientError):  # expired or server gone: nothing to free
                self._call("DELETE", "/session")
            self.session_id = None
        self._http.close()

    def __enter__(self) -> StockerEnvClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
