"""What a person finds in the vault after a real conversation: the readability check of issue 13.

    .venv/bin/python benchmarks/readability.py                  # the four development conversations
    .venv/bin/python benchmarks/readability.py --keep DIR       # and keep the vaults to read them
    .venv/bin/python benchmarks/readability.py --facts-out F    # every fact written, to label
    .venv/bin/python benchmarks/readability.py --labels F       # fact precision against labels

Each LoCoMo development conversation (../shared/bench/locomo, not copied here) is ingested as the
LoCoMo benchmark does it (benchmarks/locomo_adapter.py: one `remember` per turn, the memory jobs at
each session's end), then every long-term note is read, and counted against what issue 13 asks:

- **entity notes titled with a common word.** An entity note (tag `entity`) whose title is one word
  that the conversation itself uses as an ordinary word: written in lower case in the middle of a
  sentence more often than capitalised there ("Yeah", "Wow", "They're"), or a speaker of the
  conversation or the start of a speaker's name ("Mel" for Melanie: a speaker is not a topic).
  Names pass: "Max", "Paris" are capitalised mid-sentence even though `wordfreq` rates them as
  common English words, which is why frequency alone is not the test.
- **notes over 100 events** (their `## Sources`).
- **titles that are no phrase naming a topic**: a keyword list (`melanie, chatting, feel`), a
  session label (`Session 11 - ...`), a speaker's name alone, or a part that ends in a word the
  conversation uses as a verb or an adjective (`Makes and bowl`, `Unique and hoodie`,
  `Waterfall and calming`; `not_topic_words` says how that is told).
- **issue 30's checks** (`issue30_checks`, which benchmarks/knowledge.py reports too): entity
  notes with fewer than 3 events; cut names as titles (a title word that is the start of a
  speaker's name, "Mel", or of a longer capitalised word of the conversation and is itself
  never said, "Calif");
  the template's example notes (tag `example`) holding events that are not the template's own;
  facts superseded across owners (the old and the new value name different speakers, or, naming
  none, came from different speakers' turns); goals and tasks that are no stated intention (no
  turn says "I want to / I'm going to / remind me to ..." right before the phrase, or the
  phrase answers the one spoken to: "Hear more about it", "See you").
- **facts**: every `key: value` line of a note's or the short-term document's `## Facts`, with the
  event it came from; `--facts-out` writes them as JSON lines to label by hand (`"ok": true|false`),
  `--labels` reads such a file back and reports the precision of the labelled facts that are still
  written (a fact is matched by conversation, key, value and source id; each counted once, and
  the template's example facts, from no turn, not at all), and names the facts not labelled yet.

Exit status 0 (it measures; docs/benchmarks.md says what the figures were).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from locomo_adapter import BrainiacSystem, add_data_arguments, load_scorer

MAX_EVENTS = 100
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_SENTENCE_END = re.compile(r"[.!?]\s*$")
_SESSION_TITLE = re.compile(r"^session\s+\d+\b", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z][\w'-]*|[^\w\s]")
_BE = {"am", "is", "are", "was", "were", "be", "been", "being", "i'm", "you're", "we're"}
_BE |= {"they're", "it's", "he's", "she's", "that's"}
_INTENSIFIERS = {"so", "very", "really", "too", "pretty", "super", "quite"}
_DETERMINERS = {"a", "an", "the", "my", "your", "our", "his", "her", "their", "this", "these"}
_ADJECTIVE_ENDINGS = ("ous", "ful", "ive", "able", "ible", "que", "ish", "less")


@dataclass
class Findings:
    conversation: str
    notes: int = 0
    entity_notes: int = 0
    common_word_entities: list[str] = field(default_factory=list)
    over_limit: list[tuple[str, int]] = field(default_factory=list)
    bad_titles: list[str] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    largest: int = 0


def word_uses(texts: list[str]) -> tuple[Counter[str], Counter[str]]:
    """(lower-case uses, capitalised uses) of each word in the middle of a sentence, folded."""
    lower: Counter[str] = Counter()
    capital: Counter[str] = Counter()
    for text in texts:
        previous = ""
        for m in _WORD.finditer(text):
            word = m.group(0)
            start_of_sentence = not previous or bool(_SENTENCE_END.search(text[: m.start()]))
            if not start_of_sentence:
                (capital if word[0].isupper() else lower)[word.casefold()] += 1
            previous = word
    return lower, capital


def is_common_word(title: str, lower: Counter[str], capital: Counter[str]) -> bool:
    words = title.split()
    if len(words) != 1:
        return False
    key = words[0].casefold()
    return lower[key] > capital[key] or key in {"i", "i'm", "it's", "they're", "we're"}


def is_speaker(title: str, speakers: set[str]) -> bool:
    """A speaker's name, or the start of one (a nickname: "Mel" for Melanie)."""
    key = title.casefold()
    return key in speakers or (len(key) >= 3 and any(s.startswith(key) for s in speakers))


