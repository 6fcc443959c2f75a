"""Issue 34: sentence encoders side by side on the event texts of a generated vault: events a
second (per CPU second and per wall second, one thread), the memory the model takes, the peak
while embedding, and one prompt's CPU time.

    .venv/bin/python benchmarks/experiments/v34_encoders.py TEXTS.json brainiac [--sample 1500]
    .venv/bin/python benchmarks/experiments/v34_encoders.py TEXTS.json brainiac --package OLD
    .venv/bin/python benchmarks/experiments/v34_encoders.py TEXTS.json brainiac --batch 64
    .venv/bin/python benchmarks/experiments/v34_encoders.py TEXTS.json wordllama

TEXTS.json: a JSON list of the events' texts, e.g. `Memory(vault).indexer.index.events()`'s
second fields on a vault of benchmarks/generate_vault.py. `--package OLD`: a folder holding
another brainiac package to measure (`git archive 0244400 daemon/brainiac | tar -x -C OLD
--strip-components=1` for the numpy model before issue 34). `wordllama` needs the wordllama
package (a static model: a table of token vectors, averaged). Each run in its own process, so
that the memory figures are its own. `--batch N`: the texts handed to the encoder N at a time,
as the daemon's fill does (search/semantic.py, 64), instead of all at once. A measurement only:
nothing is written.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _rss_mb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


def _encoder(which: str, package: Path | None) -> Callable[[Sequence[str]], Any]:
    if which == "wordllama":
        import wordllama

        # Its weights ship in the package; its loader looks for them beside a cache folder.
        model = wordllama.WordLlama.load(
            cache_dir=Path(wordllama.__file__).parent, disable_download=True
        )
        return lambda texts: model.embed(list(texts), norm=True)
    if package is not None:
        sys.path.insert(0, str(package))
    from brainiac.search import sentence_model

    print(f"# {sentence_model.__file__}: {sentence_model.MODEL_ID}", file=sys.stderr)
    return sentence_model.SentenceModel().encode  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("texts", type=Path)
    ap.add_argument("which", choices=["brainiac", "wordllama"])
    ap.add_argument("--package", type=Path, default=None)
    ap.add_argument("--sample", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=0, help="texts per encoder call (0: all)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the `brainiac` command runs
    texts = json.loads(args.texts.read_text(encoding="utf-8"))
    sample = random.Random(7).sample(texts, min(args.sample, len(texts)))
    before = _rss_mb()
    encode = _encoder(args.which, args.package)
    loaded = _rss_mb()
    encode(sample[:10])
    cpu, wall = time.process_time(), time.perf_counter()
    step = args.batch or len(sample)
    for at in range(0, len(sample), step):
        encode(sample[at : at + step])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # as semantic.py does after a fill
    prompt = time.process_time()
    for _ in range(50):
        encode(["How many children does Melanie have?"])
    prompt = (time.process_time() - prompt) / 50
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    row = {
        "which": args.which if args.package is None else f"brainiac from {args.package}",
        "texts": len(sample),
        "batch": step,
        "events_per_cpu_s": round(len(sample) / cpu),
        "events_per_wall_s": round(len(sample) / wall),
        "model_mb": loaded - before,
        "after_fill_mb": _rss_mb() - before,
        "peak_mb": peak - before,
        "prompt_cpu_ms": round(prompt * 1e3, 2),
    }
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
