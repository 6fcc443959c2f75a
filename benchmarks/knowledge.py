"""What the vault understands of a conversation: the annotated observations it holds (issue 30).

    .venv/bin/python benchmarks/knowledge.py --bench-dir DIR --data FILE --json OUT

For each conversation of FILE (any LoCoMo-format file: the development file or one the rules were
never tuned on) a vault is built as the LoCoMo benchmark builds it (benchmarks/locomo_adapter.py:
one `remember` per turn, the memory jobs at each session's end) in `DIR/<sample_id>/`, or read
from there when a vault is already there (`readability.py --keep DIR` writes the same layout), so
a second run only scores. Without --bench-dir the vaults go to a temporary folder, deleted after.
--data defaults to locomo-dev.json in $LOCOMO_DIR (else ../shared/bench/locomo/); when it is
absent the benchmark is skipped with exit status 0. The scorer (locomo_eval.py) is not needed:
this file reads the turns and LoCoMo's `observation` annotations itself, timing turns as the
scorer does (session start, then 30 seconds a turn), so each turn gets the event id the
benchmark's vault gives it.

What a vault holds about a person, as this harness reads it:

* **observations**: a third-person statement with its owner, its date and the event it was read
  from, one top-level line in an `## Observations` section of any file under `memory/` (a
  long-term or faded note, a month file of the archive, the short-term document):

      ## Observations
      - Caroline went to an LGBTQ support group on 2023-05-07. (2023-05-08, e-3f2a1c9b0d)

  The owner is every speaker the statement names (full or first name; "Caroline's son ..."
  too), else the speaker the note is about (a note titled or aliased with the speaker's name). The
  source is the `e-<10 hex>` id in the line: in a tail like a fact's `(said-at, e-id)`, or in a
  link to the event's block, `[[#^e-3f2a1c9b0d]]` or `[[note#^e-3f2a1c9b0d|...]]`. A line must
  not end in a bare block id `^e-…`: that is how an event line ends, and would make the line
  count as a second copy of the event (such lines are read and counted in
  `observations_with_event_block_id`). Dates in the statement are absolute (`on 2023-05-07`,
  resolved from "yesterday" and the event's time), so the line reads right weeks later.
* **facts**: `- key: value (since TIME, e-id)` lines of a `## Facts` section (docs/vault-format.md),
  superseded values included (they were read from their turn too). The owner is the speaker the
  key or value names (`bailey: Melanie's cat`, `caroline's home country: Sweden`), else the
  speaker the note is about. A fact naming no one, in a note about no one, belongs to no speaker.

**Observation coverage** is the share of LoCoMo's annotated observations (speaker, statement,
evidence turn) for which the vault holds an observation or a fact whose source is one of the
annotation's evidence turns and whose owner is that speaker; overall it is pooled over all
conversations (`macro_coverage` is the mean of the conversations'). `evidence_any_owner` is the
same share ignoring the owner, which tells a missing reading from a misattributed one;
`evidence_events_in_vault`, the share of the evidence turns whose event the vault holds, is 1.0
unless the turns' event ids here drifted from the vault's (coverage then means nothing).
Annotations whose evidence names no turn of the conversation are counted in
`unresolved_annotations` and left out of both.

Coverage asks only that something was read about that person from that turn, so two figures
keep it honest. `statement_overlap`: over the matched annotations, the share of the annotated
statement's content words (no stop words or speakers' names, five letters standing for a stem)
that the best of its observations or facts says. `observation_precision` and `fact_precision`:
the share of the vault's observations (facts) whose source turn and owner are an annotation's
evidence and speaker; writing a line for every turn raises coverage and lowers these.

Also reported per conversation and overall: the numbers of observations and facts (distinct
`key, value, source` read from the conversation's turns; the template's examples not), their
ratio to the annotated observations, and the readability checks of benchmarks/readability.py:
issue 30's (`issue30_checks`) and issue 13's (entities titled with a common word, titles naming
no topic, notes over 100 events).

OUT: `{"overall": {"coverage": ..., ...}, "conversations": {"<sample_id>": {"coverage": ...,
"details": {"matched": [...], "missed": [...]}}}}`. The annotations are only read, never written
into a vault (brainiac must find what they say in the turns themselves).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import readability
from locomo_adapter import DEFAULT_BENCH_DIR, BrainiacSystem, turn_text

OBSERVATIONS = "Observations"
DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # LoCoMo's session times: "1:56 pm on 8 May, 2023"
SECONDS_PER_TURN = 30  # as the scorer times the turns of a session
_EVIDENCE_RE = re.compile(r"^D:?(\d+):0*(\d+)$")  # "D1:3", and the data's "D:11:26", "D30:05"
_SOURCE_RE = re.compile(r"(?<![\w-])(e-[0-9a-f]{10})(?![\w-])")
_BLOCK_ID_END_RE = re.compile(r"\s\^e-[0-9a-f]{10}\s*$")
_TAIL_RE = re.compile(r"\s*\([^()]*\)\s*$|\s*\[\[[^\]]*\]\]\s*$")
_DATED_TITLE_RE = re.compile(r"\s*\([^()]*\d{4}-\d{2}-\d{2}\)$")


class DataError(Exception):
    """A data file this harness cannot read, with the one-line reason and fix."""


# --- the data -----------------------------------------------------------------------------------


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    timestamp: dt.datetime
    image_caption: str | None = None


@dataclass
class Session:
    index: int
    turns: list[Turn]


@dataclass
class Annotation:
    """One of LoCoMo's observations: what an annotator noted about a speaker, and from where."""

    speaker: str
    statement: str
    evidence: list[str]  # dia ids found in the conversation


