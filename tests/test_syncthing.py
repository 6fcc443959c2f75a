"""Two devices, one vault, through real Syncthing: two Syncthing instances (Debian's `syncthing`,
on loopback, no discovery, relays or NAT), two vault copies, two brainiac daemons, each with its
own index and state.

Both devices remember events at once (each in its own process, as each device's agent would),
a note is edited by hand on both sides, and the jobs run on both, where only the device named in
the vault's `[jobs] device` acts. After Syncthing has converged, on both devices: every event is
written once, every hand edit is in the note or in a conflict copy kept beside it and reported,
every file parses, and both indexes answer a search the same way. The second test keeps one
device offline while the other works through a simulated week (the jobs' `now` advances), then
reconnects it. docs/multi-device.md describes this setup.

Skipped when `syncthing` is not installed, except in CI (`CI=true`), where .ci/run installs it
(.ci/install-syncthing) and a missing binary is a failure. Each test takes one to three minutes
(two Syncthing and two daemon starts, hundreds of CLI and writer processes, two convergences),
over the suite's default timeout on a busy machine, so they have their own.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from brainiac import Memory
from brainiac.formats import events as ev
from brainiac.formats import note as notes
from brainiac.formats import stm, sync_merge
from brainiac.store.vault import SHORT_TERM, is_conflict_copy
from conftest import run_cli
from helpers import JOBS_OFF, run_daemon, stop, wait_for

# On PATH, or unpacked by .ci/install-syncthing where it could not install the package.
_UNPACKED = Path(__file__).resolve().parent.parent / ".ci/tools/syncthing/usr/bin/syncthing"
SYNCTHING = shutil.which("syncthing") or (str(_UNPACKED) if _UNPACKED.is_file() else None)
if SYNCTHING is None and os.environ.get("CI") == "true":
    raise RuntimeError(
        "CI must have syncthing: .ci/run installs it (.ci/install-syncthing); see the "
        "installer's log above for why it is missing"
    )
pytestmark = [
    pytest.mark.skipif(
        SYNCTHING is None, reason="syncthing is not installed (.ci/install-syncthing)"
    ),
    pytest.mark.timeout(600),
    pytest.mark.slow,
    # One after the other on one worker, their vaults on the disk: each test runs two Syncthing
    # instances and two daemons whose convergence waits on scans and file events, and these
    # are the conditions the convergence checks hold in.
    pytest.mark.xdist_group("syncthing"),
    pytest.mark.on_disk,
]

FOLDER = "vault"
NOTE = "memory/long_term/project-atlas.md"
EVENTS = 200
CONVERGE_S = 120.0
SCORE_TOLERANCE = 0.1
_ID_RE = re.compile(rf"(?<!\\)\^({ev.ID})\b")
# Not synced (docs/multi-device.md): the working memory each daemon generates for its own device,
# and brainiac's temp files, which live a few milliseconds before they are renamed over a note.
STIGNORE = "/context\n(?d)*.brainiac-tmp\n"
# The daemon's scheduled jobs stay off: the test runs them by hand, at the simulated times.
DAEMON_ENV = {**JOBS_OFF, "BRAINIAC_RETRIEVAL_MEANING": "false"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Device:
    name: str
    root: Path
    vault: Path = field(init=False)
    env: dict[str, str] = field(init=False)
    home: Path = field(init=False)
    id: str = ""
    gui_port: int = field(default_factory=_free_port)
    port: int = field(default_factory=_free_port)
    api_key: str = ""
    syncthing: subprocess.Popen[bytes] | None = None
    daemon: subprocess.Popen[str] | None = None

    def __post_init__(self) -> None:
        self.vault = self.root / "vault"
        self.home = self.root / "syncthing"
        self.env = {"BRAINIAC_DEVICE": self.name}
        for var, sub in (
            ("XDG_CACHE_HOME", "cache"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_RUNTIME_DIR", "run"),
        ):
            path = self.root / "xdg" / sub
            path.mkdir(parents=True, mode=0o700)
            self.env[var] = str(path)

    def cli(self, *args: str) -> str:
        return run_cli("--vault", str(self.vault), *args, check=True, env=self.env).stdout

    def rest(self, path: str) -> dict[str, object]:
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.gui_port}{path}", headers={"X-API-Key": self.api_key}
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            data = json.loads(resp.read())
        assert isinstance(data, dict)
        return data


def _generate(device: Device) -> None:
    assert SYNCTHING is not None
    out = subprocess.run(
        [SYNCTHING, "generate", f"--home={device.home}", "--no-default-folder"],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Device ID: (\S+)", out.stdout + out.stderr)
    assert found, out.stdout + out.stderr
    device.id = found.group(1)
    key = re.search(r"<apikey>([^<]+)</apikey>", (device.home / "config.xml").read_text())
    assert key
    device.api_key = key.group(1)


def _configure(device: Device, peer: Device) -> None:
    """config.xml: loopback only, no discovery, relays, NAT, usage reports or upgrades; the peer
    at its static address; the vault shared with it, watched (1 s delay), conflicts all kept."""
    (device.home / "config.xml").write_text(
        f"""<configuration version="36">
    <folder id="{FOLDER}" label="{FOLDER}" path="{device.vault}" type="sendreceive"
            rescanIntervalS="10" fsWatcherEnabled="true" fsWatcherDelayS="1">
        <device id="{device.id}"></device>
        <device id="{peer.id}"></device>
        <minDiskFree unit="%">0</minDiskFree>
        <maxConflicts>-1</maxConflicts>
    </folder>
    <device id="{device.id}" name="{device.name}"><address>dynamic</address></device>
    <device id="{peer.id}" name="{peer.name}">
        <address>tcp://127.0.0.1:{peer.port}</address>
    </device>
    <gui enabled="true" tls="false">
        <address>127.0.0.1:{device.gui_port}</address>
        <apikey>{device.api_key}</apikey>
    </gui>
    <options>
        <listenAddress>tcp://127.0.0.1:{device.port}</listenAddress>
        <globalAnnounceEnabled>false</globalAnnounceEnabled>
        <localAnnounceEnabled>false</localAnnounceEnabled>
        <relaysEnabled>false</relaysEnabled>
        <natEnabled>false</natEnabled>
        <urAccepted>-1</urAccepted>
        <startBrowser>false</startBrowser>
        <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
        <crashReportingEnabled>false</crashReportingEnabled>
        <reconnectionIntervalS>1</reconnectionIntervalS>
        <minHomeDiskFree unit="%">0</minHomeDiskFree>
        <setLowPriority>false</setLowPriority>
    </options>
