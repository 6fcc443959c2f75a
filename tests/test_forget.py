"""`brainiac forget`, end to end through the real CLI: what is forgotten is gone from every file in
the vault, from search and the context, from the event journal and the index's files, from every
backup snapshot (opened and read), and stays gone after the lifecycle jobs and a re-import of the
export it came from. A person's save made while forget waits for its confirmation is kept."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import select
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from conftest import run_cli

SAMPLES = Path(__file__).parent / "samples" / "imports"
NOW = "2026-11-20T12:00:00"
LATER = "2026-12-24T12:00:00"  # promotion, reflection and organization all have work by then

# History (imported straight into notes) and the newest steps (into the Event Log).
EVENTS = [
    ("travel", "2026-11-02T09:00:00", "I want to visit Zanzibar with Kofi next spring."),
    ("travel", "2026-11-02T09:01:00", "My passport number is XQ4455."),
    ("travel", "2026-11-02T09:02:00", "Kofi said the trip budget is 3000 euros."),
    ("travel", "2026-11-02T09:03:00", "Kofi booked the quokka tour on Rottnest."),
    *[
        (
            "garden",
            f"2026-11-20T09:{m:02d}:00",
            f"Step {m}: the tomatoes in the greenhouse need water",
        )
        for m in range(10, 22)
    ],
    ("garden", "2026-11-20T09:30:00", "I plan to photograph a quokka in the greenhouse."),
]
CHAT = """## User (2026-11-03 10:00)

Did you see the quokka photos from Rottnest?

## Assistant (2026-11-03 10:00:30)

Yes: the quokka smiled at the camera.

## User (2026-11-03 10:01)