@dataclass
class Conversation:
    """A LoCoMo conversation, in the shape benchmarks/locomo_adapter.py ingests."""

    sample_id: str
    speakers: list[str]
    sessions: list[Session]
    annotations: list[Annotation] = field(default_factory=list)
    unresolved: list[tuple[str, str]] = field(default_factory=list)  # (statement, evidence)
    has_observations: bool = False

    def turns(self) -> Iterator[Turn]:
        for s in self.sessions:
            yield from s.turns

    @property
    def end_time(self) -> dt.datetime:
        last = self.sessions[-1]
        return last.turns[0].timestamp + dt.timedelta(seconds=SECONDS_PER_TURN * len(last.turns))


def load(path: Path) -> list[Conversation]:
    """The conversations of a LoCoMo-format file, with their observation annotations."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: cannot be read as JSON ({e}); pass a LoCoMo-format file") from e
    if not isinstance(raw, list):
        raise DataError(f"{path}: not a list of conversations; pass a LoCoMo-format file")
    return [_conversation(path, i, sample) for i, sample in enumerate(raw)]


def _conversation(path: Path, i: int, sample: Any) -> Conversation:
    where = f"{path}: conversation {i + 1}"
    if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
        raise DataError(f"{where} has no `conversation` object; pass a LoCoMo-format file")
    conv = sample["conversation"]
    sample_id = str(sample.get("sample_id") or f"conversation-{i + 1}")
    numbers = sorted(
        int(k.split("_")[1])
        for k, v in conv.items()
        if re.fullmatch(r"session_\d+", k) and isinstance(v, list) and v
    )
    sessions = []
    for n in numbers:
        stamp = str(conv.get(f"session_{n}_date_time", "")).strip()
        try:
            start = dt.datetime.strptime(stamp, DATE_FORMAT)
        except ValueError:
            raise DataError(
                f"{where} ({sample_id}): session_{n}_date_time {stamp!r} is not like "
                f"'1:56 pm on 8 May, 2023'; fix the date in the file"
            ) from None
        turns = [
            Turn(
                dia_id=str(t.get("dia_id", "")),
                speaker=str(t.get("speaker", "")),
                text=str(t.get("text", "")),
                timestamp=start + dt.timedelta(seconds=SECONDS_PER_TURN * j),
                image_caption=t.get("blip_caption"),
            )
            for j, t in enumerate(conv[f"session_{n}"])
        ]
        sessions.append(Session(n, turns))
    if not sessions:
        raise DataError(f"{where} ({sample_id}) has no session with turns; pass a LoCoMo file")
    speakers = [str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k)]
    speakers = speakers or list(dict.fromkeys(t.speaker for s in sessions for t in s.turns))
    out = Conversation(sample_id, speakers, sessions)
    _annotate(out, sample.get("observation"))
    return out


def _annotate(conv: Conversation, observation: Any) -> None:
    if not isinstance(observation, dict):
        return
    conv.has_observations = True
    valid = {t.dia_id for t in conv.turns()}
    for per_speaker in observation.values():
        if not isinstance(per_speaker, dict):
            continue
        for speaker, items in per_speaker.items():
            for item in items if isinstance(items, list) else []:
                if not isinstance(item, list) or len(item) < 2:
                    continue
                statement, raw = str(item[0]), item[1]
                evidence = resolve_evidence(raw if isinstance(raw, list) else [raw], valid)
                if evidence:
                    conv.annotations.append(Annotation(str(speaker), statement, evidence))
                else:
                    conv.unresolved.append((statement, str(raw)))


def resolve_evidence(raw: list[Any], valid: set[str]) -> list[str]:
    """Dia ids, packed ones split and the data's known typos repaired, as the scorer does."""
    out: list[str] = []
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item).strip()):
            m = _EVIDENCE_RE.match(piece)
            candidate = f"D{m.group(1)}:{m.group(2)}" if m else piece
            if candidate in valid and candidate not in out:
                out.append(candidate)
    return out


