"""The optional language model: an OpenAI-compatible chat-completions endpoint.

Everything brainiac does works offline with deterministic methods. When `[llm] base_url` and
`[llm] model` are set, jobs may ask a server to write better summaries (`summarise`), pull facts
out of text (`extract_facts`) and name notes (`title`), and the guard may ask it to judge the
claims its deterministic reading left unverified (`verify_claims`, llm_check.py). Nothing
requires it.

The fallback rule: every helper returns None on any failure (unreachable, timeout, HTTP error,
an answer that cannot be used), keeps the reason in `LLM.last_error` and logs one line; the
caller then does what it would have done with no model configured. `complete()` is the one call
that raises (`LLMError`, a one-line message that names the problem and the fix).

The wire format is OpenAI's `POST {base_url}/chat/completions` with a `model`, `messages`,
`max_tokens` and `temperature`, answered by `choices[0].message.content`. It was written against
what Ollama (http://localhost:11434/v1), the llama.cpp server, vLLM and hosted APIs all accept;
no streaming, tools or JSON mode, because not every server has them. Only the standard library
is used.

After 3 endpoint failures in a row the endpoint is left alone for 10 minutes (a circuit
breaker), so a dead server costs one timeout per 10 minutes rather than one per job. The API key
is read from the environment variable `[llm] api_key_env` names, at call time, and never
appears in a message or a log line.
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from brainiac.config import Config
from brainiac.errors import BrainiacError

log = logging.getLogger(__name__)
_Item = TypeVar("_Item")

FAILURES_BEFORE_PAUSE = 3  # consecutive endpoint failures that open the circuit breaker
PAUSE_S = 600.0  # how long the endpoint is left alone once it has failed that often
MAX_INPUT_CHARS = 12_000  # what a summary or a fact extraction sends; small local models choke
MAX_TITLE_INPUT_CHARS = 4_000
MAX_RESPONSE_BYTES = 4 << 20  # an answer bigger than this is not a chat completion
EXCERPT_CHARS = 200  # how much of a bad answer goes into an error message
TITLE_MAX_WORDS = 8
TITLE_MAX_CHARS = 100
MAX_CLAIM_CHARS = 500  # one claim or one evidence line as sent; the rest is cut with "…"
MAX_CORRECTION_CHARS = 300
VERDICTS = ("consistent", "conflict", "unverified")

# Characters that cannot be in a note's file name (Obsidian's list plus Windows'), or in a link.
_TITLE_INVALID = re.compile(r'[/\\:*?"<>|#^\[\]\x00-\x1f\x7f]')
_TITLE_QUOTES = re.compile(r"[“”«»`]|(?<!\w)['‘’]|['‘’](?!\w)")
_TITLE_EDGES = " \t.,;:!?…-–—_*~"
_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)  # reasoning models' (Ollama) preamble
_FENCE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)
_PREAMBLE = re.compile(
    r"^\s*(?:(?:here(?:'s| is)|sure|certainly|okay|ok)\b[^\n]*?:\s*|summary\s*:\s*)",
    re.IGNORECASE,
)
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")  # a key that can go in a header as it is


@dataclass(frozen=True)
class Verdict:
    """The model's judgement of one claim: which claim (its id as sent, e.g. "C1"), the verdict
    (one of VERDICTS), the evidence id it rests on (None: none named) and a correction."""

    claim: str
    verdict: str
    evidence_id: str | None
    correction: str | None


class LLMError(BrainiacError):
    """The endpoint could not give a usable answer; the message is one line for the log."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: urllib would resend a POST as a GET and copy the key to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class LLM:
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
        self.last_error: str | None = None

    @classmethod
    def from_config(cls, cfg: Config) -> LLM:
        return cls(cfg)

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
        url = self._endpoint()
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

    # --- helpers that fall back ----------------------------------------------------------------

    def summarise(self, texts: Sequence[str], max_words: int = 80) -> str | None:
        """A plain-prose summary of chat messages (oldest first), or None to fall back."""
        self.last_error = None
        kept, dropped = _newest(texts, MAX_INPUT_CHARS)
        if not kept:
            self._fallback("summary", "there is nothing to summarise")
            return None
        note = "(Older messages were left out.)\n\n" if dropped else ""
        system = (
            f"You summarise conversations for a personal memory notebook. Write at most "
            f"{max_words} words of plain prose: what was discussed, decided and left to do. "
            "Start with the content itself: no preamble, no heading, no list, no quotes."
        )
        user = f"{note}Messages, oldest first:\n\n" + "\n\n".join(kept)
        answer = self._ask("summary", system, user, max_tokens=max(64, max_words * 2 + 40))
        if answer is None:
            return None
        summary = _cap_words(" ".join(_PREAMBLE.sub("", answer).split()), max_words)
        if not summary:
            self._fallback("summary", "the model's summary was empty")
            return None
        return summary

    def extract_facts(self, text: str) -> list[tuple[str, str]] | None:
        """(key, value) facts found in `text`, keys lowercased; None to fall back."""
        self.last_error = None
        if not text.strip():
            return []
        if len(text) > MAX_INPUT_CHARS:
            text = text[-MAX_INPUT_CHARS:]
        system = (
            "You extract lasting facts (preferences, names, decisions, settings) from text for a "
            "personal memory. Answer with only a JSON array and nothing else. Each item is an "
            'object {"key": "<short lowercase name>", "value": "<the fact>"}, for example '
            '[{"key": "preferred editor", "value": "Neovim"}]. If there are no facts, answer [].'
        )
        return self._ask_json("fact extraction", system, text, 600, parse_facts)

    def title(self, texts: Sequence[str]) -> str | None:
        """A short title for a note (≤ 8 words, safe as a file name), or None to fall back."""
        self.last_error = None
        kept, _ = _newest(texts, MAX_TITLE_INPUT_CHARS)
        if not kept:
            self._fallback("title", "there is nothing to name")
            return None
        system = (
            f"You name notes. Answer with only a short, specific title of at most "
            f"{TITLE_MAX_WORDS} words for the text: no quotes, no trailing punctuation, "
            "no explanation."
        )
        answer = self._ask("title", system, "\n\n".join(kept), max_tokens=40)
        if answer is None:
            return None
        title = clean_title(answer)
        if title is None:
            self._fallback("title", f"no usable title in the answer: {_excerpt(answer)}")
            return None
        return title

    def verify_claims(
        self, claims: Sequence[tuple[str, str]], evidence: Sequence[tuple[str, str]]
    ) -> list[Verdict] | None:
        """The model's verdict on each claim ((id, sentence) pairs) given the evidence ((id,
        line) pairs, best first); None to fall back. The caller must still check that each
        verdict's evidence id is one it sent: a model may invent one."""
        self.last_error = None
        if not claims or not evidence:
            return []
        budget = MAX_INPUT_CHARS
        claim_lines: list[str] = []
        for cid, text in claims:
            line = f"{cid}: {_cut(text)}"
            if budget - len(line) - 1 < 0:
                break
            claim_lines.append(line)
            budget -= len(line) + 1
        evidence_lines: list[str] = []
        for eid, text in evidence:  # best first: what is cut is what retrieval ranked lowest
            line = f"{eid}: {_cut(text)}"
            if budget - len(line) - 1 < 0:
                break
            evidence_lines.append(line)
            budget -= len(line) + 1
        if not claim_lines or not evidence_lines:
            self._fallback("claim check", "the claims and evidence do not fit in the input limit")
            return None
        system = (
            "You check an assistant's claims against a memory's evidence lines. Judge each claim "
            "only by the evidence given, never by your own knowledge. Answer with only a JSON "
            "array and nothing else, one object per claim: "
            '{"claim": "<claim id>", "verdict": "consistent" | "conflict" | "unverified", '
            '"evidence_id": "<the id of the evidence line it rests on, or null>", '
            '"correction": "<for a conflict: what the evidence says instead, else null>"}. '
            '"conflict" only when an evidence line says something else about the same thing; '
            '"unverified" when no evidence line settles the claim.'
        )
        user = "Claims:\n" + "\n".join(claim_lines) + "\n\nEvidence:\n" + "\n".join(evidence_lines)
        max_tokens = 120 + 80 * len(claim_lines)
        return self._ask_json("claim check", system, user, max_tokens, parse_verdicts)

    # --- internals -----------------------------------------------------------------------------

    def _ask(self, task: str, system: str, user: str, max_tokens: int) -> str | None:
        try:
            return self.complete(system, user, max_tokens=max_tokens)
        except LLMError as exc:
            self._fallback(task, str(exc))
            return None

    def _ask_json(
        self,
        task: str,
        system: str,
        user: str,
        max_tokens: int,
        parse: Callable[[str], list[_Item] | None],
    ) -> list[_Item] | None:
        """The model's JSON array answer, parsed; None (logged, to fall back) if there is none."""
        answer = self._ask(task, system, user, max_tokens)
        if answer is None:
            return None
        items = parse(answer)
        if items is None:
            self._fallback(task, f"the answer is not a JSON array: {_excerpt(answer)}")
        return items

    def _fallback(self, task: str, reason: str) -> None:
        """Record and log (one line) why the caller is to use the deterministic method."""
        self.last_error = reason
        log.warning("LLM %s failed (%s); using the deterministic method", task, reason)

    def _where_url(self) -> str:
        """The base URL without any user:password@ part, for messages."""
        parts = urllib.parse.urlsplit(self._base_url)
        netloc = parts.netloc.rpartition("@")[2]
        return urllib.parse.urlunsplit(parts._replace(netloc=netloc))

    def _endpoint(self) -> str:
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
            message = f"{where} answered HTTP {exc.code}: {_excerpt(body)}"
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
            raise LLMError(self._redact(f"{where} answered HTTP {status}: {_excerpt(raw)}"))
        try:
            document = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            raise LLMError(
                self._redact(f"{where} did not answer with JSON: {_excerpt(raw)}")
            ) from None
        content, finish = _content(document)
        if content is None:
            raise LLMError(
                self._redact(
                    f"{where} answered without choices[0].message.content: {_excerpt(raw)}"
                )
            )
        content = _THINK.sub("", content).strip()
        if not content:
            why = f" (finish_reason {finish})" if finish else ""
            raise LLMError(f"{where} gave an empty answer{why}")
        return content


