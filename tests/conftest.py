"""Shared fixtures: every test gets its own XDG directories, a fresh vault, and a thread check."""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from brainiac import Memory

# tmpfs where the machine has one: every vault write is fsynced (store/safe_io.py), and on a disk
# those waits are most of the suite's wall time. The code under test runs as it does anywhere
# (fsync is called, only cheap); tests marked `on_disk` keep their files on the disk's temp dir.
SHM = Path("/dev/shm")


def pytest_configure(config: pytest.Config) -> None:
    """Put pytest's temp root on tmpfs unless a --basetemp or a temp root was chosen."""
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    if SHM.is_dir() and os.access(SHM, os.W_OK | os.X_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(SHM)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first, each followed by a quick one: the workers (pytest-xdist, addopts in
    pyproject.toml) take two tests each to start with, so each starts on a different slow test
    and the quick ones fill in around them, instead of one worker meeting several at the end."""
    slow = [item for item in items if item.get_closest_marker("slow")]
    quick = [item for item in items if not item.get_closest_marker("slow")]
    ordered: list[pytest.Item] = []
    for item in slow:
        ordered.append(item)
        if quick:
            ordered.append(quick.pop(0))
    items[:] = ordered + quick


FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.failed:
        item.stash[FAILED] = True
    return report


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """pytest's tmp_path, or for a test marked `on_disk` (the crash and race harnesses, where the
    time a write spends in fsync shapes what they test) a folder in the disk's temp dir, kept
    when the test fails, as pytest keeps its own."""
    if request.node.get_closest_marker("on_disk") is None:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix=f"brainiac-{request.node.name[:40]}-"))
    yield folder
    if not request.node.stash.get(FAILED, False):
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def xdg_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Keep the index, state and config of every test inside its tmp_path, never in $HOME."""
    env = {}
    for var, name in (
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_RUNTIME_DIR", "run"),
    ):
        path = tmp_path / "xdg" / name
        path.mkdir(parents=True, mode=0o700)
        monkeypatch.setenv(var, str(path))
        env[var] = str(path)
    monkeypatch.delenv("BRAINIAC_VAULT", raising=False)
    for key in list(os.environ):
        if key.startswith("BRAINIAC_"):
            monkeypatch.delenv(key)
    return env


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """Fail a test that leaves a thread running (observers and writers must be stopped)."""
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    for t in leaked:
        t.join(timeout=5)
    still = [t.name for t in leaked if t.is_alive()]
    assert not still, f"threads left running: {still}"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    Memory.init(path)
    return path


@pytest.fixture
def memory(vault: Path) -> Iterator[Memory]:
    # refresh_interval_s=0: every read reconciles, as a person's edit between calls must be seen
    with Memory(vault, refresh_interval_s=0) as m:
        yield m


def run_cli(
    *args: str,
    input: str | None = None,
    check: bool = False,
    env: dict[str, str] | None = None,
    in_process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """The real CLI as a subprocess, with the test's environment (its XDG dirs). `in_process`:
    the same click command called in this process, for a test that checks only what a command
    prints and leaves behind: no process boundary (exit codes of the daemon's fast path in
    entry.py, signals, the lean start, stdin's bytes) is under test there."""
    if in_process:
        proc = _in_process(list(args), input, env or {})
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "brainiac", *args],
            input=input,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**os.environ, **(env or {})},
            timeout=120,
        )
    if check and proc.returncode != 0:
        raise AssertionError(f"brainiac {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return proc


def _in_process(
    args: list[str], input: str | None, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """`brainiac ARGS` through click's CliRunner, leaving this process as it found it: the
    CLI's umask (root.main's), its own logging handler on stderr (pytest's handlers would keep
    basicConfig from adding it, and a warning from reaching the result), env and cwd."""
    from click.testing import CliRunner

    from brainiac.interfaces.cli.root import cli

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    for handler in handlers:
        root.removeHandler(handler)
    umask = os.umask(0o077)
    cwd = os.getcwd()
    try:
        result = CliRunner().invoke(
            cli, args, input=input, env=env, obj={"daemon_asked": False}, catch_exceptions=False
        )
    finally:
        os.chdir(cwd)
        os.umask(umask)
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
    return subprocess.CompletedProcess(
        ["brainiac", *args], result.exit_code, result.stdout, result.stderr
    )


def load_benchmark(name: str) -> ModuleType:
    """A harness in benchmarks/ (not a package), for its short version in the tests."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def remember_steps(vault: Path, n: int = 13, check: bool = False) -> None:
    """`n` events through the real CLI, a minute apart from 2026-11-01 09:00: with the default
    window of 10, a jobs run at 10:00 has the first three to promote. In this process: a test's
    setup, what the tests check is the files it leaves."""
    for i in range(n):
        run_cli(
            "--vault",
            str(vault),
            "remember",
            f"Step {i}: tiling the bathroom floor",
            "--at",
            f"2026-11-01T09:{i:02d}",
            check=check,
            in_process=True,
        )
