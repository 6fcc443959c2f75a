"""The first CLI call with no daemon running: socket activation against the in-process path.

    .venv/bin/python benchmarks/experiments/socket_activation.py [IDLE_S] [words]

A generated 1,000-note vault in a temporary folder; five interleaved rounds of: `context` in
process (BRAINIAC_SOCKET=off), the first call under `systemd-socket-activate` (it starts the
daemon), the next call, and one after IDLE_S seconds; medians printed. `words` turns recall by
meaning off. Needs systemd-socket-activate on PATH.
"""

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
base = Path(tempfile.mkdtemp(prefix="sab-", dir="/tmp"))
env = {
    **os.environ,
    "XDG_RUNTIME_DIR": str(base / "run"),
    "XDG_STATE_HOME": str(base / "state"),
    "XDG_CACHE_HOME": str(base / "cache"),
    "XDG_CONFIG_HOME": str(base / "config"),
}
(base / "run").mkdir(mode=0o700)
vault = base / "vault"
subprocess.run(
    [PY, "benchmarks/generate_vault.py", "--notes", "1000", str(vault)],
    check=True,
    cwd=ROOT,
    env=env,
    capture_output=True,
)
if len(sys.argv) > 2 and sys.argv[2] == "words":
    import re

    cfg = vault / ".brainiac" / "config.toml"
    cfg.write_text(re.sub(r"^# meaning = .*$", "meaning = false", cfg.read_text(), flags=re.M))
sock = subprocess.run(
    [
        PY,
        "-c",
        "from brainiac.store.locations import Locations;"
        "from brainiac.runtime.daemon_socket import socket_path;import sys;"
        "print(socket_path(str(Locations.for_vault(sys.argv[1]).runtime)))",
        str(vault),
    ],
    env=env,
    capture_output=True,
    text=True,
    check=True,
).stdout.strip()
Path(sock).parent.mkdir(parents=True, mode=0o700, exist_ok=True)
call = [
    PY,
    "-m",
    "brainiac",
    "--debug",
    "--vault",
    str(vault),
    "context",
    "--prompt",
    "When is the Atlas deadline?",
]


def timed(extra=None):
    t = time.perf_counter()
    p = subprocess.run(call, env={**env, **(extra or {})}, capture_output=True, text=True)
    dt = time.perf_counter() - t
    assert p.returncode == 0, p.stderr
    way = "daemon" if "answered by the daemon" in p.stderr else "in-process"
    return dt, way


# Warm-up: the index built, then a daemon run once so its vectors are saved.
timed({"BRAINIAC_SOCKET": "off"})


def activated():
    return subprocess.Popen(
        [
            "systemd-socket-activate",
            "-l",
            sock,
            *[f"--setenv={k}" for k in env],
            PY,
            "-m",
            "brainiac",
            "--vault",
            str(vault),
            "run",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(base / "daemon.log", "ab"),
    )


def wait_sock():
    while not os.path.exists(sock):
        time.sleep(0.01)


def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)


p = activated()
wait_sock()
timed()
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
stop(p)

rows = {
    "python floor": [],
    "in-process": [],
    "activated first": [],
    "activated second": [],
    "settled (3 s later)": [],
}
ways = set()
for _round in range(5):
    dt, way = timed({"BRAINIAC_SOCKET": "off"})
    rows["in-process"].append(dt)
    ways.add(("in", way))
    p = activated()
    wait_sock()
    dt, way = timed()
    rows["activated first"].append(dt)
    ways.add(("first", way))
    dt, way = timed()
    rows["activated second"].append(dt)
    ways.add(("second", way))
    time.sleep(3)
    dt, way = timed()
    rows["settled (3 s later)"].append(dt)
    ways.add(("settled", way))
    t = time.perf_counter()
    subprocess.run([PY, "-c", "pass"], check=True)
    rows["python floor"].append(time.perf_counter() - t)
    stop(p)
for k, v in rows.items():
    print(
        f"{k:18s} median {statistics.median(v) * 1000:7.0f} ms  all {[round(x * 1000) for x in v]}"
    )
print(sorted(ways))
