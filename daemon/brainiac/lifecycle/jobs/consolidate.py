"""Writing events into long-term notes: the one place that edits a note's Sources, Facts, Summary
and Related sections (promotion adds events; organization merges duplicates and links).

Every edit is a pure text transform that keeps a person's lines byte for byte: event lines are
appended (skipping ids already there), facts go through `facts.apply` (history kept, a person's
value stands), and only lines marked as generated (`marks.py`) are ever regenerated.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Collection, Mapping, Sequence

from brainiac.formats import events as ev
from brainiac.formats import ltm, marks, observation_lines
from brainiac.formats import note as notes
from brainiac.language import facts, headline, observe, topics
from brainiac.lifecycle.jobs import model_facts
from brainiac.store import projects
from brainiac.store.names import link_key, normalise

_SUMMARY_QUOTE_CHARS = 160
_SUMMARY_SENTENCES = 2  # quoted from the events: what the note says, in its own words


def new_note_text(
    title: str, tags: Sequence[str], now: dt.datetime, aliases: Sequence[str] = ()
) -> str:
    # Obsidian's property types, one per name across the vault: `created` and `updated` are
    # dates, `last_accessed` a date & time (organization writes it to the minute); it starts at
    # the day's midnight, as the bare date did, so decay counts from the same moment.
    day = now.date().isoformat()
    alias_list = ", ".join(yaml_item(a) for a in aliases)
    return (
        "---\n"
        f"title: {yaml_item(title)}\n"
        f"tags: [{', '.join(yaml_item(t) for t in tags)}]\n"
        f"aliases: [{alias_list}]\n"
        f"strength: {ltm.DEFAULT_STRENGTH}\n"
        "reinforcement: 0.0\n"
        f"created: {day}\n"
        f"updated: {day}\n"
        f"last_accessed: {day}T00:00\n"
        "status: active\n"
        "---\n"
        f"## {ltm.SUMMARY}\n\n"
        f"## {ltm.FACTS}\n\n"
        f"## {observe.SECTION}\n\n"
        f"## {ltm.SOURCES}\n\n"
        f"## {ltm.RELATED}\n"
    )


def add_events(
    text: str,
    new: Sequence[ev.Event],
    now: dt.datetime,
    strength_gain: float,
    related: Sequence[str] = (),
    summary: str | None = None,
    learned: Mapping[str, Sequence[facts.Fact]] | None = None,
    observed: Mapping[str, str] | None = None,
    observer: Callable[[ev.Event], list[observe.Observation]] | None = None,
) -> tuple[str, list[facts.Change]]:
    """`text` with `new` events appended to its Sources (ids already there, or given twice,
    skipped), its facts updated from them (and from the facts `learned` from them before, by
    event id: see model_facts.py), their observations (or the lines `observed` holds for them,
    by event id; by the rules or by `observer`: a model's, model_observations.py), its
    generated summary and `related` [[links]] added, strength raised by `strength_gain` when
    something was added. Returns the text and the fact changes."""
    note = ltm.parse(text, "<note>")
    seen = ev.ids(note.sources)
    added: list[ev.Event] = []
    for event in new:
        if event.id not in seen:
            seen.add(event.id)
            added.append(event)
    if not added:
        return text, []
    body = _section_body(text, ltm.SOURCES)
    body = body.rstrip("\n") + ("\n" if body.strip() else "")
    body += "".join(ev.render(e) for e in added)
    text = notes.replace_section(text, ltm.SOURCES, body)
    text, changes = apply_facts(text, added, learned)
    text = add_observations(text, added, observed, observer)
    text = refresh_summary(text, summary)
    if related:
        text = add_related(text, related)
    if strength_gain:
        note = ltm.parse(text, "<note>")
        text = notes.set_frontmatter_field(
            text, "strength", notes.yaml_number(note.strength + strength_gain, 3)
        )
    text = notes.set_frontmatter_field(text, "updated", now.date().isoformat())
    return with_projects(text, added), changes


def with_projects(text: str, added: Sequence[ev.Event]) -> str:
    """`text` with its frontmatter's `projects` listing the projects of `added` too (what it
    listed stays first, a person's entries included); unchanged when they have none."""
    listed = ltm.parse(text, "<note>").projects
    names = projects.merged(listed, added)
    if names == listed:
        return text
    return notes.set_frontmatter_field(
        text, "projects", f"[{', '.join(yaml_item(p) for p in names)}]"
    )


def apply_facts(
    text: str,
    new: Sequence[ev.Event],
    learned: Mapping[str, Sequence[facts.Fact]] | None = None,
) -> tuple[str, list[facts.Change]]:
    note = ltm.parse(text, "<note>")
    names = note_names(note)
    found = [
        dataclasses.replace(f, key=key_in_note(f.key, names))
        for f in model_facts.stated(new, learned)
    ]
    if not found:
        return text, []
    body, changes = facts.apply(_section_body(text, ltm.FACTS), found)
    if not changes:
        return text, []
    return notes.replace_section(text, ltm.FACTS, body), changes


def add_observations(
    text: str,
    new: Sequence[ev.Event],
    carried: Mapping[str, str] | None = None,
    observer: Callable[[ev.Event], list[observe.Observation]] | None = None,
) -> str:
    """`text` with the observations `new` events give in its `## Observations` (made when
    missing): one line per event at most, none for an event a line already names, so a re-run
    adds nothing and a person's edit of a line (its event id kept) stands. `carried`: the
    lines (by event id) the events had in the note they come from, kept as they are;
    `observer`: what writes an event's observations (the rules, observe.observations, without
    one)."""
    body = _section_body(text, observe.SECTION)
    held = carried or {}
    found = [o for e in new if e.id not in held for o in (observer or observe.observations)(e)]
    new_body = observe.add(body, found, {e.id: held[e.id] for e in new if e.id in held})
    if new_body == body:
        return text
    return notes.replace_section(text, observe.SECTION, new_body)


def note_names(note: ltm.LongTermNote) -> list[str]:
    return [n for n in (normalise(x) for x in [note.title, *note.aliases]) if n]


def key_in_note(key: str, names: Sequence[str]) -> str:
    """A fact key as the note about `names` would say it: in the note on Project Atlas (alias
    Atlas), "atlas deadline" is its "deadline"."""
    for name in sorted(names, key=len, reverse=True):
        if key.startswith(name + " ") and len(key) > len(name) + 1:
            return key[len(name) + 1 :]
    return key


def summary_by_person(text: str) -> bool:
    """Whether a person wrote lines of the note's summary (then nothing is generated there)."""
    return bool(marks.person_lines(_section_body(text, ltm.SUMMARY)))


# The sections a note promotion makes has; a section of any other name is a person's.
_OWN_SECTIONS = frozenset({ltm.SUMMARY, ltm.FACTS, observe.SECTION, ltm.SOURCES, ltm.RELATED})


def edited_by_person(text: str) -> bool:
    """Whether a person has written in a note the jobs made: lines of their own in its summary,
    an alias, a section of their own, or text before its first section. Its events then stay
    where the person sees them (a job never takes them elsewhere)."""
    if summary_by_person(text):
        return True
    parsed = notes.parse(text)
    if parsed.meta_list("aliases"):
        return True
    if any(s.title not in _OWN_SECTIONS for s in parsed.sections):
        return True
    first = min((s.heading_line for s in parsed.sections), default=len(parsed.lines))
    return any(line.strip() for line in parsed.lines[parsed.body_line : first])


def refresh_summary(text: str, llm_summary: str | None = None) -> str:
    """Regenerate the summary's generated lines from the note's sources; a person's lines stay
    (and when a person wrote the summary, nothing is added to it)."""
    if summary_by_person(text):
        return text
    section = _section_body(text, ltm.SUMMARY)
    note = ltm.parse(text, "<note>")
    observed = [
        observe.Observation("", o.text, o.said_at, o.source or "")
        for o in observation_lines.of_note(note.note)
    ]
    lines = summary_lines(note.sources, llm_summary, observed)
    return notes.replace_section(text, ltm.SUMMARY, marks.merge_lines(section, lines))


def summary_lines(
    sources: Sequence[ev.Event],
    llm_summary: str | None = None,
    observed: Sequence[observe.Observation] = (),
) -> list[str]:
    """What the note is about and the observations that say most of it (headline.summary_of:
    what its people did, never a pleasantry); without observations, the sentences that say it
    quoted from its events, or the latest event when no sentence stands out."""
    if not sources:
        return []
    if llm_summary:
        return [" ".join(llm_summary.split())]
    dated = sorted(e.at for e in sources if e.at)
    span = ""
    if dated:
        first, last = dated[0].date().isoformat(), dated[-1].date().isoformat()
        span = f", {first}" if first == last else f", {first} to {last}"
    texts = [e.text for e in sources]
    speakers = {e.role for e in sources if e.role}
    phrases = topics.key_phrases(texts, 2, speakers)
    about = f" about {' and '.join(phrases)}" if phrases else ""
    lines = [f"{len(sources)} events{span}{about}."]
    said = headline.summary_of(sources, observed, _SUMMARY_SENTENCES)
    if said:
        return lines + [_clipped(line) for line in said]
    quoted = topics.summary_sentences(texts, _SUMMARY_SENTENCES, speakers)
    for i, sentence in quoted:
        who = f"{sources[i].role}: " if sources[i].at else ""
        lines.append(f"{who}{_clipped(sentence)}")
    if not quoted:
        who = f"{sources[-1].role}: " if sources[-1].at else ""
        lines.append(f"Latest: {who}{_clipped(sources[-1].text)}")
    return lines


def _clipped(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _SUMMARY_QUOTE_CHARS:
        text = text[: _SUMMARY_QUOTE_CHARS - 1].rstrip() + "…"
    return text


def add_related(text: str, links: Sequence[str]) -> str:
    """Generated `- [[link]]` lines for notes not linked anywhere in the note yet.

    `links` are wikilinks as `names.link` writes them (`[[anna-berg|Anna Berg]]`); a bare title,
    as a plan saved by an earlier version holds, counts as `[[Title]]`. A note counts as linked
    when any link in the note names its file or its title, so a person's `[[Anna Berg]]` and a
    generated `[[anna-berg|Anna Berg]]` are the same link.
    """
    note = ltm.parse(text, "<note>")
    linked = {link_key(t) for t in note.links} | {link_key(note.title)}
    fresh: list[str] = []
    for item in dict.fromkeys(links):
        wikilink = item if item.startswith("[[") else f"[[{item}]]"
        parts = notes.link_parts(wikilink)
        if parts is None:
            continue
        keys = {link_key(parts[0]), link_key(parts[1])}
        if keys & linked:
            continue
        linked |= keys
        fresh.append(wikilink)
    if not fresh:
        return text
    section = _section_body(text, ltm.RELATED)
    kept = [marks.unmark(x) for x in section.split("\n") if marks.is_generated(x)]
    lines = [line.lstrip("- ").strip() for line in kept] + fresh
    body = marks.merge_lines(section, [f"- {line}" for line in lines])
    return notes.replace_section(text, ltm.RELATED, body)


def drop_related(text: str, targets: Collection[str]) -> str:
    """`text` without its generated Related lines that link a note in `targets` (link keys,
    `names.link_key`): a note made private is unlinked from public notes. A person's lines stay,
    a link they wrote included."""
    section = _section_body(text, ltm.RELATED)
    kept: list[str] = []
    dropped = False
    for line in section.split("\n"):
        if not marks.is_generated(line):
            continue
        item = marks.unmark(line).lstrip("- ").strip()
        parts = notes.link_parts(item)
        if parts is not None and link_key(parts[0]) in targets:
            dropped = True
        else:
            kept.append(item)
    if not dropped:
        return text
    body = marks.merge_lines(section, [f"- {item}" for item in kept])
    return notes.replace_section(text, ltm.RELATED, body)


def _section_body(text: str, title: str) -> str:
    return notes.parse(text, "<note>").section_text(title) or ""


def yaml_item(value: str) -> str:
    """A YAML flow-sequence/scalar item: quoted when plain YAML would misread it."""
    plain = value.replace("\n", " ").strip()
    simple = plain and all(c.isalnum() or c in " -_'.()" for c in plain)
    reserved = plain.lower() in ("true", "false", "yes", "no", "null", "on", "off", "y", "n")
    # Plain only when it starts with a letter: `- x` would be a list, `'x` a quoted string,
    # `2026` a number, `.5` a float.
    if simple and plain[0].isalpha() and not reserved:
        return plain
    escaped = plain.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
