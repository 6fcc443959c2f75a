"""Bad input (issue 6, part 6): whatever a note, the short-term document, a query, a chat export or
the configuration holds, brainiac answers with its documented error, in one line naming the file,
the problem and the fix, and writes nothing it should not. docs/reliability.md has the table of
every input tried here and what happens.

Properties (Hypothesis) run in-process; the real CLI runs on fixed examples of each kind, on copies
of one vault. Already covered elsewhere, so not repeated here: any text as a query to the index
(test_index), random bytes and random JSON shapes as chat exports (test_chatlogs), a person's text
around appended events (test_stm), malformed fact lines (test_facts).

BRAINIAC_FUZZ_EXAMPLES=n runs every property with n examples instead of the few CI can afford.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from brainiac import Memory
from brainiac.core.errors import BrainiacError, ConfigError, ImportFormatError, NoteParseError
from brainiac.exchange import chatlogs
from brainiac.formats import events as ev
from brainiac.formats import ltm, note, stm
from brainiac.store import config
from brainiac.store.vault import SHORT_TERM, Vault, template_dir
from conftest import run_cli

SAMPLES = Path(__file__).parent / "samples" / "imports"
T0 = dt.datetime(2026, 11, 20, 9, 0)
_SCALE = int(os.environ.get("BRAINIAC_FUZZ_EXAMPLES", "0"))


def _examples(n: int) -> Callable[[Any], Any]:
    return settings(
        max_examples=_SCALE or n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


# ------------------------------------------------------------------------------------ helpers


@pytest.fixture(scope="module")
def template_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One initialised vault per module; each test works on a copy (`_copy`)."""
    path = tmp_path_factory.mktemp("template") / "vault"
    Memory.init(path)
    return path


def _copy(template: Path, dest: Path) -> Path:
    shutil.copytree(template, dest, symlinks=True)
    return dest


def _hashes(root: Path) -> dict[str, str]:
    """Every file of the vault (dot-folders too) and its SHA-256."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _cli(vault: Path, *args: str, input: str | None = None) -> Any:
    return run_cli("--vault", str(vault), *args, input=input)


def _one_line_error(stderr: str) -> str:
    """The single `brainiac: ...` line the CLI prints for a BrainiacError (no traceback)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    errors = [line for line in lines if line.startswith("brainiac: ") and "WARNING" not in line]
    assert len(errors) == 1, stderr
    return errors[0]


# --------------------------------------------------------------------------- notes: frontmatter


def _billion_laughs(levels: int = 9) -> bytes:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(levels):
        prev, name = chr(ord("a") + i), chr(ord("b") + i)
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    last = chr(ord("a") + levels)
    lines += [f"title: *{last}", f"tags: *{last}", f"aliases: *{last}", f"status: *{last}"]
    return ("---\n" + "\n".join(lines) + "\n---\nlaughing body\n").encode()


# A file name under memory/long_term/, its bytes, and words of the problem the one line names.
BAD_NOTES: dict[str, tuple[bytes, str]] = {
    "list-frontmatter.md": (b"---\n- a\n- b\n---\nbody\n", "must be key: value pairs"),
    "scalar-frontmatter.md": (b"---\njust some words\n---\nbody\n", "must be key: value pairs"),
    "unterminated.md": (b"---\ntitle: never closed\nbody\n", "never ends"),
    "tabs.md": (b"---\ntitle:\tTabs\n\tkey: v\n---\nbody\n", "tab character"),
    "bad-yaml.md": (b"---\ntitle: [unclosed\n---\nbody\n", "not valid YAML"),
    "python-tag.md": (
        b"---\ntitle: !!python/object/apply:os.system ['echo pwned']\n---\nbody\n",
        "not valid YAML",
    ),
    "billion-laughs.md": (_billion_laughs(), "aliases"),
    "recursive-alias.md": (b"---\na: &a [*a]\ntags: *a\n---\nbody\n", "aliases"),
    "deep-nesting.md": (b"---\na: " + b"[" * 60_000 + b"]" * 60_000 + b"\n---\n", "nests deeper"),
    "deep-block.md": (b"---\na:\n" + b"- " * 60_000 + b"x\n---\n", "nests deeper"),
    "nul.md": (b"---\ntitle: x\n---\nbo\x00dy\n", "NUL"),
    "utf-16.md": ("---\ntitle: Sixteen\n---\nbody\n".encode("utf-16"), "NUL"),
    "latin-1.md": ("---\ntitle: Café\n---\nbody\n".encode("latin-1"), "not UTF-8"),
    "over-size.md": (b"---\ntitle: Big\n---\n" + b"big " * 250_001, "byte limit"),
}
_FIXES = ("fix it", "add a closing", "re-save it", "split it", "skipped")


def _huge_scalar() -> bytes:
    title = "Huge Narwhal " + "narwhal " * 20_000
    aliases = ", ".join(f"alias{i}" for i in range(2_000))
    return f"---\ntitle: {title}\naliases: [{aliases}]\n---\nA huge note about narwhals.\n".encode()


