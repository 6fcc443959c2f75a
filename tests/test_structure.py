"""Project rules that code review would otherwise have to remember."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "daemon/brainiac"

# One module imports each third-party library, so swapping one touches one file.
OWNERS = {
    # The index and its scorer (index_scoring.py reads its matchers): one seam, replaced together.
    "whoosh": {"index.py", "index_scoring.py"},
    "watchdog": {"watcher.py"},
    "apscheduler": {"scheduler.py"},
    "frontmatter": {"note.py"},
    "yaml": {"note.py"},
    "markdown_it": {"note.py"},
    "click": {"cli.py"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_each_library_is_imported_by_its_one_module() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for library in _imports(path) & set(OWNERS):
            assert rel in OWNERS[library], f"{rel} imports {library}; only {OWNERS[library]} may"


def test_the_code_refers_only_to_files_in_the_repository() -> None:
    # A reader of the code has the repository, not the notes it was first written from: a fact
    # the code relies on is written down in docs/ (docs/foundations.md), and linked there.
    outside = re.compile(r"(?<![\w.])\.\./[\w.-]+/|/work/|/home/\w")
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not outside.search(line), f"{path.name}:{number} points outside: {line.strip()}"
    for number, line in enumerate(_package_text().splitlines(), 1):
        for link in re.finditer(r"(?<![\w/])docs/[\w.-]+\.md", line):
            if re.search(r"[\w.-]+/[\w.-]+ $", line[: link.start()]):
                continue  # another repository's file, named with it ("owner/repo docs/x.md")
            assert (ROOT / link.group()).is_file(), f"line {number}: no {link.group()}: {line}"


def _package_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py")))


def test_only_the_cli_prints() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ("cli.py",):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
        ]
        assert not calls, f"{path.name} calls print()"


def test_the_wheel_ships_the_vault_template(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        timeout=300,
        capture_output=True,
    )
    [wheel] = tmp_path.glob("brainiac-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    template = {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "vault_template").rglob("*") if p.is_file()
    }
    assert template
    for rel in template:
        assert f"brainiac/{rel}" in names, f"{rel} is missing from the wheel"
