"""A typed OpenEnv client of ``stocker serve``: ``openenv-core``'s ``EnvClient`` over the
``/ws`` session protocol, with Stocker's action, observation and state models.

>>> with StockerOpenEnv(base_url="http://127.0.0.1:8000").sync() as env:   # doctest: +SKIP
...     result = env.reset(task_id="task_easy")
...     result = env.step(Action.buy(5))
...     result.reward, result.observation.close, env.state().total_reward

It needs ``openenv-core`` (``pip install --no-deps openenv-core==0.3.0`` plus ``fastmcp``,
which its package imports: the ``openenv`` extra). Unlike the base client it can send an API
key (``api_key``, default ``$STOCKER_API_KEY``) as ``Authorization: Bearer <key>`` on the
WebSocket handshake, so it also reaches a server off loopback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from pydantic import ValidationError
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from stocker_core.env.actions import Action
from stocker_core.env.api_models import ObservationModel, StateModel

API_KEY_ENV = "STOCKER_API_KEY"

__all__ = ["StockerOpenEnv", "StockerStepResult"]


@dataclass
class StockerStepResult(StepResult[ObservationModel]):
    """OpenEnv's step result plus Stocker's ``info`` (reward terms, the episode on reset)
    and the server's ``session_id``."""

    info: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None


class StockerOpenEnv(EnvClient[Action, ObservationModel, StateModel]):
    """One Stocker session over OpenEnv's WebSocket protocol (async; ``.sync()`` for a
    blocking wrapper). ``reset(task_id=... | episode=..., include_chart=False)``,
    ``step(Action | {"side", "quantity"})``, ``state()``."""

    def __init__(self, base_url: str, api_key: str | None = None, **kwargs: Any) -> None:
        super().__init__(base_url, **kwargs)
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV) or None
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    async def connect(self) -> StockerOpenEnv:
        """Open the WebSocket (with the API key when there is one); ConnectionError with the
        server's reason when it refuses."""
        if self._ws is not None:
            return self
        try:
            self._ws = await ws_connect(
                self._ws_url,
                open_timeout=self._connect_timeout,
                max_size=self._max_message_size,
                additional_headers=self._headers,
                proxy=None,
            )
        except InvalidStatus as exc:
            body = exc.response.body.decode(errors="replace").strip() if exc.response.body else ""
            raise ConnectionError(
                f"{self._ws_url} refused the connection: HTTP {exc.response.status_code} {body}".rstrip()
            ) from None
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(
                f"cannot reach {self._ws_url} ({type(exc).__name__}: {exc}); is `stocker serve` running?"
            ) from None
        return self

    def _step_payload(self, action: Action | dict[str, Any]) -> dict[str, Any]:
        return action.model_dump() if isinstance(action, Action) else dict(action)

    def _parse_result(self, payload: dict[str, Any]) -> StockerStepResult:
        try:
            observation = ObservationModel.model_validate(payload.get("observation", {}))
        except ValidationError as exc:
            raise RuntimeError(f"unexpected observation from the server: {exc}") from None
        return StockerStepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
            info=payload.get("info") or {},
            session_id=payload.get("session_id"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> StateModel:
        try:
            return StateModel.model_validate(payload)
        except ValidationError as exc:
            raise RuntimeError(f"unexpected state from the server: {exc}") from None