</configuration>
""",
        encoding="utf-8",
    )


def start_syncthing(device: Device) -> None:
    assert SYNCTHING is not None
    log = open(device.root / "syncthing.log", "ab")  # noqa: SIM115 - closed with the process
    device.syncthing = subprocess.Popen(
        [
            SYNCTHING,
            "serve",
            f"--home={device.home}",
            "--no-browser",
            "--no-restart",
            "--no-upgrade",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "STNOUPGRADE": "1", "STNODEFAULTFOLDER": "1"},
    )
    log.close()

    def up() -> bool:
        with contextlib.suppress(OSError):
            return device.rest("/rest/system/ping").get("ping") == "pong"
        return False

    wait_for(up, f"syncthing of {device.name} to answer", 30)


def stop_syncthing(device: Device) -> None:
    if device.syncthing is not None and device.syncthing.poll() is None:
        device.syncthing.terminate()
        try:
            device.syncthing.wait(timeout=15)
        except subprocess.TimeoutExpired:
            device.syncthing.kill()
            device.syncthing.wait()
    device.syncthing = None


@contextlib.contextmanager
def two_devices(tmp_path: Path) -> Iterator[tuple[Device, Device]]:
    """`desk` (which runs the jobs) with a new vault, `laptop` with an empty folder that Syncthing
    fills from it; both Syncthing instances running and converged, then a daemon on each."""
    desk, laptop = Device("desk", tmp_path / "desk"), Device("laptop", tmp_path / "laptop")
    Memory.init(desk.vault)
    config = desk.vault / ".brainiac/config.toml"
    text = config.read_text(encoding="utf-8").replace("[jobs]\n", '[jobs]\ndevice = "desk"\n')
    config.write_text(text, encoding="utf-8")
    laptop.vault.mkdir(parents=True)
    for device in (desk, laptop):
        (device.vault / ".stfolder").mkdir(exist_ok=True)  # Syncthing's folder marker
        (device.vault / ".stignore").write_text(STIGNORE, encoding="utf-8")
        _generate(device)
    _configure(desk, laptop)
    _configure(laptop, desk)
    try:
        for device in (desk, laptop):
            start_syncthing(device)
        wait_for(
            lambda: (laptop.vault / SHORT_TERM).exists() and _tree(desk) == _tree(laptop),
            "the laptop to receive the vault",
            60,
        )
        with (
            run_daemon(desk.vault, tmp_path / "desk.log", {**DAEMON_ENV, **desk.env}) as d1,
            run_daemon(laptop.vault, tmp_path / "laptop.log", {**DAEMON_ENV, **laptop.env}) as d2,
        ):
            desk.daemon, laptop.daemon = d1, d2
            yield desk, laptop
    finally:
        for device in (desk, laptop):
            stop_syncthing(device)


def _tree(device: Device) -> dict[str, bytes]:
    """The synced files of a vault copy: what both devices must end up holding alike."""
    out: dict[str, bytes] = {}
    for path in sorted(device.vault.rglob("*")):
        rel = path.relative_to(device.vault).as_posix()
        if path.is_dir() or rel.startswith(("context/", ".stfolder", ".stignore", ".stversions")):
            continue
        if path.name.startswith(".syncthing.") and path.name.endswith(".tmp"):
            continue  # Syncthing's download in progress (or kept after a failed one)
        with contextlib.suppress(FileNotFoundError):
            out[rel] = path.read_bytes()
    return out


def _idle(device: Device, peer: Device) -> bool:
    with contextlib.suppress(OSError):
        status = device.rest(f"/rest/db/status?folder={FOLDER}")
        completion = device.rest(f"/rest/db/completion?folder={FOLDER}&device={peer.id}")
        return (
            status.get("state") == "idle"
            and status.get("needTotalItems") == 0
            and completion.get("completion") == 100
        )
    return False


def converge(desk: Device, laptop: Device) -> dict[str, bytes]:
    """Wait until both copies hold the same files, Syncthing is idle on both, every conflict copy
    of the short-term memory is merged, and that state holds for two looks in a row."""
    last: dict[str, bytes] | None = None
    end = time.monotonic() + CONVERGE_S
    while time.monotonic() < end:
        tree = _tree(desk)
        settled = (
            tree == _tree(laptop)
            and _idle(desk, laptop)
            and _idle(laptop, desk)
            and not any(sync_merge.original_of(rel) == SHORT_TERM for rel in tree)
            and all(_merged(tree, rel) for rel in tree if is_conflict_copy(rel))
        )
        if settled and tree == last:
            return tree
        last = tree if settled else None
        time.sleep(1.0)  # Syncthing's watcher gathers changes for a second
    a, b = _tree(desk), _tree(laptop)
    differ = sorted(rel for rel in a.keys() | b.keys() if a.get(rel) != b.get(rel))
    copies = sorted(rel for rel in a if is_conflict_copy(rel))
    unmerged = [rel for rel in copies if not _merged(a, rel)]
    raise AssertionError(
        f"the two vault copies did not converge in {CONVERGE_S} s: differ {differ[:10]}, "
        f"conflict copies {copies[:10]}, unmerged {unmerged[:10]}, idle "
        f"{_idle(desk, laptop)} {_idle(laptop, desk)}"
    )


def _merged(tree: dict[str, bytes], copy_rel: str) -> bool:
    """Whether every event of a conflict copy is in the vault's memory files."""
    held = _counts(tree)
    return all(i in held for i in _ID_RE.findall(tree[copy_rel].decode()))


