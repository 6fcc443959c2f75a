"""A note too long for the room a context has left is passed over without reading its file, and
the context is the one that reading every note gives (excerpt_head.py, retrieval.py)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brainiac import Memory
from brainiac.api import memory as memory_mod
from brainiac.formats import ltm, marks
from brainiac.search import corpus, excerpt_head, retrieval
from brainiac.search.retrieval import ParsedNotes, _note_item
from brainiac.store.vault import Vault

NOW = dt.datetime(2026, 11, 20, 9, 0)
_WORDS = ["kiln", "glaze", "clay", "wheel", "studio", "firing", "pottery"]


def _note(i: int, summary_words: int) -> str:
    summary = " ".join(f"{_WORDS[(i + k) % len(_WORDS)]}{k}" for k in range(summary_words))
    sources = "\n".join(
        f"- 2026-11-0{1 + k}T09:0{k}:00 **user** (s{i}): The kiln {i}.{k} fired the glaze. "
        f"^e-{i:05d}{k:05d}"
        for k in range(3)
    )
    return (
        f"---\ntitle: Pottery {i}\ntags: [pottery]\n---\n## Summary\nKiln and glaze {i}: "
        f"{summary}\n\n## Facts\n- kiln: number {i}\n\n## Sources\n{sources}\n"
    )


@pytest.fixture
def potter(vault: Path) -> Iterator[Memory]:
    # Notes of every size about the same words: a small budget fits a few, not the rest.
    for i in range(24):
        (vault / f"memory/long_term/pottery-{i}.md").write_text(_note(i, 20 + 15 * (i % 6)))
    with Memory(vault, refresh_interval_s=0) as m:
        yield m


def _renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    rendered: list[str] = []

    def counted(notes: ParsedNotes, rel: str, *args: Any) -> Any:
        rendered.append(rel)
        return _note_item(notes, rel, *args)

    monkeypatch.setattr(retrieval, "_note_item", counted)
    return rendered


def test_a_note_that_cannot_fit_is_not_read_and_the_context_is_the_same(
    potter: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered = _renders(monkeypatch)
    prompts = ["What happened with the kiln and the glaze?", "pottery studio firing clay"]
    lazy = [potter.context(p, budget=b, now=NOW) for p in prompts for b in (300, 600, 2000)]
    lazy_renders = len(rendered)

    original = retrieval.retrieve

    def every_note_read(vault: Vault, hits: list[Any], *args: Any, **kwargs: Any) -> Any:
        hits = [dataclasses.replace(h, excerpt_floor=0) for h in hits]
        return original(vault, hits, *args, **kwargs)

    monkeypatch.setattr(memory_mod, "retrieve", every_note_read)
    rendered.clear()
    eager = [potter.context(p, budget=b, now=NOW) for p in prompts for b in (300, 600, 2000)]
    assert [c.text for c in lazy] == [c.text for c in eager]
    assert [c.sources for c in lazy] == [c.sources for c in eager]
    assert any("### Pottery" in c.text for c in lazy)
    assert lazy_renders < len(rendered)  # the notes that could not fit were not read


def test_the_floor_is_the_head_every_excerpt_of_the_note_starts_with(vault: Path) -> None:
    rel = "memory/long_term/pottery-3.md"
    text = _note(3, 40)
    (vault / rel).write_text(text)
    note = ltm.parse(text, rel)
    floor = excerpt_head.floor(note, rel)
    [doc] = [d for d in corpus.documents(rel, text) if d.kind == corpus.NOTE]
    assert doc.excerpt_floor == floor > len(excerpt_head.heading("Pottery 3", rel))
    for words in ({"kiln"}, {"glaze", "fired"}, set()):
        item = _note_item(ParsedNotes(Vault(vault)), rel, words, [])
        assert item is not None
        assert item.text[:floor] == item.text.split("\n- kiln")[0][:floor]
        assert len(item.text) >= floor


def test_a_masked_credential_counts_at_its_masked_length(vault: Path) -> None:
    rel = "memory/long_term/wifi.md"
    text = "---\ntitle: Wifi\n---\n## Summary\nThe password: tulip-42-sunflower-long\n"
    note = ltm.parse(text, rel)
    shown = "### Wifi (memory/long_term/wifi.md)\nThe password: [masked]"
    assert excerpt_head.floor(note, rel) == len(shown)


def test_a_note_promotion_made_has_no_floor_and_is_read_as_before(vault: Path) -> None:
    rel = "memory/long_term/session-1.md"
    summary = marks.mark("kiln, glaze")  # what the jobs wrote, unedited
    text = (
        f"---\ntitle: Session 1\ntags: [session]\n---\n## Summary\n{summary}\n\n## Sources\n"
        "- 2026-11-01T09:00:00 **user** (s1): The kiln fired. ^e-0000000001\n"
    )
    assert excerpt_head.floor(ltm.parse(text, rel), rel) == 0
    [doc] = [d for d in corpus.documents(rel, text) if d.kind == corpus.NOTE]
    assert doc.excerpt_floor == 0
    # A person's line in its summary makes it theirs: an excerpt with a head again.
    edited = text.replace(summary, f"{summary}\nMy notes on the kiln.")
    assert excerpt_head.floor(ltm.parse(edited, rel), rel) > 0
