"""What `search`, `context`, `check` and `hook user-prompt-submit` print, as text.

The same functions make the output in the CLI's own process and in the daemon answering over its
socket (socket_server.py), so the two are byte-identical for the same vault and `now`: an
`Output` is the text in the order it is written, each part to stdout or to stderr, and the exit
status. The CLI writes the parts with click.echo either way (the cli package stays the only one
that prints).

`Answerer.respond` is the daemon's side: it answers only when its answer would be the one the
CLI's own process would give, and otherwise says "fallback" (the client then runs the command
itself, so anything unusual, an error message included, comes out exactly as without a daemon):
the configuration the CLI would load (the vault's config file and the BRAINIAC_* variables the
client sent) must be the one the daemon runs with, the time zone must be the same, and `check`
with a model configured ([llm]) runs in the CLI, whose own timeouts apply to the model.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from brainiac.api import socket_requests
from brainiac.core import faults
from brainiac.store.safe_io import stat_key

if TYPE_CHECKING:
    from brainiac.api.memory import Memory
    from brainiac.store.config import Config

EXIT_CONFLICTS = 1  # `check`: the response contradicts the memory (cli.conventions.EXIT_CONFLICTS)


@dataclass(frozen=True)
class Output:
    parts: tuple[tuple[bool, str], ...] = ()  # (to stderr, text), in the order written
    exit: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"parts": [list(p) for p in self.parts], "exit": self.exit}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Output:
        """KeyError, TypeError or ValueError when `data` is not an Output."""
        parts = tuple((err, text) for err, text in data["parts"])
        if not all(isinstance(e, bool) and isinstance(t, str) for e, t in parts):
            raise TypeError("parts are [bool, str] pairs")
        if not isinstance(data["exit"], int):
            raise TypeError("exit is an int")
        return cls(parts, data["exit"])


class _Writer:
    def __init__(self) -> None:
        self.parts: list[tuple[bool, str]] = []

    def out(self, text: str, nl: bool = True) -> None:
        self.parts.append((False, text + "\n" if nl else text))

    def err(self, text: str) -> None:
        self.parts.append((True, text + "\n"))

    def json(self, data: Any) -> None:
        self.out(json.dumps(data, ensure_ascii=False, indent=2, default=str))

    def done(self, code: int = 0) -> Output:
        return Output(tuple(self.parts), code)


# -- the commands ----------------------------------------------------------------------------------
def search(
    memory: Memory, query: str, limit: int, as_json: bool, project: str | None = None
) -> Output:
    results = memory.search(query, limit=limit, project=project)
    w = _Writer()
    if as_json:
        w.json([dataclasses.asdict(r) for r in results])
        return w.done()
    if not results:
        w.err("no matches")
    for r in results:
        path = escaped(r.path)
        where = f" [{', '.join(r.projects)}]" if r.projects else ""
        if r.kind == "event":
            when = r.at.strftime("%Y-%m-%d %H:%M") if r.at else "undated"
            w.out(f"{r.score:7.2f}  {path}#^{r.event_id}  [{when}]{where} {_one_line(r.excerpt)}")
        else:
            w.out(f"{r.score:7.2f}  {path}{where}  {' '.join(r.title.split())}")
    return w.done()


def context(
    memory: Memory,
    prompt: str | None,
    budget: int | None,
    when: dt.datetime,
    as_json: bool,
    project: str | None = None,
) -> tuple[Output, Any]:
    """The output of `context` (without --write) and the Context itself (--write needs it)."""
    result = memory.context(prompt, budget=budget, now=when, project=project)
    w = _Writer()
    for warning in result.warnings:
        w.err(f"brainiac: warning: {warning}")
    if as_json:
        w.json(dataclasses.asdict(result))
    else:
        w.out(result.text, nl=False)
    return w.done(), result


def check(
    memory: Memory, text: str, now: dt.datetime | None, as_json: bool, project: str | None = None
) -> Output:
    result = memory.check(text, now=now, project=project)
    w = _Writer()
    if as_json:
        w.json(
            {
                "status": result.status,
                "consistent": result.consistent,
                "facts_known": result.facts_known,
                "sentences_about_facts": result.sentences_about_facts,
                "conflicts": [dataclasses.asdict(c) for c in result.conflicts],
                "findings": [dataclasses.asdict(f) for f in result.findings],
            }
        )
    else:
        for c in result.conflicts:
            where = f"{c.file}:{c.line}" + (f" ^{c.block}" if c.block else "")
            by = ", decided by the model" if c.decided_by == "llm" else ""
            w.out(f"CONFLICT ({c.kind}, confidence {c.confidence:.2f}{by}) {where}")
            w.out(f"  {c.correction}")
        for f in result.findings:
            if f.status == "consistent":
                where = f"{f.file}:{f.line}" + (f" ^{f.block}" if f.block else "")
                by = ", decided by the model" if f.decided_by == "llm" else ""
                w.err(f"consistent: {f.claim}  ({f.source} {where}: {f.stored}{by})")
            elif f.status == "unverified":
                w.err(f"could not verify: {f.claim}")
        if not result.conflicts:
            w.err(f"{result.status}: no conflict")
    return w.done(0 if result.consistent else EXIT_CONFLICTS)


def prompt_hook(memory: Memory, stdin: str, budget: int | None) -> Output:
    """`hook user-prompt-submit`: HookInputError (a BrainiacError) for a bad event."""
    from brainiac.api import hooks

    payload = hooks.Payload.parse(stdin, "user-prompt-submit")
    w = _Writer()
    w.out(hooks.prompt_context(memory, payload, budget), nl=False)
    return w.done()


# A file name may hold any byte but "/" and NUL: a newline in one would split a result over two
# lines, and a line-by-line reader would take the second half for another result. Shown as
# `ls -b` shows it: C escapes for control characters, and the backslash doubled so that the
# escape cannot be mistaken for a name that contains one. `--json` keeps the name exact.
_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def escaped(path: str) -> str:
    return "".join(_ESCAPES.get(c) or (c if c.isprintable() else _code(ord(c))) for c in path)


def _code(n: int) -> str:
    if 0xDC80 <= n <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): the byte itself
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n <= 0xFF else f"\\u{n:04x}"


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# -- the daemon's side -----------------------------------------------------------------------------
class _Fallback(Exception):
    """This request is better answered by the CLI's own process (the reason is the message)."""