def not_topic_words(texts: list[str]) -> set[str]:
    """Words the conversation uses as a verb or an adjective, folded, by their form and
    company: an "-s" form whose stem follows "to" ("makes": "to make"), an "-ing" form after a
    form of "be" ("was sitting", "been playing", "is calming"), a word after "so", "very",
    "really" ("so unique"), or one with an adjective's ending ("unique", "nervous"); but not
    a word also said as a thing, after "a", "the", "my" and before a stop ("the leaves.",
    "my writing is")."""
    from brainiac.language.lexicon import STOP_WORDS

    tokens_of = [[*_TOKEN.findall(t.replace("’", "'").casefold()), "."] for t in texts]
    after: dict[str, set[str]] = {"to": set(), "be": set(), "so": set()}
    words: set[str] = set()
    things: set[str] = set()  # "the leaves.", "my writing is": a thing, whatever else it is
    for tokens in tokens_of:
        for prev, word, nxt in zip(tokens, tokens[1:], tokens[2:], strict=False):
            words.add(word)
            if prev in _DETERMINERS and (not nxt[:1].isalpha() or nxt in STOP_WORDS):
                things.add(word)
            if prev == "to":
                after["to"].add(word)
            elif prev in _BE:
                after["be"].add(word)
            elif prev in _INTENSIFIERS:
                after["so"].add(word)
    found = set(after["so"])
    found |= {w for w in words if w.endswith("s") and w[:-1] in after["to"]}
    found |= {w for w in words if w.endswith("es") and w[:-2] in after["to"]}
    found |= {w for w in after["be"] if w.endswith("ing")}
    found -= things
    found |= {w for w in words if len(w) > 4 and w.endswith(_ADJECTIVE_ENDINGS)}
    return found


def _about_someone(title: str, speakers: set[str]) -> bool:
    """A clause about a speaker, "Joanna went hiking", "Melanie's son got into an accident":
    it says what happened (its last word may well be a verb); the part rule below is for lists
    of keywords ("Joy and sitting")."""
    words = title.split()
    if len(words) < 3:
        return False
    first = re.sub(r"'s$", "", words[0]).casefold()
    return first in speakers or any(s.split()[0] == first for s in speakers if s.split())


def is_bad_title(title: str, speakers: set[str], not_topics: set[str] | None = None) -> bool:
    """A keyword list, a session label, a speaker, or (given `not_topic_words`) a part that
    ends in a verb or an adjective: "Unique and hoodie", "Joy and sitting", "Makes and bowl"
    name no topic."""
    bare = re.sub(r"\s*\([^()]*\d{4}-\d{2}-\d{2}\)$", "", title).strip()
    if _SESSION_TITLE.match(bare) or is_speaker(bare, speakers):
        return True
    parts = [p.strip() for p in bare.split(",")]
    if len(parts) >= 3 or (len(parts) == 2 and all(len(p.split()) == 1 for p in parts)):
        return True
    if not not_topics or _about_someone(bare, speakers):
        return False
    for part in re.split(r"\s+and\s+|\s+-\s+", bare):
        words = _TOKEN.findall(part)
        if words and words[-1].casefold() in not_topics:
            return True
    return False


