"""The optional language model's endpoint: one OpenAI-compatible chat completion, sent and read.

The wire format is OpenAI's `POST {base_url}/chat/completions` with a `model`, `messages`,
`max_tokens` and `temperature`, answered by `choices[0].message.content`. It was written against
what Ollama (http://localhost:11434/v1), the llama.cpp server, vLLM and hosted APIs all accept;
no streaming, tools or JSON mode, because not every server has them. Only the standard library
is used (http.client, ssl and urllib: llm.py, its one importer, is itself loaded on first use).

`Endpoint.complete()` raises `LLMError`, a one-line message that names the problem and the fix.
After 3 endpoint failures in a row the endpoint is left alone for 10 minutes (a circuit
breaker), so a dead server costs one timeout per 10 minutes rather than one per job. The API key
is read from the environment variable `[llm] api_key_env` names, at call time, and never
appears in a message or a log line.

Not what brainiac asks the model, how its answers are read, or the fallback to the
deterministic methods (llm.py).
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import ipaddress
import json
import logging
import os
import re
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from brainiac.core.errors import BrainiacError
from brainiac.store.config import Config

log = logging.getLogger(__name__)

FAILURES_BEFORE_PAUSE = 3  # consecutive endpoint failures that open the circuit breaker
PAUSE_S = 600.0  # how long the endpoint is left alone once it has failed that often
MAX_RESPONSE_BYTES = 4 << 20  # an answer bigger than this is not a chat completion
EXCERPT_CHARS = 200  # how much of a bad answer goes into an error message

_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)  # reasoning models' (Ollama) preamble
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")  # a key that can go in a header as it is


class LLMError(BrainiacError):
    """The endpoint could not give a usable answer; the message is one line for the log."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: urllib would resend a POST as a GET and copy the key to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Endpoint:
    """One configured endpoint; thread-safe (jobs may ask from several threads at once)."""

    def __init__(
        self,
        cfg: Config,
        environ: Mapping[str, str] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._base_url = cfg.llm_base_url.strip().rstrip("/")
        self._model = cfg.llm_model.strip()
        self._key_env = cfg.llm_api_key_env.strip()
        self._timeout_s = cfg.llm_timeout_s
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._paused_until: float | None = None
        self._last_failure = ""

    @property
    def available(self) -> bool:
        """True when an endpoint is configured (not whether it is up: that shows when asked)."""
        return bool(self._base_url and self._model)

    def describe(self) -> str:
        """One line for the log: `model llama3.2 at http://localhost:11434/v1`."""
        if not self.available:
            return "no model (offline; set [llm] base_url and model to use one)"
        return f"model {self._model} at {self._where_url()}"

    # --- the one raw call ----------------------------------------------------------------------

    def complete(self, system: str, user: str, max_tokens: int = 400) -> str:
        """The model's answer to one system + user message, stripped; raises LLMError."""
        if not self.available:
            raise LLMError("no LLM is configured; set [llm] base_url and [llm] model to use one")
        url = self._completions_url()
        headers = self._headers()
        self._check_breaker()
        payload = {
            "model": self._model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "max_tokens": max_tokens,
            "temperature": 0,
        }
        try:
            content = self._post(url, payload, headers)
        except LLMError as exc:
            self._record_failure(str(exc))
            raise
        with self._lock:
            self._failures = 0
            self._paused_until = None
        return content

    # --- internals -----------------------------------------------------------------------------

    def _where_url(self) -> str:
        """The base URL without any user:password@ part, for messages."""
        parts = urllib.parse.urlsplit(self._base_url)
        netloc = parts.netloc.rpartition("@")[2]
        return urllib.parse.urlunsplit(parts._replace(netloc=netloc))

    def _completions_url(self) -> str:
        parts = urllib.parse.urlsplit(self._base_url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise LLMError(
                f"[llm] base_url {self._where_url()!r} is not an http:// or https:// URL; "
                "use e.g. http://localhost:11434/v1"
            )
        return f"{self._base_url}/chat/completions"

    def _key(self) -> str:
        if not self._key_env:
            return ""
        key = self._environ.get(self._key_env, "").strip()
        if not key:
            raise LLMError(
                f"environment variable {self._key_env} is not set; "
                "export it or clear [llm] api_key_env"
            )
        if not _HEADER_SAFE.fullmatch(key):
            raise LLMError(
                f"environment variable {self._key_env} holds spaces or characters that cannot "
                "go in an HTTP header; check its value"
            )
        return key

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _redact(self, message: str) -> str:
        with contextlib.suppress(LLMError):
            key = self._key()
            if key:
                message = message.replace(key, "***")
        return message

    def _check_breaker(self) -> None:
        with self._lock:
            if self._paused_until is None:
                return
            left = self._paused_until - self._clock()
            if left <= 0:
                return  # half open: one more try; a failure pauses again at once
            last = self._last_failure
        at = (datetime.datetime.now() + datetime.timedelta(seconds=left)).strftime("%H:%M")
        raise LLMError(
            f"LLM call skipped: endpoint failed {FAILURES_BEFORE_PAUSE} times in a row, "
            f"retrying after {at} (last failure: {last})"
        )

    def _record_failure(self, reason: str) -> None:
        with self._lock:
            self._failures += 1
            self._last_failure = reason
            if self._failures < FAILURES_BEFORE_PAUSE:
                return
            self._paused_until = self._clock() + PAUSE_S
        log.warning(
            "LLM endpoint %s failed %d times in a row; not asking it for %d minutes",
            self._where_url(),
            FAILURES_BEFORE_PAUSE,
            PAUSE_S // 60,
        )

    def _opener(self) -> urllib.request.OpenerDirector:
        handlers: list[urllib.request.BaseHandler] = [_NoRedirect()]
        if _is_loopback(urllib.parse.urlsplit(self._base_url).hostname or ""):
            handlers.append(urllib.request.ProxyHandler({}))  # no proxy can reach our localhost
        return urllib.request.build_opener(*handlers)

    def _post(self, url: str, payload: dict[str, Any], headers: dict[str, str]) -> str:
        where = f"LLM endpoint {self._where_url()}"
        timeout = self._timeout_s
        too_slow = f"{where} did not answer within {timeout:g} s; check the server or raise "
        too_slow += "[llm] timeout_s"
        request = urllib.request.Request(
            url, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST"
        )
        deadline = time.monotonic() + timeout
        try:
            with self._opener().open(request, timeout=timeout) as response:
                status = response.status
                raw = _read_capped(response, deadline)
        except urllib.error.HTTPError as exc:
            with contextlib.closing(exc):
                body = b""
                with contextlib.suppress(OSError, http.client.HTTPException):
                    body = exc.read(4096)
            message = f"{where} answered HTTP {exc.code}: {excerpt(body)}"
            raise LLMError(self._redact(message)) from exc
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise LLMError(too_slow) from exc
            raise LLMError(self._redact(_unreachable(where, reason))) from exc
        except TimeoutError as exc:
            raise LLMError(too_slow) from exc
        except (OSError, http.client.HTTPException) as exc:
            raise LLMError(self._redact(_unreachable(where, exc))) from exc
        if raw is None:
            raise LLMError(too_slow)
        if status != 200:
            raise LLMError(self._redact(f"{where} answered HTTP {status}: {excerpt(raw)}"))
        try:
            document = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            raise LLMError(
                self._redact(f"{where} did not answer with JSON: {excerpt(raw)}")
            ) from None
        content, finish = _content(document)
        if content is None:
            raise LLMError(
                self._redact(f"{where} answered without choices[0].message.content: {excerpt(raw)}")
            )
        content = _THINK.sub("", content).strip()
        if not content:
            why = f" (finish_reason {finish})" if finish else ""
            raise LLMError(f"{where} gave an empty answer{why}")
        return content


# --- pure helpers (tested directly) --------------------------------------------------------------


def _content(document: Any) -> tuple[str | None, str]:
    """choices[0].message.content and choices[0].finish_reason, or None where missing."""
    try:
        choice = document["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None, ""
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    return (content if isinstance(content, str) else None), str(finish or "")


def _read_capped(response: http.client.HTTPResponse, deadline: float) -> bytes | None:
    """The whole body, or None when the deadline passes; a server that drips bytes forever
    would otherwise never hit the per-read socket timeout."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = response.read(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            return b"".join(chunks)  # not JSON once cut: reported as such, with its start
        if time.monotonic() > deadline:
            return None


def excerpt(body: bytes | str) -> str:
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    if not text:
        return "(empty body)"
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def _unreachable(where: str, reason: object) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return f"{where} refused the connection; is the server running?"
    if isinstance(reason, socket.gaierror):
        return f"{where}: host not found ({reason.strerror}); check [llm] base_url"
    if isinstance(reason, ssl.SSLError):
        return f"{where}: TLS failed ({reason.reason or reason}); check the URL and certificate"
    if isinstance(reason, OSError) and reason.strerror:
        return f"{where} is unreachable ({reason.strerror})"
    detail = str(reason) or type(reason).__name__
    return f"{where} is unreachable ({detail})"


def _is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