Remind me to order more seed trays.
"""


def _ok(*args: str) -> str:
    proc = run_cli(*args, input="")
    assert proc.returncode == 0, (
        f"brainiac {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}"
    )
    return proc.stdout


def _lived_in(
    tmp_path: Path, working_memory: bool = False, jobs: bool = True
) -> tuple[Path, Path, Path, Path]:
    """A vault after some living: imported history and steps, a ChatGPT export and a Markdown
    chat log, the jobs run, a backup. Returns the vault and the three files imported."""
    vault = tmp_path / "vault"
    _ok("init", str(vault))
    events = tmp_path / "events.jsonl"
    events.write_text(
        "".join(
            json.dumps({"text": t, "role": "user", "session": s, "at": at}) + "\n"
            for s, at, t in EVENTS
        )
    )
    chatgpt = tmp_path / "conversations.json"
    chatgpt.write_bytes((SAMPLES / "chatgpt-conversations.json").read_bytes())
    chat = tmp_path / "chat.md"
    chat.write_text(CHAT)
    v = ("--vault", str(vault))
    _ok(*v, "import", str(events), str(chatgpt), str(chat), "--now", NOW)
    # A shorter window from now on: promotion moves the oldest steps on, with ledger lines.
    config = vault / ".brainiac/config.toml"
    config.write_text(
        config.read_text().replace("# short_term_window = 10", "short_term_window = 6")
    )
    if jobs:
        _ok(*v, "jobs", "run", "all", "--now", NOW)
    if working_memory:
        _ok(*v, "context", "--write", "--now", NOW)
    _ok(*v, "backup")
    return vault, events, chatgpt, chat


def _state(xdg: dict[str, str]) -> Path:
    return Path(xdg["XDG_STATE_HOME"]) / "brainiac"


def _snapshots(xdg: dict[str, str]) -> list[Path]:
    return sorted(_state(xdg).glob("*/backups/*.tar.gz"))


def _snapshot_files(snapshot: Path) -> dict[str, bytes]:
    with tarfile.open(snapshot, "r:gz") as tar:
        return {
            m.name: f.read()
            for m in tar.getmembers()
            if m.isfile() and (f := tar.extractfile(m)) is not None
        }


def _everything_kept(vault: Path, xdg: dict[str, str]) -> dict[str, bytes]:
    """Every file brainiac keeps: the vault, its state and cache (the index), every snapshot."""
    found: dict[str, bytes] = {}
    for root in (vault, _state(xdg), Path(xdg["XDG_CACHE_HOME"])):
        for path in root.rglob("*"):
            if path.is_file() and not path.name.endswith(".tar.gz"):
                found[str(path)] = path.read_bytes()
    for snapshot in _snapshots(xdg):
        for name, data in _snapshot_files(snapshot).items():
            found[f"{snapshot.name}:{name}"] = data
    return found


def _assert_gone(vault: Path, xdg: dict[str, str], *texts: str, context: bool = True) -> None:
    """Not in any file brainiac keeps (the index's files too), not found by search, and not in
    the context assembled for a prompt that asks for it."""
    kept = _everything_kept(vault, xdg)
    for text in texts:
        where = [p for p, data in kept.items() if text.lower().encode() in data.lower()]
        assert not where, f"{text!r} is still in {where}"
    query = " ".join(texts)
    search = _ok("--vault", str(vault), "search", query).lower()
    assembled = ""
    if context:
        assembled = _ok("--vault", str(vault), "context", "--prompt", query, "--budget", "4000")
    memory = assembled.split("## User Prompt")[0].lower()  # the prompt itself is the text
    for text in texts:
        assert text.lower() not in search, search
        assert text.lower() not in memory, assembled


def _jobs_and_reimport(vault: Path, *exports: Path) -> None:
    """A re-import of the export it came from, then every job (promotion puts back journalled
    events that are missing from the vault)."""
    for export in exports:
        out = _ok("--vault", str(vault), "import", str(export), "--now", LATER)
        assert "imported 0 new" in out, out
    _ok("--vault", str(vault), "jobs", "run", "all", "--now", LATER)


def _vault_hash(*roots: Path) -> str:
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                digest.update(str(path).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _id_of(vault: Path, text: str) -> str:
    for path in (vault / "memory").rglob("*.md"):
        for line in path.read_text().splitlines():
            if text in line and "^e-" in line:
                return line.rsplit("^", 1)[1]
    raise AssertionError(f"no event line with {text!r}")


def test_forget_an_imported_event_everywhere(tmp_path: Path, xdg_dirs: dict[str, str]) -> None:
    vault, _events, chatgpt, _chat = _lived_in(tmp_path, working_memory=True)
    event_id = _id_of(vault, "nail polish")  # went straight into a note with its conversation
    step_id = _id_of(vault, "Step 13:")  # promoted from the Event Log: it has a ledger line
    ledger = (vault / "memory/archive/2026-11.md").read_text()
    assert f"{step_id} →" in ledger
    journal = next(_state(xdg_dirs).glob("*/events.journal.jsonl")).read_text()
    assert event_id in journal and step_id in journal  # so promotion would put them back
    out = _ok(
        *("--vault", str(vault), "forget", "--event", event_id, "--event", step_id),
        *("--yes", "--json"),
    )
    report = json.loads(out)
    assert report["done"] and report["events"] == sorted([event_id, step_id])
    # Both kept exports hold one of them: the ChatGPT export and the JSONL of events.
    assert report["journal"] == 2 and report["counts"]["exports"] == 2
    ledger_removed = [
        r
        for f in report["files"]
        if f["path"] == "memory/archive/2026-11.md"
        for r in f["removed"]
        if r["what"] == "ledger"
    ]
    assert len(ledger_removed) == 1 and step_id in ledger_removed[0]["text"]
    assert [s["action"] for s in report["snapshots"]] == ["rewritten"]
    # The rest of the conversation stays.
    assert "acetone" in "".join(p.read_text() for p in (vault / "memory/long_term").glob("*.md"))
    wm = (vault / "context/working_memory.md").read_text()
    assert "generated: true" in wm and "nail polish" not in wm
    _assert_gone(vault, xdg_dirs, "nail polish", "Step 13:", step_id)
    _jobs_and_reimport(vault, chatgpt)
    _assert_gone(vault, xdg_dirs, "nail polish", "Step 13:", step_id, context=False)
    # Restoring the rewritten snapshot gives a vault without it (the manifest verifies).
    target = tmp_path / "restored"
    _ok("restore", str(_snapshots(xdg_dirs)[0]), str(target))
    restored = b"".join(p.read_bytes() for p in target.rglob("*") if p.is_file())
    assert b"nail polish" not in restored.lower() and b"acetone" in restored


def test_forget_a_fact_and_the_events_that_state_it(
    tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    vault, events, _chatgpt, _chat = _lived_in(tmp_path)
    assert "xq4455" in _vault_text(vault).lower()
    out = _ok("--vault", str(vault), "forget", "--fact", "passport number", "--yes")
    assert "fact" in out and "passport number: XQ4455" in out
    _assert_gone(vault, xdg_dirs, "XQ4455")
    _jobs_and_reimport(vault, events)
    _assert_gone(vault, xdg_dirs, "XQ4455", context=False)
    assert "3000 euros" in _vault_text(vault)  # the other facts stay


def test_forget_a_note_by_title(tmp_path: Path, xdg_dirs: dict[str, str]) -> None:
    vault, events, _chatgpt, _chat = _lived_in(tmp_path)
    note = vault / "memory/long_term/Kofi.md"
    assert "3000 euros" in note.read_text()
    listing = _ok("--vault", str(vault), "forget", "--note", "kofi", "--dry-run")
    assert "memory/long_term/Kofi.md: the note, as asked" in listing
    _ok("--vault", str(vault), "forget", "--note", "kofi", "--yes")
    assert not note.exists()
    _assert_gone(vault, xdg_dirs, "3000 euros", "quokka tour")
    _jobs_and_reimport(vault, events)
    assert not note.exists()
    _assert_gone(vault, xdg_dirs, "3000 euros", "quokka tour", context=False)


def test_forget_matching_text_in_every_place(tmp_path: Path, xdg_dirs: dict[str, str]) -> None:
    vault, events, _chatgpt, chat = _lived_in(tmp_path)
    before = _vault_text(vault).lower()
    assert before.count("quokka") >= 3  # Event Log, a note's Sources, the kept chat log
    exports = list((vault / "memory/archive/exports").iterdir())
    report = json.loads(
        _ok("--vault", str(vault), "forget", "--matching", "QUOKKA", "--yes", "--json")
    )
    # The Markdown chat log and the JSONL of events were kept as imported, and both hold it.
    assert report["counts"]["events"] >= 4 and report["counts"]["exports"] == 2
    placeholder = next(p for p in exports if p.suffix == ".md").read_text()
    assert placeholder.startswith("brainiac forget: ")
    assert "seed trays" not in _vault_text(vault)  # the whole chat log went with its match
    _assert_gone(vault, xdg_dirs, "quokka")
    _jobs_and_reimport(vault, chat, events)
    _assert_gone(vault, xdg_dirs, "quokka", context=False)
    assert sorted((vault / "memory/archive/exports").iterdir()) == sorted(exports)
    assert "tomatoes" in _vault_text(vault)


def test_forget_everything_keeps_the_identity(tmp_path: Path, xdg_dirs: dict[str, str]) -> None:
    vault, _events, chatgpt, _chat = _lived_in(tmp_path, working_memory=True)
    identity = (vault / "system/core_identity.md").read_bytes()
    (vault / "notes").mkdir()
    (vault / "notes/mine.md").write_text("My own note about tomatoes.\n")
    _ok("--vault", str(vault), "forget", "--everything", "--yes")
    template = Path(__file__).parents[1] / "vault_template"
    assert (vault / "memory/short_term.md").read_bytes() == (
        template / "memory/short_term.md"
    ).read_bytes()
    assert (vault / "system/core_identity.md").read_bytes() == identity
    assert (vault / "notes/mine.md").exists()  # a person's own folder is not the memory
    kept = {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in (vault / "memory").rglob("*")
        if p.is_file() and p.name != ".keep"
    }
    exports = {k: v for k, v in kept.items() if k.startswith("memory/archive/exports/")}
    assert set(kept) == {"memory/short_term.md", *exports} and len(exports) == 3
    assert all(v.startswith(b"brainiac forget: ") for v in exports.values())
    assert not any((vault / "context").glob("*.md"))
    everywhere = _everything_kept(vault, xdg_dirs)
    for text in ("nail polish", "XQ4455", "quokka", "greenhouse"):
        where = [p for p, d in everywhere.items() if text.lower().encode() in d.lower()]
        assert not where, (text, where)
    (snapshot,) = _snapshots(xdg_dirs)
    inside = _snapshot_files(snapshot)
    assert inside["vault/memory/short_term.md"] == kept["memory/short_term.md"]
    assert inside["vault/system/core_identity.md"] == identity
    assert not [n for n in inside if n.startswith("vault/memory/long_term/")]
    status = json.loads(_ok("--vault", str(vault), "status", "--json"))
    assert status["short_term_events"] == 0 and status["problems"] == {}
    _jobs_and_reimport(vault, chatgpt)
    assert "nail polish" not in _vault_text(vault)


def test_dry_run_and_the_confirmation(tmp_path: Path, xdg_dirs: dict[str, str]) -> None:
    vault, _events, _chatgpt, _chat = _lived_in(tmp_path, jobs=False)
    roots = (vault, _state(xdg_dirs))
    before = _vault_hash(*roots)
    listing = run_cli("--vault", str(vault), "forget", "--matching", "quokka", "--dry-run")
    assert listing.returncode == 0 and "would remove" in listing.stdout
    assert "dry run: nothing was removed" in listing.stderr
    # Without a terminal and without --yes: refused before anything is read.
    refused = run_cli("--vault", str(vault), "forget", "--matching", "quokka", input="")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "--yes" in refused.stderr
    nothing = run_cli("--vault", str(vault), "forget", "--event", "e-0000000000", "--yes")
    assert nothing.returncode == 1 and "nothing was removed" in nothing.stderr
    # On a terminal: it lists, asks, and "n" (or just Enter) removes nothing.
    code, shown = _on_a_terminal(vault, "n\n")
    assert code == 1 and "would remove" in shown and "[y/N]" in shown
    assert _vault_hash(*roots) == before


def test_a_save_made_while_it_asks_is_kept(tmp_path: Path, xdg_dirs: dict[str, str]) -> None:
    vault, _events, _chatgpt, _chat = _lived_in(tmp_path, jobs=False)
    stm = vault / "memory/short_term.md"
    assert "quokka" in stm.read_text()

    def person_saves() -> None:  # between the listing and the answer
        text = stm.read_text().replace("## Tasks\n", "## Tasks\n- [ ] water the basil\n")
        stm.write_text(text)

    code, shown = _on_a_terminal(vault, "y\n", meanwhile=person_saves)
    assert code == 0, shown
    text = stm.read_text()
    assert "- [ ] water the basil" in text and "quokka" not in text.lower()
    _assert_gone(vault, xdg_dirs, "quokka")


def _vault_text(vault: Path) -> str:
    return "".join(
        p.read_text(errors="replace") for p in vault.rglob("*") if p.is_file() and ".md" in p.name
    )


def _on_a_terminal(vault: Path, answer: str, meanwhile: object = None) -> tuple[int, str]:
    """`brainiac forget --matching quokka` on a pseudo-terminal: wait for the question, run
    `meanwhile`, answer. Returns the exit status and everything shown."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "forget", "--matching", "quokka"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=os.environ.copy(),
        close_fds=True,
    )
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + 60
    try:
        while b"for good?" not in shown:
            assert time.monotonic() < deadline, shown.decode(errors="replace")
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                shown += os.read(master, 65536)
        if callable(meanwhile):
            meanwhile()
        os.write(master, answer.encode())
        while proc.poll() is None or select.select([master], [], [], 0)[0]:
            assert time.monotonic() < deadline, shown.decode(errors="replace")
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break  # the terminal closed with the process
                if not chunk:
                    break
                shown += chunk
        return proc.wait(timeout=60), shown.decode(errors="replace")
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
