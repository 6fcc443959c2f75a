"""The real CLI, its click command called in this process (what it prints, its exit status; the
process boundary is test_entry.py's and test_lean_start.py's): the issue's walk-through and every
bad input it names."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import click
import pytest

from brainiac.interfaces.cli.root import cli
from conftest import run_cli

HEADINGS = [
    "## Core Identity",
    "## Short-Term Memory",
    "## Relevant Long-Term Memory",
    "## User Prompt",
]


def _ok(*args: str, input: str | None = None) -> str:
    # What a command prints: the CLI in this process (the process boundary has its own tests,
    # in test_entry.py and below, where run_cli spawns `python -m brainiac`).
    return run_cli(*args, input=input, check=True, in_process=True).stdout


def test_init_remember_context_search(tmp_path: Path) -> None:
    v = str(tmp_path / "v")
    assert "memory/short_term.md" in _ok("init", v)
    event_id = _ok(
        "--vault",
        v,
        "remember",
        "I parked the car on level 3 of the garage",
        "--role",
        "user",
        "--session",
        "errands",
        "--at",
        "2026-11-20T09:00",
    ).strip()
    assert re.fullmatch(r"\^e-[0-9a-f]{10}", event_id)
    identity = (tmp_path / "v/system/core_identity.md").read_text()
    prompt = "Where did I park the car, and what about the Atlas deadline?"
    out = _ok("--vault", v, "context", "--prompt", prompt, "--budget", "300")
    positions = [out.index(h) for h in HEADINGS]
    assert positions == sorted(positions)
    assert math.ceil(len(out) / 4) <= 300
    assert identity.split("-->\n", 1)[1].strip() in out  # identity whole
    assert out.rstrip("\n").endswith(prompt)  # prompt whole, last
    assert "I parked the car on level 3 of the garage" in out
    # A note edited by hand with a new word is found right after.
    note = tmp_path / "v/memory/long_term/anna-berg.md"
    note.write_text(note.read_text() + "\nAnna collects antique barometers.\n")
    found = _ok("--vault", v, "search", "barometers", "--json")
    assert [r["path"] for r in json.loads(found)] == ["memory/long_term/anna-berg.md"]
    assert event_id[1:] in _ok("--vault", v, "search", "garage level")


def test_vault_from_environment_and_context_json_and_write(tmp_path: Path) -> None:
    v = tmp_path / "v"
    _ok("init", str(v))
    env = {"BRAINIAC_VAULT": str(v)}
    assert run_cli("remember", "hello from env", env=env, in_process=True).returncode == 0
    data = json.loads(
        run_cli("context", "--json", "--write", "--prompt", "hi", env=env, in_process=True).stdout
    )
    assert data["tokens"] <= data["budget"] == 2000
    written = (v / "context/working_memory.md").read_text()
    assert written.startswith("---\ngenerated: true\n")
    assert data["text"] in written and "hello from env" in written


def test_a_hand_edited_working_memory_is_kept_aside(tmp_path: Path) -> None:
    v = tmp_path / "v"
    _ok("init", str(v))
    _ok("--vault", str(v), "context", "--write")
    wm = v / "context/working_memory.md"
    wm.write_text(wm.read_text() + "\nmy own line\n")
    proc = run_cli("--vault", str(v), "context", "--write", check=True, in_process=True)
    assert "edited by hand" in proc.stderr
    [aside] = list((v / "context").glob("working_memory.edited-*.md"))
    assert aside.read_text().endswith("\nmy own line\n")
    assert "my own line" not in wm.read_text()


def test_init_never_overwrites(tmp_path: Path) -> None:
    v = tmp_path / "v"
    _ok("init", str(v))
    identity = v / "system/core_identity.md"
    identity.write_text("mine")
    assert _ok("init", str(v)) == ""
    assert identity.read_text() == "mine"


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def test_init_refuses_a_folder_of_other_files_unless_forced(tmp_path: Path) -> None:
    # `git clone` of some project into ~/brainiac, the default vault path.
    checkout = tmp_path / "brainiac"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".git/HEAD").write_text("ref: refs/heads/main\n")
    (checkout / "README.md").write_text("# a project\n")
    (checkout / "daemon").mkdir()
    before = _tree(checkout)
    line = _error("--vault", str(checkout), "init")
    assert str(checkout) in line and "git checkout" in line and "--force" in line, line
    assert _tree(checkout) == before
    plain = tmp_path / "docs"
    plain.mkdir()
    (plain / "notes.txt").write_text("mine\n")
    line = _error("init", str(plain))
    assert str(plain) in line and "not a brainiac vault" in line and "--force" in line, line
    assert _tree(plain) == {"notes.txt": b"mine\n"}
    # Asked for: the vault's files go beside the others, which stay as they were.
    assert "memory/short_term.md" in _ok("init", str(plain), "--force")
    assert (plain / "notes.txt").read_text() == "mine\n"
    assert (plain / "memory/long_term/anna-berg.md").exists()


def test_init_accepts_an_empty_folder_a_fresh_repository_and_a_vault(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "memory/short_term.md" in _ok("init", str(empty))
    fresh = tmp_path / "fresh"
    (fresh / ".git").mkdir(parents=True)  # `git init` first, then the vault
    assert "memory/short_term.md" in _ok("init", str(fresh))
    assert _ok("init", str(empty)) == ""


def test_init_again_adds_only_the_missing_structure_never_the_examples(tmp_path: Path) -> None:
    v = tmp_path / "v"
    _ok("init", str(v))
    (v / "memory/long_term/anna-berg.md").unlink()  # deleted by the person
    (v / "memory/archive/notes").mkdir()
    (v / "memory/long_term/project-atlas.md").rename(v / "memory/archive/notes/project-atlas.md")
    (v / ".brainiac/config.toml").unlink()
    (v / "inbox").rmdir()
    made = json.loads(_ok("init", str(v), "--json"))["created"]
    assert made == [".brainiac/config.toml"]
    assert (v / "inbox").is_dir()
    assert sorted(p.name for p in (v / "memory/long_term").iterdir()) == []
    (v / "memory/short_term.md").unlink()
    (v / "system/core_identity.md").unlink()
    assert json.loads(_ok("init", str(v), "--json"))["created"] == [
        "memory/short_term.md",
        "system/core_identity.md",
    ]
    assert not (v / "memory/long_term/anna-berg.md").exists()


def _error(*args: str) -> str:
    proc = run_cli(*args, in_process=True)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_missing_vault_is_one_line_with_the_fix(tmp_path: Path) -> None:
    line = _error("--vault", str(tmp_path / "nope"), "context")
    assert "no such vault" in line and "brainiac init" in line


def test_a_folder_that_is_not_a_vault(tmp_path: Path) -> None:
    line = _error("--vault", str(tmp_path), "search", "x")
    assert "is not a brainiac vault" in line


def test_a_project_with_memory_and_system_folders_is_no_vault_to_open_or_init(
    tmp_path: Path,
) -> None:
    # Opening a folder and `init` judge it by the same rule: folders by these names are common.
    checkout = tmp_path / "project"
    (checkout / "memory").mkdir(parents=True)
    (checkout / "system/boot.cfg").parent.mkdir()
    (checkout / "system/boot.cfg").write_text("quiet\n")
    before = _tree(checkout)
    for args in (("--vault", str(checkout), "remember", "x"), ("init", str(checkout))):
        line = _error(*args)
        assert str(checkout) in line and "not a brainiac vault" in line, line
        assert _tree(checkout) == before


@pytest.mark.parametrize("budget", ["0", "-5", "99999999999"])
def test_absurd_budget(tmp_path: Path, budget: str) -> None:
    _ok("init", str(tmp_path / "v"))
    line = _error("--vault", str(tmp_path / "v"), "context", "--budget", budget)
    assert "budget" in line


def test_empty_remember_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    v = tmp_path / "v"
    _ok("init", str(v))
    before = (v / "memory/short_term.md").read_bytes()
    assert "empty" in _error("--vault", str(v), "remember", "   ")
    assert (v / "memory/short_term.md").read_bytes() == before


def test_bad_notes_are_skipped_reported_and_untouched(tmp_path: Path) -> None:
    v = tmp_path / "v"
    _ok("init", str(v), "--help")  # --help on a subcommand prints help only
    _ok("init", str(v))
    lt = v / "memory/long_term"
    bad = {
        "yaml.md": b"---\ntitle: [unclosed\n---\nbody with wombat\n",
        "latin1.md": "caf\xe9 wombat\n".encode("latin-1"),
        "binary.md": b"\x00\x01\x02 wombat",
        "huge.md": b"wombat " * 200_000,
    }
    for name, data in bad.items():
        (lt / name).write_bytes(data)
    outside = tmp_path / "outside.md"
    outside.write_text("wombat secret outside the vault")
    os.symlink(outside, lt / "link.md")
    (lt / "good.md").write_text("---\ntitle: Good\n---\nA wombat lives here.\n")
    status = json.loads(_ok("--vault", str(v), "status", "--json"))
    problems = status["problems"]
    assert set(problems) == {f"memory/long_term/{n}" for n in bad}
    assert re.search(r", line \d+: ", problems["memory/long_term/yaml.md"])
    assert "not valid YAML" in problems["memory/long_term/yaml.md"]
    assert "not UTF-8" in problems["memory/long_term/latin1.md"]
    assert "binary" in problems["memory/long_term/binary.md"]
    assert "max_note_bytes" in problems["memory/long_term/huge.md"]
    hits = json.loads(_ok("--vault", str(v), "search", "wombat", "--json"))
    assert [h["path"] for h in hits] == ["memory/long_term/good.md"]
    for name, data in bad.items():
        assert (lt / name).read_bytes() == data
    assert outside.read_text() == "wombat secret outside the vault"


def test_missing_core_identity_warns_but_assembles(tmp_path: Path) -> None:
    v = tmp_path / "v"
    _ok("init", str(v))
    (v / "system/core_identity.md").unlink()
    proc = run_cli("--vault", str(v), "context", "--prompt", "hello", check=True, in_process=True)
    assert "core_identity.md is missing" in proc.stderr
    assert all(h in proc.stdout for h in HEADINGS)


def test_bad_time_is_a_usage_error(tmp_path: Path) -> None:
    _ok("init", str(tmp_path / "v"))
    proc = run_cli(
        "--vault", str(tmp_path / "v"), "remember", "x", "--at", "yesterday", in_process=True
    )
    assert proc.returncode == 2 and "ISO-8601" in proc.stderr


def _commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    out = []
    for name, command in group.commands.items():
        out.append(((*path, name), command))
        if isinstance(command, click.Group):
            out += _commands(command, (*path, name))
    return out


def test_every_command_of_the_cli_package_is_reachable_from_brainiac() -> None:
    # The commands live in one module per group of them (cli/*_commands.py); root.py adds each
    # to the group, and a command defined but not added would be missing from the CLI unnoticed.
    import importlib
    import pkgutil

    import brainiac.interfaces.cli

    reachable = {id(command) for _, command in _commands(cli)}
    found = {
        f"{info.name}.{name}": value
        for info in pkgutil.iter_modules(brainiac.interfaces.cli.__path__)
        for name, value in vars(
            importlib.import_module(f"brainiac.interfaces.cli.{info.name}")
        ).items()
        if isinstance(value, click.Command) and value is not cli
    }
    assert len(found) >= 20  # the command modules were all read (27 commands and subgroups)
    missing = sorted(name for name, command in found.items() if id(command) not in reachable)
    assert not missing, f"commands not added to the brainiac group (cli/root.py): {missing}"


def test_every_command_has_help_and_a_docs_entry() -> None:
    docs = (Path(__file__).parents[1] / "docs/cli.md").read_text()
    for path, command in _commands(cli):
        name = " ".join(path)
        assert command.help and command.help.strip(), name
        assert f"## brainiac {name}\n" in docs, f"docs/cli.md has no entry for `brainiac {name}`"
        assert run_cli(*path, "--help", in_process=True).returncode == 0
