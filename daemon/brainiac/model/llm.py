"""The optional language model: what brainiac asks it, and how its answers are read.

Everything brainiac does works offline with deterministic methods. When `[llm] base_url` and
`[llm] model` are set, jobs may ask a server to write better summaries (`summarise`), pull facts
out of text (`extract_facts`), write observations of a batch of messages (`observe`) and name
notes (`title`), and the guard may ask it to judge the
claims its deterministic reading left unverified (`verify_claims`, llm_check.py). Nothing
requires it.

The fallback rule: every helper returns None on any failure (unreachable, timeout, HTTP error,
an answer that cannot be used), keeps the reason in `LLM.last_error` and logs one line; the
caller then does what it would have done with no model configured. `complete()` is the one call
that raises (`LLMError`, a one-line message that names the problem and the fix).

Not the endpoint itself: the request, its errors, the API key and the circuit breaker are
llm_endpoint.py's (which loads http.client and ssl, so this module is imported on first use).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from brainiac.language.lexicon import word_set
from brainiac.model.llm_endpoint import Endpoint, LLMError, excerpt
from brainiac.store.config import Config

log = logging.getLogger(__name__)
_Item = TypeVar("_Item")

MAX_INPUT_CHARS = 12_000  # what a summary or a fact extraction sends; small local models choke
MAX_TITLE_INPUT_CHARS = 4_000
TITLE_MAX_WORDS = 8
TITLE_MAX_CHARS = 100
MAX_CLAIM_CHARS = 500  # one claim or one evidence line as sent; the rest is cut with "…"
MAX_CORRECTION_CHARS = 300
OBSERVATION_TOKENS = 60  # per message asked about: one sentence of about 40 words
MAX_OBSERVATION_TOKENS = 2_400
VERDICTS = ("consistent", "conflict", "unverified")

# Characters that cannot be in a note's file name (Obsidian's list plus Windows'), or in a link.
_TITLE_INVALID = re.compile(r'[/\\:*?"<>|#^\[\]\x00-\x1f\x7f]')
_TITLE_QUOTES = re.compile(r"[“”«»`]|(?<!\w)['‘’]|['‘’](?!\w)")
_TITLE_EDGES = " \t.,;:!?…-–—_*~"
_FENCE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)
# A title of only these words names no note ("Chat summary", "Catching up", "Untitled").
_GENERIC_TITLE_WORDS = word_set(
    """
    a an the and of chat chats conversation conversations discussion talk talks catching catch
    up summary notes note untitled title session general update updates messages small
    """
)
_PREAMBLE = re.compile(
    r"^\s*(?:(?:here(?:'s| is)|sure|certainly|okay|ok)\b[^\n]*?:\s*|summary\s*:\s*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    """The model's judgement of one claim: which claim (its id as sent, e.g. "C1"), the verdict
    (one of VERDICTS), the evidence id it rests on (None: none named) and a correction."""

    claim: str
    verdict: str
    evidence_id: str | None
    correction: str | None


class LLM:
    """What brainiac asks the configured endpoint, each falling back to None; thread-safe (jobs
    may ask from several threads at once)."""

    def __init__(
        self,
        cfg: Config,
        environ: Mapping[str, str] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._endpoint = Endpoint(cfg, environ, clock=clock)
        self.last_error: str | None = None

    @classmethod
    def from_config(cls, cfg: Config) -> LLM:
        return cls(cfg)

    @property
    def available(self) -> bool:
        """True when an endpoint is configured (not whether it is up: that shows when asked)."""
        return self._endpoint.available

    def describe(self) -> str:
        """One line for the log: `model llama3.2 at http://localhost:11434/v1`."""
        return self._endpoint.describe()

    def complete(self, system: str, user: str, max_tokens: int = 400) -> str:
        """The model's answer to one system + user message, stripped; raises LLMError."""
        return self._endpoint.complete(system, user, max_tokens)

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

    def extract_facts(self, text: str, speaker: str | None = None) -> list[tuple[str, str]] | None:
        """(key, value) facts found in `text`, keys lowercased; None to fall back.

        With `speaker` (who said `text`), the model is asked to write the speaker's own facts
        as the speaker would say them, with "my" ("my home city": "Boston"): the rules' form,
        which `life_facts.whose` turns into the vault's (the user's as said, another speaker's
        under their name)."""
        self.last_error = None
        if not text.strip():
            return []
        if len(text) > MAX_INPUT_CHARS:
            text = text[-MAX_INPUT_CHARS:]
        system = (
            "You extract lasting facts (preferences, names, decisions, settings, where someone "
            "lives or works, what they own or do) from text for a personal memory. Only what the "
            "text states as so: no guesses, no questions, no plans that may change. Answer with "
            "only a JSON array and nothing else. Each item is an object "
            '{"key": "<short lowercase name>", "value": "<the fact>"}, for example '
            '[{"key": "preferred editor", "value": "Neovim"}]. If there are no facts, answer [].'
        )
        if speaker:
            system += (
                " The text is one message. Write its speaker's own facts as the speaker would "
                'say them, with "my" in the key: {"key": "my home city", "value": "Boston"}.'
            )
            text = f"Message by {speaker}:\n\n{text}"
        return self._ask_json("fact extraction", system, text, 600, parse_facts)

    def observe(self, messages: Sequence[str]) -> list[tuple[str, str]] | None:
        """(message id, observation) pairs the model writes for `messages`, each given as
        `<id> | <date> | <speaker>: <text>` (oldest first, all of them asked in one request);
        None to fall back. The caller must still check each id and line: a model may invent an
        id or write a question (model_observations.py)."""
        self.last_error = None
        if not messages:
            return []
        system = (
            "You keep a personal memory notebook of a conversation. Each message is given as "
            "`<id> | <date> | <speaker>: <text>`. For each message that tells something worth "
            "remembering about its speaker (what they did, have, plan or went through, the people, "
            "places and things in their life), write one short sentence in the third person that "
            "names the speaker, as a person taking notes would: "
            '"Caroline went to an LGBTQ support group on 2023-05-07." Write relative dates '
            '("yesterday", "last week", "next month") as dates, counted from the message\'s '
            "date. One sentence per message at most, one statement per sentence. Write nothing "
            "for questions, greetings, thanks, compliments or reactions to the other speaker, "
            "small talk, hypotheticals, and the assistant's messages; never write "
            '"X said" or "X asked". Answer with only a JSON array and nothing else: '
            '[{"id": "<the message id>", "observation": "<the sentence>"}]. '
            "If nothing is worth noting, answer []."
        )
        user = "Messages, oldest first:\n\n" + "\n".join(messages)
        tokens = min(MAX_OBSERVATION_TOKENS, 120 + OBSERVATION_TOKENS * len(messages))
        return self._ask_json("observations", system, user, tokens, parse_observations)

    def title(self, texts: Sequence[str]) -> str | None:
        """A short title for a note (≤ 8 words, safe as a file name) naming what happened in
        it, or None to fall back."""
        self.last_error = None
        kept, _ = _newest(texts, MAX_TITLE_INPUT_CHARS)
        if not kept:
            self._fallback("title", "there is nothing to name")
            return None
        system = (
            f"You name the notes of a personal memory. Answer with only a short, specific title "
            f"of at most {TITLE_MAX_WORDS} words naming what happened in the text: its main "
            'event or decision, and whose ("Caroline\'s adoption interview", "John\'s wedding '
            'in Italy"), never its greetings or small talk; no quotes, no trailing '
            "punctuation, no explanation."
        )
        answer = self._ask("title", system, "\n\n".join(kept), max_tokens=40)
        if answer is None:
            return None
        title = clean_title(answer)
        if title is not None and not set(title.casefold().split()) - _GENERIC_TITLE_WORDS:
            title = None  # "Conversation", "Catching up": names no note
        if title is None:
            self._fallback("title", f"no usable title in the answer: {excerpt(answer)}")
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
            self._fallback(task, f"the answer is not a JSON array: {excerpt(answer)}")
        return items

    def _fallback(self, task: str, reason: str) -> None:
        """Record and log (one line) why the caller is to use the deterministic method."""
        self.last_error = reason
        log.warning("LLM %s failed (%s); using the deterministic method", task, reason)


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


def parse_observations(answer: str) -> list[tuple[str, str]] | None:
    """[(message id, observation), ...] from a model's JSON answer, tolerant of ``` fences and
    stray prose; an observation as written (stripped: a line break in it is the caller's to
    refuse). Items that are not {"id": str, "observation": str} (or "text") are dropped. None
    when no JSON array can be found."""
    document = _json_list(answer)
    if document is None:
        return None
    out: list[tuple[str, str]] = []
    for item in document:
        if not isinstance(item, dict):
            continue
        source = _scalar(item.get("id"))
        said = item.get("observation", item.get("text"))
        if source and isinstance(said, str) and said.strip():
            out.append((source, said.strip()))
    return out


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