class Answerer:
    """Answers the socket's typed requests (socket_requests.py) with the daemon's long-lived
    Memory (any thread), through the functions above, which the CLI's commands call too."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._config_seen: tuple[object, Config] | None = None  # (config file stat + env, it)

    def respond(self, data: dict[str, Any]) -> dict[str, Any]:
        env = data.get("env")
        if not isinstance(env, dict):
            return {"error": "env must be a JSON object"}
        try:
            request = socket_requests.parse(data)
        except socket_requests.BadRequest as exc:
            return {"error": str(exc)}
        try:
            self._same_setting({str(k): str(v) for k, v in env.items()})
            return self.answer(request).as_json()
        except _Fallback as exc:
            return {"fallback": str(exc)}
        except Exception as exc:  # BrainiacError and the rest: the CLI says it the usual way
            return {"fallback": f"{type(exc).__name__}: {exc}"}

    def answer(self, request: socket_requests.Request) -> Output:
        """What the CLI prints for `request`; _Fallback when the CLI's own process answers."""
        faults.point("socket.answering")  # a test's daemon dies here, mid-request
        memory, r = self.memory, request
        if isinstance(r, socket_requests.SearchRequest):
            return search(memory, r.query, r.limit, r.json, r.project)
        if isinstance(r, socket_requests.ContextRequest):
            when = _clock_local(_parse_time(r.now))
            return context(memory, r.prompt, r.budget, when, r.json, r.project)[0]
        if isinstance(r, socket_requests.CheckRequest):
            if memory.llm.available:
                raise _Fallback("check with a model ([llm]) runs in the CLI")
            return check(memory, r.text, _parse_time(r.now), r.json, r.project)
        return prompt_hook(memory, r.stdin, r.budget)

    def _same_setting(self, env: dict[str, str]) -> None:
        from brainiac.store import config as config_mod

        if env.get("TZ") != os.environ.get("TZ"):
            raise _Fallback("the client's time zone (TZ) is not the daemon's")
        path = self.memory.vault.root / config_mod.CONFIG_RELPATH
        try:
            st = os.stat(path)
            stamp: object = stat_key(st)
        except FileNotFoundError:
            stamp = None
        key = (stamp, sorted(env.items()))
        seen = self._config_seen
        if seen is None or seen[0] != key:
            environ = {k: v for k, v in os.environ.items() if not k.startswith("BRAINIAC_")}
            seen = (key, config_mod.load(self.memory.vault.root, environ={**environ, **env}))
            self._config_seen = seen
        if seen[1] != self.memory.config:
            raise _Fallback("the configuration changed since the daemon loaded it (SIGHUP)")


def _parse_time(value: str | None) -> dt.datetime | None:
    """As cli.conventions.parse_time; a time it would refuse is answered by the CLI (its
    message)."""
    from brainiac.core import clock

    if value is None:
        return None
    try:
        return clock.local(dt.datetime.fromisoformat(value))
    except (ValueError, OverflowError) as exc:
        raise _Fallback(f"--now {value!r} is refused by the CLI") from exc


def _clock_local(parsed: dt.datetime | None) -> dt.datetime:
    """As the CLI's `context`: the time given, or the clock's."""
    from brainiac.core import clock

    return clock.local(parsed or clock.now())