def _counts(tree: dict[str, bytes]) -> Counter[str]:
    """How many times each event id is written in the memory files (conflict copies aside)."""
    counts: Counter[str] = Counter()
    for rel, data in tree.items():
        if rel.startswith("memory/") and rel.endswith(".md") and not is_conflict_copy(rel):
            counts.update(_ID_RE.findall(data.decode("utf-8")))
    return counts


_WRITER = """
import datetime as dt, sys, time
from brainiac import Memory
vault, who, n, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
first = dt.datetime.fromisoformat(start)
with Memory(vault, meaning=False) as memory:
    for i in range(n):
        at = first + dt.timedelta(minutes=i)
        event = memory.remember(f"{who} step {i}: the {who} worked on tile row {i}", at=at)
        print(event.id, flush=True)
        time.sleep(0.05)  # an agent's pace: Syncthing carries changes while the others come
"""


def start_writer(device: Device, n: int, start: str) -> subprocess.Popen[str]:
    """Device's own process remembering `n` events, a minute apart (in event time) from
    `start`; prints each event's id."""
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(device.vault), device.name, str(n), start],
        env={**os.environ, **device.env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(writer: subprocess.Popen[str]) -> set[str]:
    out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    return set(out.split())


def hand_edit(device: Device, line: str) -> None:
    """A person appends a line under the note's Summary, saved in place as nano does."""
    path = device.vault / NOTE
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("## Summary\n", f"## Summary\n{line}\n", 1), encoding="utf-8")


