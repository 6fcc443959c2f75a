"""The Claude Code hook recipe (docs/hooks.md): real-shaped hook events through the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from brainiac import Memory
from brainiac.api import hooks
from brainiac.search.context import approx_tokens
from conftest import run_cli
from test_socket import _serving, _stats, quiet_vault

SAMPLE = (
    Path(__file__).parent / "samples" / "imports" / "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27.jsonl"
)
SAMPLE_LAST = "c0a80114-0000-4000-8000-000000000023"  # the sample's last message: a turn's parent


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


def _stop(vault: Path, transcript: Path, **options: Any) -> subprocess.CompletedProcess[str]:
    """`brainiac hook stop` for the session whose transcript is `transcript` (run_cli's options)."""
    return run_cli(
        "--vault", str(vault), "hook", "stop", input=_event("Stop", transcript), **options
    )


def test_user_prompt_submit_prints_the_memory_relevant_to_the_prompt(
    vault: Path, tmp_path: Path
) -> None:
    run_cli(
        "--vault",
        str(vault),
        "remember",
        "The Orion launch moved to 3 March.",
        check=True,
        in_process=True,
    )
    event = _event("UserPromptSubmit", tmp_path / "t.jsonl", prompt="When is the Orion launch?")
    done = run_cli("--vault", str(vault), "hook", "user-prompt-submit", input=event)
    assert done.returncode == 0, done.stderr
    assert "## Core Identity" in done.stdout
    assert "The Orion launch moved to 3 March." in done.stdout
    # Claude Code has the prompt: the hook adds the memory, not a second copy of the prompt
    assert "When is the Orion launch?" not in done.stdout and "## User Prompt" not in done.stdout
    assert len(done.stdout) < 10_000  # Claude Code passes up to 10,000 characters on whole


def _pasted_log(question: str, size: int = 70_000) -> str:
    """A prompt of `size` characters: a pasted log, then the person's question about something
    else, as the last line."""
    lines, length, i = [], 0, 0
    while length < size:
        line = (
            f"2026-11-28T22:{i % 60:02d}:{i % 57:02d} WARN gateway shard {i % 8}: upstream "
            f"socket {i % 12} reset, backoff {i % 90}ms, attempt {i % 3} of 5"
        )
        lines.append(line)
        length += len(line) + 1
        i += 1
    log = "\n".join(lines)[: size - len(question) - 2]
    return f"{log}\n\n{question}"


def test_the_prompt_hook_prints_the_memory_within_its_budget_and_never_the_prompt(
    tmp_path: Path,
) -> None:
    # A pasted log of 70,000 characters came back whole: 70,000 of the hook's characters for a
    # prompt Claude Code holds already, over any budget, and the memory squeezed out of it.
    vault = quiet_vault(tmp_path)
    (vault / "memory/long_term/orion-launch.md").write_text(
        "---\ntitle: Orion launch\n---\n## Summary\n"
        "The Orion satellite launch moved to 3 March, from the pad in Kourou.\n",
        encoding="utf-8",
    )
    prompts = {
        "pasted log": _pasted_log("And when is the Orion launch now?"),
        "short": "When is the Orion launch?",
    }
    assert len(prompts["pasted log"]) == 70_000
    budget = 1500
    events = {
        name: _event("UserPromptSubmit", tmp_path / "t.jsonl", prompt=prompt)
        for name, prompt in prompts.items()
    }
    args = ("--vault", str(vault), "hook", "user-prompt-submit", "--budget", str(budget))
    alone = {
        name: run_cli(*args, input=event, env={"BRAINIAC_SOCKET": "off"})
        for name, event in events.items()
    }
    for name, done in alone.items():
        assert done.returncode == 0, (name, done.stderr)
        out = done.stdout
        assert "## User Prompt" not in out, name
        assert prompts[name].splitlines()[-1] not in out, name  # not the question ...
        assert "WARN gateway shard" not in out, name  # ... nor a line of the log
        assert approx_tokens(out) <= budget, (name, approx_tokens(out))
        assert out.startswith("## Core Identity\n"), name
        assert "Anna moved the Atlas review to Thursday" in out, name  # the recent event
        # the note the question is about, though the question is the log's last line
        assert "from the pad in Kourou" in out, name
    with _serving(vault, tmp_path):
        for name, event in events.items():
            before = _stats(vault)["stats"]["answered"]
            done = run_cli(*args, input=event)
            assert _stats(vault)["stats"]["answered"] == before + 1, name  # the daemon answered
            assert (done.stdout, done.stderr, done.returncode) == (
                alone[name].stdout,
                alone[name].stderr,
                alone[name].returncode,
            ), name


def test_a_long_prompt_is_searched_by_its_start_and_its_end() -> None:
    paste = " ".join(f"frame{i}" for i in range(20_000))
    for prompt in (f"Why does the Orion build fail? {paste}", f"{paste} Why does it fail? Orion"):
        searched = hooks.search_prompt(prompt)
        assert len(searched) <= hooks.SEARCH_PROMPT_CHARS
        assert "Orion" in searched and "Why" in searched
        assert "frame10000" not in searched  # the middle of the paste
        # no word cut in two: every word searched is a word of the prompt
        assert set(searched.split()) <= set(prompt.split())
    typed = "When is the Orion launch? " * 76  # what a person types is searched whole
    assert len(typed) <= hooks.SEARCH_PROMPT_CHARS and hooks.search_prompt(typed) == typed


def test_the_stop_hook_imports_the_transcript_and_every_later_turn_once(
    vault: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / SAMPLE.name
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    first = _stop(vault, transcript)
    assert first.returncode == 0, first.stderr
    assert first.stdout == ""  # nothing for the model; the count goes to stderr
    shutil.copyfile(SAMPLE, transcript)  # the session went on
    later = _stop(vault, transcript)
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
    whole = run_cli(
        "--vault", str(vault), "import", "--dry-run", "--json", str(SAMPLE), in_process=True
    )
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


def _turn(n: int, parent: str) -> tuple[str, list[str]]:
    """One more turn of the session, shaped as Claude Code appends it: a prompt and an answer."""
    session = "7f3c2a9e-1b4d-4e21-9a55-0c8d2e6f1b27"
    common = {"isSidechain": False, "userType": "external", "cwd": "/home/anna/src/shop"}
    common |= {"sessionId": session, "version": "2.0.28", "gitBranch": "main"}
    asked, answered = (
        f"d0b00000-0000-4000-8000-{2 * n:012d}",
        f"d0b00000-0000-4000-8000-{2 * n + 1:012d}",
    )
    at = f"2025-10-29T{8 + n // 60:02d}:{n % 60:02d}:00.000Z"
    prompt = f"Turn {n}: does the retry in step {n} of the login flow still time out?"
    answer = f"Turn {n}: step {n} waits for the session cookie now; the retry no longer times out."
    user = {
        "parentUuid": parent,
        **common,
        "type": "user",
        "message": {"role": "user", "content": prompt},
        "uuid": asked,
        "timestamp": at,
    }
    assistant = {
        "parentUuid": asked,
        **common,
        "type": "assistant",
        "message": {
            "id": f"msg_turn{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": answer}],
            "stop_reason": "end_turn",
        },
        "uuid": answered,
        "timestamp": at,
        "requestId": f"req_turn{n:04d}",
    }
    return answered, [json.dumps(user) + "\n", json.dumps(assistant) + "\n"]


