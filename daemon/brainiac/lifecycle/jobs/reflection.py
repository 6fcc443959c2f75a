"""Reflection: refresh the short-term document from its events.

It rewrites only lines it generated (`marks.py`); a person's lines in any section stay as they are,
and a person's fact value stands (`facts.apply`). What it maintains:

- Summary: the span and sessions of the window, its topics and who or what came up (or, with an
  LLM endpoint configured, a prose summary).
- Working Memory: current topic, active goal, pending questions, last activity and an expiry
  `working_memory_ttl_minutes` after it (sliding: each new event moves it). Once expired, the
  generated lines are cleared from the context and recorded as an event, so nothing is lost.
- Goals, Tasks: extracted from what was said; kept across runs (the newest `_KEEP` of each), so
  they outlive the events' promotion.
- Facts learned from events leave the short-term Facts a week after their event left the Event
  Log (promotion applied them to the long-term note the event went to); a person's stay.
- Observations: what each new event says about its speaker (language/observe.py; with an LLM
  endpoint configured, what the model writes, asked once per session's batch of new events:
  model_observations.py), until promotion carries the line with its event to a note.
- Facts: `- key: value (since …, e-id)` with superseded values kept as history; with an LLM
  endpoint configured, what it reads in each new event is added to what the rules found
  (model_facts.py).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core import clock
from brainiac.formats import events as ev
from brainiac.formats import marks, stm
from brainiac.formats import note as notes
from brainiac.language import answering, extract, facts, mentions, observe, topics
from brainiac.language.facts import Fact
from brainiac.lifecycle.jobs import model_facts, model_observations
from brainiac.lifecycle.jobs.edits import Outcome, update
from brainiac.store import projects, safe_io
from brainiac.store.vault import SHORT_TERM

if TYPE_CHECKING:
    from brainiac.lifecycle.jobs import JobReport
    from brainiac.search.memory_protocol import MemoryLike

SELF_ROLE = "brainiac"
_STATE_FILE = "reflection.json"  # events brainiac records about itself (not activity)
_FACT_PROJECTS = "fact_projects"  # a short-term fact's event id -> its project (reflection.json)
_KEEP = 5
# A fact learned from an event stays in the short-term Facts while its event is in the Event
# Log or for this long after; then it lives on in the long-term note promotion put it in.
_SHORT_TERM_FACT_DAYS = 7
_TOPIC_EVENTS = 3


def reflect(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.lifecycle.jobs import JobReport

    ttl = dt.timedelta(minutes=memory.config.working_memory_ttl_minutes)
    memory.llm.last_error = None
    outcome = Outcome()
    said: list[str] = []
    summary_cache: dict[tuple[str, ...], str | None] = {}

    def llm_summary(events: Sequence[ev.Event]) -> str | None:
        if not memory.llm.available or not events:
            return None
        key = tuple(e.id for e in events)
        if key not in summary_cache:
            summary_cache[key] = memory.llm.summarise([f"{e.role}: {e.text}" for e in events])
        return summary_cache[key]

    read_cache: dict[str, list[Fact] | None] = {}

    def llm_facts(event: ev.Event) -> list[Fact] | None:
        # Cached for the run: a save during the job makes the transform run again.
        if event.id not in read_cache:
            read_cache[event.id] = model_facts.read(memory.llm, event)
        return read_cache[event.id]

    observers: dict[tuple[str, ...], model_observations.Observer] = {}

    def llm_observer(events: Sequence[ev.Event]) -> model_observations.Observer:
        # Cached for the run, as the facts: the model is asked about these events once.
        key = tuple(e.id for e in events)
        if key not in observers:
            observers[key] = model_observations.observer(memory.llm, events)
        return observers[key]

    newest: list[dt.datetime] = []  # the newest event the last transform saw (the watermark)

    def transform(text: str | None) -> str | None:
        if text is None:
            return None
        reader = llm_facts if memory.llm.available else None
        writer = llm_observer if memory.llm.available else None
        new, notes_out = refresh(text, now, ttl, llm_summary, since, reader, writer, fact_projects)
        said[:] = notes_out
        times = [e.at for e in stm.parse(new).events if e.at is not None and e.at <= now]
        newest[:] = [max(times, key=clock.instant)] if times else []
        return new

    state = memory.locations.state / _STATE_FILE
    since = _load_watermark(state)
    fact_projects = _load_fact_projects(state)
    update(memory.vault, SHORT_TERM, transform, outcome, dry_run)
    if not dry_run and not outcome.skipped and newest:
        # Goals and tasks have been taken from every event up to this one.
        data: dict[str, object] = {"extracted_through": clock.isoformat(newest[0])}
        if fact_projects:
            data[_FACT_PROJECTS] = fact_projects
        safe_io.replace_file(state, json.dumps(data).encode("utf-8"))
    if memory.llm.available and memory.llm.last_error:
        said.append(
            f"LLM unavailable ({memory.llm.last_error}); used the deterministic summary, facts "
            "and observations"
        )
    what = "; ".join(said) if said else "nothing new"
    if outcome.skipped:
        return JobReport("reflection", False, "skipped: " + "; ".join(outcome.skipped))
    prefix = "dry run: " if dry_run else ""
    return JobReport("reflection", True, prefix + what, tuple(outcome.changed), dry_run)


Summariser = Callable[[Sequence[ev.Event]], "str | None"]
FactReader = Callable[[ev.Event], "list[Fact] | None"]
ObservationWriter = Callable[[Sequence[ev.Event]], model_observations.Observer]


def refresh(
    text: str,
    now: dt.datetime,
    ttl: dt.timedelta,
    llm_summary: Summariser | None = None,
    since: dt.datetime | None = None,
    read_facts: FactReader | None = None,
    write_observations: ObservationWriter | None = None,
    fact_projects: dict[str, str] | None = None,
) -> tuple[str, list[str]]:
    """The short-term document refreshed as of `now`, and what changed (for the report).
    `read_facts`: a model's reading of an event's facts, asked for the events after `since`;
    `write_observations`: a model's observations of those events (the rules' without it);
    `fact_projects`: the project of each short-term fact's event, kept from run to run (the
    event leaves the log before its fact leaves the Facts), updated in place."""
    doc = stm.parse(text)
    events = [e for e in doc.events if e.at is None or e.at <= now]
    activity = [e for e in events if e.role != SELF_ROLE]
    said: list[str] = []

    # Goals and tasks come from events not looked at before (`extracted_through`), so a goal or
    # task a person deleted does not come back while its event is still in the log.
    # As instants: an event in the second time round of the hour repeated at fall-back is after
    # one of the first, though its clock reads earlier.
    after = clock.instant(since) if since is not None else -math.inf
    fresh = [e for e in activity if e.at is not None and clock.instant(e.at) > after]
    groups = projects.digest_groups(activity)
    mixed = any(g is not None for g in groups)
    # In a log with projects, each project's digest is its own, made when it has something new:
    # working in another project leaves it as it was, as in a vault of its own.
    new_ids = {e.id for e in fresh}
    due = {
        g: found for g, found in groups.items() if not mixed or any(e.id in new_ids for e in found)
    }
    text = _refresh_working_memory(text, doc, groups, due, mixed, (now, ttl), said)
    text = _refresh_summary(text, due, mixed, llm_summary)
    said_in: dict[str | None, list[ev.Event]] = {}
    for e in fresh:  # a goal or task is of the project it was said in
        said_in.setdefault(e.project, []).append(e)
    goals = {
        g: [f"- {x}" for e in found for x in intentions(extract.goals(e.text))]
        for g, found in said_in.items()
    }
    tasks = {
        g: [f"- [ ] {x}" for e in found for x in intentions(extract.tasks(e.text))]
        for g, found in said_in.items()
    }
    for title, found in (("Goals", goals), ("Tasks", tasks)):
        new_text = _accumulate(text, title, found, mixed)
        if new_text != text:
            said.append(f"{title.lower()} updated")
            text = new_text
    text = _observe(
        text, fresh, write_observations(fresh) if write_observations else None, activity
    )
    known = {} if fact_projects is None else fact_projects
    known.update({e.id: e.project for e in activity if e.project})
    text, changes = _apply_facts(text, activity, fresh, read_facts, known)
    # In a log with projects, a project's facts leave when the project works again, a week
    # after their events left its log, as in a vault of its own: another project's session
    # says nothing of how long ago this one's facts were learned.
    kept_for = {known[i] for i in known if known[i] not in due} if mixed else set()
    text, dropped = _prune_facts(text, now, {e.id for e in doc.events}, known, kept_for)
    stated = {fl.fact.source for fl in facts.parse(stm_body(text, "Facts"))}
    for gone in [i for i in known if i not in stated]:
        del known[gone]
    if dropped:
        said.append(f"{dropped} older fact(s) left the short-term Facts (kept in long-term notes)")
    for c in changes:
        if c.kind == "superseded":
            said.append(f"fact {c.key}: {c.old} → {c.new}")
        elif c.kind == "added":
            said.append(f"fact {c.key}: {c.new}")
    return text, said


def _refresh_working_memory(
    text: str,
    doc: stm.ShortTerm,
    groups: Mapping[str | None, Sequence[ev.Event]],
    due: Mapping[str | None, Sequence[ev.Event]],
    mixed: bool,
    when: tuple[dt.datetime, dt.timedelta],
    said: list[str],
) -> str:
    """The `## Working Memory` of each digest in `due` made anew from its events, or, once the
    whole log has been quiet for `ttl` (the agent's last activity, in whichever project),
    every digest's cleared and recorded as an event (of its project), so nothing is lost.
    `when`: now and the working memory's time to live."""
    now, ttl = when
    wm_body = doc.note.section_text("Working Memory") or ""
    last = max((e.at for found in groups.values() for e in found if e.at), default=None)
    if last is None:
        return text
    lines = _by_group(wm_body, groups, mixed)
    if now >= last + ttl:
        # Each dated when its own digest expired (its "expires" line): its project's last step.
        ends = {g: max((e.at for e in x if e.at), default=last) for g, x in groups.items()}
        expired = [
            ev.make_event(
                "Working memory expired: " + "; ".join(x.lstrip("- ") for x in found),
                role=SELF_ROLE,
                at=ends.get(group, last) + ttl,
                project=group,
            )
            for group, found in lines.items()
            if found
        ]
        if not expired:
            return text
        text, _ = stm.append_events(text, expired)
        said.append("working memory expired and was recorded as an event")
        return notes.replace_section(text, "Working Memory", marks.merge_lines(wm_body, []))
    for group, found in due.items():
        own_last = max((e.at for e in found if e.at), default=None)
        if own_last is not None:
            lines[group] = _working_memory(found, doc, own_last, ttl)
    new_body = marks.merge_lines(wm_body, _tagged_lines(lines))
    if new_body.strip("\n") != wm_body.strip("\n"):
        text = notes.replace_section(text, "Working Memory", new_body)
    return text


def _working_memory(
    activity: Sequence[ev.Event], doc: stm.ShortTerm, last: dt.datetime, ttl: dt.timedelta
) -> list[str]:
    recent = list(activity[-_TOPIC_EVENTS:])
    lines = []
    speakers = _speakers(activity)
    topic = [t for t in mentions.keywords((e.text for e in recent), 8) if t not in speakers][:4]
    if topic:
        lines.append(f"- topic: {', '.join(topic)}")
    goals = [g for e in activity for g in intentions(extract.goals(e.text))]
    person_goals = [
        marks.unmark(x).lstrip("- ")
        for x in marks.person_lines(doc.note.section_text("Goals") or "")
    ]
    goal = goals[-1] if goals else (person_goals[0] if person_goals else None)
    if goal:
        lines.append(f"- active goal: {goal}")
    pending = _pending_questions(activity)
    if pending:
        lines.append(f"- pending questions: {' | '.join(pending)}")
    lines.append(
        f"- last activity: {last.isoformat(timespec='minutes')}, "
        f"expires: {(last + ttl).isoformat(timespec='minutes')}"
    )
    return lines


def intentions(phrases: list[str]) -> list[str]:
    """The goals or tasks a stated intention gave that say what they are (topics.names_what):
    "I want to visit!" gives no goal "Visit"."""
    return [p for p in phrases if topics.names_what(p)]


def _speakers(activity: Sequence[ev.Event]) -> set[str]:
    """Who speaks in `activity`, casefolded. A speaker of the conversation is not its topic: in
    a chat between Jon and Gina every line is by or to one of them, so their names led every
    summary's topics ("topics: Jon, Gina, TikTok") and matched every prompt that names them,
    which put the generated lines in the context whatever was asked."""
    return {e.role.casefold() for e in activity if e.role}


def _pending_questions(activity: Sequence[ev.Event]) -> list[str]:
    """Questions in the newest events that nobody else has answered yet."""
    if not activity:
        return []
    asker = activity[-1].role
    tail: list[ev.Event] = []
    for e in reversed(activity):
        if e.role != asker:
            break
        tail.insert(0, e)
    return [q for e in tail for q in extract.questions(e.text)][-3:]


def _refresh_summary(
    text: str,
    groups: Mapping[str | None, Sequence[ev.Event]],
    mixed: bool,
    llm_summary: Summariser | None,
) -> str:
    """The summary of each digest in `groups` made anew (the others' lines kept)."""
    body = stm_body(text, "Summary")
    if not groups:
        return text
    lines = _by_group(body, groups, mixed)
    for group, activity in groups.items():
        lines[group] = _summary(activity, llm_summary)
    new_body = marks.merge_lines(body, _tagged_lines(lines))
    if new_body.strip("\n") == body.strip("\n"):
        return text
    return notes.replace_section(text, "Summary", new_body)


def _summary(activity: Sequence[ev.Event], llm_summary: Summariser | None) -> list[str]:
    """The summary lines of `activity` (one project's digest, or the whole log's)."""
    lines: list[str] = []
    prose = llm_summary(activity) if llm_summary else None
    if prose:
        lines.append(" ".join(prose.split()))
    dated = [e.at for e in activity if e.at]
    sessions = list(dict.fromkeys(e.session for e in activity if e.session))
    span = ""
    if dated:
        span = f" from {dated[0]:%Y-%m-%d %H:%M} to {dated[-1]:%Y-%m-%d %H:%M}"
    where = f" in {', '.join(sessions[-3:])}" if sessions else ""
    counts: dict[str, int] = {}
    speakers = _speakers(activity)
    names_there = mentions.confirmed_names([e.text for e in activity], str.casefold)
    for e in activity:
        for name in mentions.entities(e.text, openers=False):
            if name.casefold() in names_there and name.casefold() not in speakers:
                counts[name] = counts.get(name, 0) + 1
    names = sorted(counts, key=lambda n: -counts[n])[:5]
    words = [
        t
        for t in mentions.keywords((e.text for e in activity), 12)
        if t not in _lower(names) and t not in speakers
    ][:5]
    about = ", ".join(names + words)
    lines.append(
        f"- {len(activity)} recent events{span}{where}" + (f"; topics: {about}." if about else ".")
    )
    return lines


def _by_group(
    section_text: str, groups: Mapping[str | None, object], mixed: bool
) -> dict[str | None, list[str]]:
    """A section's generated lines by the digest they belong to (`projects.tag_of`, read only
    in a `mixed` log, one with projects: a line of a vault without projects is never split),
    each without its tag; the groups of `groups` first, in its order, then the others."""
    out: dict[str | None, list[str]] = {g: [] for g in groups}
    for line in section_text.split("\n"):
        if marks.is_generated(line):
            text, group = (
                projects.tag_of(marks.unmark(line)) if mixed else (marks.unmark(line), None)
            )
            out.setdefault(group, []).append(text)
    return out


def _tagged_lines(lines: Mapping[str | None, list[str]]) -> list[str]:
    return [projects.tagged(x, group) for group, found in lines.items() for x in found]


def _accumulate(text: str, title: str, found: Mapping[str | None, list[str]], mixed: bool) -> str:
    """Generated lines of a section: of each project (None: global), the ones already there
    plus newly found, newest `_KEEP`."""
    body = stm_body(text, title)
    lines = _by_group(body, found, mixed)
    for group, new in found.items():
        lines[group] = list(dict.fromkeys(lines[group] + new))[-_KEEP:]
    new_body = marks.merge_lines(body, _tagged_lines(lines))
    if new_body.strip("\n") == body.strip("\n"):
        return text
    return notes.replace_section(text, title, new_body)


def _apply_facts(
    text: str,
    activity: Sequence[ev.Event],
    fresh: Sequence[ev.Event],
    read_facts: FactReader | None,
    projects_of: Mapping[str, str],
) -> tuple[str, list[facts.Change]]:
    """The facts `activity` states applied to the Facts, each project's apart (`projects_of`:
    the project of a fact's event, for the events that have left the log too)."""
    model: dict[str, list[Fact]] = {}
    if read_facts is not None:
        for e in fresh:
            model[e.id] = read_facts(e) or []
    found = model_facts.stated(activity, model)
    if not found:
        return text, []
    body = stm_body(text, "Facts")
    new_body, changes = facts.apply(body, found, lambda source: projects_of.get(source or ""))
    if not changes:
        return text, []
    return notes.replace_section(text, "Facts", new_body), changes


def _observe(
    text: str,
    fresh: Sequence[ev.Event],
    observer: model_observations.Observer | None = None,
    activity: Sequence[ev.Event] = (),
) -> str:
    """The new events' observations in the short-term `## Observations` (made before the Event
    Log when missing), by the rules or by `observer` (a model's). Only events not looked at
    before: a line a person deleted stays deleted. Promotion carries each line with its event
    to the note it goes to. `activity`: the log's events, where the rules find the turn each
    new one answers."""
    before = answering.turns_before(activity or fresh)
    own = answering.own_before(activity or fresh)
    rules: model_observations.Observer = lambda e: observe.observations(  # noqa: E731
        e, previous=before.get(e.id), earlier=own.get(e.id)
    )
    found = [o for e in fresh for o in (observer or rules)(e)]
    if not found:
        return text
    body = stm_body(text, observe.SECTION)
    new_body = observe.add(body, found)
    if new_body == body:
        return text
    note = notes.parse(text, SHORT_TERM)
    log = stm.log_section(note)
    if note.section(observe.SECTION) is None and log is not None:
        lines = note.lines
        at = log.heading_line
        head = "".join(lines[:at])
        gap = "" if not head or head.endswith("\n\n") else "\n"
        return f"{head}{gap}## {observe.SECTION}\n{new_body}\n" + "".join(lines[at:])
    return notes.replace_section(text, observe.SECTION, new_body)


def _prune_facts(
    text: str,
    now: dt.datetime,
    in_log: set[str],
    projects_of: Mapping[str, str],
    kept_for: Collection[str],
) -> tuple[str, int]:
    """Drop fact lines learned from events that have left the Event Log more than
    `_SHORT_TERM_FACT_DAYS` ago, but those of the projects in `kept_for` (`projects_of`: the
    project of a fact's event). A person's fact lines (no source) always stay."""
    body = stm_body(text, "Facts")
    lines = body.split("\n")
    cutoff = now - dt.timedelta(days=_SHORT_TERM_FACT_DAYS)
    drop: set[int] = set()
    for fl in facts.parse(body):
        f = fl.fact
        if not f.source or f.source in in_log or f.since is None or f.since >= cutoff:
            continue
        if projects_of.get(f.source) not in kept_for:
            drop.update(range(fl.first, fl.last + 1))
    if not drop:
        return text, 0
    kept = "\n".join(line for i, line in enumerate(lines) if i not in drop)
    return notes.replace_section(text, "Facts", kept), len(
        [fl for fl in facts.parse(body) if fl.first in drop]
    )


def stm_body(text: str, title: str) -> str:
    return notes.parse(text, SHORT_TERM).section_text(title) or ""


def looked_through(memory: MemoryLike) -> dt.datetime | None:
    """The time of the newest event reflection has taken goals, tasks and observations from
    (None: none yet): an event of the Event Log up to it has had its observation decided."""
    return _load_watermark(memory.locations.state / _STATE_FILE)


def forget_fact_projects(state: Path, ids: Collection[str], names: Collection[str]) -> int:
    """Take out of reflection.json the projects it keeps for the facts of the events `ids` and
    of the projects `names` (`brainiac forget`: the name and the ids leave with the events, not
    at the next run); how many it took out. OSError when it cannot be written."""
    path = state / _STATE_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return 0  # none kept (or unreadable: the next run starts the map again)
    kept = _fact_projects_in(data)
    left = {i: p for i, p in kept.items() if i not in ids and p not in names}
    if not isinstance(data, dict) or len(left) == len(kept):
        return 0
    if left:
        data[_FACT_PROJECTS] = left
    else:
        data.pop(_FACT_PROJECTS, None)
    safe_io.replace_file(path, json.dumps(data).encode("utf-8"))
    return len(kept) - len(left)


def _load_fact_projects(path: Path) -> dict[str, str]:
    try:
        return _fact_projects_in(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def _fact_projects_in(data: object) -> dict[str, str]:
    """The fact projects a reflection.json's `data` keeps ({} when it is not one's)."""
    found = data.get(_FACT_PROJECTS) if isinstance(data, dict) else None
    if not isinstance(found, dict):
        return {}
    return {str(k): str(v) for k, v in found.items() if isinstance(v, str)}


def _load_watermark(path: Path) -> dt.datetime | None:
    try:
        return clock.local(
            dt.datetime.fromisoformat(json.loads(path.read_text())["extracted_through"])
        )
    except (OSError, ValueError, KeyError, TypeError, OverflowError):
        return None


def _lower(names: Sequence[str]) -> set[str]:
    return {w.lower() for n in names for w in n.split()}
