"""A typed OpenEnv client of ``stocker serve``: ``openenv`` 0.10's ``EnvClient`` over the
``/ws`` session protocol, with Stocker's action, observation and state models.

>>> with StockerOpenEnv(base_url="http://127.0.0.1:8000").sync() as env:   # doctest: +SKIP
...     result = env.reset(task_id="task_easy")
...     result = env.step(Action.buy(5))
...     result.reward, result.metadata["breakdown"], env.state().step_count

It needs ``openenv`` (``pip install --no-deps openenv==0.10.0``: the ``openenv`` extra). It
sends an API key (``api_key``, default ``$STOCKER_API_KEY``) as ``Authorization: Bearer <key>``
on the WebSocket handshake, so it also reaches a server off loopback; a refusal is a
``ConnectionError`` that carries the server's reason.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from pydantic import ValidationError
from websockets.exceptions import InvalidStatus

from stocker_core.env.actions import Action
from stocker_core.env.api_models import ObservationModel, StateModel

API_KEY_ENV = "STOCKER_API_KEY"

__all__ = ["StockerOpenEnv", "StockerStepResult"]


@dataclass
class StockerStepResult(StepResult[ObservationModel]):
    """OpenEnv's step result (the reward's terms in ``metadata``) plus the server's ``session_id``;
    ``info`` is ``metadata`` under openenv-core 0.3's name."""

    info: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None


class StockerOpenEnv(EnvClient[Action, ObservationModel, StateModel]):
    """One Stocker session over OpenEnv's WebSocket protocol (async; ``.sync()`` for a
    blocking wrapper). ``reset(task_id=... | episode=..., episode_id=..., include_chart=False)``,
    ``step(Action | {"side", "quantity"})``, ``state()``."""

    def __init__(
        self, base_url: str, api_key: str | None = None, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> None:
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV) or None
        sent = dict(headers or {})
        if key:
            sent["Authorization"] = f"Bearer {key}"
        super().__init__(base_url, headers=sent or None, **kwargs)

    async def _connect_async(self) -> StockerOpenEnv:
        """OpenEnv's connect; a refusal names the server's status and reason."""
        try:
            await super()._connect_async()
        except ConnectionError as exc:
            refusal = exc.__cause__
            if isinstance(refusal, InvalidStatus):
                response = refusal.response
                body = response.body.decode(errors="replace").strip() if response.body else ""
                raise ConnectionError(
                    f"{self._ws_url} refused the connection: HTTP {response.status_code} {body}".rstrip()
                ) from None
            raise ConnectionError(f"{exc}; is `stocker serve` running?") from None
        return self

    def _step_payload(self, action: Action | dict[str, Any]) -> dict[str, Any]:
        return action.model_dump() if isinstance(action, Action) else dict(action)

    def _parse_result(self, payload: dict[str, Any]) -> StockerStepResult:
        try:
            observation = ObservationModel.model_validate(payload.get("observation", {}))
        except ValidationError as exc:
            raise RuntimeError(f"unexpected observation from the server: {exc}") from None
        metadata = payload.get("metadata") or payload.get("info") or {}
        return StockerStepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
            metadata=metadata,
            info=metadata,
            session_id=payload.get("session_id"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> StateModel:
        try:
            return StateModel.model_validate(payload)
        except ValidationError as exc:
            raise RuntimeError(f"unexpected state from the server: {exc}") from None