def turn_event_ids(conv: Conversation) -> dict[str, str]:
    """dia id -> the id of the event `remember` makes of that turn (locomo_adapter's way)."""
    from brainiac.formats import events as ev

    ids = {}
    for session in conv.sessions:
        for turn in session.turns:
            text = turn_text(turn)
            if text.strip():
                made = ev.make_event(text, turn.speaker, f"session {session.index}", turn.timestamp)
                ids[turn.dia_id] = made.id
    return ids


# --- the vault ----------------------------------------------------------------------------------


def vault_for(conv: Conversation, vaults: Path) -> Path:
    """The conversation's vault in `vaults`, built there first unless it already is."""
    vault = vaults / conv.sample_id
    if (vault / "memory" / "short_term.md").is_file():
        return vault
    system = BrainiacSystem()
    try:
        system.ingest(conv)
        partial = vaults / f".{conv.sample_id}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(system.vault, partial)
        partial.rename(vault)  # whole or not at all: a later run reuses only a finished vault
    finally:
        system.close()
    return vault


@dataclass(frozen=True)
class Held:
    """An observation or a fact the vault holds: where, whose, and from which events."""

    kind: str  # "observation" or "fact"
    text: str
    note: str
    owners: frozenset[str]
    sources: frozenset[str]


@dataclass
class Knowledge:
    held: list[Held] = field(default_factory=list)
    block_id_observations: int = 0


def note_owner(title: str, aliases: list[str], speakers: set[str]) -> set[str]:
    """The speakers a note is about: its title or an alias is one's full or first name."""
    names = {_DATED_TITLE_RE.sub("", n).strip().casefold() for n in [title, *aliases]}
    return {s for s in speakers if s in names or (s.split() and s.split()[0] in names)}


