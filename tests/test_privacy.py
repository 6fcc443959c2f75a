"""Privacy and access (issue 6, part 7): private notes stay out of every context and search,
nothing follows a symlink out of the vault, brainiac's files are the user's alone, and the modes
a person gave their notes are kept. `brainiac forget`: tests/test_forget.py; credentials masked
in the context: tests/test_masking.py; MCP: tests/test_mcp.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from pathlib import Path

import pytest

from brainiac import Memory
from conftest import run_cli

NOW = "2026-11-22T12:00:00"


def _cli(vault: Path, *args: str) -> str:
    return run_cli("--vault", str(vault), *args, check=True, in_process=True).stdout


def test_private_notes_and_folders_reach_no_context_and_no_search(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _cli(vault, "init")
    (vault / ".brainiac").mkdir(exist_ok=True)
    (vault / ".brainiac/config.toml").write_text('[vault]\nprivate_folders = ["journal"]\n')
    lt = vault / "memory/long_term"
    (lt / "diary.md").write_text("---\ntitle: Quokka diary\nprivate: true\n---\nquokka secret A\n")
    (vault / "journal").mkdir()
    (vault / "journal/2026.md").write_text("---\ntitle: Journal\n---\nquokka secret B\n")
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntitle: Outside\n---\nquokka secret C\n")
    os.symlink(outside, lt / "outside-link.md")
    (lt / "public.md").write_text("---\ntitle: Quokka facts\n---\nquokkas smile a lot\n")

    hits = json.loads(_cli(vault, "search", "quokka", "--json"))
    assert [h["path"] for h in hits] == ["memory/long_term/public.md"]
    context = _cli(vault, "context", "--prompt", "tell me about the quokka", "--now", NOW)
    _cli(vault, "context", "--write", "--prompt", "quokka", "--now", NOW)
    written = (vault / "context/working_memory.md").read_text()
    for text in (context, written):
        assert "quokkas smile a lot" in text
        assert "secret" not in text


def test_brainiac_files_are_private_and_a_persons_modes_are_kept(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _cli(vault, "init")
    stm = vault / "memory/short_term.md"
    stm.chmod(0o644)  # the person wants it readable by their group and others
    _cli(vault, "remember", "the kiln reached 900 degrees", "--at", NOW)
    assert stat.S_IMODE(stm.stat().st_mode) == 0o644
    later = (dt.datetime.fromisoformat(NOW) + dt.timedelta(days=1)).isoformat()
    _cli(vault, "jobs", "run", "all", "--now", later)
    _cli(vault, "context", "--write", "--now", later)
    assert stat.S_IMODE(stm.stat().st_mode) == 0o644
    created = [vault / "context/working_memory.md"]
    created += [p for p in (tmp_path / "xdg").rglob("*") if p.is_file()]
    for path in created:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
    for folder in [p for p in (tmp_path / "xdg/state").rglob("*") if p.is_dir()]:
        assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0, folder


# -- issue 14, item 11: one rule for private folders, applied to where a symlink leads too


def _private_folder_config(vault: Path, *folders: str) -> None:
    listed = ", ".join(json.dumps(f) for f in folders)
    (vault / ".brainiac/config.toml").write_text(
        f"# quokka secret in the settings\n[vault]\nprivate_folders = [{listed}]\n"
    )


def test_a_symlink_is_judged_by_where_it_leads(vault: Path) -> None:
    from brainiac.core.errors import VaultError
    from brainiac.interfaces.served_notes import note_text

    _private_folder_config(vault, "journal")
    (vault / "journal").mkdir()
    (vault / "journal/2026.md").write_text("---\ntitle: Journal\n---\nquokka secret B\n")
    (vault / "inbox/chat.md").write_text("# Chat\nquokka secret D\n")
    (vault / "notes").mkdir()
    (vault / "notes/zoo.md").write_text("---\ntitle: Zoo\n---\nquokkas smile a lot\n")
    lt = vault / "memory/long_term"
    leads_to = {
        "diary-link.md": vault / "journal/2026.md",  # into a private folder
        "journal-dir.md": vault / "journal",  # a folder, not a note
        "settings.md": vault / ".brainiac/config.toml",  # brainiac's settings
        "inbox-link.md": vault / "inbox/chat.md",  # a folder brainiac never reads as memory
    }
    for name, target in leads_to.items():
        (lt / name).symlink_to(target)
    (lt / "zoo-link.md").symlink_to(vault / "notes/zoo.md")  # a public note: still indexed

    with Memory(vault, refresh_interval_s=0) as memory:
        hits = memory.search("quokka", limit=50)
        assert {h.path for h in hits} == {"notes/zoo.md", "memory/long_term/zoo-link.md"}
        context = memory.context("quokka", now=dt.datetime.fromisoformat(NOW)).text
        assert "secret" not in context and "quokkas smile a lot" in context
        # The MCP server's note resource applies the same rule.
        for name in leads_to:
            with pytest.raises(VaultError):
                note_text(memory, f"memory/long_term/{name}")
        assert "quokkas smile" in note_text(memory, "memory/long_term/zoo-link.md")


@pytest.mark.parametrize("spelled", ["/journal", "journal/", "./journal", "Journal", " journal "])
def test_the_indexer_and_the_mcp_server_agree_on_a_private_folder(
    vault: Path, spelled: str
) -> None:
    from brainiac.core.errors import VaultError
    from brainiac.interfaces.served_notes import note_text

    _private_folder_config(vault, spelled)
    (vault / "journal").mkdir()
    (vault / "journal/2026.md").write_text("---\ntitle: Journal\n---\nquokka secret B\n")
    with Memory(vault, refresh_interval_s=0) as memory:
        assert memory.search("quokka") == []
        with pytest.raises(VaultError, match="private folder"):
            note_text(memory, "journal/2026.md")


def test_a_folder_made_private_leaves_the_index(vault: Path) -> None:
    (vault / "journal").mkdir()
    (vault / "journal/2026.md").write_text("---\ntitle: Journal\n---\nquokka secret B\n")
    with Memory(vault, refresh_interval_s=0) as memory:
        assert [h.path for h in memory.search("quokka")] == ["journal/2026.md"]
    _private_folder_config(vault, "journal")
    with Memory(vault, refresh_interval_s=0) as memory:
        assert memory.search("quokka") == []


@pytest.mark.parametrize(
    ("written", "private"),
    [
        *[("true", True), ('"true"', True), ("'yes'", True), ("Yes", True), ("1", True)],
        *[("false", False), ('"no"', False), ("2026-01-01", False)],
    ],
)
def test_private_typed_as_text_is_private(
    memory: Memory, vault: Path, written: str, private: bool
) -> None:
    (vault / "memory/long_term/diary.md").write_text(
        f"---\ntitle: Diary\nprivate: {written}\n---\nmy quokka thoughts\n"
    )
    assert bool(memory.search("quokka")) is not private


# -- issue 14, items 10-12: a private note never takes part in the jobs' routing, merging and links

T0 = dt.datetime(2026, 11, 20, 9, 0)


def _source(at: dt.datetime, text: str) -> str:
    from brainiac.formats import events as ev

    return ev.render(ev.make_event(text, role="user", session="s", at=at))


def _files_naming(vault: Path, private: Path, names: tuple[str, ...]) -> list[str]:
    """The vault's Markdown files, other than the private note, that name it."""
    found = []
    for path in sorted(vault.rglob("*.md")):
        if path == private or path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8").casefold()
        if any(n.casefold() in text for n in names):
            found.append(path.relative_to(vault).as_posix())
    return found