def inspect(vault: Path, conversation: str, speakers: set[str], texts: list[str]) -> Findings:
    from brainiac.formats import ltm
    from brainiac.formats import note as notes
    from brainiac.language import facts

    lower, capital = word_uses(texts)
    not_topics = not_topic_words(texts)
    found = Findings(conversation)
    for path in sorted((vault / "memory").rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if rel.startswith(("memory/archive/exports/", "memory/indexes/")):
            continue
        text = path.read_text(encoding="utf-8")
        if rel == "memory/short_term.md":
            section = notes.parse(text, rel).section_text("Facts") or ""
            found.facts += _facts(conversation, rel, section, {}, facts)
            continue
        if rel.startswith("memory/archive/") and not rel.startswith("memory/archive/notes/"):
            continue  # month files: the archive's ledger, not notes
        note = ltm.parse(text, rel)
        found.notes += 1
        events = note.sources
        found.largest = max(found.largest, len(events))
        if len(events) > MAX_EVENTS:
            found.over_limit.append((note.title, len(events)))
        if "entity" in note.tags:
            found.entity_notes += 1
            if is_common_word(note.title, lower, capital) or is_speaker(note.title, speakers):
                found.common_word_entities.append(note.title)
        if is_bad_title(note.title, speakers, not_topics):
            found.bad_titles.append(note.title)
        by_id = {e.id: e.text for e in events}
        found.facts += _facts(conversation, rel, note.section(ltm.FACTS), by_id, facts)
    return found


def _facts(
    conversation: str, rel: str, section: str, by_id: dict[str, str], facts: Any
) -> list[dict[str, Any]]:
    return [
        {
            "conversation": conversation,
            "note": rel,
            "key": line.fact.key,
            "value": line.fact.value,
            "source": line.fact.source,
            "source_text": by_id.get(line.fact.source or "", ""),
        }
        for line in facts.parse(section)
    ]


def _said(found: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """The distinct facts read from the conversation's turns, as (conversation, key, value,
    source): one fact written to a note and to the short-term document counts once, and the
    template's example facts (from no turn) not at all."""
    keys = (
        (f["conversation"], f["key"], f["value"], f["source"]) for f in found if f["source_text"]
    )
    return list(dict.fromkeys(keys))


# --- issue 30: what a person reads about whom ------------------------------------------------

MIN_ENTITY_EVENTS = 3
# What stands right before a goal or task phrase when a speaker states an intention: "I want to",
# "we're planning to", "I'm going to", "my goal is to", "remind me to", "I have to".
_INTENTION = re.compile(
    r"\b(?:(?:i|we)(?:'m|'re| am| are|'d|'ll| will| would| really| still| also| just)*"
    r"\s*(?:want to|wanna|like to|hope to|intend to|aim to|plan to|planning to|going to|gonna"
    r"|need to|have to|have got to|'ve got to|got to|must|will|'ll)"
    r"|(?:goal|aim|plan|dream) is to|remind me to|forget to|todo:|to-?do:)\s*$"
)
# A phrase that answers the one spoken to is conversation, not an intention to remember: "Hear
# more about it", "See you soon", "Catch up soon", "Let you know".
_REPLY_VERBS = {"hear", "see", "catch", "chat", "talk", "say", "ask", "know", "thank", "tell"}
_REPLY_VERBS |= {"let", "meet", "check", "read", "learn", "share"}
_LISTENER = {"you", "your", "yours", "you're", "you've", "you'll"}


@dataclass
class Issue30:
    """Issue 30's readability checks on one vault: each list names what fails."""

    thin_entities: list[tuple[str, int]] = field(default_factory=list)
    cut_name_titles: list[str] = field(default_factory=list)
    example_intruders: list[tuple[str, str]] = field(default_factory=list)  # (note, event id)
    cross_owner_supersessions: list[str] = field(default_factory=list)
    unstated_goals: list[str] = field(default_factory=list)
    goals: int = 0  # goal and task lines read

    def counts(self) -> dict[str, int]:
        return {
            "entity_notes_under_3_events": len(self.thin_entities),
            "cut_name_titles": len(self.cut_name_titles),
            "example_note_foreign_events": len(self.example_intruders),
            "supersessions_across_owners": len(self.cross_owner_supersessions),
            "goals_tasks": self.goals,
            "goals_tasks_not_stated_intentions": len(self.unstated_goals),
        }


def vault_events(vault: Path) -> dict[str, Any]:
    """Every timed event of the vault by id, wherever it lives (Event Log, Sources, month files)."""
    from brainiac.formats import events as ev

    found: dict[str, Any] = {}
    for path in sorted((vault / "memory").rglob("*.md")):
        if (
            path.relative_to(vault)
            .as_posix()
            .startswith(("memory/archive/exports/", "memory/indexes/"))
        ):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for located in ev.parse_lines(lines):
            if located.event.at is not None:
                found.setdefault(located.event.id, located.event)
    return found


def template_event_ids() -> set[str]:
    """The ids of the events the vault template's example notes ship with."""
    from brainiac.store.vault import template_dir

    text = "\n".join(p.read_text(encoding="utf-8") for p in template_dir().rglob("*.md"))
    return set(re.findall(r"\^(e-[0-9a-f]{10})\b", text))


def named_speakers(text: str, speakers: set[str]) -> set[str]:
    """The speakers (folded full names) that `text` names, by the full or the first name."""
    folded = text.replace("’", "'").casefold()

    def says(name: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", folded) is not None

    return {s for s in speakers if says(s) or (s.split() and says(s.split()[0]))}


def is_cut_name(title: str, speakers: set[str], texts: list[str]) -> bool:
    """A title word cut from a name: the start of a speaker's name ("Mel", "Carol" for Caroline),
    or of a longer capitalised word of the conversation, itself never said ("Calif")."""
    bare = re.sub(r"\s*\([^()]*\d{4}-\d{2}-\d{2}\)$", "", title).strip()
    words = [w for w in _WORD.findall(bare) if w[0].isupper()]
    if not words:
        return False
    said = {w for t in texts for w in _WORD.findall(t)}
    folded = {w.casefold() for w in said}
    for word in words:
        key = word.casefold()
        if len(key) >= 3 and any(s != key and s.startswith(key) for s in speakers):
            return True
        if key not in folded and any(
            w[0].isupper() and w.startswith(word) and len(w) > len(word) + 1 for w in said
        ):
            return True
    return False


def is_stated_intention(goal: str, texts: list[str]) -> bool:
    """Whether a goal or task line (its phrase) is what some turn states as an intention."""
    from brainiac.formats import marks

    phrase = re.sub(r"^- (?:\[.?\] )?", "", marks.unmark(goal).strip()).strip()
    words = phrase.replace("’", "'").casefold().split()
    if not words or words[0] in _REPLY_VERBS or _LISTENER & set(words):
        return False
    wanted = " ".join(words).rstrip(".!?")
    for text in texts:
        folded = " ".join(text.replace("’", "'").casefold().split())
        at = folded.find(wanted)
        while at >= 0:
            if _INTENTION.search(folded[max(0, at - 60) : at]):
                return True
            at = folded.find(wanted, at + 1)
    return False


def issue30_checks(vault: Path, speakers: set[str], texts: list[str]) -> Issue30:
    """Issue 30's readability checks over a vault's notes, short-term Goals and Tasks;
    `speakers` are the conversation's speakers' full names, folded."""
    from brainiac.formats import ltm, stm

    out = Issue30()
    events = vault_events(vault)
    template = template_event_ids()
    for path in sorted((vault / "memory").rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        text = path.read_text(encoding="utf-8")
        if rel == "memory/short_term.md":
            doc = stm.parse(text, rel)
            for title in ("Goals", "Tasks"):
                for line in (doc.section(title) or "").splitlines():
                    if not line.startswith("- "):
                        continue
                    out.goals += 1
                    if not is_stated_intention(line, texts):
                        out.unstated_goals.append(f"{title}: {line}")
        elif rel.startswith("memory/long_term/") or rel.startswith("memory/archive/notes/"):
            note = ltm.parse(text, rel)
            sources = note.sources
            if "entity" in note.tags and len(sources) < MIN_ENTITY_EVENTS:
                out.thin_entities.append((note.title, len(sources)))
            if is_cut_name(note.title, speakers, texts):
                out.cut_name_titles.append(note.title)
            if "example" in note.tags:
                out.example_intruders += [
                    (note.title, e.id) for e in sources if e.id not in template
                ]
            out.cross_owner_supersessions += _cross_owner(note, speakers, events)
    return out


def _cross_owner(note: Any, speakers: set[str], events: dict[str, Any]) -> list[str]:
    """A note's facts whose older value was someone else's: "dance: Jon's passion" superseded
    by "dance: something Gina loves" makes Gina's taste look like Jon's changed mind."""
    from brainiac.formats import ltm
    from brainiac.language import facts

    out = []
    for line in facts.parse(note.section(ltm.FACTS)):
        key, value = line.fact.key, line.fact.value
        new = _owners(f"{key} {value}", line.fact.source, speakers, events)
        for old in line.superseded:
            was = _owners(f"{key} {old.value}", old.source, speakers, events)
            if new and was and new != was:
                out.append(f"{note.title}: {key}: {old.value} -> {value}")
    return out


def _owners(
    text: str, source: str | None, speakers: set[str], events: dict[str, Any]
) -> frozenset[str]:
    """Whose a fact's value is: the speakers it names, else the speaker of its source turn."""
    named = named_speakers(text, speakers)
    if named:
        return frozenset(named)
    event = events.get(source or "")
    return frozenset({event.role.casefold()}) if event is not None else frozenset()


def ingest(conv: Any, workdir: Path) -> Path:
    system = BrainiacSystem()
    system.ingest(conv)
    vault = workdir / conv.sample_id
    shutil.copytree(system.vault, vault)
    system.close()
    return vault


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--keep", default="", help="keep the vaults in this folder")
    ap.add_argument("--facts-out", default="", help="write every fact as JSON lines, to label")
    ap.add_argument("--labels", default="", help="labelled facts (JSON lines with ok: true|false)")
    args = ap.parse_args(argv)

    found = load_scorer(args, "readability check")
    if found is None:
        return 0
    locomo_eval, data = found

    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="readability_"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = []
    issue30: dict[str, Issue30] = {}
    for conv in locomo_eval.load_locomo(str(data)):
        names = {t.speaker.casefold() for t in conv.turns()}
        speakers = names | {s.split()[0] for s in names if s.split()}
        texts = [t.text for t in conv.turns()]
        vault = ingest(conv, workdir)
        results.append(inspect(vault, conv.sample_id, speakers, texts))
        issue30[conv.sample_id] = issue30_checks(vault, names, texts)

    print(
        "| conversation | notes | entity notes | entity titled with a common word or a speaker "
        "| notes over 100 events (largest) | titles that name no topic "
        "| facts from the conversation (distinct) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.conversation} | {r.notes} | {r.entity_notes} | "
            f"{len(r.common_word_entities)} | {len(r.over_limit)} ({r.largest}) | "
            f"{len(r.bad_titles)} | {len(_said(r.facts))} |"
        )
    for r in results:
        print(f"\n{r.conversation}:")
        print("  common-word entities:", ", ".join(r.common_word_entities[:12]) or "none")
        print("  over 100 events:", ", ".join(f"{t} ({n})" for t, n in r.over_limit) or "none")
        print("  titles naming no topic:", "; ".join(r.bad_titles[:8]) or "none")
        for f in r.facts[:8]:
            print(f"  fact  {f['key']}: {f['value']}   <- {f['source_text'][:80]!r}")
        for check, count in issue30[r.conversation].counts().items():
            print(f"  {check.replace('_', ' ')}: {count}")

    every_fact = [f for r in results for f in r.facts]
    if args.facts_out:
        with open(args.facts_out, "w", encoding="utf-8") as out:
            for f in every_fact:
                out.write(json.dumps({**f, "ok": None}, ensure_ascii=False) + "\n")
        print(f"\n{len(every_fact)} facts written to {args.facts_out}")
    if args.labels:
        labels = {}
        for line in Path(args.labels).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("ok") is not None:
                labels[(row["conversation"], row["key"], row["value"], row["source"])] = row["ok"]
        written = _said(every_fact)
        judged = [labels[k] for k in written if k in labels]
        unlabelled = [k for k in written if k not in labels]
        if judged:
            print(f"\nfact precision: {sum(judged) / len(judged):.3f} on {len(judged)} labelled")
        else:
            print("\nfact precision: no labelled fact is written any more")
        for k in unlabelled:
            print("  not labelled yet:", *k)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"\nvaults kept in {workdir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
