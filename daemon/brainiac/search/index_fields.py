"""What the index makes of a document: its fields (the schema, declared once) and its terms.

The schema's analyzer (stemmed, English function words dropped) is declared here, and `Terms`
makes the same terms in the writing process, each distinct text once, so that Whoosh's
sub-writers only count them (docs/benchmarks.md, "Speed"). With index.py and
index_scoring.py one seam over Whoosh: the only modules that import it.
"""

from __future__ import annotations

import re
from typing import Any

from whoosh.analysis import STOP_WORDS, StemmingAnalyzer
from whoosh.fields import ID, KEYWORD, STORED, TEXT, Schema
from whoosh.lang.porter import stem as porter_stem

from brainiac.language import when
from brainiac.search.corpus import EVENT, NOTE, Document, thread
from brainiac.search.index_documents import context_digest, session_time_term

_CONTEXT_BOOST = 0.5


# Whoosh's own stop list is short (34 words) and keeps the function words every question is made
# of ("what", "did", "how", "does", "she", "they", ...). In a query they match nearly every short
# message and pull chatty lines ("What did it look like?") above the ones that share the question's
# content words; BM25's idf only damps them. So both documents and queries drop a standard English
# function-word list (pronouns, auxiliaries, question words, articles, prepositions) as well.
STOP_LIST = frozenset(STOP_WORDS) | frozenset(
    (
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "any",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "further",
        "had",
        "has",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "into",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "now",
        "off",
        "once",
        "only",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "those",
        "through",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "were",
        "what",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "would",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "don",
        "ll",
        "m",
        "re",
        "ve",
        "d",
    )
)


# The shortest term the analyzer keeps (StemmingAnalyzer's default, named for Terms).
_MIN_TERM_LENGTH = 2

# A word: letters and digits, joined by a dot or an underscore inside it ("e.g", "u.s",
# "snake_case"). Not Whoosh's default token pattern, which differs between the distributions:
# whoosh3's keeps `*` in a word, so Markdown's **bold** was indexed as "**bold**" and a search for
# "bold" missed it; both kept the underscores of _italic_ on the word. Markup is never a word.
WORD_PATTERN = re.compile(r"[^\W_]+(?:[._][^\W_]+)*")


def index_schema() -> Schema:
    """The index's fields: the one place they are declared (bump SCHEMA_VERSION on any change).

    Only what a query or a result reads is kept, because every field of every document costs
    the build time: queries are ORs of single terms, so the
    text fields keep term frequencies without positions (`phrase=False`); `path`, `status` and
    `event_id` are only read back, never searched, so they are stored, not indexed; `kind` is
    indexed for the search filter and `key` for replacing and deleting a document.
    """
    analyzer = StemmingAnalyzer(WORD_PATTERN, stoplist=STOP_LIST, minsize=_MIN_TERM_LENGTH)
    return Schema(
        key=ID(stored=True, unique=True),
        path=STORED,
        kind=ID(stored=True),
        status=STORED,
        title=TEXT(analyzer=analyzer, phrase=False, stored=True, field_boost=2.0),
        aliases=TEXT(analyzer=analyzer, phrase=False, field_boost=2.0),
        tags=KEYWORD(lowercase=True, commas=True, scorable=True, field_boost=1.5),
        links=KEYWORD(lowercase=True, commas=True, scorable=True),
        # The month and year an event was said and those it points to (when.event_terms),
        # matched by the months and years a prompt names (when.prompt_terms).
        when=KEYWORD(lowercase=True, scorable=True),
        body=TEXT(analyzer=analyzer, phrase=False),
        # A note's own text, apart from the events' bodies: a note quotes its events again, so
        # in one field every word of a conversation would count twice and the notes' long
        # bodies would set the length an event is measured against (BM25F keeps a field's
        # statistics over every document).
        note_body=TEXT(analyzer=analyzer, phrase=False),
        # An event's preceding message (see corpus._log_docs): context, so it weighs less.
        context=TEXT(analyzer=analyzer, phrase=False, field_boost=_CONTEXT_BOOST),
        event_id=STORED,
        # The scopes a memory is found in: project names, and "*" for global (projects.py).
        projects=KEYWORD(stored=True, commas=True, lowercase=False),
        note=STORED,  # the title of the note an event is a source of
        text=STORED,
        role=STORED,
        session=STORED,
        # An event's session and time as one term (session_time_term), so the indexer finds the
        # events just before and after a time in a session, in every file, by walking a few
        # terms of the lexicon (their preceding messages, corpus.previous_messages); with a
        # digest of the preceding message indexed.
        session_time=ID(),
        context_digest=STORED,
        at=STORED,
        strength=STORED,
        reinforcement=STORED,
        # A note's aliases, tags and count of events as they were written, for listing notes
        # without reading them (`Index.notes`, the MCP tool list_notes).
        listing=STORED,
        # How long a note's excerpt is at least (excerpt_head.floor): a context passes over a
        # note too long for the room left without reading its file.
        excerpt_floor=STORED,
    )


