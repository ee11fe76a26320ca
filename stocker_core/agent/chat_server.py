"""A minimal OpenAI-compatible ``/v1/chat/completions`` server over a local Hugging Face chat
model, so tools that call models over HTTP (verifiers' rollouts) run offline.

Each request renders ``messages`` and ``tools`` with the tokenizer's chat template (TRL's Qwen
2.5 template for ``tiny`` and ``smollm2``: ``stocker_core.agent.trl_model``), runs the model's
``generate()`` and answers a ``chat.completion``: ``<tool_call>{"name", "arguments"}</tool_call>``
blocks in the reply become ``tool_calls`` (parsed as the agent parses its calls), anything else
is the text reply. Output that is not a well-formed call (the random ``tiny`` model's) is a
plain text reply, never an error. A streamed request (``stream: true``) gets the whole answer
as one chunk of server-sent events. One generation at a time.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from typing import Any

from stocker_core.agent.parsing import parse_tool_call

_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)

__all__ = ["ChatServer", "completion_message", "stream_events"]


def completion_message(text: str) -> dict[str, Any]:
    """The assistant message of ``text``: its well-formed ``<tool_call>`` blocks as
    ``tool_calls``, the rest as content (all of it when no block parses)."""
    calls = []
    for raw in _TOOL_CALL.findall(text):
        call = parse_tool_call(raw.strip())
        if call.parsed:
            calls.append(
                {
                    "id": f"call_{secrets.token_hex(6)}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
            )
    if not calls:
        return {"role": "assistant", "content": text}
    rest = _TOOL_CALL.sub("", text).strip()
    return {"role": "assistant", "content": rest or None, "tool_calls": calls}


def stream_events(completion: dict[str, Any]) -> list[bytes]:
    """A ``chat.completion`` as server-sent ``chat.completion.chunk`` events: the message,
    the finish reason, the usage, ``[DONE]``."""
    choice = completion["choices"][0]
    message = dict(choice["message"])
    message["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message.get("tool_calls") or [])]
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    chunks = [
        head | {"choices": [{"index": 0, "delta": message, "finish_reason": None}]},
        head | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        head | {"choices": [], "usage": completion["usage"]},
    ]
    return [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks] + [b"data: [DONE]\n\n"]


class ChatServer:
    """``model`` and ``tokenizer`` behind ``{base_url}/chat/completions`` on loopback.

    Args:
        model: A causal LM with ``generate()``.
        tokenizer: Its tokenizer, with a chat template that renders ``tools``.
        name: The model name it answers to (any name is accepted).
        max_new_tokens: The cap when a request sets no ``max_tokens``.
    """

    def __init__(self, model: Any, tokenizer: Any, name: str = "local", max_new_tokens: int = 64) -> None:
        self.model, self.tokenizer, self.name = model, tokenizer, name
        self.max_new_tokens = max_new_tokens
        self._lock = threading.Lock()
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One ``chat.completion`` for a request body (greedy at temperature 0 or unset)."""
        import torch

        messages = [_plain(m) for m in body.get("messages") or []]
        ids = self.tokenizer.apply_chat_template(
            messages,
            tools=body.get("tools") or None,
            add_generation_prompt=True,
            return_dict=True,
            return_tensors="pt",
        )["input_ids"]
        limit = int(body.get("max_tokens") or body.get("max_completion_tokens") or self.max_new_tokens)
        temperature = float(body.get("temperature") or 0.0)
        sampling: dict[str, Any] = {"do_sample": False}
        if temperature > 0:
            sampling = {"do_sample": True, "temperature": temperature}
        with self._lock, torch.no_grad():
            out = self.model.generate(
                ids, max_new_tokens=max(1, limit), pad_token_id=self.tokenizer.pad_token_id, **sampling
            )
        new = out[0, ids.shape[1] :]
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        eos = self.tokenizer.eos_token_id
        finished = len(new) < limit or (eos is not None and int(new[-1]) == eos)
        message = completion_message(text)
        reason = "tool_calls" if message.get("tool_calls") else "stop" if finished else "length"
        return {
            "id": f"chatcmpl-{secrets.token_hex(8)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.name,
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": {
                "prompt_tokens": int(ids.shape[1]),
                "completion_tokens": len(new),
                "total_tokens": int(ids.shape[1]) + len(new),
            },
        }

    def app(self) -> Any:
        """The ASGI app: ``POST /v1/chat/completions`` and ``GET /v1/models``."""
        from starlette.applications import Starlette
        from starlette.concurrency import run_in_threadpool
        from starlette.responses import JSONResponse, StreamingResponse
        from starlette.routing import Route

        async def chat(request: Any) -> Any:
            try:
                body = await request.json()
            except ValueError:
                return _error(400, "the body is not JSON")
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                return _error(400, "the body needs a messages list")
            completion = await run_in_threadpool(self.complete, body)
            if body.get("stream"):
                return StreamingResponse(iter(stream_events(completion)), media_type="text/event-stream")
            return JSONResponse(completion)

        async def models(request: Any) -> Any:
            return JSONResponse(
                {"object": "list", "data": [{"id": self.name, "object": "model", "owned_by": "local"}]}
            )

        return Starlette(
            routes=[
                Route("/v1/chat/completions", chat, methods=["POST"]),
                Route("/v1/models", models, methods=["GET"]),
            ]
        )

    def start(self) -> ChatServer:
        """Serve on a free loopback port in a background thread; ``base_url`` ends in ``/v1``."""
        import socket

        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._server = uvicorn.Server(uvicorn.Config(self.app(), log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the chat server did not start")
            time.sleep(0.02)
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(timeout=10)
            self._server = self._thread = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI message as the chat template reads it (tool-call arguments as objects)."""
    message = dict(message)
    if isinstance(message.get("content"), list):
        message["content"] = "".join(
            part.get("text", "") for part in message["content"] if isinstance(part, dict)
        )
    calls = []
    for call in message.get("tool_calls") or []:
        function = dict(call.get("function") or {})
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (TypeError, ValueError):
            arguments = {}
        calls.append({"type": "function", "function": {**function, "arguments": arguments}})
    if calls:
        message["tool_calls"] = calls
    return message


def _error(status: int, text: str) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": {"message": text, "type": "invalid_request_error"}}, status_code=status)