def _sample_copy(tmp_path: Path) -> Path:
    """The sample session's transcript, as Claude Code's copy of it that later turns grow."""
    transcript = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, transcript)
    return transcript


def _append_turn(transcript: Path, n: int, parent: str) -> str:
    """The session goes on: turn `n` (after the message `parent`) written to the transcript;
    returns the id of its last message."""
    parent, lines = _turn(n, parent)
    with transcript.open("a", encoding="utf-8") as f:
        f.writelines(lines)
    return parent


def test_fifty_stop_hooks_keep_one_archived_copy_grown_in_place(
    vault: Path, tmp_path: Path
) -> None:
    # Claude Code runs the Stop hook after every answer, on a transcript that only grows.
    transcript = _sample_copy(tmp_path)
    parent = SAMPLE_LAST
    counts = []
    for n in range(50):
        if n:
            parent = _append_turn(transcript, n, parent)
        raw = _event("Stop", transcript)
        if 3 <= n < 47:
            # The middle turns in-process, through the hook's own function (50 real CLI runs
            # take a minute or two on a busy 2-core machine); the first and last ones as Claude
            # Code runs them.
            with Memory(vault) as memory:
                report = hooks.import_transcript(memory, hooks.Payload.parse(raw, "Stop"))
            counts.append(report.new)
            continue
        done = run_cli("--vault", str(vault), "hook", "stop", input=raw)
        assert done.returncode == 0, done.stderr
        counts.append(int(done.stderr.split()[1]))
    exports = sorted((vault / "memory/archive/exports").iterdir())
    assert len(exports) == 1, [p.name for p in exports]
    assert exports[0].read_bytes() == transcript.read_bytes()
    assert counts[0] > 0 and all(c == 2 for c in counts[1:])  # each turn's two messages, once
    whole = run_cli(
        "--vault", str(vault), "import", "--dry-run", "--json", str(transcript), in_process=True
    )
    report = json.loads(whole.stdout)[0]
    assert report["new"] == 0 and report["duplicate"] == sum(counts)