# Odd but valid: read, with each property of its documented type, and searchable.
ODD_NOTES: dict[str, tuple[bytes, str]] = {  # name: (bytes, a word only its body holds)
    "odd-types.md": (
        b"---\ntitle: 2026-01-01\naliases: 2026-01-02\ntags: [2026-01-03, 12, null, {a: b}]\n"
        b"private: 2026-01-01\nstrength: [1]\nreinforcement: yes\ncreated: yes\n"
        b"updated: 99999999-01-01\nlast_accessed: {a: 1}\nstatus: [x]\nredirect: 12\n"
        b"decayed: 0001-01-01T00:00:00+14:00\nreinforced: 9999-12-31T23:59:59-14:00\n---\n"
        b"zanzibar in the body\n",
        "zanzibar",
    ),
    "not-finite.md": (
        b"---\ntitle: Not finite\nstrength: .nan\nreinforcement: -.inf\n---\nquasar body\n",
        "quasar",
    ),
    "bom.md": ("\ufeff---\ntitle: Bom Quokka\n---\nquokka body\n".encode(), "quokka"),
    "crlf.md": (b"---\r\ntitle: Crlf Wombat\r\n---\r\n## Facts\r\n- colour: wombat\r\n", "wombat"),
    "binary-set.md": (
        b"---\ntitle: !!binary aGVsbG8=\naliases: !!set {a, b}\n---\nbinary body ocelot\n",
        "ocelot",
    ),
    "dup-keys.md": (b"---\ntitle: First\ntitle: Second\n---\nduplicate body lemur\n", "lemur"),
    "flow-mapping.md": (b"---\n{title: Flow Tapir, tags: [a]}\n---\ntapir body\n", "tapir"),
    "huge-scalar.md": (_huge_scalar(), "narwhals"),
}


def _assert_names_file_problem_fix(message: str, rel: str, problem: str) -> None:
    assert "\n" not in message and "\r" not in message, message
    assert message.startswith(rel), message
    assert problem in message, message
    assert any(fix in message for fix in _FIXES), message


@pytest.mark.parametrize("name", sorted(BAD_NOTES))
def test_a_bad_note_is_one_note_parse_error_naming_file_problem_and_fix(
    tmp_path: Path, name: str
) -> None:
    data, problem = BAD_NOTES[name]
    rel = f"memory/long_term/{name}"
    (tmp_path / "memory/long_term").mkdir(parents=True)
    (tmp_path / rel).write_bytes(data)
    started = time.monotonic()
    with pytest.raises(NoteParseError) as info:
        ltm.parse(Vault(tmp_path).read(rel).text, rel)
    assert time.monotonic() - started < 5  # the alias bomb and the deep nesting too
    _assert_names_file_problem_fix(str(info.value), rel, problem)
    assert (tmp_path / rel).read_bytes() == data


@pytest.mark.parametrize("name", sorted(ODD_NOTES))
def test_odd_but_valid_frontmatter_reads_every_property_as_its_type(name: str) -> None:
    parsed = ltm.parse(ODD_NOTES[name][0].decode("utf-8"), f"memory/long_term/{name}")
    _assert_typed(parsed)


def _assert_typed(parsed: ltm.LongTermNote) -> None:
    assert isinstance(parsed.title, str) and parsed.title
    assert all(isinstance(a, str) for a in parsed.aliases)
    assert all(isinstance(t, str) for t in parsed.tags)
    for number in (parsed.strength, parsed.reinforcement):
        assert isinstance(number, float) and abs(number) < float("inf")
    assert isinstance(parsed.status, str) and isinstance(parsed.private, bool)
    for when in (parsed.last_touched, parsed.decay_start):
        assert when is None or (isinstance(when, dt.datetime) and when.tzinfo is None)
    assert isinstance(parsed.links, list) and isinstance(parsed.sources, list)


_YAML_BITS = st.sampled_from(
    ["title", "tags", "aliases", "private", "strength", "status", "created", "last_accessed",
     ": ", ":", " ", "  ", "\n", "\n", "\n", "\t", "- ", "[", "]", "{", "}", ", ", "&a ", "*a",
     "!!str ", "!!binary ", "!!set ", "!!python/none ", "'", '"', " #c", "|\n  ", ">\n  ", "? ",
     "---", "...", "2026-11-20", "2026-11-20T09:30", "0001-01-01T00:00+14:00", "1e3", ".nan",
     ".inf", "null", "yes", "~", "%YAML 1.1\n", "<<: *a\n", "x", "é", "🎉", "\u2028", "\x85",
     "\ufeff", "strength: 1.5\n", "strength:\n  - 1\n", "title: T\n", "a: &a [x]\n"]
)  # fmt: skip


@_examples(150)
@given(st.lists(_YAML_BITS, max_size=30).map("".join), st.sampled_from(["\n", "\r\n"]))
def test_any_frontmatter_reads_or_is_one_note_parse_error_and_edits_keep_it_readable(
    source: str, newline: str
) -> None:
    body = f"# Body{newline}text [[link]] #tag{newline}"
    text = f"---{newline}{source}{newline}---{newline}{body}"
    rel = "memory/long_term/fuzzed.md"
    try:
        parsed = ltm.parse(text, rel)
    except NoteParseError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(rel), str(exc)
        return
    _assert_typed(parsed)
    # A job's frontmatter edit either reads back or leaves the note as its person wrote it.
    for key, value, expected in (
        ("strength", "1.25", 1.25),
        ("last_accessed", "2026-11-20T09:30", None),
        ("aliases", "[A, B]", None),
    ):
        edited = note.set_frontmatter_field(text, key, value)
        if edited == text:
            continue
        again = ltm.parse(edited, rel)  # never NoteParseError
        assert edited.endswith(body)
        if expected is not None:
            assert again.strength == expected


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_key_after_a_yaml_only_line_break_is_not_missed_by_a_frontmatter_edit(
    separator: str,
) -> None:
    # YAML breaks lines at U+0085, U+2028 and U+2029 too, so the second `strength` below is a key
    # of its own, the one YAML reads; the line editor sees one line and would set the first.
    text = f"---\nstrength: 1.5\n{separator}strength: 1.5\n---\n# Body\n"
    assert ltm.parse(text, "memory/long_term/x.md").strength == 1.5
    edited = note.set_frontmatter_field(text, "strength", "1.25")
    assert edited == text  # left as its person wrote it, since the edit would not read back
    plain = text.replace(separator, "")
    assert ltm.parse(note.set_frontmatter_field(plain, "strength", "1.25"), "x.md").strength == 1.25