def _where(vault: Path, event_id: str) -> list[str]:
    return [
        p.relative_to(vault).as_posix()
        for p in sorted((vault / "memory").rglob("*.md"))
        if f"^{event_id}" in p.read_text(encoding="utf-8")
    ]


@pytest.mark.parametrize("private_holds_more", [True, False])
def test_organization_never_merges_a_private_note_either_way(
    memory: Memory, vault: Path, private_holds_more: bool
) -> None:
    lt = vault / "memory/long_term"
    public_lines = [_source(T0 - dt.timedelta(days=3), "Kestrel flew over the barn at dawn.")]
    private_lines = [
        _source(T0 - dt.timedelta(days=2, minutes=i), f"Kestrel whisper number {i}, quokkaword.")
        for i in range(3 if private_holds_more else 1)
    ]
    if not private_holds_more:
        public_lines += [
            _source(T0 - dt.timedelta(days=1, minutes=i), f"Kestrel hunting report {i}.")
            for i in range(3)
        ]
    # Both notes hold only events (brainiac's own): without the privacy rule they are merged.
    public = lt / "Kestrel.md"
    public.write_text(
        "---\ntitle: Kestrel\nstatus: active\n---\n## Sources\n" + "".join(public_lines)
    )
    private = lt / "kestrel-diary.md"
    private_text = (
        "---\ntitle: Kestrel\nprivate: true\nstatus: active\n---\n## Sources\n"
        + "".join(private_lines)
    )
    private.write_text(private_text)
    public_ids = [ln.rsplit("^", 1)[1].strip() for ln in public_lines]

    reports = memory.run_job("all", now=T0)
    assert all(r.ok for r in reports), [r.summary for r in reports]
    assert private.read_text() == private_text
    assert "status: merged" not in public.read_text()
    for event_id in public_ids:
        assert _where(vault, event_id) == ["memory/long_term/Kestrel.md"]
    assert _files_naming(vault, private, ("kestrel-diary",)) == []
    assert memory.search("quokkaword") == []
    assert [h.path for h in memory.search("kestrel")] and all(
        h.path == "memory/long_term/Kestrel.md" for h in memory.search("kestrel")
    )
    assert "quokkaword" not in memory.context("kestrel whisper", now=T0).text