def jobs(device: Device, now: str, busy: bool = False) -> str:
    """`jobs run all`, then `jobs run conflicts`, on a device. While agents write (`busy`) a job
    may give up on a file that keeps changing (it runs again on its next turn); else it must not.
    A run that finds the daemon's own run of a job under way (it merges the conflict copies it
    sees arrive) waits for it and runs again."""
    out = ""
    for name in ("all", "conflicts"):
        args = ("--vault", str(device.vault), "jobs", "run", name, "--now", now)
        run = run_cli(*args, env=device.env)
        for _ in range(20):
            if "another memory job is running" not in run.stdout:
                break
            time.sleep(0.5)  # the daemon's run holds the vault's job lock
            run = run_cli(*args, env=device.env)
        assert busy or run.returncode == 0, run.stdout + run.stderr
        out += run.stdout
    return out


def stop_daemons(*devices: Device) -> None:
    for device in devices:
        assert device.daemon is not None
        stop(device.daemon)


def _status_once_caught_up(device: Device, kept: list[str]) -> dict[str, Any]:
    """The device's status once it lists exactly the conflict copies the tree keeps (a kept copy
    is reported, one merged and deleted is not). The daemon hears of a deletion from its
    watcher, which may still be catching up with Syncthing's last writes when the trees agree."""
    statuses: list[dict[str, Any]] = []

    def reported() -> bool:
        statuses.append(json.loads(device.cli("status", "--json")))
        return sorted(statuses[-1]["conflicts"]) == sorted(kept)

    wait_for(reported, f"{device.name}'s status to list the copies kept {kept}", 60)
    return statuses[-1]