def test_a_forgotten_transcript_copy_stays_a_placeholder_as_the_session_goes_on(
    vault: Path, tmp_path: Path
) -> None:
    transcript = _sample_copy(tmp_path)
    parent = SAMPLE_LAST
    for n in range(3):
        if n:
            parent = _append_turn(transcript, n, parent)
        _stop(vault, transcript, check=True, in_process=True)
    run_cli(
        "--vault",
        str(vault),
        "forget",
        "--matching",
        "step 2 waits",
        "--yes",
        check=True,
        in_process=True,
    )
    [kept] = (vault / "memory/archive/exports").iterdir()
    assert kept.read_bytes().startswith(b"brainiac forget: ")
    for n in range(3, 5):  # the transcript in ~/.claude still holds what was forgotten
        parent = _append_turn(transcript, n, parent)
        done = _stop(vault, transcript)
        assert done.returncode == 0 and int(done.stderr.split()[1]) == 2, done.stderr
    assert list((vault / "memory/archive/exports").iterdir()) == [kept]
    assert kept.read_bytes().startswith(b"brainiac forget: ")
    found = run_cli(
        "--vault", str(vault), "search", "cookie", "--json", check=True, in_process=True
    ).stdout
    assert "Turn 4:" in found and "step 2 waits" not in found


def test_a_kept_copy_edited_by_a_person_is_left_and_the_transcript_kept_beside_it(
    vault: Path, tmp_path: Path
) -> None:
    transcript = _sample_copy(tmp_path)
    _stop(vault, transcript, check=True, in_process=True)
    [kept] = (vault / "memory/archive/exports").iterdir()
    edited = kept.read_bytes().replace(b"one run in five", b"one run in six")
    kept.write_bytes(edited)
    parent = SAMPLE_LAST
    for n in (1, 2):
        parent = _append_turn(transcript, n, parent)
        _stop(vault, transcript, check=True, in_process=True)
    assert kept.read_bytes() == edited  # the person's edit wins
    beside = sorted(set((vault / "memory/archive/exports").iterdir()) - {kept})
    assert [p.name for p in beside] == [kept.name.replace(".jsonl", "-2.jsonl")]
    assert beside[0].read_bytes() == transcript.read_bytes()  # and it grows in place


def _damaged_transcript(tmp_path: Path) -> tuple[Path, list[bytes], bytes, bytes]:
    """The sample transcript with a line cut by a crash (line 2: the session went on after it)
    and a line that is not UTF-8 (line 12), the next prompt's line half written at its end:
    (its path, the complete lines, the prompt's line, the answer's line)."""
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    _, turn = _turn(1, SAMPLE_LAST)
    torn = turn[0].encode()[:70] + b"\n"
    latin = json.dumps({**json.loads(turn[0]), "uuid": "d0b00000-0000-4000-8000-0000000000ff"})
    latin_line = latin.replace("Turn 1:", "Caf\u00e9:").encode("latin-1") + b"\n"
    written = [lines[0], torn, *lines[1:10], latin_line, *lines[10:]]
    user, answer = (line.encode() for line in turn)
    transcript = tmp_path / SAMPLE.name
    transcript.write_bytes(b"".join(written) + user[:90])
    return transcript, written, user, answer


