"""Every note of a vault rewritten, then re-indexed by one sync in-process (issue 34).

    .venv/bin/python benchmarks/generate_vault.py /tmp/v2000 --notes 2000 --seed 1
    .venv/bin/python benchmarks/mass_rewrite.py /tmp/v2000 --workdir /tmp/mass
    PYTHONPATH=/tmp/base/daemon .venv/bin/python benchmarks/mass_rewrite.py /tmp/v2000 --workdir W

A benchmark, not a timed test. The vault is copied into WORKDIR (its cache and state there too),
indexed from scratch, then every long-term note is rewritten (each whole word "the" becomes
"that": the prose and every event's text change, as a job's mass rewrite changes them) and one
`refresh(force=True)` re-indexes them: what the daemon's writer does after organization's first
run or a `git checkout`. Reported: the sync's commits, documents written, wall and CPU seconds,
and the process's resident memory before it, at its peak (VmHWM, reset just before the sync
through /proc/self/clear_refs) and after it. `--batch-files N` sets the indexer's batch size
(a checkout without batches ignores it). PYTHONPATH picks the code, as `--src` does elsewhere.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import time
from pathlib import Path


def _status_mb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vault", type=Path, help="a generated vault, copied, never changed")
    ap.add_argument("--workdir", type=Path, required=True, help="emptied and reused")
    ap.add_argument("--batch-files", type=int, default=0, help="the indexer's batch size")
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    vault = args.workdir / "vault"
    shutil.copytree(args.vault, vault)
    os.environ["XDG_CACHE_HOME"] = str(args.workdir / "cache")
    os.environ["XDG_STATE_HOME"] = str(args.workdir / "state")
    import brainiac
    from brainiac import Memory
    from brainiac.search import indexer
    from brainiac.search.whoosh_internals import latest_generation

    if args.batch_files:
        indexer.SYNC_BATCH_FILES = args.batch_files  # type: ignore[attr-defined]
    print(f"code: {Path(brainiac.__file__).parent}")
    with Memory(vault, refresh_interval_s=0) as memory:
        memory.refresh(force=True)
        notes = sorted((vault / "memory/long_term").glob("*.md"))
        for path in notes:
            path.write_text(re.sub(r"\bthe\b", "that", path.read_text(encoding="utf-8")))
        gc.collect()
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")  # VmHWM from here
        before = _status_mb("VmRSS")
        generation = latest_generation(str(memory.indexer.index.directory))
        wall, cpu = time.perf_counter(), time.process_time()
        report = memory.refresh(force=True)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert report is not None
        commits = latest_generation(str(memory.indexer.index.directory)) - generation
        print(
            f"{len(notes)} notes rewritten: {len(report.changed)} files changed, "
            f"{report.docs_written} documents written in {commits} commit(s); "
            f"{wall:.1f} s wall, {cpu:.1f} s CPU"
        )
        peak, after = _status_mb("VmHWM"), _status_mb("VmRSS")
        print(f"RSS: {before} MB before, {peak} MB peak (+{peak - before}), {after} MB after")


if __name__ == "__main__":
    main()