@pytest.mark.parametrize("how", ["frontmatter", "folder"])
def test_routing_and_links_ignore_a_private_notes_title_and_aliases(vault: Path, how: str) -> None:
    lt = vault / "memory/long_term"
    if how == "folder":
        (vault / ".brainiac/config.toml").write_text(
            '[vault]\nprivate_folders = ["memory/long_term/mine"]\n'
        )
        (lt / "mine").mkdir()
        private = lt / "mine/wombat-society.md"
        flag = ""
    else:
        private = lt / "wombat-society.md"
        flag = "private: true\n"
    private_text = (
        f"---\ntitle: Wombat Society\naliases: [Wombat]\n{flag}---\n"
        "My secret plan for the society: skydiving lessons.\n"
    )
    private.write_text(private_text)
    memory = Memory(vault, refresh_interval_s=0)
    try:
        ids = [
            memory.remember(
                # Named first, the alias would take the event; named second, get a link.
                f"Wombat sighting number {i} near the river, Anna says."
                if i % 2
                else f"Anna told me about the Wombat sighting number {i} near the river.",
                session="walk",
                at=T0 + dt.timedelta(minutes=i),
            ).id
            for i in range(14)
        ]
        later = T0 + dt.timedelta(hours=1)
        reports = memory.run_job("all", now=later)
        assert all(r.ok for r in reports), [r.summary for r in reports]
        assert private.read_text() == private_text
        promoted = ids[:4]  # the rest stay in the short-term window
        for event_id in promoted:
            places = _where(vault, event_id)
            assert len(places) == 1 and places[0].startswith("memory/long_term/"), places
            assert places[0] != private.relative_to(vault).as_posix()
        hits = memory.search("wombat sighting", limit=50)
        assert {h.event_id for h in hits} >= set(promoted)
        assert _files_naming(vault, private, ("wombat-society", "Wombat Society")) == []
        assert memory.search("skydiving") == []
        assert "skydiving" not in memory.context("wombat society plan", now=later).text
    finally:
        memory.close()


def test_a_note_made_private_loses_the_generated_links_to_it(memory: Memory, vault: Path) -> None:
    from brainiac.formats import marks

    lt = vault / "memory/long_term"
    public = lt / "Kestrel.md"
    mine = "- [[wombat-society]] (my own link stays)\n"
    public.write_text(
        "---\ntitle: Kestrel\nstatus: active\n---\n## Sources\n"
        + _source(T0 - dt.timedelta(days=1), "Kestrel met the Wombat people.")
        + "\n## Related\n"
        + marks.mark("- [[wombat-society|Wombat Society]]")
        + "\n"
        + marks.mark("- [[anna-berg|Anna Berg]]")
        + "\n"
        + mine
    )
    private = lt / "wombat-society.md"
    private_text = "---\ntitle: Wombat Society\naliases: [Wombat]\nprivate: true\n---\nsecret\n"
    private.write_text(private_text)
    reports = memory.run_job("organization", now=T0)
    assert reports[0].ok, reports[0].summary
    text = public.read_text()
    assert "Wombat Society" not in text  # the generated link is gone ...
    assert mine in text  # ... a person's line is theirs
    assert "[[anna-berg|Anna Berg]]" in text
    assert private.read_text() == private_text


def test_an_event_line_copied_into_a_private_note_stays_public(memory: Memory, vault: Path) -> None:
    event = memory.remember("The ferry to Lindisfarne leaves at noon.", at=T0)
    stm = vault / "memory/short_term.md"
    line = next(x for x in stm.read_text().splitlines(keepends=True) if event.id in x)
    private = vault / "memory/long_term/diary.md"
    private_text = "---\ntitle: Diary\nprivate: true\n---\nCopied for myself:\n" + line
    private.write_text(private_text)
    later = T0 + dt.timedelta(hours=1)
    reports = memory.run_job("all", now=later)
    assert all(r.ok for r in reports), [r.summary for r in reports]
    assert event.id in stm.read_text()  # not "already in a note": a private one does not count
    assert [h.path for h in memory.search("Lindisfarne ferry")] == ["memory/short_term.md"]
    assert private.read_text() == private_text


@pytest.mark.parametrize("folder", ["", "/", ".", "../elsewhere", "journal/../.."])
def test_a_private_folder_that_names_no_folder_in_the_vault_is_an_error(
    vault: Path, folder: str
) -> None:
    # Ignored, it would leave the person believing a folder is private.
    _private_folder_config(vault, folder)
    proc = run_cli("--vault", str(vault), "search", "quokka")
    assert proc.returncode != 0
    message = proc.stderr.strip()
    assert "\n" not in message, message
    assert ".brainiac/config.toml: [vault] private_folders" in message, message
    assert "relative to the vault" in message, message