def _undamaged_dry_run(vault: Path, tmp_path: Path, *more: bytes) -> dict[str, int]:
    """What importing the sample transcript, undamaged, and `more` lines would add now."""
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(SAMPLE.read_bytes() + b"".join(more))
    done = run_cli(
        "--vault", str(vault), "import", "--dry-run", "--json", str(whole), in_process=True
    )
    report: dict[str, int] = json.loads(done.stdout)[0]
    return report


def test_a_damaged_transcript_line_is_skipped_and_reported_once(
    vault: Path, tmp_path: Path
) -> None:
    transcript, written, user, answer = _damaged_transcript(tmp_path)
    first = _stop(vault, transcript)
    assert first.returncode == 1 and first.stdout == ""  # shown to the person, never blocking
    count_line, torn_report, latin_report = first.stderr.splitlines()  # not the half line
    clean = run_cli(
        "--vault", str(vault), "import", "--dry-run", "--json", str(SAMPLE), in_process=True
    )
    counted = json.loads(clean.stdout)[0]
    assert (counted["new"], counted["duplicate"]) == (0, int(count_line.split()[1]))
    assert torn_report.startswith(f"brainiac: {transcript}, line 2: not valid JSON (")
    assert latin_report.startswith(f"brainiac: {transcript}, line 12: not UTF-8 text (byte 0xe9")
    [kept] = (vault / "memory/archive/exports").iterdir()
    assert kept.read_bytes() == b"".join(written)  # what was read: complete lines only

    with transcript.open("ab") as f:
        f.write(user[90:] + answer)  # the line is complete, and the answer follows it
    later = _stop(vault, transcript)
    again = _stop(vault, transcript)
    assert (later.returncode, again.returncode) == (0, 0), later.stderr + again.stderr
    assert later.stderr.startswith("brainiac: 2 new message(s)")  # the damage is not repeated
    assert again.stderr.startswith("brainiac: 0 new message(s)")
    assert len(later.stderr.splitlines()) == len(again.stderr.splitlines()) == 1
    assert [p.name for p in (vault / "memory/archive/exports").iterdir()] == [kept.name]
    assert kept.read_bytes() == transcript.read_bytes()
    report = _undamaged_dry_run(vault, tmp_path, user, answer)
    assert (report["new"], report["duplicate"]) == (0, int(count_line.split()[1]) + 2)


def test_a_stop_killed_on_a_damaged_transcript_reports_the_damage_on_the_next_stop(
    vault: Path, tmp_path: Path
) -> None:
    transcript, _, user, answer = _damaged_transcript(tmp_path)
    killed = _stop(vault, transcript, env={"BRAINIAC_FAULT": "import.intent-written"})
    assert killed.returncode == -9, killed.stderr  # died before it could report anything
    with transcript.open("ab") as f:
        f.write(user[90:] + answer)
    rerun = _stop(vault, transcript)
    assert rerun.returncode == 1
    reported = [r.split(": ", 2)[1] for r in rerun.stderr.splitlines()[1:]]
    assert reported == [f"{transcript}, line 2", f"{transcript}, line 12"]
    [kept] = (vault / "memory/archive/exports").iterdir()
    assert kept.read_bytes() == transcript.read_bytes()
    report = _undamaged_dry_run(vault, tmp_path, user, answer)
    assert report["new"] == 0 and report["duplicate"] > 2


def test_a_stop_before_the_first_line_is_written_keeps_nothing(vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / SAMPLE.name
    transcript.write_bytes(SAMPLE.read_bytes()[:50])  # the first line, half written
    done = _stop(vault, transcript)
    assert (done.returncode, done.stderr) == (0, f"brainiac: 0 new message(s) from {SAMPLE.name}\n")
    assert not list((vault / "memory/archive/exports").glob("*"))
    shutil.copyfile(SAMPLE, transcript)
    _stop(vault, transcript, check=True, in_process=True)
    [kept] = (vault / "memory/archive/exports").iterdir()
    assert kept.read_bytes() == SAMPLE.read_bytes()
