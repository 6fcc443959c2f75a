"""What every excerpt of a long-term note starts with in a context: its heading and its summary.

retrieval.py renders a note's excerpt when a context asks for it: this head, then the facts and
the quotes that are about the prompt. The head does not depend on the prompt, so its length is
known when the note is indexed and kept with the note's document (`floor`): a context whose room
left is smaller passes the note over without reading its file (a context passes over many of
the notes it ranks, for want of room).

One concept: the fixed part of a note's excerpt.
"""

from __future__ import annotations

from brainiac.formats import ltm, marks
from brainiac.language import masking

SUMMARY_CHARS = 600


def heading(title: str, rel: str) -> str:
    return f"### {title} ({rel})"


def summary(note: ltm.LongTermNote) -> str:
    """The summary a context shows: the Summary section without brainiac's marks or, for a
    free-form note with neither a summary nor facts, its opening prose; cut at a word within
    SUMMARY_CHARS. Empty when there is none."""
    text = marks.without_marks(note.section(ltm.SUMMARY)).strip()
    if not text and not note.note.section(ltm.FACTS):
        text = _first_prose(note.note.body)
    if len(text) > SUMMARY_CHARS:
        text = text[:SUMMARY_CHARS].rsplit(" ", 1)[0] + " …"
    return text


def made_by_promotion(note: ltm.LongTermNote) -> bool:
    """A note promotion made to hold events (a session's, or those about a name), with nothing
    a person wrote in its summary or around its sections: its excerpt is only its facts about
    the prompt, if any."""
    if not {"session", "entity"} & set(note.tags):
        return False
    return not marks.person_lines(note.note.section_text(ltm.SUMMARY) or "")


def floor(note: ltm.LongTermNote, rel: str) -> int:
    """The length in characters of the head every excerpt of the note starts with, masked as a
    context masks it (a masked credential is shorter than the credential): no excerpt of it is
    shorter while the file is as indexed. 0 for a note promotion made, whose excerpt may be
    anything or nothing. Kept in the index: a change to how a head is made or masked here
    changes it for every note, so it comes with a new index.SCHEMA_VERSION (a rebuild)."""
    if made_by_promotion(note):
        return 0
    head = "\n".join(p for p in (heading(note.title, rel), summary(note)) if p)
    return len(masking.mask(head)[0])


def _first_prose(body: str) -> str:
    out: list[str] = []
    for line in body.split("\n"):
        s = line.strip()
        if not s or s.startswith(("#", "<!--", "---")):
            if out:
                break
            continue
        out.append(s)
    return " ".join(out)
