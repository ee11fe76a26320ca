"""LLM clients behind one interface: an OpenAI-compatible HTTP client and a local
Hugging Face ``transformers`` client. Total deadlines per request and per decision day,
a reply-size cap, retries with backoff, bounded concurrency."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx
import numpy as np

from stocker_core.errors import StockerError
from stocker_core.language_model.limits import DayBudgets, LoopThread, current_day, decision_day

__all__ = [
    "MAX_REPLY_BYTES",
    "ChatClient",
    "LLMError",
    "LLMRejected",
    "OpenAIChatClient",
    "TransformersClient",
    "decision_day",
    "user_text",
]

NO_IMAGE_NOTE = (
    "(You are a text-only model: no chart image is attached. Judge the chart from the OHLC table above.)"
)
MISSING_IMAGE_NOTE = "(No chart image is available for this date; use the OHLC table above.)"


class LLMError(StockerError, RuntimeError):
    """A model call failed after retries (network, timeout, HTTP error, bad response)."""


class ChatClient(Protocol):
    """One completion per call; thread-safe."""

    model_id: str
    supports_images: bool

    def complete(self, system: str, user: str, image_path: Path | None = None) -> str:
        """The model's reply text to a system prompt and one user message."""
        ...


def user_text(user: str, image_path: Path | None, supports_images: bool, image_expected: bool) -> str:
    """The user text, with a note when an expected chart image cannot be shown."""
    if not image_expected:
        return user
    if not supports_images:
        return f"{user}\n{NO_IMAGE_NOTE}"
    if image_path is None:
        return f"{user}\n{MISSING_IMAGE_NOTE}"
    return user


