"""PROTOTYPE (issue 30), not part of brainiac: an offline observation extractor, applied after the
fact to vaults that benchmarks/knowledge.py built, to measure what such a reading could cover.

    .venv/bin/python benchmarks/experiments/k30_observations.py --vaults DIR --out OUT \
        --data FILE [--per-turn N]
    .venv/bin/python benchmarks/knowledge.py --bench-dir OUT --data FILE --json OUT.json

Each vault of DIR is copied to OUT; in every file under memory/ that holds events, each event of a
speaker gives its first N (default 1) first-person statements about the speaker's own life as
observations, written into the file's `## Observations` section in the format knowledge.py reads:

    - Caroline went to a LGBTQ support group on 2023-05-07 and it was so powerful. (2023-05-08, e-…)

A statement is a declarative sentence (no question) with "I", "my", "we" or "our" in it, not a
reaction to the one spoken to ("Thanks", "That's great", "I'm so happy for you", anything with
"you"), with at least four words that are not stop words. It is put in the third person (I → the
speaker's name, "I'm" → "is", "my" → "Name's", "we" → "Name and others"), and the relative dates
it holds are made absolute from the event's time ("yesterday" → "on 2023-05-07", "last year" →
"in 2022"). `--verbatim` writes every turn as it was said ("Caroline said: ..."), the reference
that shows what coverage alone would reward.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import knowledge  # noqa: E402  (benchmarks/, for the data file's speakers)
from brainiac.language.lexicon import word_set  # noqa: E402

_REACTION = re.compile(
    r"^(?:thanks|thank you|thx|congrats|congratulations|wow|whoa|aww|oh|omg|haha|lol|yay|hey|hi|"
    r"hello|bye|that's|that is|that sounds|sounds|it sounds|glad|so glad|i'm (?:so )?(?:glad|happy|"
    r"sorry|proud)|i (?:bet|know|agree|understand|hope|wish|appreciate|can't wait|totally|feel "
    r"you)|i love (?:that|it|this|those|these)|me too|yeah|yes|no|sure|definitely|absolutely|"
    r"totally|great|awesome|cool|nice|amazing|good|true|right)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|we|we're|we've|our|me)\b", re.IGNORECASE)
_LISTENER = re.compile(r"\b(?:you|your|yours|you're|you've|you'll)\b", re.IGNORECASE)
_STOP = word_set(
    "a an the and or but so to of in on at for with by from it is was be been am are were i me my "
    "we our us you your this that these those just really very too also have has had do did not "
    "there here what when how"
)
_IRREGULAR_PAST = word_set(
    "was were went got took saw made had did found felt thought bought brought came gave ran won "
    "lost met left kept told said knew began wrote read put let hit cut set built sent spent "
    "taught caught heard held paid sat stood became drew grew threw flew drove rode swam sang ate "
    "fell forgot chose broke spoke woke wore hung learnt slept meant fed led shot sold could would "
    "should might must can will may shall used"
)
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def third_person(sentence: str, name: str) -> str:
    """The sentence with its speaker named instead of "I", "my", "we"."""
    s = sentence
    for pattern, repl in (
        (r"\bI'm\b|\bI am\b", f"{name} is"),
        (r"\bI've\b|\bI have\b", f"{name} has"),
        (r"\bI'd\b", f"{name} would"),
        (r"\bI'll\b", f"{name} will"),
        (r"\bwe're\b|\bwe are\b", f"{name} and others are"),
        (r"\bwe've\b|\bwe have\b", f"{name} and others have"),
        (r"\bmyself\b", "themself"),
    ):
        s = re.sub(pattern, repl, s, flags=re.IGNORECASE)
    s = re.sub(r"\bI (\w+)", lambda m: f"{name} {_third(m.group(1))}", s)
    s = re.sub(r"\b[Ww]e\b", f"{name} and others", s)
    s = re.sub(r"\b(?:[Mm]y|[Oo]ur)\b", f"{name}'s", s)
    # "It made me feel accepted": the speaker is named at the first "me" unless named before it.
    s = re.sub(r"\b(?:me|us)\b", "\x00", s)
    if "\x00" in s and name not in s.split("\x00")[0]:
        s = s.replace("\x00", name, 1)
    return s.replace("\x00", "them")


def _third(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR_PAST or low.endswith("ed") or not low.isalpha():
        return verb
    if low in ("do", "go"):
        return verb + "es"
    if low.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def absolute_dates(sentence: str, at: dt.datetime) -> str:
    """Relative expressions made absolute from the time the sentence was said."""
    day = at.date()

    def month(d: dt.date) -> str:
        return f"in {_MONTHS[d.month - 1]} {d.year}"

    def shift_months(n: int) -> dt.date:
        m = day.year * 12 + day.month - 1 + n
        return dt.date(m // 12, m % 12 + 1, 1)

    rules = (
        (r"\byesterday\b|\blast night\b", f"on {day - dt.timedelta(days=1)}"),
        (r"\btomorrow\b", f"on {day + dt.timedelta(days=1)}"),
        (r"\btoday\b|\bthis morning\b|\btonight\b", f"on {day}"),
        (r"\blast weekend\b", f"the weekend before {day}"),
        (r"\blast week\b", f"the week before {day}"),
        (r"\bnext week\b", f"the week after {day}"),
        (r"\blast month\b", month(shift_months(-1))),
        (r"\bnext month\b", month(shift_months(1))),
        (r"\blast year\b", f"in {day.year - 1}"),
        (r"\bnext year\b", f"in {day.year + 1}"),
    )
    for pattern, repl in rules:
        sentence = re.sub(pattern, repl, sentence, flags=re.IGNORECASE)

    def ago(m: re.Match[str]) -> str:
        raw, unit = m.group(1).lower(), m.group(2).lower()
        n = (
            int(raw)
            if raw.isdigit()
            else {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}.get(raw)
        )
        if n is None:
            return m.group(0)
        if unit == "year":
            return f"in {day.year - n}"
        if unit == "month":
            return month(shift_months(-n))
        days = n * (7 if unit == "week" else 1)
        return f"around {day - dt.timedelta(days=days)}"

    return re.sub(
        r"\b(\d+|a|an|one|two|three)\s+(day|week|month|year)s?\s+ago\b",
        ago,
        sentence,
        flags=re.IGNORECASE,
    )


def observations(text: str, name: str, at: dt.datetime, per_turn: int) -> list[str]:
    from brainiac.language import extract

    text = re.sub(r"\s*\[image: [^\]]*\]$", "", text)
    out: list[str] = []
    for sentence in extract.sentences(text):
        s = sentence.strip()
        if s.endswith("?") or _REACTION.match(s) or _LISTENER.search(s):
            continue
        if not _FIRST_PERSON.search(s):
            continue
        words = [w for w in re.findall(r"[a-z']+", s.lower()) if w not in _STOP]
        if len(words) < 4:
            continue
        said = absolute_dates(third_person(s, name), at)
        out.append(said[0].upper() + said[1:])
        if len(out) >= per_turn:
            break
    return out


def annotate_vault(
    vault: Path, speakers: dict[str, str], per_turn: int, verbatim: bool = False
) -> int:
    """Write observations into every memory file holding speakers' events; how many."""
    from brainiac.formats import events as ev
    from brainiac.formats import note as notes

    written = 0
    for path in sorted((vault / "memory").rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if rel.startswith(("memory/archive/exports/", "memory/indexes/")):
            continue
        text = path.read_text(encoding="utf-8")
        lines = []
        for located in ev.parse_lines(text.splitlines()):
            e = located.event
            name = speakers.get(e.role.casefold())
            if e.at is None or name is None:
                continue
            found = [f"{name} said: {e.text}"] if verbatim else []
            for said in found or observations(e.text, name, e.at, per_turn):
                lines.append(f"- {said} ({e.at.date()}, {e.id})")
        if lines:
            path.write_text(notes.replace_section(text, "Observations", "\n".join(lines)), "utf-8")
            written += len(lines)
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vaults", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--per-turn", type=int, default=1)
    ap.add_argument("--verbatim", action="store_true", help="the reference: every turn, as said")
    args = ap.parse_args()
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    for conv in knowledge.load(Path(args.data)):
        vault = out / conv.sample_id
        shutil.copytree(Path(args.vaults) / conv.sample_id, vault)
        speakers = {s.casefold(): s for s in conv.speakers}
        print(
            conv.sample_id,
            annotate_vault(vault, speakers, args.per_turn, args.verbatim),
            "observations",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