class Terms:
    """The terms the schema's analyzer makes of a text (tokens, lowercased, stop words and
    one-letter tokens dropped, stemmed), made here in the writing process, each distinct text once.

    Why (the build's time, docs/benchmarks.md, "Speed"): Whoosh accepts
    a field's value as a list of terms already analysed and then only counts them. Its analyzer
    is four chained generators per token, run in the build's sub-writers; this is one pass of
    C-level findall and a dictionary of stems. And every message is analysed once, though it is
    indexed twice: as its own event's body and as the next event's context. The texts kept are
    events' (short, and met again); a note's body is analysed without keeping it.
    tests/test_index.py holds these terms to the analyzer's, on whoosh3 and 2.7.4 alike.
    """

    # The schema's token pattern (its group non-capturing, so findall returns whole tokens).
    _WORD = WORD_PATTERN

    def __init__(self) -> None:
        self._of_text: dict[str, list[str]] = {}
        # Each word (lowercased token) seen, with its term, or "" for a word the analyzer drops.
        self._term_of: dict[str, str] = {}

    def of(self, text: str, keep: bool = True) -> list[str]:
        terms = self._of_text.get(text)
        if terms is None:
            terms = self._analysed(text)
            if keep:
                self._of_text[text] = terms
        return terms

    def _analysed(self, text: str) -> list[str]:
        if text.isascii():
            # Lowercasing ASCII never joins or splits a token, so the whole text is lowercased
            # at once; elsewhere each token is, as Whoosh does ("İ" lowercases to two characters,
            # the second not a word character).
            words = self._WORD.findall(text.lower())
        else:
            words = [w.lower() for w in self._WORD.findall(text)]
        term_of = self._term_of
        for word in set(words).difference(term_of):
            dropped = len(word) < _MIN_TERM_LENGTH or word in STOP_LIST
            term_of[word] = "" if dropped else porter_stem(word)
        return list(filter(None, map(term_of.__getitem__, words)))


def document_fields(doc: Document, terms: Terms) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "key": doc.key,
        "path": doc.path,
        "kind": doc.kind,
        "status": doc.status,
        # An event keeps its note's title as a stored label, searchable only at context weight:
        # copied into the boosted title field of every source, a note title like "Project X"
        # matched a quarter of a 10,000-note index and made every query score them all.
        "title": doc.title if doc.kind != "event" else "",
        "note": doc.title if doc.kind == "event" else "",
        "aliases": " ".join(doc.aliases),
        "tags": ",".join(doc.tags),
        "links": ",".join(doc.links),
        "when": when.event_terms(doc.at, doc.text) if doc.kind == EVENT else "",
        "body": doc.body if doc.kind == EVENT else "",
        "note_body": doc.body if doc.kind != EVENT else "",
        "context": " ".join(
            p for p in (doc.context, doc.title if doc.kind == "event" else "") if p
        ),
        "event_id": doc.event_id,
        "text": doc.text,
        "role": doc.role,
        "session": doc.session,
        "session_time": session_time_term(thread(doc), doc.at) if doc.session else "",
        "context_digest": context_digest(doc.context),
        "at": doc.at.isoformat() if doc.at else "",
        "strength": doc.strength,
        "reinforcement": doc.reinforcement,
        "projects": ",".join(doc.projects),
    }
    if doc.kind == NOTE:
        fields["listing"] = (doc.aliases, doc.tags, doc.sources)
        fields["excerpt_floor"] = doc.excerpt_floor
    # An empty field is left out rather than written empty: Whoosh runs the analyzer and
    # records a length for every field it is given, and an event leaves five of them empty.
    # Scores do not change (an absent field has length 0, as an empty one did); a result reads
    # a missing stored field as empty (`_hit`).
    fields = {name: value for name, value in fields.items() if value != ""}
    _with_analysed_text(fields, doc, terms)
    return fields


def _with_analysed_text(fields: dict[str, Any], doc: Document, terms: Terms) -> None:
    """`body`, `note_body` and `context` as lists of terms (Terms) rather than text: the same
    postings and lengths. An event's body is "role: text" and its context the message before
    it, then its note's title, joined by a space: no token spans a colon or a space, so each is
    the terms of its parts in turn, and the parts are the texts other events share."""
    event = doc.kind == EVENT
    if "body" in fields:
        if doc.body == f"{doc.role}: {doc.text}":
            fields["body"] = terms.of(doc.role) + terms.of(doc.text)
        else:
            fields["body"] = terms.of(doc.body)
    if "note_body" in fields:
        fields["note_body"] = terms.of(doc.body, keep=False)
    if "context" in fields:
        fields["context"] = terms.of(doc.context) + (terms.of(doc.title) if event else [])
