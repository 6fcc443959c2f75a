"""The contexts of generated prompts on a vault, as one digest each: run under two checkouts and
compared, to show that a change leaves every context byte-identical.

    XDG_CACHE_HOME=C XDG_STATE_HOME=S .venv/bin/python benchmarks/context_digests.py \
        --vault V --prompts 200 > new.txt
    XDG_CACHE_HOME=C XDG_STATE_HOME=S PYTHONPATH=/tmp/base/daemon .venv/bin/python \
        benchmarks/context_digests.py --vault V --prompts 200 > old.txt
    diff old.txt new.txt

`Memory.context(prompt, budget, now)` in-process (a fixed `now`), with no reconcile between
calls (the vault must be indexed and its vectors made: a `scale.py --keep` vault's XDG
folders), over generate_vault.py's prompts; each line is the prompt's number and the SHA-256
of its context. The last line counts the vectors the semantic index holds, so both runs are
seen to use them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import generate_vault  # noqa: E402

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)  # the same clock in both runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--prompts", type=int, default=200)
    ap.add_argument("--notes", type=int, default=10_000, help="the vault's size, for the prompts")
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    from brainiac import Memory

    with Memory(args.vault, refresh_interval_s=float("inf")) as memory:
        for i, prompt in enumerate(generate_vault.prompts(args.seed, args.prompts, args.notes)):
            text = memory.context(prompt, budget=args.budget, now=NOW).text
            print(i, hashlib.sha256(text.encode("utf-8")).hexdigest())
        semantic = memory.semantic
        print("vectors", semantic.stats()["vectors"] if semantic is not None else None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