class LLMRejected(LLMError):
    """The endpoint refused the request (HTTP 4xx other than 429): retrying will not help,
    a request without the refused feature might."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _RetryableStatus(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:200]}")
        self.status = status


RETRYABLE = (httpx.TimeoutException, httpx.TransportError, _RetryableStatus)
MAX_REPLY_BYTES = 2_000_000
"""Replies longer than this are cut off and refused (a chat completion is a few KB)."""
LLM_IO = LoopThread("stocker-llm-io")
"""The one event-loop thread every OpenAI client of the process runs its requests on."""


class OpenAIChatClient:
    """Any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, llama.cpp, Ollama).

    Limits, all wall-clock:

    * ``timeout_s`` is the **total** deadline of one ``complete`` call: waiting for a
      concurrency slot, connecting, every retry and backoff, the headers and every byte
      of the body. An endpoint that trickles a byte every few seconds is cut off at the
      deadline, not kept alive read after read.
    * ``day_timeout_s`` (default ``2 * timeout_s``: seven roles in two waves) is shared
      by the calls of one decision day, those made inside ``decision_day(key)``.
    * ``max_reply_bytes``: the body is streamed and refused past this size.

    Timeouts of a single attempt, transport errors, 429 and 5xx are retried ``retries``
    times with exponential backoff (within the deadline); at most ``concurrency``
    requests are in flight at once. The requests run on one event-loop thread that the
    process's clients share (``LLM_IO``), so a deadline cancels a request wherever it waits.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 60.0,
        day_timeout_s: float | None = None,
        retries: int = 3,
        backoff_s: float = 0.5,
        concurrency: int = 4,
        max_tokens: int = 256,
        temperature: float = 0.0,
        supports_images: bool = False,
        max_reply_bytes: int = MAX_REPLY_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        if timeout_s <= 0:
            raise LLMError(f"timeout_s must be positive, got {timeout_s}")
        self.model_id = model
        self.supports_images = supports_images
        self.base_url = base_url.rstrip("/")
        self.timeout_s = float(timeout_s)
        self.days = DayBudgets(day_timeout_s or 2 * self.timeout_s)
        self.retries, self.backoff_s = retries, backoff_s
        self.max_tokens, self.temperature = max_tokens, temperature
        self.max_reply_bytes = max_reply_bytes
        self._concurrency = concurrency
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._transport = transport
        self._io = LLM_IO
        self._http: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None

    def _messages(self, system: str, user: str, image_path: Path | None) -> list[dict[str, Any]]:
        content: Any = user
        if image_path is not None and self.supports_images:
            data = base64.b64encode(Path(image_path).read_bytes()).decode()
            content = [
                {"type": "text", "text": user},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
            ]
        return [{"role": "system", "content": system}, {"role": "user", "content": content}]

    def _client(self) -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
        """The HTTP client and the concurrency slots (created on the loop thread)."""
        if self._http is None or self._semaphore is None:
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout_s), headers=self._headers, transport=self._transport
            )
            self._semaphore = asyncio.Semaphore(self._concurrency)
        return self._http, self._semaphore

    async def _read_capped(self, response: httpx.Response) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_reply_bytes:
            raise LLMError(
                f"{self.base_url} announced a {int(declared):,}-byte reply, over the "
                f"{self.max_reply_bytes:,}-byte cap; refused without reading it"
            )
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self.max_reply_bytes:
                raise LLMError(
                    f"{self.base_url} sent more than {self.max_reply_bytes:,} bytes; "
                    "reply cut off and refused"
                )
        return bytes(body)

    async def _attempt(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One request: the first choice, or an exception (retryable ones in RETRYABLE)."""
        http, _ = self._client()
        async with http.stream("POST", f"{self.base_url}/chat/completions", json=payload) as response:
            raw = await self._read_capped(response)
        text = raw.decode("utf-8", errors="replace")
        if response.status_code == 429 or response.status_code >= 500:
            raise _RetryableStatus(response.status_code, text)
        if response.status_code >= 400:
            raise LLMRejected(
                f"{self.base_url} answered HTTP {response.status_code}: "
                f"{text[:300]} (check STOCKER_OPENAI_MODEL and the API key)",
                response.status_code,
            )
        try:
            choice = json.loads(text)["choices"][0]
            message = choice["message"]
            if not isinstance(message, dict):
                raise TypeError("message is not an object")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.base_url} sent no chat completion: {text[:300]}") from exc
        return choice

    async def _complete(self, payload: dict[str, Any], deadline: float, what: str) -> dict[str, Any]:
        attempts = self.retries + 1
        last: BaseException | None = None
        try:
            async with asyncio.timeout_at(deadline):  # the loop's clock is time.monotonic
                _, slots = self._client()
                for attempt in range(attempts):
                    if attempt:
                        await asyncio.sleep(min(self.backoff_s * 2 ** (attempt - 1), 10.0))
                    try:
                        async with slots:
                            return await self._attempt(payload)
                    except RETRYABLE as exc:
                        last = exc
        except TimeoutError:
            raise LLMError(f"{self.base_url} gave no complete reply within {what}") from None
        raise LLMError(
            f"{self.base_url} failed after {attempts} attempts: {type(last).__name__}: {last}"
        ) from last

    def complete(self, system: str, user: str, image_path: Path | None = None) -> str:
        """The reply text, within ``timeout_s`` in all (and the day's budget inside
        ``decision_day``); LLMError otherwise."""
        return message_text(self.request(system, user, image_path))

    def complete_schema(
        self, system: str, user: str, image_path: Path | None, name: str, schema: dict[str, Any]
    ) -> str:
        """The reply text under structured output: ``response_format`` of type
        ``json_schema`` (strict), as OpenAI, vLLM and the llama.cpp server accept.
        LLMRejected when the server refuses the field."""
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": name, "strict": True, "schema": schema},
        }
        return message_text(self.request(system, user, image_path, response_format=response_format))

    def first_token_logprobs(
        self, system: str, user: str, image_path: Path | None = None, top: int = 10
    ) -> dict[str, float]:
        """Log-probabilities of the candidates for the reply's first token (``logprobs`` with
        ``top_logprobs``, one token generated): token text -> logprob; empty when the server
        ignored the request. LLMRejected when it refused it."""
        choice = self.request(system, user, image_path, max_tokens=1, logprobs=True, top_logprobs=top)
        try:
            first = choice["logprobs"]["content"][0]
            candidates = first.get("top_logprobs") or [first]
            return {str(c["token"]): float(c["logprob"]) for c in candidates}
        except (KeyError, IndexError, TypeError, ValueError):
            return {}

    def request(self, system: str, user: str, image_path: Path | None = None, **extra: Any) -> dict[str, Any]:
        """One chat completion's first choice (``message``, maybe ``logprobs``); ``extra``
        fields go into the request body. Deadlines and retries as ``complete``."""
        payload = {
            "model": self.model_id,
            "messages": self._messages(system, user, image_path),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            **extra,
        }
        now = time.monotonic()
        deadline = now + self.timeout_s
        what = f"the {self.timeout_s:g} s deadline (STOCKER_LLM_TIMEOUT_S)"
        day = current_day()
        if day is not None:
            day_deadline = self.days.deadline(day, now)
            if day_deadline <= now:
                raise LLMError(f"the {self.days.seconds:g} s budget of decision day {day} is spent")
            if day_deadline < deadline:
                deadline = day_deadline
                what = f"the {self.days.seconds:g} s budget of decision day {day}"
        try:
            # the coroutine enforces the deadline; the extra second only guards a stuck loop
            return self._io.run(self._complete(payload, deadline, what), deadline - now + 1.0)
        except TimeoutError:
            raise LLMError(f"{self.base_url} gave no complete reply within {what}") from None

    def close(self) -> None:
        """Close the client's connections (the shared I/O thread keeps running)."""
        http, self._http = self._http, None
        if http is not None:
            with contextlib.suppress(Exception):  # closing is best effort
                self._io.run(http.aclose(), 5.0)


def message_text(choice: dict[str, Any]) -> str:
    """The text of a chat completion choice (content parts joined)."""
    content = choice.get("message", {}).get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