def assert_converged_state(
    desk: Device, laptop: Device, tree: dict[str, bytes], remembered: set[str], edits: list[str]
) -> None:
    counts = _counts(tree)
    assert remembered <= set(counts), sorted(remembered - set(counts))[:5]
    doubled = {i: n for i, n in counts.items() if n > 1}
    assert not doubled, doubled
    for line in edits:
        holders = [rel for rel, data in tree.items() if line in data.decode("utf-8")]
        assert any(sync_merge.original_of(r) == NOTE or r == NOTE for r in holders), line
    kept = [rel for rel in tree if is_conflict_copy(rel)]
    for device in (desk, laptop):
        for rel, data in tree.items():
            if rel.endswith(".md"):
                notes.parse(data.decode("utf-8"), rel)  # every file parses
        status = _status_once_caught_up(device, kept)
        assert status["problems"] == {}, status["problems"]

    # The same searches give the same answer on both devices: a broad one finds the same hits
    # with scores within SCORE_TOLERANCE, each sampled event's own words find it where it is
    # written, and the words of the hand edit the note kept find the note, alike. Scores
    # agree only to a tolerance: BM25 counts documents an index replaced but has not merged away
    # yet (an idle merge purges them once they are a quarter of the index), which differ with
    # the changes each device saw; hits that tie at the top may come in either order.
    def answer(device: Device, query: str, limit: int) -> list[tuple[str, str, float]]:
        hits = json.loads(device.cli("search", query, "--limit", str(limit), "--json"))
        return [(h["path"], h["event_id"], h["score"]) for h in hits]

    by_id = {i: e for i, e in _events(tree).items() if i in remembered}
    sampled = sorted(by_id)[:: max(len(by_id) // 8, 1)]
    holder = {
        i: rel
        for rel, data in tree.items()
        if not is_conflict_copy(rel)
        for i in by_id
        if f"^{i}" in data.decode("utf-8")
    }

    def differences() -> str:
        """What the two devices answer differently ("" when nothing)."""
        broad = [{(p, e): sc for p, e, sc in answer(d, "tile row", 1000)} for d in (desk, laptop)]
        if not broad[0] or broad[0].keys() != broad[1].keys():
            return f"'tile row' hits only on one: {sorted(broad[0].keys() ^ broad[1].keys())[:5]}"
        off = [
            k for k in broad[0] if broad[0][k] != pytest.approx(broad[1][k], rel=SCORE_TOLERANCE)
        ]
        if off:
            return f"'tile row' scores apart: {[(k, broad[0][k], broad[1][k]) for k in off[:5]]}"
        for i in sampled:
            found = [
                {(p, e): sc for p, e, sc in answer(d, by_id[i].text, 1000)} for d in (desk, laptop)
            ]
            key = (holder[i], i)
            if key not in found[0] or key not in found[1]:
                return f"{by_id[i].text!r} not found in {holder[i]} on both"
            if found[0][key] != pytest.approx(found[1][key], rel=SCORE_TOLERANCE):
                return f"{by_id[i].text!r} scored {found[0][key]} and {found[1][key]}"
        for line in (line for line in edits if line in tree[NOTE].decode("utf-8")):
            scores = [
                {(p, e): sc for p, e, sc in answer(d, line, 1000)}.get((NOTE, ""))
                for d in (desk, laptop)
            ]
            if None in scores or scores[0] != pytest.approx(scores[1], rel=SCORE_TOLERANCE):
                return f"{line!r}: {NOTE} scored {scores}"
        return ""

    seen: list[str] = []
    try:
        wait_for(lambda: seen.append(differences()) or not seen[-1], "the same answers", 60)
    except AssertionError:
        if not seen:  # a search itself failed (run_cli's message), not a difference timed out
            raise
    assert not seen[-1], seen[-1]


def _events(tree: dict[str, bytes]) -> dict[str, ev.Event]:
    """Every event with an id in the memory files, by id."""
    out: dict[str, ev.Event] = {}
    for rel, data in tree.items():
        if rel.startswith("memory/") and rel.endswith(".md") and not is_conflict_copy(rel):
            for event in ev.parse_text(data.decode("utf-8")):
                out[event.id] = event
    return out


def test_two_devices_remember_edit_and_run_jobs_at_once_through_syncthing(tmp_path: Path) -> None:
    with two_devices(tmp_path) as (desk, laptop):
        writers = [
            start_writer(desk, EVENTS, "2026-11-20T09:00:00"),
            start_writer(laptop, EVENTS, "2026-11-20T09:00:30"),
        ]
        time.sleep(2.0)  # mid-way through the writing: the hand edits and the jobs
        hand_edit(desk, "Desk: the tiles are 30 by 60.")
        hand_edit(laptop, "Laptop: Anna wants matt tiles.")
        mid = [jobs(d, "2026-11-20T13:00", busy=True) for d in (desk, laptop)]
        remembered = finish(writers[0]) | finish(writers[1])
        assert len(remembered) == 2 * EVENTS
        assert "not run: the vault's [jobs] device is 'desk'" in mid[1]
        converge(desk, laptop)
        for device in (desk, laptop):
            jobs(device, "2026-11-20T16:00")
        tree = converge(desk, laptop)
        assert_converged_state(
            desk,
            laptop,
            tree,
            remembered,
            ["Desk: the tiles are 30 by 60.", "Laptop: Anna wants matt tiles."],
        )
        logged = stm.parse(tree[SHORT_TERM].decode()).events
        assert len(logged) < 2 * EVENTS  # promotion ran: events went into long-term notes
        stop_daemons(desk, laptop)


def test_a_device_offline_for_a_week_catches_up_without_losing_or_doubling(
    tmp_path: Path,
) -> None:
    with two_devices(tmp_path) as (desk, laptop):
        stop_syncthing(laptop)  # the laptop goes on a trip
        remembered: set[str] = set()
        first = dt.datetime(2026, 11, 20, 9, 0)
        for day in range(7):
            morning = first + dt.timedelta(days=day)
            # Both work: the desk's agent every day, the laptop's offline on the trip.
            for device, offset in ((desk, 0), (laptop, 30)):
                start = (morning + dt.timedelta(seconds=offset)).isoformat()
                remembered |= finish(start_writer(device, 20, start))
            evening = (morning + dt.timedelta(hours=10)).isoformat(timespec="minutes")
            jobs(desk, evening)  # promotion, reflection and organization, day after day
        hand_edit(desk, "Desk: grout colour decided, grey.")
        hand_edit(laptop, "Laptop: bring the sample tiles back.")
        start_syncthing(laptop)  # back home
        converge(desk, laptop)
        jobs(desk, (first + dt.timedelta(days=7, hours=2)).isoformat(timespec="minutes"))
        tree = converge(desk, laptop)
        assert len(remembered) == 2 * 7 * 20
        assert_converged_state(
            desk,
            laptop,
            tree,
            remembered,
            ["Desk: grout colour decided, grey.", "Laptop: bring the sample tiles back."],
        )
        stop_daemons(desk, laptop)
