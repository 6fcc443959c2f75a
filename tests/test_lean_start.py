"""The CLI's lean start (issue 16): a command loads only what it uses, and the short commands that
end with os._exit still hand over all their output and their exit status (cli.root.main)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from brainiac import Memory
from conftest import run_cli

# Loaded by none of the commands below: the checker and model client, the jobs, the Markdown
# parser (only links and tags in code need it), systemd, the daemon.
HEAVY = {
    "brainiac.guard.check",
    "brainiac.model.llm",
    "brainiac.model.llm_endpoint",
    "brainiac.lifecycle.jobs",
    "brainiac.lifecycle.journal",
    "brainiac.runtime.systemd",
    "brainiac.runtime.service",
    "markdown_it",
}
# The model client's http and ssl: not loaded by --version (whoosh 2.7.4, the CI fallback, imports
# urllib.request itself, so a call that searches may have them).
NETWORK = {"ssl", "http.client"}


def _imported(*args: str, input: str | None = None) -> tuple[set[str], str]:
    """The modules a real CLI call imported (python -X importtime), and its stdout."""
    proc = run_cli(*args, input=input, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, proc.stderr
    names = {
        m.group(1).strip()
        for m in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|(.*)$", proc.stderr, re.M)
    }
    return names, proc.stdout


def test_version_loads_neither_the_index_nor_the_parsers() -> None:
    names, out = _imported("--version")
    assert out.startswith("brainiac, version ")
    assert "click" in names and "brainiac.interfaces.cli" in names  # the parse saw the real imports
    others = {"whoosh", "yaml", "frontmatter", "brainiac.api.memory", "sqlite3"}
    loaded = names & (HEAVY | NETWORK | others)
    assert not loaded


def test_context_and_the_hook_load_what_they_use_and_no_more(vault: Path) -> None:
    run_cli("--vault", str(vault), "reindex", check=True)
    names, out = _imported("--vault", str(vault), "context", "--prompt", "Anna Berg")
    assert "## User Prompt" in out
    assert {"whoosh", "brainiac.search.retrieval", "brainiac.search.indexer", "sqlite3"} <= names
    assert not names & HEAVY
    # The name book and the fact parser are the jobs' (Memory.names, NameBook.add).
    assert not names & {"brainiac.language.facts", "brainiac.language.extract"}
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "Anna Berg"})
    names, out = _imported("--vault", str(vault), "hook", "user-prompt-submit", input=payload)
    assert "Anna Berg" in out and not names & HEAVY


def test_a_long_answer_arrives_whole_through_a_pipe(vault: Path) -> None:
    # Far more than a pipe's 64 KiB buffer: os._exit must come after the last byte is written.
    with Memory(vault) as memory:
        for i in range(400):
            memory.remember(f"wombat sighting number {i} " + "by the river bank " * 20)
    out = run_cli("--vault", str(vault), "search", "wombat", "--limit", "400", "--json", check=True)
    assert len(out.stdout) > 200_000
    hits = json.loads(out.stdout)
    assert len(hits) == 400 and all("wombat" in h["excerpt"] for h in hits)


def test_the_hook_prints_what_the_memory_assembles(vault: Path) -> None:
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "the Atlas kickoff"})
    out = run_cli(
        "--vault", str(vault), "hook", "user-prompt-submit", "--budget", "800", input=payload
    )
    assert out.returncode == 0, out.stderr
    with Memory(vault, meaning=False) as memory:  # the CLI's own process answers by words
        expected = memory.context("the Atlas kickoff", budget=800, with_prompt=False).text
        assert out.stdout == expected


def test_exit_statuses_survive_the_fast_exit(vault: Path, tmp_path: Path) -> None:
    missing = run_cli("--vault", str(tmp_path / "nowhere"), "search", "x")
    assert missing.returncode == 2 and missing.stderr.startswith("brainiac: "), missing.stderr
    bad_hook = run_cli("--vault", str(vault), "hook", "user-prompt-submit", input="not json")
    assert bad_hook.returncode == 1 and "stdin is not JSON" in bad_hook.stderr
    usage = run_cli("--vault", str(vault), "search")
    assert usage.returncode == 2 and "Missing argument" in usage.stderr
