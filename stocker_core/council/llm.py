"""LLM clients behind one interface: an OpenAI-compatible HTTP client and a local
Hugging Face ``transformers`` client. Timeouts, retries with backoff, bounded concurrency."""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any, Protocol

import httpx
from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from stocker_core.errors import StockerError

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


class _RetryableStatus(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:200]}")
        self.status = status


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, httpx.TimeoutException | httpx.TransportError | _RetryableStatus)


class OpenAIChatClient:
    """Any OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, llama.cpp, Ollama).

    Each request times out after ``timeout_s``; timeouts, transport errors, 429 and 5xx
    are retried ``retries`` times with exponential backoff; at most ``concurrency``
    requests are in flight at once.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 60.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        concurrency: int = 4,
        max_tokens: int = 256,
        temperature: float = 0.0,
        supports_images: bool = False,
        transport: httpx.BaseTransport | None = None,
    ):
        self.model_id = model
        self.supports_images = supports_images
        self.base_url = base_url.rstrip("/")
        self.retries, self.backoff_s = retries, backoff_s
        self.max_tokens, self.temperature = max_tokens, temperature
        self._semaphore = threading.BoundedSemaphore(concurrency)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(timeout=httpx.Timeout(timeout_s), headers=headers, transport=transport)

    def _messages(self, system: str, user: str, image_path: Path | None) -> list[dict[str, Any]]:
        content: Any = user
        if image_path is not None and self.supports_images:
            data = base64.b64encode(Path(image_path).read_bytes()).decode()
            content = [
                {"type": "text", "text": user},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
            ]
        return [{"role": "system", "content": system}, {"role": "user", "content": content}]

    def _post(self, payload: dict[str, Any]) -> str:
        with self._semaphore:
            response = self._http.post(f"{self.base_url}/chat/completions", json=payload)
        if response.status_code == 429 or response.status_code >= 500:
            raise _RetryableStatus(response.status_code, response.text)
        if response.status_code >= 400:
            raise LLMError(
                f"{self.base_url} answered HTTP {response.status_code}: "
                f"{response.text[:300]} (check STOCKER_OPENAI_MODEL and the API key)"
            )
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.base_url} sent no chat completion: {response.text[:300]}") from exc
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content or "")

    def complete(self, system: str, user: str, image_path: Path | None = None) -> str:
        payload = {
            "model": self.model_id,
            "messages": self._messages(system, user, image_path),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        try:
            for attempt in Retrying(
                retry=retry_if_exception(_retryable),
                stop=stop_after_attempt(self.retries + 1),
                wait=wait_exponential(multiplier=self.backoff_s, max=10),
                reraise=True,
            ):
                with attempt:
                    return self._post(payload)
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(
                f"{self.base_url} failed after {self.retries + 1} attempts: {type(exc).__name__}: {exc}"
            ) from exc
        raise LLMError("unreachable")  # pragma: no cover

    def close(self) -> None:
        self._http.close()


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
                from stocker_core.training.models import load_named_causal_lm

                self.processor = None
                named = load_named_causal_lm(model)  # e.g. smollm2: the moderator's own loader
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
            self.model = PeftModel.from_pretrained(self.model, adapter)
        if "device_map" not in kwargs:
            self.model.to(self.device)
        self.model.eval()

    def _prompt(self, system: str, user: str) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return f"{system}\n\n{user}\n\nAnswer:"

    def complete(self, system: str, user: str, image_path: Path | None = None) -> str:
        import torch

        if self.processor is not None and image_path is not None:
            return self._complete_image(system, user, image_path)
        inputs = self.tokenizer(self._prompt(system, user), return_tensors="pt")
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit:
            keep = max(1, int(limit) - self.max_new_tokens)
            inputs = {k: v[:, -keep:] for k, v in inputs.items()}
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