# --- pure helpers (tested directly) --------------------------------------------------------------


def parse_facts(answer: str) -> list[tuple[str, str]] | None:
    """[(key, value), ...] from a model's JSON answer, tolerant of ``` fences and stray prose.

    Keys are lowercased with spaces collapsed; items that are not {"key": str, "value": scalar}
    are dropped; duplicates are kept once. None when no JSON array can be found.
    """
    document = _json_list(answer)
    if document is None:
        return None
    facts: list[tuple[str, str]] = []
    for item in document:
        if not isinstance(item, dict):
            continue
        key, value = item.get("key"), item.get("value")
        if not isinstance(key, str):
            continue
        if isinstance(value, bool | int | float):
            value = json.dumps(value)
        if not isinstance(value, str):
            continue
        key, value = " ".join(key.lower().split()), " ".join(value.split())
        if key and value and (key, value) not in facts:
            facts.append((key, value))
    return facts


def parse_verdicts(answer: str) -> list[Verdict] | None:
    """[Verdict, ...] from a model's JSON answer, tolerant of ``` fences and stray prose.

    An item needs a claim id (string or number) and a verdict of VERDICTS (any case); others are
    dropped. None when no JSON array can be found.
    """
    document = _json_list(answer)
    if document is None:
        return None
    out: list[Verdict] = []
    for item in document:
        if not isinstance(item, dict):
            continue
        claim, verdict = _scalar(item.get("claim")), _scalar(item.get("verdict"))
        if not claim or verdict is None or verdict.lower() not in VERDICTS:
            continue
        correction = _scalar(item.get("correction"))
        if correction and len(correction) > MAX_CORRECTION_CHARS:
            correction = correction[:MAX_CORRECTION_CHARS] + "…"
        out.append(
            Verdict(claim, verdict.lower(), _scalar(item.get("evidence_id")), correction or None)
        )
    return out