def read_vault(vault: Path, speakers: set[str]) -> Knowledge:
    """Every observation and fact of the vault's notes, month files and short-term document."""
    from brainiac.formats import ltm, stm

    found = Knowledge()
    for path in sorted((vault / "memory").rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        text = path.read_text(encoding="utf-8")
        if rel == "memory/short_term.md":
            doc = stm.parse(text, rel)
            sections = (doc.section("Facts"), doc.section(OBSERVATIONS))
            owner: set[str] = set()
        elif rel.startswith(("memory/archive/exports/", "memory/indexes/")):
            continue  # chat exports as imported, generated index notes
        else:  # long-term notes, faded ones, and month files (small talk may say who did what)
            note = ltm.parse(text, rel)
            sections = (note.section(ltm.FACTS), note.section(OBSERVATIONS))
            owner = note_owner(note.title, note.aliases, speakers)
        found.held += _facts(sections[0] or "", rel, owner, speakers)
        for line in (sections[1] or "").splitlines():
            if line.startswith("- "):
                found.held.append(_observation(line, rel, owner, speakers))
                found.block_id_observations += bool(_BLOCK_ID_END_RE.search(line))
    return found


def _facts(section: str, rel: str, owner: set[str], speakers: set[str]) -> list[Held]:
    from brainiac.language import facts

    out = []
    for line in facts.parse(section):
        values = [(line.fact.value, line.fact.source)]
        values += [(old.value, old.source) for old in line.superseded]
        for value, source in values:
            said = f"{line.fact.key}: {value}"
            owners = readability.named_speakers(said, speakers) or owner
            sources = frozenset({source} if source else ())
            out.append(Held("fact", said, rel, frozenset(owners), sources))
    return out


def _observation(line: str, rel: str, owner: set[str], speakers: set[str]) -> Held:
    sources = frozenset(_SOURCE_RE.findall(line))
    statement = line[2:]
    while True:  # the tails and links after the statement name no one
        bare = _TAIL_RE.sub("", statement)
        if bare == statement:
            break
        statement = bare
    statement = _BLOCK_ID_END_RE.sub("", statement)
    owners = readability.named_speakers(statement, speakers) or owner
    return Held("observation", line[2:], rel, frozenset(owners), sources)


# --- scoring ------------------------------------------------------------------------------------


def score(conv: Conversation, vault: Path) -> dict[str, Any]:
    """Coverage, counts and readability of one conversation's vault."""
    speakers = {s.casefold() for s in conv.speakers}
    ids = turn_event_ids(conv)
    ours = set(ids.values())
    knowledge = read_vault(vault, speakers)
    by_source: dict[str, list[Held]] = {}
    for h in knowledge.held:
        for source in h.sources:
            by_source.setdefault(source, []).append(h)
    matched, missed = [], []
    any_owner, overlaps = 0, []
    for a in conv.annotations:
        held = [h for d in a.evidence if d in ids for h in by_source.get(ids[d], [])]
        theirs = [h for h in held if a.speaker.casefold() in h.owners]
        any_owner += bool(held)
        row = {"speaker": a.speaker, "statement": a.statement, "evidence": a.evidence}
        if theirs:
            overlaps.append(max(overlap(a.statement, h.text, speakers) for h in theirs))
            matched.append({**row, "held": [f"{h.kind}: {h.text}" for h in theirs]})
        else:
            missed.append({**row, "held_for_others": [f"{h.kind}: {h.text}" for h in held]})
    evidence = {ids[d] for a in conv.annotations for d in a.evidence if d in ids}
    in_vault = evidence & set(readability.vault_events(vault))
    annotated_pairs = {(ids[d], a.speaker.casefold()) for a in conv.annotations for d in a.evidence}
    facts = {
        (h.text, h.sources): h for h in knowledge.held if h.kind == "fact" and h.sources & ours
    }
    observations = [h for h in knowledge.held if h.kind == "observation"]
    annotated = len(conv.annotations)
    result: dict[str, Any] = {
        "coverage": len(matched) / annotated if annotated else None,
        "annotated": annotated,
        "matched": len(matched),
        "evidence_any_owner": any_owner / annotated if annotated else None,
        "statement_overlap": sum(overlaps) / len(overlaps) if overlaps else None,
        "unresolved_annotations": len(conv.unresolved),
        # Below 1.0 the turns' event ids here are not the vault's: coverage would mean nothing.
        "evidence_events_in_vault": len(in_vault) / len(evidence) if evidence else None,
        "observations": len(observations),
        "facts": len(facts),
        "observations_per_annotated": len(observations) / annotated if annotated else None,
        "facts_per_annotated": len(facts) / annotated if annotated else None,
        "observations_annotated": sum(_annotated(h, annotated_pairs) for h in observations),
        "facts_annotated": sum(_annotated(h, annotated_pairs) for h in facts.values()),
        "observations_with_event_block_id": knowledge.block_id_observations,
        "readability": _readability(conv, vault, speakers),
    }
    result["observation_precision"] = _share(result["observations_annotated"], len(observations))
    result["fact_precision"] = _share(result["facts_annotated"], len(facts))
    result["details"] = {"matched": matched, "missed": missed}
    return result


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _annotated(h: Held, pairs: set[tuple[str, str]]) -> bool:
    """Whether an annotation has this item's source turn as evidence and its owner as speaker."""
    return any((source, owner) in pairs for source in h.sources for owner in h.owners)


def _content(text: str, speakers: set[str]) -> set[str]:
    from brainiac.language.lexicon import STOP_WORDS

    names = {n for s in speakers for n in s.split()}
    words = re.findall(r"[a-z0-9]+", _SOURCE_RE.sub("", text.replace("’", "'").casefold()))
    # Five letters stand for a word's stem: "painting" and "painted", "kids" and "kid".
    return {w[:5] for w in words if w not in STOP_WORDS and w not in names and len(w) > 2}


def overlap(statement: str, held: str, speakers: set[str]) -> float:
    """The share of an annotated statement's content words that an observation or fact says."""
    wanted = _content(statement, speakers)
    return len(wanted & _content(held, speakers)) / len(wanted) if wanted else 0.0


def _readability(conv: Conversation, vault: Path, speakers: set[str]) -> dict[str, Any]:
    texts = [t.text for t in conv.turns()]
    checks = readability.issue30_checks(vault, speakers, texts)
    with_first = speakers | {s.split()[0] for s in speakers if s.split()}
    older = readability.inspect(vault, conv.sample_id, with_first, texts)
    return {
        **checks.counts(),
        "entity_notes_titled_with_a_common_word": len(older.common_word_entities),
        "titles_naming_no_topic": len(older.bad_titles),
        "notes_over_100_events": len(older.over_limit),
        "notes": older.notes,
        "entity_notes": older.entity_notes,
        "failing": {
            "entity_notes_under_3_events": [f"{t} ({n})" for t, n in checks.thin_entities],
            "cut_name_titles": checks.cut_name_titles,
            "example_note_foreign_events": [f"{t}: {e}" for t, e in checks.example_intruders],
            "supersessions_across_owners": checks.cross_owner_supersessions,
            "goals_tasks_not_stated_intentions": checks.unstated_goals,
        },
    }


_SUMMED = (
    "annotated",
    "matched",
    "unresolved_annotations",
    "observations",
    "facts",
    "observations_annotated",
    "facts_annotated",
    "observations_with_event_block_id",
)


def overall(per: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Pooled figures over the conversations: sums, and shares of the summed annotations."""
    out: dict[str, Any] = {k: sum(r[k] for r in per.values()) for k in _SUMMED}
    annotated = out["annotated"]
    covered = [r["coverage"] for r in per.values() if r["coverage"] is not None]
    any_owner = sum((r["evidence_any_owner"] or 0) * r["annotated"] for r in per.values())
    out["coverage"] = out["matched"] / annotated if annotated else None
    out["macro_coverage"] = sum(covered) / len(covered) if covered else None
    out["evidence_any_owner"] = round(any_owner) / annotated if annotated else None
    out["observations_per_annotated"] = out["observations"] / annotated if annotated else None
    out["facts_per_annotated"] = out["facts"] / annotated if annotated else None
    out["observation_precision"] = _share(out["observations_annotated"], out["observations"])
    out["fact_precision"] = _share(out["facts_annotated"], out["facts"])
    overlaps = [(r["statement_overlap"], r["matched"]) for r in per.values() if r["matched"]]
    matched = sum(n for _, n in overlaps)
    out["statement_overlap"] = sum(o * n for o, n in overlaps) / matched if matched else None
    counts = [k for k, v in next(iter(per.values()))["readability"].items() if isinstance(v, int)]
    out["readability"] = {k: sum(r["readability"][k] for r in per.values()) for k in counts}
    return out


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def report(per: dict[str, dict[str, Any]], total: dict[str, Any]) -> str:
    rows = [*per.items(), ("overall", total)]
    out = [
        "| conversation | coverage | any owner | overlap | annotated | matched | observations "
        "| obs. precision | facts | fact precision | (obs. + facts) / annotated "
        "| entity < 3 events | cut names | example intruders "
        "| cross-owner supersessions | goals not intentions |",
        "|---|" + "---:|" * 15,
    ]
    for name, r in rows:
        c = r["readability"]
        per_annotated = (
            (r["observations"] + r["facts"]) / r["annotated"] if r["annotated"] else None
        )
        out.append(
            f"| {name} | {_fmt(r['coverage'])} | {_fmt(r['evidence_any_owner'])} "
            f"| {_fmt(r['statement_overlap'])} | {r['annotated']} | {r['matched']} "
            f"| {r['observations']} | {_fmt(r['observation_precision'])} | {r['facts']} "
            f"| {_fmt(r['fact_precision'])} | {_fmt(per_annotated)} "
            f"| {c['entity_notes_under_3_events']} "
            f"| {c['cut_name_titles']} | {c['example_note_foreign_events']} "
            f"| {c['supersessions_across_owners']} "
            f"| {c['goals_tasks_not_stated_intentions']} of {c['goals_tasks']} |"
        )
    for name, r in per.items():
        out.append(f"\n{name}:")
        for m in r["details"]["matched"][:3]:
            out.append(f"  matched {m['evidence']} {m['statement']!r} <- {m['held'][0]!r}")
        for m in r["details"]["missed"][:3]:
            out.append(f"  missed  {m['evidence']} {m['statement']!r}")
        for check, failing in r["readability"]["failing"].items():
            if failing:
                out.append(f"  {check}: {'; '.join(failing[:4])}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench-dir", default="", help="keep the vaults here (reused when there)")
    default = Path(os.environ.get("LOCOMO_DIR", str(DEFAULT_BENCH_DIR))) / "locomo-dev.json"
    ap.add_argument("--data", default=str(default), help="a LoCoMo-format file")
    ap.add_argument("--json", default="", help="write the figures and details here")
    args = ap.parse_args(argv)

    data = Path(args.data)
    if not data.is_file():
        print(f"knowledge benchmark skipped: {data} not found (pass --data FILE)")
        return 0
    try:
        conversations = load(data)
    except DataError as e:
        print(e, file=sys.stderr)
        return 2
    if not any(c.has_observations for c in conversations):
        print(
            f"{data}: no conversation has LoCoMo's `observation` annotations; coverage needs "
            "them (the development file has them)",
            file=sys.stderr,
        )
        return 2
    vaults = Path(args.bench_dir) if args.bench_dir else Path(tempfile.mkdtemp(prefix="know_"))
    vaults.mkdir(parents=True, exist_ok=True)
    try:
        per = {c.sample_id: score(c, vault_for(c, vaults)) for c in conversations}
    finally:
        if not args.bench_dir:
            shutil.rmtree(vaults, ignore_errors=True)
    total = overall(per)
    print(report(per, total))
    if args.json:
        out = {"data": str(data), "overall": total, "conversations": per}
        target = Path(args.json)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")
        print(f"\nresults written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