@_examples(100)
@given(st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_any_bytes_in_a_note_read_or_raise_note_parse_error(tmp_path: Path, data: bytes) -> None:
    rel = "memory/long_term/fuzzed.md"
    (tmp_path / "memory/long_term").mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_bytes(data)
    try:
        ltm.parse(Vault(tmp_path).read(rel).text, rel)
    except NoteParseError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(rel), str(exc)
    assert (tmp_path / rel).read_bytes() == data


def test_a_vault_of_bad_notes_reports_each_in_one_line_and_works_without_them(
    template_vault: Path, tmp_path: Path
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    for name, (data, _) in {**BAD_NOTES, **ODD_NOTES}.items():
        (vault / "memory/long_term" / name).write_bytes(data)
    before = _hashes(vault)

    status = _cli(vault, "status")
    assert status.returncode == 0, status.stderr
    out = status.stdout.splitlines()
    problems = out[out.index(f"problems: {len(BAD_NOTES)}") + 1 :]
    for name, (_, problem) in BAD_NOTES.items():
        rel = f"memory/long_term/{name}"
        lines = [line.strip() for line in problems if line.strip().startswith(rel + ":")]
        lines += [line.strip() for line in problems if line.strip().startswith(rel + ",")]
        assert len(lines) == 1, (rel, problems)
        _assert_names_file_problem_fix(lines[0], rel, problem)
    assert not any(name in status.stdout for name in ODD_NOTES)  # read, not reported

    words = " ".join(word for _, word in ODD_NOTES.values())
    found = _cli(vault, "search", "--json", "--limit", "100", words)
    assert found.returncode == 0, found.stderr
    paths = {r["path"] for r in json.loads(found.stdout)}
    assert {f"memory/long_term/{name}" for name in ODD_NOTES} <= paths
    context = _cli(vault, "context", "--prompt", "When is the Atlas deadline?")
    assert context.returncode == 0 and "Project Atlas" in context.stdout, context.stderr
    assert _hashes(vault) == before  # reading changed nothing, not even the bad files

    jobs = _cli(vault, "jobs", "run", "all", "--now", "2026-12-30T09:00")
    assert jobs.returncode == 0, jobs.stdout + jobs.stderr
    after = _hashes(vault)
    for name in BAD_NOTES:
        rel = f"memory/long_term/{name}"
        assert after[rel] == before[rel], f"a job wrote {rel}"
    for path in (vault / "memory").rglob("*.md"):  # no job made a readable note unreadable
        rel = path.relative_to(vault).as_posix()
        if path.name not in BAD_NOTES:
            ltm.parse(Vault(vault).read(rel).text, rel)


# ------------------------------------------------------------------- the short-term document


def _events(n: int) -> list[str]:
    return [
        ev.render(
            ev.make_event(
                f"Event {i}: Marco Rossi moved the Atlas review to room {i}",
                role="user" if i % 2 else "assistant",
                session="weekly",
                at=T0 + dt.timedelta(minutes=7 * i),
            )
        )
        for i in range(n)
    ]


_STM_TEMPLATE = (template_dir() / SHORT_TERM).read_text(encoding="utf-8")
_GARBAGE = st.sampled_from(
    ["- ", "-", "- 2026-99-99T99:99 **user**: no such time", "- ****: no role",
     "- 0001-01-01T00:00+14:00 **user**: a time an offset takes out of range",
     "- 9999-12-31T23:59:59-14:00 **user** (s): the other end", "- 2026-11-20T09:00 ****: x",
     "^e-0000000000", "- an id that is no id ^e-zz", "- same id, one text ^e-1234567890",
     "- same id, another text ^e-1234567890", "  an indented line", "\t- a tab item",
     "# a first-level heading", "### a third-level heading", "```", "~~~", "<!-- unclosed",
     "-->", "---", "- [ ] a task", "- key: value (since 2026-11-20 09:00, e-1234567890)",
     "- emoji 🎉 and right-to-left \u202eabc", "- a line separator\u2028inside", "- form\x0cfeed",
     "- 2026-11-20T09:00:00 **user** (a (b)): parentheses in the session",
     "- [[project-atlas|Atlas]] and #tag", "## Event Log", "## Facts"]
)  # fmt: skip
_NASTY_TEXT = st.sampled_from(
    ["../../etc/passwd", "CON", "a/b\\c:d*e?f", "nul \x00 inside", "# a heading", "---", "```",
     "^e-0123456789", "[[link]] #tag", "- a list - inside", "x" * 5000, "🎉" * 50, "\u202eevil",
     "Marco Rossi agreed: the Atlas deadline is Friday."]
)  # fmt: skip


@st.composite
def _mutated_short_term(draw: st.DrawFn) -> str:
    """The template with events and a person's line, then sections removed, duplicated, swapped
    or beheaded, garbage lines and duplicated event lines put in."""
    events = _events(draw(st.integers(0, 14)))
    text = _STM_TEMPLATE.rstrip("\n") + "\n" + "".join(events) + "- called Anna about the lease\n"
    lines = note.split_lines(text)
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    head = lines[: starts[0]]
    chunks = [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
    for op in draw(st.lists(st.sampled_from(["drop", "dup", "swap", "junk", "twin", "behead",
                                              "no-frontmatter"]), max_size=4)):  # fmt: skip
        k = draw(st.integers(0, max(len(chunks) - 1, 0)))
        if op == "drop" and chunks:
            chunks.pop(k)
        elif op == "dup" and chunks:
            chunks.insert(draw(st.integers(0, len(chunks))), list(chunks[k]))
        elif op == "swap" and chunks:
            j = draw(st.integers(0, len(chunks) - 1))
            chunks[k], chunks[j] = chunks[j], chunks[k]
        elif op == "junk" and chunks:
            for junk in draw(st.lists(_GARBAGE, min_size=1, max_size=4)):
                chunks[k].insert(draw(st.integers(1, len(chunks[k]))), junk + "\n")
        elif op == "twin" and chunks and events:  # the same text: the other case is below
            chunks[k].insert(draw(st.integers(1, len(chunks[k]))), draw(st.sampled_from(events)))
        elif op == "behead" and chunks:
            chunks[k] = chunks[k][1:]
        elif op == "no-frontmatter":
            head = [line for line in head if line.startswith("# ")]
    return "".join(head) + "".join("".join(c) for c in chunks)


def _person_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r", "").split("\n") if line.strip()]


def _assert_kept(vault: Path, person: list[str]) -> None:
    """Every line a person wrote is still somewhere in memory/ (an event that moved out of the
    log as it was, with its `^e-` id added if it had none)."""
    have: set[str] = set()
    for path in (vault / "memory").rglob("*.md"):
        have.update(line.rstrip() for line in path.read_text(encoding="utf-8").split("\n"))
    missing = [
        line
        for line in person
        if line not in have and not any(h.startswith(line + " ^e-") for h in have)
    ]
    assert not missing, f"lines a person wrote are gone: {missing}"


@_examples(12)
@given(_mutated_short_term(), _NASTY_TEXT, st.integers(0, 3))
def test_a_mutated_short_term_document_keeps_every_line_a_person_wrote(
    template_vault: Path, tmp_path_factory: pytest.TempPathFactory, text: str, said: str, days: int
) -> None:
    vault = _copy(template_vault, tmp_path_factory.mktemp("stm") / "vault")
    (vault / SHORT_TERM).write_text(text, encoding="utf-8")
    before = _hashes(vault)
    with Memory(vault, refresh_interval_s=0) as memory:
        try:
            remembered = memory.remember(said, session="s2", at=T0 + dt.timedelta(hours=3))
        except BrainiacError as exc:  # the documented error, and nothing written
            assert "\n" not in str(exc) and _hashes(vault) == before
            event(f"remember refused: {type(exc).__name__}")
            return
        reports = memory.run_job("all", now=T0 + dt.timedelta(days=3 * days))
    assert all(r.ok for r in reports), [r.summary for r in reports]
    _assert_kept(vault, _person_lines(text))
    found = [
        path
        for path in (vault / "memory").rglob("*.md")
        if f"^{remembered.id}" in path.read_text(encoding="utf-8")
    ]
    assert len(found) == 1, (remembered, found)
    changed = {rel for rel, digest in _hashes(vault).items() if before.get(rel) != digest}
    assert all(rel.startswith("memory/") for rel in changed), changed


def _reordered() -> str:
    """Event Log first, Summary gone, Facts twice, a person's own section at the end."""
    doc = stm.parse(_STM_TEMPLATE + "".join(_events(12)))
    lines = doc.note.lines
    parts = {s.title: "".join(lines[s.heading_line : s.end_line]) for s in doc.note.sections}
    head = "".join(lines[: doc.note.sections[0].heading_line + 1])  # frontmatter and the H1
    return (
        head
        + parts["Event Log"]
        + parts["Facts"]
        + "- budget: 400 euros\n"
        + parts["Tasks"]
        + parts["Facts"]
        + "## Mine\nmy own words\n"
    )


def _headless_with_junk() -> str:
    """No Event Log heading (its events now under Tasks), garbage lines, and no frontmatter."""
    text = _STM_TEMPLATE.replace("## Event Log\n", "") + "".join(_events(12))
    text = text.split("---\n", 2)[2]
    junk = [
        "- 2026-99-99T99:99 **user**: no such time",
        "- 0001-01-01T00:00+14:00 **user**: a time an offset takes out of range",
        "- ****: no role",
        "<!-- a comment that never closes",
        "```",
    ]
    return text + "\n".join(junk) + "\n"


def _twins_and_bad_ids() -> str:
    """Every event line twice, bad ids, an event split by a blank line, a stray fence."""
    events = _events(12)
    body = "".join(e + e for e in events)
    return (
        _STM_TEMPLATE
        + body
        + "- an id that is no id ^e-zz\n- a line\n\n  continued after a blank line ^e-00000000\n"
        + "~~~\n- inside a fence that never closes\n"
    )


@pytest.mark.parametrize("make", [_reordered, _headless_with_junk, _twins_and_bad_ids])
def test_cli_remember_and_jobs_on_a_mutated_short_term_document(
    template_vault: Path, tmp_path: Path, make: Callable[[], str]
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    text = make()
    (vault / SHORT_TERM).write_text(text, encoding="utf-8")
    said = _cli(vault, "remember", "--at", "2026-11-20T12:00", "Anna moved the Atlas review.")
    assert said.returncode == 0, said.stderr
    jobs = _cli(vault, "jobs", "run", "all", "--now", "2026-11-23T09:00")
    assert jobs.returncode == 0, jobs.stdout + jobs.stderr
    _assert_kept(vault, _person_lines(text))
    event_id = said.stdout.strip()  # ^e-...
    assert event_id in "".join(p.read_text("utf-8") for p in (vault / "memory").rglob("*.md"))


def test_cli_a_short_term_document_that_cannot_be_read_is_one_line_and_no_write(
    template_vault: Path, tmp_path: Path
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    (vault / SHORT_TERM).write_text("---\ntitle: [unclosed\n---\n## Event Log\n", encoding="utf-8")
    before = _hashes(vault)
    problem = f"{SHORT_TERM}, line 3: frontmatter is not valid YAML"
    for args in (("remember", "hello"), ("context", "--prompt", "hello")):
        done = _cli(vault, *args)
        assert done.returncode == 2, args
        line = _one_line_error(done.stderr)
        assert line.startswith(f"brainiac: {problem}") and "fix it" in line, line
    assert _hashes(vault) == before
    # The jobs that need it report it, in one line each; organization still runs.
    jobs = _cli(vault, "jobs", "run", "all", "--now", "2026-11-23T09:00")
    assert jobs.returncode == 2 and "Traceback" not in jobs.stderr, jobs.stderr
    assert jobs.stdout.splitlines()[:2] == [
        f"{job}: failed: {problem} (did not find expected ',' or ']'); fix it, the note is "
        "skipped until then"
        for job in ("reflection", "promotion")
    ]
    assert jobs.stdout.splitlines()[2].startswith("organization: ")
    assert _hashes(vault)[SHORT_TERM] == before[SHORT_TERM]


def test_two_event_lines_sharing_an_id_with_different_text_both_survive_promotion(
    template_vault: Path, tmp_path: Path
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    events = _events(8)
    edited = events[0].replace("Event 0:", "Corrected by hand, event 0:")
    text = _STM_TEMPLATE.rstrip("\n") + "\n" + edited + "".join(events)
    (vault / SHORT_TERM).write_text(text, encoding="utf-8")
    with Memory(vault, refresh_interval_s=0) as memory:
        memory.remember("one more", at=T0 + dt.timedelta(hours=3))
        memory.remember("and another", at=T0 + dt.timedelta(hours=4))
        reports = memory.run_job("promotion", now=T0 + dt.timedelta(days=1))
    assert all(r.ok for r in reports)
    # The original keeps its id; the copy a person changed gets one of its own (from its text),
    # so moving one by id cannot take the other's line with it.
    _assert_kept(vault, [events[0].rstrip("\n")])
    edited_text = edited.rsplit(" ^e-", 1)[0]
    everywhere = "\n".join(p.read_text() for p in (vault / "memory").rglob("*.md"))
    assert everywhere.count(edited_text + " ^e-") == 1
    ids = re.findall(r"\^(e-[0-9a-f]{10})\b", everywhere)
    assert len(ids) == len(set(ids))


def test_fewer_events_than_the_window_stay_in_the_event_log(
    template_vault: Path, tmp_path: Path
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    with Memory(vault, refresh_interval_s=0) as memory:
        for i in range(6):
            memory.remember(f"message number {i} about gardening", at=T0 + dt.timedelta(minutes=i))
        memory.run_job("promotion", now=T0 + dt.timedelta(hours=1))
        assert len(memory.short_term().events) == 6  # the window is 10


# ---------------------------------------------------------------------------------- queries

NASTY_QUERIES = [
    "AND OR NOT (",
    "*",
    "field:",
    "title:atlas path:/etc",
    '"unbalanced',
    "\\",
    "deadline~2 atlas^3 [a TO z] {b TO c}",
    "atlas deadline " * 200,
    "\x01\x02\x1b[31mred\x1b[0m\x7f",
    "مرحبا \u202eevil\u202c עברית",
    "🎉🧠 deadline 👍🏽 \u200d",
    "a\u2028b\u0085c\x0c",
    "%s %n {0} ${HOME} $(rm -rf /)",
]
_LONG_QUERY = "atlas " * 15_000  # 90 KB, under the 128 KB one argument may hold


@pytest.fixture
def memory_with_events(template_vault: Path, tmp_path: Path) -> Any:
    vault = _copy(template_vault, tmp_path / "vault")
    with Memory(vault, refresh_interval_s=0) as memory:
        for i in range(5):
            memory.remember(f"The Atlas deadline is Monday, said Anna ({i}).", at=T0)
        yield memory


@_examples(60)
@given(st.text(max_size=300) | st.sampled_from(NASTY_QUERIES))
def test_any_text_is_a_query_a_prompt_and_a_response_to_check(
    memory_with_events: Memory, text: str
) -> None:
    memory_with_events.search(text, limit=5)
    context = memory_with_events.context(text, budget=800, now=T0)
    assert context.tokens <= context.budget or context.over_budget  # a prompt is never cut
    if not text.strip():
        with pytest.raises(BrainiacError, match="nothing to check"):
            memory_with_events.check(text, now=T0)
    else:
        memory_with_events.check(text, now=T0)


# The CLI on a few (each spawns a process): Whoosh syntax, an empty analysis, a field, control
# characters, right-to-left and emoji, and a 90 KB argument; `check` gets all of them at once.
_CLI_QUERIES = [NASTY_QUERIES[i] for i in (0, 1, 2, 8, 9, 10)] + [_LONG_QUERY]


@pytest.mark.parametrize("query", _CLI_QUERIES, ids=range(len(_CLI_QUERIES)))
def test_cli_search_and_context_take_any_text(
    template_vault: Path, tmp_path: Path, query: str
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    search = _cli(vault, "search", "--", query)
    assert search.returncode == 0 and "Traceback" not in search.stderr, search.stderr
    context = _cli(vault, "context", "--prompt", query)
    assert context.returncode == 0 and "Traceback" not in context.stderr, context.stderr
    assert "## User Prompt" in context.stdout


def test_cli_check_takes_any_text(template_vault: Path, tmp_path: Path) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    check = _cli(vault, "check", "-", input="\n".join(NASTY_QUERIES) + "\x00 a NUL too")
    assert check.returncode in (0, 1), check.stderr  # consistent, or conflicts found
    assert "Traceback" not in check.stderr, check.stderr
    empty = _cli(vault, "check", "-", input=" \n\t")
    assert empty.returncode == 2
    assert _one_line_error(empty.stderr) == "brainiac: nothing to check: the text is empty"


def test_cli_a_query_that_is_not_utf8_is_still_a_query(
    template_vault: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    vault = _copy(template_vault, tmp_path / "vault")
    done = subprocess.run(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "search", b"caf\xe9 atlas"],
        capture_output=True,
        env=os.environ,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("case", ["prompt-file", "at", "user-config"])
def test_cli_arguments_that_cannot_be_read_are_one_line(
    template_vault: Path, tmp_path: Path, xdg_dirs: dict[str, str], case: str
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    if case == "prompt-file":
        (tmp_path / "prompt.txt").write_bytes(b"caf\xe9 atlas")
        done = _cli(vault, "context", "--prompt-file", str(tmp_path / "prompt.txt"))
    elif case == "at":
        done = _cli(vault, "remember", "--at", "0001-01-01T00:00:00+14:00", "edge")
    else:
        user = Path(xdg_dirs["XDG_CONFIG_HOME"]) / "brainiac" / "config.toml"
        user.parent.mkdir(parents=True)
        user.write_bytes(b'vault = "caf\xe9"\n')
        done = run_cli("status")
    assert done.returncode == 2
    _one_line_error(done.stderr)


# ------------------------------------------------------------------------ import parsers

_SAMPLE_BYTES = {p.name: p.read_bytes() for p in sorted(SAMPLES.iterdir())}
_JUNK_VALUES = st.sampled_from(
    [None, 0, -1, 2**70, 1e308, "", "x", "\x00", "\ud800", [], {}, [1], {"a": 1}, True,
     "0001-01-01T00:00:00+14:00", 253402300799, -62135596800.5]
).map(copy.deepcopy)  # fmt: skip
_DEEP = "[" * 100_000 + "]" * 100_000


def _mutate_json(value: Any, draw: st.DrawFn) -> Any:
    """One change at a random place: a value of another type, a key dropped, deep nesting."""
    path: list[tuple[Any, Any]] = []
    node = value
    while isinstance(node, dict | list) and node and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
        path.append((node, key))
        node = node[key]
    if not path:
        return draw(_JUNK_VALUES)
    parent, key = path[-1]
    how = draw(st.sampled_from(["type", "drop", "deep"]))
    if how == "drop" and isinstance(parent, dict):
        del parent[key]
    elif how == "deep":
        parent[key] = "\x00DEEP\x00"
    else:
        parent[key] = draw(_JUNK_VALUES)
    return value


def _dumps(value: Any) -> bytes:
    return json.dumps(value).replace('"\\u0000DEEP\\u0000"', _DEEP).encode("utf-8", "surrogatepass")


@st.composite
def _mutated_export(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(sorted(_SAMPLE_BYTES)))
    data = _SAMPLE_BYTES[name]
    how = draw(st.sampled_from(["truncate", "json", "encoding", "bytes"]))
    if how == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    elif how == "json" and name.endswith(".json"):
        value = json.loads(data)
        for _ in range(draw(st.integers(1, 3))):
            value = _mutate_json(value, draw)
        data = _dumps(value)
    elif how == "json" and name.endswith(".jsonl"):
        lines = data.split(b"\n")
        i = draw(st.sampled_from([i for i, line in enumerate(lines) if line.strip()]))
        lines[i] = _dumps(_mutate_json(json.loads(lines[i]), draw))
        data = b"\n".join(lines)
    elif how == "encoding":
        codec = draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252", "utf-8-sig"]))
        data = data.decode("utf-8").encode(codec, errors="replace")
        if codec in ("latin-1", "cp1252"):
            data += "\nÄ ß é".encode(codec)  # the samples are mostly ASCII
    else:
        at = draw(st.integers(0, len(data)))
        junk = draw(st.sampled_from([b"\x00", b"\xff\xfe", b"\r", b"\xe2\x80\xa8", b"{", b"]",
                                     b'"', b"\\u", b"\\ud800", b"\xc3"]))  # fmt: skip
        data = data[:at] + junk + data[at:]
    return name, data


@_examples(200)
@given(_mutated_export(), st.sampled_from([None, *chatlogs.FORMATS]))
def test_a_mutated_real_export_parses_or_is_one_import_format_error(
    export: tuple[str, bytes], format: str | None
) -> None:
    name, data = export
    path = Path("/exports") / name
    try:
        chat = chatlogs.parse(path, format, data)
    except ImportFormatError as exc:
        message = str(exc)
        assert "\n" not in message and "\r" not in message, message
        assert message.startswith(str(path)), message
        assert exc.expected, message  # what would have been right
        return
    for message in chat.messages:  # what is read can be stored
        assert message.text and "\x00" not in ev.normalise_text(message.text)
        ev.normalise_text(message.text).encode("utf-8")
        if message.at is not None:
            ev.normalise_time(message.at)


def _bad_exports(folder: Path) -> list[Path]:
    """Real samples broken in the ways a download, an editor or another tool breaks them."""
    chatgpt = json.loads(_SAMPLE_BYTES["chatgpt-conversations.json"])
    chatgpt[0]["mapping"][next(iter(chatgpt[0]["mapping"]))]["children"] = "not a list"
    claude_ai = json.loads(_SAMPLE_BYTES["claude-ai-conversations.json"])
    del claude_ai[0]["uuid"]
    transcript = _SAMPLE_BYTES["7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27.jsonl"]
    events = _SAMPLE_BYTES["brainiac-events.jsonl"]
    files = {
        "truncated-conversations.json": _SAMPLE_BYTES["chatgpt-conversations.json"][:5000],
        "type-flipped-conversations.json": json.dumps(chatgpt).encode(),
        "key-dropped-conversations.json": json.dumps(claude_ai).encode(),
        "deep.json": _DEEP.encode(),
        "utf-16-transcript.jsonl": transcript.decode("utf-8").encode("utf-16"),
        "latin-1-events.jsonl": events + '{"text": "Grüße"}\n'.encode("latin-1"),
        "bad-time-events.jsonl": events + b'{"text": "x", "at": "0001-01-01T00:00:00+14:00"}\n',
        "empty.md": b"",
        "no-messages.txt": b"just some prose, no roles and no turns\n",
    }
    paths = []
    for name, data in files.items():
        (folder / name).write_bytes(data)
        paths.append(folder / name)
    return paths


def test_cli_import_rejects_each_bad_export_in_one_line_and_writes_nothing(
    template_vault: Path, tmp_path: Path
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    (tmp_path / "exports").mkdir()
    paths = _bad_exports(tmp_path / "exports")
    before = _hashes(vault)
    done = _cli(vault, "import", *map(str, paths))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    rejected = [line for line in done.stderr.splitlines() if line.startswith("brainiac: rejected")]
    assert len(rejected) == len(paths), done.stderr
    for path in paths:
        assert sum(line.startswith(f"brainiac: rejected {path}") for line in rejected) == 1
    assert all("; expected " in line for line in rejected), rejected  # what would be right
    assert _hashes(vault) == before


def test_the_inbox_moves_bad_exports_to_rejected_with_the_reason_and_nothing_else(
    template_vault: Path, tmp_path: Path
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    paths = _bad_exports(vault / "inbox")
    hour_ago = time.time() - 3600  # settled: the inbox leaves files written in the last 10 s
    for path in paths:
        os.utime(path, (hour_ago, hour_ago))
    before = _hashes(vault)
    done = _cli(vault, "jobs", "run", "inbox")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.startswith("inbox: ") and done.stdout.count("\n") == 1  # one line
    assert all(f"{path.name}: rejected (" in done.stdout for path in paths), done.stdout
    after = _hashes(vault)
    changed = {rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)}
    expected = set()
    for path in paths:
        expected |= {f"inbox/{path.name}", f"inbox/rejected/{path.name}"}
        expected.add(f"inbox/rejected/{path.name}.error.txt")
        reason = (vault / "inbox/rejected" / f"{path.name}.error.txt").read_text("utf-8")
        assert reason.count("\n") == 1 and path.name in reason and "; expected " in reason
    assert changed == expected


def test_an_imported_message_with_a_nul_or_bytes_that_are_not_utf8_is_stored_readable(
    template_vault: Path, tmp_path: Path
) -> None:
    # A NUL (`\u0000` in JSON) went into the Event Log as it was: the short-term document then
    # looked binary, was skipped, and every later `remember` failed.
    vault = _copy(template_vault, tmp_path / "vault")
    export = tmp_path / "odd.jsonl"
    export.write_text(
        '{"text": "a NUL \\u0000 here", "session": "s\\u0000t", "at": "2026-11-20T09:00:00"}\n'
        '{"text": "a lone \\ud800 surrogate", "role": "assistant", "at": "2026-11-20T09:01:00"}\n',
        encoding="utf-8",
    )
    with Memory(vault, refresh_interval_s=0) as memory:
        [report] = memory.import_files([export])
        assert report.ok and report.new == 2, report
        memory.remember("and after it", at=T0 + dt.timedelta(hours=1))
        texts = [e.text for e in memory.short_term().events]
    assert texts == ["a NUL \ufffd here", "a lone \ufffd surrogate", "and after it"]
    assert b"\x00" not in (vault / SHORT_TERM).read_bytes()


def test_remember_stores_a_nul_and_bytes_that_are_not_utf8_readably(
    template_vault: Path, tmp_path: Path
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    with Memory(vault, refresh_interval_s=0) as memory:
        memory.remember("nul \x00 and \udce9 from stdin", role="us\x00er", session="\udcff", at=T0)
        memory.remember("still works", at=T0)
        events = memory.short_term().events
    assert [(e.text, e.role, e.session) for e in events] == [
        ("nul \ufffd and \ufffd from stdin", "us\ufffder", "\ufffd"),
        ("still works", "user", None),
    ]


def test_an_event_line_with_a_time_that_cannot_be_read_is_a_persons_line_kept_whole() -> None:
    # An offset that leaves years 1-9999 raised OverflowError in `clock.local`: every reader of
    # the short-term document failed. A time that is no date was read as the head's role and
    # text, and promotion then wrote the line out again without `2026-99-99T99:99 **user**:`.
    for at in ("0001-01-01T00:00+14:00", "9999-12-31T23:59:59-14:00", "2026-99-99T99:99"):
        line = f"- {at} **user** (s): edge ^e-0123456789\n"
        [read] = ev.parse_text(line)
        assert (read.at, read.role, read.id) == (None, "note", "e-0123456789")
        assert ev.render(read) == line


# --------------------------------------------------------------------------- configuration

# config.toml bytes, and what the one line must say besides the file: the key and the fix.
BAD_CONFIGS: list[tuple[bytes, str, str]] = [
    (b"[context]\nbudjet = 500\n", "[context] budjet is not a setting (did you mean budget?)",
     "fix or delete it"),
    (b"budget = 500\n", "budget is outside any section", "move it under [context]"),
    (b"[contxt]\nbudget = 500\n", "[contxt] is not a section (did you mean context?)",
     "fix or delete it"),
    (b"colour = 'blue'\n", "colour is not a setting", "fix or delete it"),
    (b'[context]\n"bud\\nget" = 1\n', '[context] "bud\\nget" is not a setting', "fix or delete it"),
    (b"[context]\n[context.extra]\nx = 1\n", "[context] extra is not a setting", "fix or delete"),
    (b"[context]\nbudget = 'lots'\n", "[context] budget: expected int, got 'lots'", "expected int"),
    (b"[context]\nbudget = inf\n", "[context] budget: expected int, got inf", "expected int"),
    (b"[context]\nbudget = 2026-01-01\n", "[context] budget: expected int", "expected int"),
    (b"[context]\nbudget = 0\n", "[context] budget: 0 is out of range", "use a value from 1"),
    (b"[context]\nbudget = 1e400\n", "[context] budget: expected int, got inf", "expected int"),
    (b"[context]\nlong_term_share = nan\n", "[context] long_term_share: expected float, got nan",
     "expected float"),
    (b"[lifecycle]\ndecay_per_day = nan\n", "[lifecycle] decay_per_day: expected float",
     "expected float"),
    (b"[context]\nbudget = true\n", "[context] budget: expected int, got True", "expected int"),
    (b"[llm]\nbase_url = 3\n", "[llm] base_url: expected a string in quotes", "in quotes"),
    (b"[vault]\nprivate_folders = [1, 2]\n", "[vault] private_folders: expected a list of strings",
     "a list of strings"),
    (b"[vault]\nmax_note_bytes = 10\n", "[vault] max_note_bytes: 10 is out of range",
     "use a value from 1024"),
    (b"[context]\nbudget = '" + b"x" * 5000 + b"'\n", "[context] budget: expected int, got 'xxx",
     "..."),
    (b"context = 3\n", "[context] must be a table", "fix or delete that line"),
    (b"[[context]]\nbudget = 5\n", "[context] must be a table", "fix or delete that line"),
    (b"[context\n", "not valid TOML", "fix the file or delete it"),
    (b"[context]\nbudget = 5\x00\n", "not valid TOML", "fix the file or delete it"),
    (b'[llm]\nmodel = "caf\xe9"\n', ", line 2: not UTF-8 text", "re-save it as UTF-8"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "names", "fix"), BAD_CONFIGS, ids=range(len(BAD_CONFIGS)))
def test_a_bad_config_is_one_config_error_naming_the_key_and_the_fix(
    tmp_path: Path, data: bytes, names: str, fix: str
) -> None:
    (tmp_path / ".brainiac").mkdir()
    (tmp_path / config.CONFIG_RELPATH).write_bytes(data)
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, environ={})
    message = str(info.value)
    assert message.startswith(config.CONFIG_RELPATH), message
    assert "\n" not in message and len(message) < 300, message
    assert names in message and fix in message, message


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("BRAINIAC_CONTEXT_BUDGET", "inf", "expected int, got 'inf'"),
        ("BRAINIAC_CONTEXT_LONG_TERM_SHARE", "nan", "expected float, got 'nan'"),
        ("BRAINIAC_CONTEXT_BUDGET", "1" * 5000, "expected int, got '111"),
        ("BRAINIAC_LIFECYCLE_DECAY_PER_DAY", "-1", "out of range"),
    ],
)
def test_a_bad_environment_variable_is_one_config_error_naming_it(
    tmp_path: Path, variable: str, value: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, environ={variable: value})
    assert str(info.value).startswith(f"environment variable {variable}: ")
    assert expected in str(info.value) and len(str(info.value)) < 300


def test_a_config_file_with_a_byte_order_mark_or_crlf_lines_is_read(tmp_path: Path) -> None:
    (tmp_path / ".brainiac").mkdir()
    (tmp_path / config.CONFIG_RELPATH).write_bytes(b"\xef\xbb\xbf[context]\r\nbudget = 1500\r\n")
    assert config.load(tmp_path, environ={}).budget == 1500


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"[context]\nbudjet = 500\n", "[context] budjet is not a setting (did you mean budget?)"),
        (b"[lifecycle]\ndecay_per_day = nan\n", "[lifecycle] decay_per_day: expected float"),
    ],
)
def test_cli_a_bad_config_stops_every_command_in_one_line_and_writes_nothing(
    template_vault: Path, tmp_path: Path, data: bytes, line: str
) -> None:
    vault = _copy(template_vault, tmp_path / "vault")
    (vault / config.CONFIG_RELPATH).write_bytes(data)
    before = _hashes(vault)
    done = _cli(vault, "jobs", "run", "all", "--now", "2026-12-30T09:00")
    assert done.returncode == 2 and done.stdout == ""
    assert _one_line_error(done.stderr).startswith(f"brainiac: .brainiac/config.toml: {line}")
    assert _hashes(vault) == before  # `decay_per_day = nan` wrote `strength: nan` into notes