def _scalar(value: Any) -> str | None:
    """A string or number as one line of text; None for anything else (null, lists, objects)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = " ".join(str(value).split())
    return text or None


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CLAIM_CHARS else text[:MAX_CLAIM_CHARS] + "…"


def _json_list(answer: str) -> list[Any] | None:
    """The JSON array in a model's answer: fenced, bare, amid prose, or the one list value of
    an object ({"facts": [...]}); None when there is none."""
    fenced = _FENCE.search(answer)
    text = fenced.group(1) if fenced else answer
    document = _loads(text.strip())
    if document is None:
        start, end = text.find("["), text.rfind("]")
        document = _loads(text[start : end + 1]) if 0 <= start < end else None
    if isinstance(document, dict):
        lists = [v for v in document.values() if isinstance(v, list)]
        document = lists[0] if len(lists) == 1 else None
    return document if isinstance(document, list) else None


def clean_title(answer: str) -> str | None:
    """A model's answer made into a note title: one line, ≤ 8 words, safe in a file name."""
    lines = [line for line in answer.splitlines() if line.strip()]
    if not lines:
        return None
    line = re.sub(r"^\s*(?:#+\s*)?(?:title\s*:\s*)?", "", lines[0], flags=re.IGNORECASE)
    line = line.replace("**", "").replace("__", "")
    line = _TITLE_QUOTES.sub("", line)
    line = _TITLE_INVALID.sub(" ", line)
    words = line.split()[:TITLE_MAX_WORDS]
    title = " ".join(words)
    while len(title) > TITLE_MAX_CHARS and " " in title:
        title = title.rsplit(" ", 1)[0]
    title = title[:TITLE_MAX_CHARS].strip(_TITLE_EDGES)
    return title or None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _newest(texts: Sequence[str], limit: int) -> tuple[list[str], bool]:
    """The newest non-empty texts that fit in `limit` characters, oldest first; and whether any
    were left out. A newest text longer than the limit alone is cut to its first `limit`."""
    kept: list[str] = []
    used = 0
    items = [t.strip() for t in texts if t.strip()]
    for text in reversed(items):
        if used + len(text) + 2 > limit:
            if not kept:
                return [text[:limit] + "…"], len(items) > 1
            return kept[::-1], True
        kept.append(text)
        used += len(text) + 2
    return kept[::-1], False


def _cap_words(text: str, max_words: int) -> str:
    """At most `max_words` words, ending at a sentence end when one is in the second half."""
    words = text.split()
    if len(words) <= max_words:
        return text
    cut = " ".join(words[:max_words])
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "), cut.rfind("."))
    if end >= len(cut) // 2:
        return cut[: end + 1]
    return cut.rstrip(",;:") + "…"


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


def _excerpt(body: bytes | str) -> str:
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
