"""The Claude Code hook recipe (docs/hooks.md): real-shaped hook events through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import run_cli

SAMPLE = (
    Path(__file__).parent / "samples" / "imports" / "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27.jsonl"
)


def _event(name: str, transcript: Path, **extra: str) -> str:
    """The JSON Claude Code passes on a hook's stdin (common fields plus the event's own)."""
    return json.dumps(
        {
            "session_id": "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27",
            "transcript_path": str(transcript),
            "cwd": str(transcript.parent),
            "permission_mode": "default",
            "hook_event_name": name,
            **extra,
        }
    )


def test_user_prompt_submit_prints_the_memory_relevant_to_the_prompt(
    vault: Path, tmp_path: Path
) -> None:
    run_cli("--vault", str(vault), "remember", "The Orion launch moved to 3 March.", check=True)
    event = _event("UserPromptSubmit", tmp_path / "t.jsonl", prompt="When is the Orion launch?")
    done = run_cli("--vault", str(vault), "hook", "user-prompt-submit", input=event)
    assert done.returncode == 0, done.stderr
    assert "## Core Identity" in done.stdout
    assert "The Orion launch moved to 3 March." in done.stdout
    assert done.stdout.rstrip().endswith("When is the Orion launch?")
    assert len(done.stdout) < 10_000  # Claude Code passes up to 10,000 characters on whole


def test_the_stop_hook_imports_the_transcript_and_every_later_turn_once(
    vault: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / SAMPLE.name
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    first = run_cli("--vault", str(vault), "hook", "stop", input=_event("Stop", transcript))
    assert first.returncode == 0, first.stderr
    assert first.stdout == ""  # nothing for the model; the count goes to stderr
    shutil.copyfile(SAMPLE, transcript)  # the session went on
    later = run_cli("--vault", str(vault), "hook", "stop", input=_event("Stop", transcript))
    again = run_cli(
        "--vault",
        str(vault),
        "hook",
        "session-end",
        input=_event("SessionEnd", transcript, reason="prompt_input_exit"),
    )
    assert later.returncode == 0 and again.returncode == 0
    counts = [int(p.stderr.split()[1]) for p in (first, later, again)]
    assert counts[0] > 0 and counts[1] > 0 and counts[2] == 0
    whole = run_cli("--vault", str(vault), "import", "--dry-run", "--json", str(SAMPLE))
    report = json.loads(whole.stdout)[0]
    assert report["new"] == 0 and report["duplicate"] == counts[0] + counts[1]


def test_a_hook_never_blocks_the_prompt_on_bad_input(vault: Path, tmp_path: Path) -> None:
    # Claude Code reads exit status 2 from UserPromptSubmit as "block the prompt": never that.
    for args, stdin in (
        (("hook", "user-prompt-submit"), "not json"),
        (("hook", "user-prompt-submit"), "[1, 2]"),
        (("hook", "user-prompt-submit"), _event("UserPromptSubmit", tmp_path / "t.jsonl")),
        (("hook", "stop"), _event("Stop", tmp_path / "missing.jsonl")),
        (("hook", "stop"), json.dumps({"hook_event_name": "Stop", "transcript_path": 7})),
    ):
        done = run_cli("--vault", str(vault), *args, input=stdin)
        assert done.returncode == 1, (args, stdin, done.returncode, done.stderr)
        assert done.stdout == ""
        assert done.stderr.startswith("brainiac: ") and len(done.stderr.splitlines()) == 1