class TransformersClient:
    """A local Hugging Face causal LM (path or Hub id), optional PEFT LoRA adapter.

    4-bit (bitsandbytes) only when CUDA is present and ``load_in_4bit``; otherwise the
    model runs unquantized on CPU. With ``multimodal=True`` an image-text-to-text model
    and its processor are loaded and the chart PNG is passed as an image.
    """

    def __init__(
        self,
        model: str,
        adapter: str | None = None,
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        load_in_4bit: bool = True,
        multimodal: bool = False,
        device: str | None = None,
    ):
        import torch
        import transformers as tf

        self.model_id = f"{model}+{adapter}" if adapter else model
        self.supports_images = multimodal
        self.max_new_tokens, self.temperature = max_new_tokens, temperature
        self._lock = threading.Lock()
        cuda = torch.cuda.is_available()
        self.device = device or ("cuda" if cuda else "cpu")
        kwargs: dict[str, Any] = {}
        if cuda and load_in_4bit:
            kwargs["quantization_config"] = tf.BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16
            )
            kwargs["device_map"] = "auto"
        try:
            if multimodal:
                self.processor = tf.AutoProcessor.from_pretrained(model)
                self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
                self.model = tf.AutoModelForImageTextToText.from_pretrained(model, **kwargs)
            else:
                from stocker_core.language_model.factory import load_named_causal_lm

                self.processor = None
                named = load_named_causal_lm(model)  # e.g. smollm2: the model factory's own loader
                if named is not None:
                    self.model, self.tokenizer = named
                else:
                    self.tokenizer = tf.AutoTokenizer.from_pretrained(model)
                    self.model = tf.AutoModelForCausalLM.from_pretrained(model, **kwargs)
        except (OSError, ValueError) as exc:
            raise LLMError(
                f"cannot load model {model!r}: {exc}. Set STOCKER_HF_MODEL to a "
                "local folder or a Hub id available offline."
            ) from exc
        if adapter:
            try:
                from peft import PeftModel
            except ImportError as exc:
                raise LLMError("STOCKER_HF_ADAPTER needs the peft package: pip install peft") from exc
            from stocker_core.language_model.fields_head import saved_layer

            if saved_layer(Path(adapter)) is not None:
                raise LLMError(
                    f"{adapter} holds a moderator with a fields head: it scores the nine answers and "
                    "writes no text, so it plays as the moderator (moderator_sft / moderator_grpo), "
                    "not as a council LLM (STOCKER_HF_ADAPTER)"
                )
            self.model = PeftModel.from_pretrained(self.model, adapter)
        if "device_map" not in kwargs:
            self.model.to(self.device)
        self.model.eval()

    def _prompt(self, system: str, user: str) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return f"{system}\n\n{user}\n\nAnswer:"

    def _inputs(self, text: str, room: int) -> dict[str, Any]:
        """Tokenized ``text``, cut from the left to leave ``room`` positions in the context."""
        inputs = self.tokenizer(text, return_tensors="pt")
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit:
            keep = max(1, int(limit) - room)
            inputs = {k: v[:, -keep:] for k, v in inputs.items()}
        return dict(inputs)

    def score(self, system: str, user: str, prefix: str, answers: Sequence[str]) -> np.ndarray:
        """Probabilities of ``answers`` continuing the assistant reply ``prefix`` to the
        prompt (``score_choices``: one prefill, one batched pass; no text to parse)."""
        from stocker_core.language_model.choices import answer_token_ids, score_choices

        answer_ids = answer_token_ids(self.tokenizer, answers)
        room = max(len(a) for a in answer_ids) + 1
        prompt = self._inputs(self._prompt(system, user) + prefix, room)["input_ids"][0]
        with self._lock:
            return score_choices(self.model, self.tokenizer, prompt, answer_ids)

    def complete(self, system: str, user: str, image_path: Path | None = None, prefix: str = "") -> str:
        """The reply (greedy unless ``temperature`` > 0); with ``prefix`` the assistant's
        reply is forced to start with it and only what follows is returned."""
        import torch

        if self.processor is not None and image_path is not None:
            return self._complete_image(system, user, image_path)
        inputs = self._inputs(self._prompt(system, user) + prefix, self.max_new_tokens)
        inputs = {k: v.to(self.model.device) for k, v in inputs.items()}
        inputs.pop("token_type_ids", None)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        sampling = (
            {"do_sample": True, "temperature": self.temperature}
            if self.temperature > 0
            else {"do_sample": False}
        )
        with self._lock, torch.no_grad():
            out = self.model.generate(
                **inputs, max_new_tokens=self.max_new_tokens, pad_token_id=pad, **sampling
            )
        new = out[0, inputs["input_ids"].shape[1] :]
        return self.tokenizer.decode(new, skip_special_tokens=True)

    def _complete_image(self, system: str, user: str, image_path: Path) -> str:
        import torch
        from PIL import Image

        messages = [
            {"role": "system", "content": [{"type": "text", "text": system}]},
            {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": user}]},
        ]
        prompt = self.processor.apply_chat_template(messages, add_generation_prompt=True)
        image = Image.open(image_path).convert("RGB")
        inputs = self.processor(text=prompt, images=[image], return_tensors="pt")
        inputs = inputs.to(self.model.device)
        with self._lock, torch.no_grad():
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        new = out[0, inputs["input_ids"].shape[1] :]
        return self.processor.decode(new, skip_special_tokens=True)
