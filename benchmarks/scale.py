"""Scale benchmark: brainiac on generated vaults of 1,000 and 10,000 notes, beside raw Whoosh.

    .venv/bin/python benchmarks/scale.py                 # sizes 1000 and 10000
    .venv/bin/python benchmarks/scale.py --quick         # a 200-note smoke run
    .venv/bin/python benchmarks/scale.py --sizes 10000 --prompts 200 --cli-runs 15

A benchmark, not a timed test: it prints a Markdown table and writes JSON to benchmarks/results/.
Every measurement runs in a child process, one at a time (the reference machine has two noisy
cores), with XDG_CACHE_HOME and XDG_STATE_HOME pointed into a temporary directory, and each
brainiac figure stands beside the raw Whoosh floor measured in the same run on the same notes:

- build: `brainiac reindex` (a fresh process: parse, one document per note and per source
  event, manifest, merge) vs the same files' text written into a one-TEXT-field Whoosh index with
  the same writer settings (procs=2, multisegment above 2,000 documents, limitmb=128) and the same
  merging commit.
- no-change start: a fresh process that imports brainiac, opens the Memory (manifest, index,
  searcher) and reconciles with nothing changed; "ready" is time from the parent's spawn to that
  point. Floor: python + `import whoosh` + `open_dir` + `searcher()`.
- context in-process: p50/p95 of `Memory.context(prompt, budget=2000)` over varied prompts after a
  warm-up, on the index as the idle daemon leaves it after a build (its large segments merged
  into one beside the writer, search/index_merge.py; the merge's time and CPU are reported);
  once as assembly only (no periodic reconcile) and once with the default
  `refresh_interval_s=1.0` (a full reconcile every second inside whichever call comes due). Also
  brainiac's `Index.search` alone. Floor: an OR-of-terms search on the floor index with a
  long-lived searcher and the same limit (160) retrieval asks for.
- context as a CLI call: wall time of `brainiac --vault V context --prompt P --budget 2000`; floor:
  `python -c` that imports whoosh, opens the floor index and runs the same search. The same for
  `brainiac hook user-prompt-submit --budget 2000` (the agent hook's path, the prompt as the JSON
  Claude Code sends on stdin), and `brainiac --version` beside a bare `python -c pass`.
- check in-process: p50/p95 of `Memory.check(response)` over the same prompts, each turned into a
  one-sentence statement with a date ("The <last three words> is on Friday 4 December."), so both
  the fact path and the event path (docs/check.md) run. `--check-only` measures only this (after
  one `reindex`), for the guard's latency target (issue 15: p95 <= 50 ms at 10,000 notes).
- context only (`--context-only`, after one `reindex`): the two in-process context loops,
  `--rounds` times, each beside the same loop on `--baseline DIR` (a checkout of another commit,
  e.g. `git worktree add /tmp/base main`; its `daemon/` first on PYTHONPATH) run right after it,
  so that both see the same load on a shared machine; wall and CPU (process time) p50/p95.
  `--no-merge`: on the index as it is (a large build's segments not merged first: minutes of
  CPU at 100,000 notes).
- via the daemon (`--daemon`, or `--daemon-only` after one `reindex`): `brainiac run` on the
  vault, then wall times of `brainiac context --prompt P --budget 2000` and of `brainiac hook
  user-prompt-submit` (the event JSON on stdin) answered by the daemon over its socket, beside
  the same two commands run in the CLI's own process (BRAINIAC_SOCKET=off) with the daemon
  running, the CLI without any daemon, and `python -c pass`, in the same run. The daemon's
  jobs are off (BRAINIAC_JOBS_*=0, the same for every call) so that a catch-up job does not
  share the two cores with the calls; the daemon's own count of answers is checked.
- words only (`--words-only`): recall by meaning off in every child and in the daemon
  (BRAINIAC_RETRIEVAL_MEANING=false), no vectors made; for sizes whose vectors would take longer
  than the rest of the run. `--beside-words` (with `--context-only`): each loop with meaning
  followed by the same loop words only, in the same round, in place of a baseline checkout.
- the vectors as they are (`--vectors-kept`, with `--reuse`): none made before the timing, for a
  vault whose fill was stopped part way (at 100,000 notes it takes hours of a shared core). The
  in-process loops do not embed before a context (events without a vector are found by their
  words), the daemon's calls are timed while its embedder makes the rest (a first fill
  running: ready is its socket answering after the start's reconcile) and the CLI without any
  daemon, which would make every missing vector before its first answer, is not timed while
  vectors are missing. The vectors there are and those missing are reported.
- CPU: user + sys time of each build child and the sub-writers it waited for (wait4's rusage).
- peak RSS: ru_maxrss of each child (largest single process; whoosh's procs=2 build also forks
  a sub-writer) and, for builds, the peak of the summed RSS of the process tree sampled every 20 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate_vault  # noqa: E402

PY = sys.executable
BRAINIAC = str(Path(PY).with_name("brainiac"))
SEARCH_LIMIT = 160  # what retrieval asks the index for: max(max_ltm_items * 4, 50)
WARMUP = 20

# -- child programs (run with `python -c`, so that start-up costs are only what they import) ------

_BUILD_FLOOR = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from pathlib import Path
from whoosh import index
from whoosh.fields import TEXT, Schema
vault, target = Path(sys.argv[1]), Path(sys.argv[2])
files = sorted((vault / "memory" / "long_term").glob("*.md")) + [vault / "memory/short_term.md"]
target.mkdir(parents=True, exist_ok=True)
ix = index.create_in(target, Schema(content=TEXT()))
kw = {"limitmb": 128}
if len(files) > 2000:
    kw.update(procs=2, multisegment=True)
w = ix.writer(**kw)
for f in files:
    w.add_document(content=f.read_text(encoding="utf-8"))
w.commit(merge=False)
ix.writer().commit(merge=True)
print(json.dumps({"seconds": time.perf_counter() - t0, "docs": len(files),
                  "segments": len(ix._segments()),
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# The second floor (--docs-floor): brainiac's own documents (each note and each event, the
# text of their searched fields), written out before the timing, then indexed as raw Whoosh
# would: one TEXT field, the section-1 floor's writer settings. What Whoosh itself costs for
# 4.5x the documents, without parsing, schema or stored fields.
_DUMP_DOCS = r"""
import json, sys
from pathlib import Path
from brainiac.search import corpus
vault = Path(sys.argv[1])
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for path in sorted(vault.rglob("*.md")):
        for d in corpus.documents(path.relative_to(vault).as_posix(), path.read_text("utf-8")):
            text = " ".join((d.title, *d.aliases, d.body, d.context))
            out.write(json.dumps(text) + "\n")
"""

_BUILD_DOCS_FLOOR = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from whoosh import index
from whoosh.fields import TEXT, Schema
docs, target = Path(sys.argv[1]), Path(sys.argv[2])
target.mkdir(parents=True, exist_ok=True)
ix = index.create_in(target, Schema(content=TEXT()))
texts = docs.read_text(encoding="utf-8").splitlines()
kw = {"limitmb": 128}
if len(texts) > 2000:
    kw.update(procs=2, multisegment=True)
w = ix.writer(**kw)
for line in texts:
    w.add_document(content=json.loads(line))
w.commit(merge=False)
ix.writer().commit(merge=True)
print(json.dumps({"seconds": time.perf_counter() - t0, "docs": len(texts)}))
"""

_START_BRAINIAC = r"""
import json, sys, time
t_spawn = float(sys.argv[1])
a = time.perf_counter()
from brainiac import Memory
b = time.perf_counter()
m = Memory(sys.argv[2])
m.indexer  # manifest, index and searcher
c = time.perf_counter()
report = m.refresh(force=True)
d = time.perf_counter()
ready = time.time() - t_spawn
print(json.dumps({"ready": ready, "import": b - a, "open": c - b, "reconcile": d - c,
                  "changed": len(report.changed) + len(report.removed),
                  "full_build": report.full_build, "scanned": report.scanned}))
"""

_START_FLOOR = r"""
import json, sys, time
t_spawn = float(sys.argv[1])
a = time.perf_counter()
from whoosh import index
b = time.perf_counter()
ix = index.open_dir(sys.argv[2])
s = ix.searcher()
c = time.perf_counter()
print(json.dumps({"ready": time.time() - t_spawn, "import": b - a, "open": c - b}))
"""

_CLI_FLOOR = r"""
import sys
from whoosh import index
from whoosh.query import Or, Term
ix = index.open_dir(sys.argv[1])
s = ix.searcher()
terms = {t.text for t in ix.schema["content"].analyzer(sys.argv[2])}
r = s.search(Or([Term("content", t) for t in sorted(terms)]), limit=int(sys.argv[3]))
print(len(r), [hit.docnum for hit in r][:3])
"""

_LOOP = r"""
import json, resource, sys, time
mode, target, prompts_file, limit, warmup = sys.argv[1:6]
fill = sys.argv[6:7] != ["kept"]
prompts = json.loads(open(prompts_file, encoding="utf-8").read())
limit, warmup = int(limit), int(warmup)
if mode == "floor":
    from whoosh import index
    from whoosh.query import Or, Term
    ix = index.open_dir(target)
    s = ix.searcher()
    an = ix.schema["content"].analyzer
    def call(p):
        terms = sorted({t.text for t in an(p)})
        return [h.docnum for h in s.search(Or([Term("content", t) for t in terms]), limit=limit)]
else:
    from brainiac import Memory
    interval = 1.0 if mode == "context-default" else float("inf")
    m = Memory(target, refresh_interval_s=interval)
    m.refresh(force=True)
    m.fill_before_context = fill
    if mode == "search":
        def call(p):
            return m.indexer.index.search(p, limit=limit)
    elif mode == "check":
        import re
        def call(p):
            # a response stating a value about what the prompt names (a statement, not a question)
            words = re.findall(r"[A-Za-z]+", p)[-3:]
            return m.check("The " + " ".join(words) + " is on Friday 4 December.")
    else:
        def call(p):
            return m.context(p, budget=2000)
for p in prompts[:warmup]:
    call(p)
times, cpus = [], []
for p in prompts[warmup:]:
    t, c = time.perf_counter(), time.process_time()
    call(p)
    times.append(time.perf_counter() - t)
    cpus.append(time.process_time() - c)
pending = vectors = None
if mode != "floor":
    # Closed, so that vectors a loop made are saved and the next loop does not make them again.
    semantic = m.semantic
    pending = semantic.pending if semantic is not None else None
    vectors = semantic.stats()["vectors"] if semantic is not None else None
    m.close()
print(json.dumps({"times": times, "cpus": cpus, "pending_vectors": pending, "vectors": vectors,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# Every event's vector made once, after the build and before anything is timed (recall by
# meaning is on by default): how long the first fill takes, and its memory.
_VECTORS = r"""
import json, resource, sys, time
from brainiac import Memory
m = Memory(sys.argv[1], refresh_interval_s=float("inf"))
m.refresh(force=True)
t, c = time.perf_counter(), time.process_time()
semantic = m.semantic
if semantic is None:
    sys.exit("recall by meaning is off or its model is missing")
events = semantic.stats()["events"]
made = semantic.fill()
seconds, cpu = time.perf_counter() - t, time.process_time() - c
m.close()
print(json.dumps({"events": events, "made": made, "seconds": seconds, "cpu": cpu,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


# -- helpers ----------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def run(
    cmd: list[str], env: dict[str, str], sample_rss: bool = False, stdin: str = ""
) -> dict[str, Any]:
    """Run one child to completion; wall time, its stdout, ru_maxrss, and sampled tree RSS.
    `stdin` is what the child reads (written to a file first, so no pipe is timed)."""
    with (
        tempfile.TemporaryFile("w+") as in_f,
        tempfile.TemporaryFile("w+") as out_f,
        tempfile.TemporaryFile("w+") as err_f,
    ):
        in_f.write(stdin)
        in_f.seek(0)
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdin=in_f, stdout=out_f, stderr=err_f, text=True)
        peak_tree = 0
        stop = threading.Event()

        def sampler() -> None:
            nonlocal peak_tree
            import psutil  # measuring only: a dev dependency, not the test extra's

            try:
                root = psutil.Process(proc.pid)
                while not stop.is_set():
                    total = 0
                    for p in [root, *root.children(recursive=True)]:
                        with contextlib.suppress(psutil.Error):
                            total += p.memory_info().rss
                    peak_tree = max(peak_tree, total)
                    stop.wait(0.02)
            except psutil.Error:
                return

        thread = threading.Thread(target=sampler, daemon=True) if sample_rss else None
        if thread:
            thread.start()
        # wait4 rather than Popen.wait: it also returns this child's own rusage (ru_maxrss).
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        stop.set()
        if thread:
            thread.join()
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
    if code != 0:
        raise RuntimeError(f"{cmd[:4]} failed ({code}):\n{err[-3000:]}")
    result: dict[str, Any] = {"wall": wall, "stdout": out, "stderr": err}
    result["cpu"] = usage.ru_utime + usage.ru_stime  # the child's own CPU time (wait4)
    result["maxrss_mb"] = usage.ru_maxrss / 1024
    # wait4's rusage is the child's own plus that of the children it waited for (the build's
    # sub-writers): the CPU a measurement cost, which a loaded machine moves less than wall time.
    result["cpu"] = usage.ru_utime + usage.ru_stime
    if sample_rss:
        result["tree_rss_mb"] = peak_tree / 2**20
    return result


def last_json(text: str) -> dict[str, Any]:
    return json.loads(text.strip().splitlines()[-1])


def med(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


# -- one vault size ---------------------------------------------------------------------------


def bench_size(n: int, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    base = work / f"n{n}"
    vault = base / "vault"
    floor_ix = base / "floor-index"
    # PYTHONDONTWRITEBYTECODE (set in some sandboxes) would make every child recompile brainiac's
    # modules, a start-up cost no installed user pays; let children write and use .pyc files.
    drop = {"XDG_RUNTIME_DIR", "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(
        XDG_CACHE_HOME=str(base / "cache"), XDG_STATE_HOME=str(base / "state"), PYTHONHASHSEED="0"
    )
    # The sentence model's products on one thread in the library's children too, as the
    # `brainiac` command does (interfaces/entry.py): a second BLAS thread spinning on a busy
    # shared machine made a prompt's vector take 60 times longer.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args.words_only:
        env["BRAINIAC_RETRIEVAL_MEANING"] = "false"
    res: dict[str, Any] = {"notes": n, "meaning": not args.words_only}

    # A vault kept by an earlier run (--reuse) is measured as it is: at 100,000 notes its
    # generation and build take most of an hour on two shared cores.
    reused = args.reuse is not None and vault.is_dir()
    if not reused:
        t = time.perf_counter()
        res["vault"] = generate_vault.generate(vault, n, args.seed)
        res["vault"]["generate_s"] = time.perf_counter() - t
        res["vault"]["bytes"] = sum(p.stat().st_size for p in vault.rglob("*.md"))
        log(f"[{n}] vault generated: {res['vault']}")
    prompts = generate_vault.prompts(args.seed, WARMUP + args.prompts, n)
    prompts_file = base / "prompts.json"
    prompts_file.write_text(json.dumps(prompts), encoding="utf-8")

    run([PY, "-c", "import brainiac.interfaces.cli, brainiac.api.memory"], env)  # compile .pyc once
    if args.daemon_only:
        if not reused:
            run([BRAINIAC, "--vault", str(vault), "reindex", "--json"], env)
        if not args.daemon_fills and not args.words_only and not args.vectors_kept:
            res["vectors"] = make_vectors(n, vault, env)
        res["daemon"] = bench_daemon(
            n, vault, prompts[WARMUP:], env, args.daemon_runs, args.edits, args.vectors_kept
        )
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        return res
    if args.context_only:
        if not reused:
            run([BRAINIAC, "--vault", str(vault), "reindex", "--json"], env)
        if not args.words_only and not args.vectors_kept:
            res["vectors"] = make_vectors(n, vault, env)
        if not args.no_merge:
            res["merge_beside"] = merge_like_the_daemon(n, vault, env)
        res["beside_words"] = args.beside_words and not args.baseline
        res["context_rounds"] = _context_rounds(n, vault, prompts_file, env, args)
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        return res
    if args.check_only:
        if not reused:
            run([BRAINIAC, "--vault", str(vault), "reindex", "--json"], env)
        res["loop"] = {"check": _loop("check", vault, prompts_file, env, n)}
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        return res
    build_runs = args.build_runs or (1 if n >= 5000 else 3)
    builds, floors, docs_floors = [], [], []
    for i in range(build_runs):
        r = run([BRAINIAC, "--vault", str(vault), "reindex", "--json"], env, sample_rss=True)
        rep = last_json_block(r["stdout"])
        builds.append(
            {
                "wall": r["wall"],
                "cpu": r["cpu"],
                "sync_s": rep["seconds"],
                "docs": rep["docs_written"],
                "maxrss_mb": r["maxrss_mb"],
                "tree_rss_mb": r["tree_rss_mb"],
            }
        )
        log(f"[{n}] brainiac build {i + 1}/{build_runs}: {builds[-1]}")
        shutil.rmtree(floor_ix, ignore_errors=True)
        r = run([PY, "-c", _BUILD_FLOOR, str(vault), str(floor_ix)], env, sample_rss=True)
        info = last_json(r["stdout"])
        floors.append(
            {
                "wall": r["wall"],
                "cpu": r["cpu"],
                "seconds": info["seconds"],
                "docs": info["docs"],
                "segments": info["segments"],
                "maxrss_mb": r["maxrss_mb"],
                "tree_rss_mb": r["tree_rss_mb"],
            }
        )
        log(f"[{n}] floor build {i + 1}/{build_runs}: {floors[-1]}")
        if args.docs_floor:
            dump = base / "documents.jsonl"
            if not dump.exists():
                run([PY, "-c", _DUMP_DOCS, str(vault), str(dump)], env)
            target = base / "docs-floor-index"
            shutil.rmtree(target, ignore_errors=True)
            r = run([PY, "-c", _BUILD_DOCS_FLOOR, str(dump), str(target)], env, sample_rss=True)
            info = last_json(r["stdout"])
            docs_floors.append({"wall": r["wall"], "cpu": r["cpu"], "docs": info["docs"]})
            log(f"[{n}] same-documents floor build {i + 1}/{build_runs}: {docs_floors[-1]}")
            shutil.rmtree(target, ignore_errors=True)
    res["build"] = {"brainiac": builds, "floor": floors}
    if not args.words_only:
        res["vectors"] = make_vectors(n, vault, env)
    res["merge_beside"] = merge_like_the_daemon(n, vault, env)
    if docs_floors:
        res["build"]["docs_floor"] = docs_floors
    res["segments"] = segment_count(env, vault)

    starts, start_floors = [], []
    for i in range(args.start_runs):
        r = run([PY, "-c", _START_BRAINIAC, repr(time.time()), str(vault)], env)
        info = last_json(r["stdout"])
        if info["changed"] or info["full_build"]:
            raise RuntimeError(f"no-change start changed something: {info}")
        starts.append({**info, "wall": r["wall"], "maxrss_mb": r["maxrss_mb"]})
        r = run([PY, "-c", _START_FLOOR, repr(time.time()), str(floor_ix)], env)
        start_floors.append(
            {**last_json(r["stdout"]), "wall": r["wall"], "maxrss_mb": r["maxrss_mb"]}
        )
        log(
            f"[{n}] no-change start {i + 1}: {starts[-1]['ready']:.3f} s "
            f"(reconcile {starts[-1]['reconcile']:.3f}), floor {start_floors[-1]['ready']:.3f} s"
        )
    res["start"] = {"brainiac": starts, "floor": start_floors}

    cli, cli_floor, bare, hook, version = [], [], [], [], []
    for i in range(args.cli_runs):
        p = prompts[WARMUP + i]
        r = run(
            [BRAINIAC, "--vault", str(vault), "context", "--prompt", p, "--budget", "2000"], env
        )
        cli.append({"wall": r["wall"], "maxrss_mb": r["maxrss_mb"], "chars": len(r["stdout"])})
        payload = {"hook_event_name": "UserPromptSubmit", "session_id": "bench", "prompt": p}
        r = run(
            [BRAINIAC, "--vault", str(vault), "hook", "user-prompt-submit", "--budget", "2000"],
            env,
            stdin=json.dumps(payload),
        )
        hook.append({"wall": r["wall"], "chars": len(r["stdout"])})
        r = run([BRAINIAC, "--version"], env)
        version.append({"wall": r["wall"], "maxrss_mb": r["maxrss_mb"]})
        r = run([PY, "-c", _CLI_FLOOR, str(floor_ix), p, str(SEARCH_LIMIT)], env)
        cli_floor.append({"wall": r["wall"], "maxrss_mb": r["maxrss_mb"]})
        r = run([PY, "-c", "pass"], env)
        bare.append({"wall": r["wall"]})
    log(
        f"[{n}] CLI context median {med(cli, 'wall'):.3f} s, floor {med(cli_floor, 'wall'):.3f}"
        f" s, bare python {med(bare, 'wall'):.3f} s; hook {med(hook, 'wall'):.3f} s; "
        f"--version {med(version, 'wall'):.3f} s"
    )
    res["cli"] = {
        "brainiac": cli,
        "floor": cli_floor,
        "python": bare,
        "hook": hook,
        "version": version,
    }

    loops: dict[str, Any] = {}
    for mode, target in (
        ("context-assembly", vault),
        ("context-default", vault),
        ("search", vault),
        ("check", vault),
        ("floor", floor_ix),
    ):
        loops[mode] = _loop(mode, target, prompts_file, env, n)
    res["loop"] = loops
    if args.daemon:
        res["daemon"] = bench_daemon(
            n, vault, prompts[WARMUP:], env, args.daemon_runs, args.edits, args.vectors_kept
        )
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return res


_MERGE_BESIDE = r"""
import json, resource, sys, time
from brainiac import Memory
m = Memory(sys.argv[1], refresh_interval_s=float("inf"), meaning=False)
index = m.indexer.index
before, t = index.segment_count(), time.perf_counter()
job = index.merge_beside_start()
swapped = job is not None and index.merge_beside_finish(job)
child = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"segments_before": before, "segments": index.segment_count(),
                  "swapped": swapped, "seconds": time.perf_counter() - t,
                  "child_cpu": child.ru_utime + child.ru_stime}))
m.close()
"""


def merge_like_the_daemon(n: int, vault: Path, env: dict[str, str]) -> dict[str, Any]:
    """The large segments of the two-process build merged into one beside the writer, as the
    idle daemon does after a build (search/index_merge.py), so that the loops measure the index
    a daemon leaves; its time and the child's CPU."""
    info: dict[str, Any] = last_json(run([PY, "-c", _MERGE_BESIDE, str(vault)], env)["stdout"])
    log(
        f"[{n}] merge beside the writer: {info['segments_before']} -> {info['segments']} "
        f"segment(s) in {info['seconds']:.1f} s (child CPU {info['child_cpu']:.1f} s)"
    )
    return info


def make_vectors(n: int, vault: Path, env: dict[str, str]) -> dict[str, Any]:
    """Every event's vector, made once in a child (`_VECTORS`), so that no timed loop or daemon
    makes them; their time, rate and memory."""
    r = run([PY, "-c", _VECTORS, str(vault)], env, sample_rss=True)
    info = last_json(r["stdout"])
    out = {**info, "wall": r["wall"], "tree_rss_mb": r["tree_rss_mb"]}
    out["per_s"] = info["made"] / info["seconds"] if info["seconds"] else 0.0
    log(
        f"[{n}] vectors: {info['made']:,} of {info['events']:,} events made in "
        f"{info['seconds']:.1f} s ({out['per_s']:.0f}/s, CPU {info['cpu']:.1f} s), "
        f"peak RSS {r['tree_rss_mb']:.0f} MB, load {os.getloadavg()[0]:.1f}"
    )
    return out


def _loop(
    mode: str, target: Path, prompts_file: Path, env: dict[str, str], n: int, fill: bool = True
) -> Any:
    """One in-process loop in a child; `fill=False`: no vector made before a context (the
    vectors as a stopped fill left them, `--vectors-kept`)."""
    argv = [mode, str(target), str(prompts_file), str(SEARCH_LIMIT), str(WARMUP)]
    r = run([PY, "-c", _LOOP, *argv, *([] if fill else ["kept"])], env)
    info = last_json(r["stdout"])
    times = info["times"]
    out = {
        "n": len(times),
        "p50": pct(times, 50),
        "p95": pct(times, 95),
        "p99": pct(times, 99),
        "max": max(times),
        "mean": statistics.fmean(times),
        "cpu_p50": pct(info["cpus"], 50),
        "cpu_p95": pct(info["cpus"], 95),
        "maxrss_mb": info["maxrss_mb"],
        "vectors": info.get("vectors"),
        "pending_vectors": info.get("pending_vectors"),
    }
    log(
        f"[{n}] loop {mode}: p50 {out['p50'] * 1e3:.1f} ms, p95 {out['p95'] * 1e3:.1f} ms "
        f"(CPU {out['cpu_p50'] * 1e3:.1f} / {out['cpu_p95'] * 1e3:.1f}), "
        f"rss {info['maxrss_mb']:.0f} MB, load {os.getloadavg()[0]:.1f}, vectors "
        f"{out['vectors']} ({out['pending_vectors']} missing)"
    )
    return out


def _context_rounds(
    n: int, vault: Path, prompts_file: Path, env: dict[str, str], args: argparse.Namespace
) -> dict[str, list[Any]]:
    """`--context-only`: the in-process context loops (assembly, default refresh), `--rounds`
    times, each beside the same loop run on `--baseline` (another checkout's `daemon/` first on
    PYTHONPATH) right after it, so both see the same load. Same vault, same index."""
    trees = {"this": env}
    if args.baseline:
        trees["baseline"] = {**env, "PYTHONPATH": str(args.baseline.resolve() / "daemon")}
        run([PY, "-c", "import brainiac.interfaces.cli, brainiac.api.memory"], trees["baseline"])
    elif args.beside_words:
        trees["baseline"] = {**env, "BRAINIAC_RETRIEVAL_MEANING": "false"}
    modes = _loop_modes(args)
    out: dict[str, list[Any]] = {f"{t} {m}": [] for t in trees for m in modes}
    for i in range(args.rounds):
        for mode in modes:
            # The floor loop searches the raw-Whoosh index a full run built beside the vault.
            target = vault.parent / "floor-index" if mode == "floor" else vault
            for tree, tree_env in trees.items():
                log(f"[{n}] round {i + 1}/{args.rounds}: {tree}")
                measured = _loop(mode, target, prompts_file, tree_env, n, not args.vectors_kept)
                out[f"{tree} {mode}"].append(measured)
    return out


_CONTEXT_MODES = ("context-assembly", "context-default")


def _loop_modes(args: argparse.Namespace) -> tuple[str, ...]:
    """`--loops`: the in-process loops `--context-only` runs (default: both context loops)."""
    if not args.loops:
        return _CONTEXT_MODES
    return tuple(m.strip() for m in args.loops.split(",") if m.strip())


def context_table(results: list[dict[str, Any]]) -> str:
    """`--context-only`: medians over the rounds of each loop's p50/p95 (wall and CPU)."""
    beside = "words only" if any(r.get("beside_words") for r in results) else "baseline"
    rows = [f"| notes | measurement | this tree | {beside} | ratio |", "|---:|---|---:|---:|---:|"]
    for r in results:
        rounds = r["context_rounds"]
        for mode in sorted({key.split(" ", 1)[1] for key in rounds}):
            for key, label in (
                ("p50", "p50 (ms)"),
                ("p95", "p95 (ms)"),
                ("cpu_p50", "CPU p50 (ms)"),
                ("cpu_p95", "CPU p95 (ms)"),
            ):
                ours = statistics.median(x[key] for x in rounds[f"this {mode}"]) * 1e3
                base = rounds.get(f"baseline {mode}")
                theirs = statistics.median(x[key] for x in base) * 1e3 if base else None
                rows.append(
                    f"| {r['notes']:,} | {mode} {label} | {ours:.1f} | "
                    + (f"{theirs:.1f} | {ours / theirs:.2f}x |" if theirs else "- | |")
                )
    return "\n".join(rows)


def last_json_block(text: str) -> dict[str, Any]:
    """`brainiac reindex --json` prints one indented JSON object."""
    return json.loads(text[text.index("{") :])


def segment_count(env: dict[str, str], vault: Path) -> int:
    code = (
        "import sys; from brainiac.store.locations import Locations; from whoosh import index; "
        "from pathlib import Path; "
        "print(len(index.open_dir(Locations.for_vault(Path(sys.argv[1])).index_dir)"
        "._segments()))"
    )
    return int(run([PY, "-c", code, str(vault)], env)["stdout"].strip())


# -- report -----------------------------------------------------------------------------------


def table(results: list[dict[str, Any]]) -> str:
    def ratio(a: float, b: float) -> str:
        return f"{a / b:.1f}x" if b else "-"

    lines = [
        "| notes | measurement | brainiac | raw Whoosh floor | ratio |",
        "|---:|---|---:|---:|---:|",
    ]
    for r in results:
        n = f"{r['notes']:,}"
        b, f = r["build"]["brainiac"], r["build"]["floor"]
        docs = b[0]["docs"]
        rows = [
            (
                f"full build, wall (s) [{docs:,} docs vs {f[0]['docs']:,}]",
                med(b, "wall"),
                med(f, "wall"),
                "{:.1f}",
            ),
            (
                "full build, CPU user+sys, with sub-writers (s)",
                med(b, "cpu"),
                med(f, "cpu"),
                "{:.1f}",
            ),
        ]
        second = r["build"].get("docs_floor")
        if second:  # the same brainiac figures beside the second floor (its own ratio)
            rows += [
                (
                    f"full build, wall (s), vs raw Whoosh over the same {second[0]['docs']:,} docs",
                    med(b, "wall"),
                    med(second, "wall"),
                    "{:.1f}",
                ),
                (
                    "full build, CPU (s), vs raw Whoosh over the same docs",
                    med(b, "cpu"),
                    med(second, "cpu"),
                    "{:.1f}",
                ),
            ]
        rows += [
            (
                "full build, peak RSS of the tree (MB)",
                med(b, "tree_rss_mb"),
                med(f, "tree_rss_mb"),
                "{:.0f}",
            ),
            (
                "full build, peak RSS largest process (MB)",
                med(b, "maxrss_mb"),
                med(f, "maxrss_mb"),
                "{:.0f}",
            ),
            (
                "no-change start: spawn → ready (s)",
                med(r["start"]["brainiac"], "ready"),
                med(r["start"]["floor"], "ready"),
                "{:.3f}",
            ),
            (
                "… of which import (s)",
                med(r["start"]["brainiac"], "import"),
                med(r["start"]["floor"], "import"),
                "{:.3f}",
            ),
            (
                "… of which open manifest+index+searcher (s)",
                med(r["start"]["brainiac"], "open"),
                med(r["start"]["floor"], "open"),
                "{:.3f}",
            ),
            (
                "… of which reconcile, nothing changed (s)",
                med(r["start"]["brainiac"], "reconcile"),
                None,
                "{:.3f}",
            ),
            (
                "context in-process p50 (ms), assembly",
                r["loop"]["context-assembly"]["p50"] * 1e3,
                r["loop"]["floor"]["p50"] * 1e3,
                "{:.1f}",
            ),
            (
                "context in-process p95 (ms), assembly",
                r["loop"]["context-assembly"]["p95"] * 1e3,
                r["loop"]["floor"]["p95"] * 1e3,
                "{:.1f}",
            ),
            (
                "context in-process p50 (ms), default refresh 1 s",
                r["loop"]["context-default"]["p50"] * 1e3,
                r["loop"]["floor"]["p50"] * 1e3,
                "{:.1f}",
            ),
            (
                "context in-process p95 (ms), default refresh 1 s",
                r["loop"]["context-default"]["p95"] * 1e3,
                r["loop"]["floor"]["p95"] * 1e3,
                "{:.1f}",
            ),
            (
                "Index.search only p50 / p95 (ms)",
                f"{r['loop']['search']['p50'] * 1e3:.1f} / {r['loop']['search']['p95'] * 1e3:.1f}",
                f"{r['loop']['floor']['p50'] * 1e3:.1f} / {r['loop']['floor']['p95'] * 1e3:.1f}",
                None,
            ),
            (
                "context loop peak RSS (MB)",
                r["loop"]["context-assembly"]["maxrss_mb"],
                r["loop"]["floor"]["maxrss_mb"],
                "{:.0f}",
            ),
            (
                "context as CLI call, median wall (s)",
                med(r["cli"]["brainiac"], "wall"),
                med(r["cli"]["floor"], "wall"),
                "{:.3f}",
            ),
            ("… bare `python -c pass` (s)", med(r["cli"]["python"], "wall"), None, "{:.3f}"),
            (
                "hook user-prompt-submit as CLI call, median wall (s)",
                med(r["cli"]["hook"], "wall"),
                med(r["cli"]["floor"], "wall"),
                "{:.3f}",
            ),
            (
                "`brainiac --version`, median wall (s)",
                med(r["cli"]["version"], "wall"),
                med(r["cli"]["python"], "wall"),
                "{:.3f}",
            ),
            (
                "CLI context peak RSS (MB)",
                med(r["cli"]["brainiac"], "maxrss_mb"),
                med(r["cli"]["floor"], "maxrss_mb"),
                "{:.0f}",
            ),
        ]
        vectors = r.get("vectors")
        if vectors:
            rows.append(
                (
                    f"vectors made, {vectors['made']:,} events (s, events/s, peak RSS MB)",
                    f"{vectors['seconds']:.1f} s, {vectors['per_s']:.0f}/s, "
                    f"{vectors['tree_rss_mb']:.0f} MB",
                    "-",
                    None,
                )
            )
        for label, a, fl, fmt in rows:
            if fmt is None:
                lines.append(f"| {n} | {label} | {a} | {fl} | |")
                continue
            fa = fmt.format(a)
            ff = fmt.format(fl) if fl is not None else "-"
            lines.append(f"| {n} | {label} | {fa} | {ff} | {ratio(a, fl) if fl else ''} |")
    return "\n".join(lines)


def targets(results: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in results:
        start = med(r["start"]["brainiac"], "ready")
        p95 = r["loop"]["context-assembly"]["p95"] * 1e3
        p95d = r["loop"]["context-default"]["p95"] * 1e3
        out.append(
            f"{r['notes']:,} notes: no-change start {start:.3f} s "
            f"({'met' if start < 1.0 else 'MISSED'}, target < 1 s); context p95 "
            f"{p95:.1f} ms assembly ({'met' if p95 < 50 else 'MISSED'}, target < 50 ms), "
            f"{p95d:.1f} ms with the default 1 s refresh"
        )
    return out


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="brainiac scale benchmark (see module docstring)")
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated note counts")
    ap.add_argument("--quick", action="store_true", help="one small size (200) and fewer runs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prompts", type=int, default=200, help="timed in-process context calls")
    ap.add_argument("--cli-runs", type=int, default=15)
    ap.add_argument("--start-runs", type=int, default=9)
    ap.add_argument(
        "--build-runs",
        type=int,
        default=0,
        help="builds per size (default: 3 below 5,000 notes, else 1)",
    )
    ap.add_argument("--workdir", type=Path, default=None, help="where to put the vaults")
    ap.add_argument("--keep", action="store_true", help="keep the generated vaults")
    ap.add_argument(
        "--docs-floor",
        action="store_true",
        help="also a second build floor: raw Whoosh over brainiac's own documents",
    )
    ap.add_argument(
        "--check-only", action="store_true", help="only `Memory.check` latency (after a reindex)"
    )
    ap.add_argument(
        "--daemon", action="store_true", help="also hook/context via the daemon's socket"
    )
    ap.add_argument(
        "--daemon-only",
        action="store_true",
        help="only hook/context via the daemon beside the CLI (after a reindex)",
    )
    ap.add_argument("--daemon-runs", type=int, default=40, help="timed calls of each kind")
    ap.add_argument(
        "--daemon-fills",
        action="store_true",
        help="with --daemon-only: no vectors made before, the daemon makes them all (a first "
        "start): its fill time and peak RSS; the calls are timed once it has caught up",
    )
    ap.add_argument(
        "--edits", type=int, default=50, help="events remembered through the CLI after the calls"
    )
    ap.add_argument(
        "--context-only",
        action="store_true",
        help="only the in-process context loops, --rounds times (after a reindex)",
    )
    ap.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="with --context-only: a checkout of another commit, each loop run on it too",
    )
    ap.add_argument("--rounds", type=int, default=2, help="with --context-only")
    ap.add_argument(
        "--beside-words",
        action="store_true",
        help="with --context-only: each loop also words only, right after it (no --baseline)",
    )
    ap.add_argument(
        "--no-merge",
        action="store_true",
        help="with --context-only: the index as it is, its segments not merged first (as a "
        "daemon has it before its idle merge)",
    )
    ap.add_argument(
        "--vectors-kept",
        action="store_true",
        help="with --reuse: the vectors as an earlier fill left them, finished or not; none made"
        " before the timing, the daemon's calls timed while it makes the rest",
    )
    ap.add_argument(
        "--words-only",
        action="store_true",
        help="recall by meaning off in every child (BRAINIAC_RETRIEVAL_MEANING=false): no vectors"
        " are made, the figures are the words-only path's",
    )
    ap.add_argument(
        "--reuse",
        type=Path,
        default=None,
        help="the work dir of an earlier --keep run: its vaults (n<N>/vault) and indexes are "
        "measured as they are, not generated and built again (with the -only modes)",
    )
    ap.add_argument(
        "--loops",
        default="",
        help="with --context-only: the loops to run, comma-separated, of context-assembly, "
        "context-default, search, check and floor (the floor needs a full run's floor index)",
    )
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)
    if args.reuse is not None:
        args.keep = True  # never delete the vaults measured again
    sizes = [200] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.quick:
        args.prompts, args.cli_runs, args.start_runs = 40, 3, 3
        args.build_runs = args.build_runs or 1

    import psutil  # measuring only: a dev dependency, not the test extra's

    work = args.reuse or Path(tempfile.mkdtemp(prefix="brainiac-scale-", dir=args.workdir))
    machine = {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "mem_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "whoosh": _version("whoosh3") or _version("whoosh"),
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "loadavg_start": os.getloadavg(),
        "git": _git("rev-parse", "--short", "HEAD"),
        "git_dirty": _git("status", "--short", "--", "daemon"),
    }
    log(f"machine: {machine}; work dir {work}")
    results = []
    try:
        for n in sizes:
            results.append(bench_size(n, args, work))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.daemon_only:
        report("scale-daemon", machine, args, results, daemon_table(results), [])
        return 0
    if args.context_only:
        report("scale-context", machine, args, results, context_table(results), [])
        return 0
    if args.check_only:
        md = "\n".join(
            f"| {r['notes']:,} | check in-process p50 / p95 (ms) | "
            f"{r['loop']['check']['p50'] * 1e3:.1f} / {r['loop']['check']['p95'] * 1e3:.1f} |"
            for r in results
        )
        report("scale-check", machine, args, results, md, [])
        return 0
    md = table(results) + ("\n\n" + daemon_table(results) if args.daemon else "")
    report("scale", machine, args, results, md, targets(results))
    return 0


# -- via the daemon's socket ---------------------------------------------------------------

_JOBS_OFF = {
    f"BRAINIAC_JOBS_{job.upper()}": "0"
    for job in ("rescan", "merge", "reflection", "promotion", "organization", "inbox", "backup")
}


# What the CLI costs via the daemon once it imports only what that path needs (issue 16's lean
# start): python, the client module, one request, the answer written out.
_SOCKET_CLIENT = r"""
import sys
from brainiac.runtime import daemon_socket
request = {"op": "context", "prompt": sys.argv[2], "budget": 2000}
answer = daemon_socket.ask(sys.argv[1], request)
if "fallback" in answer:
    sys.exit(f"not answered by the daemon: {answer['fallback']}")
for to_stderr, text in answer["parts"]:
    (sys.stderr if to_stderr else sys.stdout).write(text)
"""


def _socket_stats(vault: Path, env: dict[str, str]) -> dict[str, Any] | None:
    from brainiac.runtime import daemon_socket
    from brainiac.store.locations import Locations

    runtime = Locations.for_vault(vault, env).runtime
    answer = daemon_socket.stats(daemon_socket.socket_path(str(runtime)))
    return answer if "stats" in answer else None


def _daemon_status(vault: Path, env: dict[str, str]) -> dict[str, Any]:
    from brainiac.store.daemon_requests import STATUS_FILE
    from brainiac.store.locations import Locations

    path = Locations.for_vault(vault, env).state / STATUS_FILE
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _rss(pid: int) -> dict[str, float]:
    """The process's resident memory in MB: all of it, and the part that is pages of files
    (mapped vectors, libraries), which the kernel can drop and read again."""
    # /proc/PID/statm: size, resident and shared pages (what psutil's memory_info reads on Linux)
    pages = Path(f"/proc/{pid}/statm").read_text().split()
    page = os.sysconf("SC_PAGE_SIZE")
    return {"rss_mb": int(pages[1]) * page / 2**20, "file_mb": int(pages[2]) * page / 2**20}


def _indexed_documents(vault: Path, env: dict[str, str]) -> int:
    """The documents (notes and events) in the daemon's last commit of the index, read beside
    it: what says the edits are indexed when the status counts no events (words only)."""
    from brainiac.search.index import Index
    from brainiac.store.locations import Locations

    index = Index(Locations.for_vault(vault, env).index_dir, writable=False)
    try:
        return index.doc_count()
    finally:
        index.close()


def _all_counted(
    vault: Path,
    env: dict[str, str],
    meaning: dict[str, Any] | None,
    events: int,
    documents: int,
) -> bool:
    """Whether the daemon has every edit: `events` known to recall by meaning, or, words only,
    `documents` in the index."""
    if meaning is not None:
        return int(meaning["events"]) >= events
    return not documents or _indexed_documents(vault, env) >= documents


def _wait_caught_up(
    vault: Path,
    env: dict[str, str],
    pid: int,
    events_at_least: int = 0,
    timeout: float = 3600,
    syncs_above: int | None = None,
    vectors: bool = True,
    documents: int = 0,
) -> dict[str, Any]:
    """Wait until the daemon's status says every event has its vector (and it knows at least
    `events_at_least` events); its peak RSS meanwhile, sampled every 0.2 s. `vectors=False`
    (a fill left running, `--vectors-kept`): as for words only, the start's reconcile and the
    syncs, and the `events_at_least` events known; the vectors made and missing are in
    `meaning`. Words only, until the index holds `documents` documents."""
    started = time.monotonic()
    peak = 0.0
    while True:
        peak = max(peak, _rss(pid)["rss_mb"])
        status = _daemon_status(vault, env)
        meaning = status.get("meaning")
        # Words only (no vectors to wait for): caught up once the start's reconcile is done and,
        # after edits, once the watcher has synced them (more syncs than before the edits). A
        # start with nothing changed syncs nothing, so `syncs` alone would never say so.
        synced = syncs_above is None or (
            status.get("syncs", 0) > syncs_above and not status.get("pending_changes")
        )
        # The status file may still be the last daemon's: only this daemon's own counts.
        mine = status.get("pid") == pid
        # A sync past the count says some edits are indexed, not all of them (one sync can take
        # the first edits while the last are still being written): the events are counted too.
        words_only = (meaning is None or not vectors) and mine and status.get("last_reconcile")
        made = meaning and not meaning["pending"] and meaning["events"] >= events_at_least
        if made or (
            words_only and synced and _all_counted(vault, env, meaning, events_at_least, documents)
        ):
            return {"seconds": time.monotonic() - started, "peak_rss_mb": peak, "meaning": meaning}
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"the daemon did not catch up in {timeout:.0f} s: {meaning}")
        time.sleep(0.2)


def bench_daemon(
    n: int,
    vault: Path,
    prompts: list[str],
    env: dict[str, str],
    runs: int,
    edits: int = 0,
    vectors_kept: bool = False,
) -> dict[str, Any]:
    """Wall times of CLI calls answered by a running daemon, beside the same calls in-process,
    timed once the daemon has every event's vector; its RSS at ready, after the calls and after
    `edits` events remembered through the CLI (each embedded by the daemon). `vectors_kept`:
    timed while the daemon makes the vectors still missing, and no CLI without a daemon."""
    env = {**env, **_JOBS_OFF}
    off = {**env, "BRAINIAC_SOCKET": "off"}

    def context(p: str) -> list[str]:
        return [BRAINIAC, "--vault", str(vault), "context", "--prompt", p, "--budget", "2000"]

    def hook_input(p: str) -> str:
        event = {"session_id": "bench", "hook_event_name": "UserPromptSubmit", "prompt": p}
        return json.dumps(event)

    def timed(cmd: list[str], e: dict[str, str], stdin: str | None = None) -> tuple[float, float]:
        """The child's wall time (spawn to exit) and its own CPU time (user + system)."""
        done = run(cmd, e, stdin=stdin or "")
        if not done["stdout"]:
            raise RuntimeError(f"{cmd[3:5]} printed nothing:\n{done['stderr'][-2000:]}")
        return float(done["wall"]), float(done["cpu"])

    hook = [BRAINIAC, "--vault", str(vault), "hook", "user-prompt-submit"]
    from brainiac.store.locations import Locations

    runtime = str(Locations.for_vault(vault, env).runtime)
    times: dict[str, list[float]] = {
        k: []
        for k in (
            "context via daemon",
            "hook via daemon",
            "context in-process, daemon running",
            "hook in-process, daemon running",
            "context in-process, no daemon",
            "context via daemon, socket client alone",
            "python -c pass",
        )
    }

    cpu: dict[str, list[float]] = {k: [] for k in times}

    def add(label: str, measured: tuple[float, float]) -> None:
        times[label].append(measured[0])
        cpu[label].append(measured[1])

    if vectors_kept:  # it would make every missing vector before its first answer
        del times["context in-process, no daemon"]
    for i in range(0 if vectors_kept else runs):
        add("context in-process, no daemon", timed(context(prompts[i]), env))
    log_path = vault.parent / "daemon.log"
    with log_path.open("wb") as log_f:
        daemon = subprocess.Popen(
            [BRAINIAC, "--vault", str(vault), "run"], env=env, stdout=log_f, stderr=log_f
        )
        try:
            deadline = time.monotonic() + 300
            while _socket_stats(vault, env) is None:
                if daemon.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the daemon did not answer: {log_path.read_text()[-2000:]}")
                time.sleep(0.1)
            # Timed once every vector is made: a daemon still embedding shares the cores.
            fill = _wait_caught_up(vault, env, daemon.pid, vectors=not vectors_kept)
            memory = {"ready": {**_rss(daemon.pid), "fill": fill}}
            log(f"[{n}] daemon caught up: {fill}, RSS {memory['ready']}")
            for p in prompts[:3]:  # warm-up: the daemon's first searches read the segments
                timed(context(p), env)
            before = (_socket_stats(vault, env) or {})["stats"]["answered"]
            for i in range(runs):
                p = prompts[i]
                add("context via daemon", timed(context(p), env))
                add("hook via daemon", timed(hook, env, hook_input(p)))
                add("context in-process, daemon running", timed(context(p), off))
                add("hook in-process, daemon running", timed(hook, off, hook_input(p)))
                add(
                    "context via daemon, socket client alone",
                    timed([PY, "-c", _SOCKET_CLIENT, runtime, p], env),
                )
                add("python -c pass", timed([PY, "-c", "print(1)"], env))
            answered = (_socket_stats(vault, env) or {})["stats"]["answered"] - before
            memory["after_calls"] = _rss(daemon.pid)
            if edits:
                # Counted now, not at ready: the first status may predate the start's reconcile.
                status = _daemon_status(vault, env)
                known = (status.get("meaning") or {}).get("events", 0)
                syncs = int(status.get("syncs", 0))
                documents = _indexed_documents(vault, env)
                for i in range(edits):
                    said = f"Edit {i}: the {prompts[i % len(prompts)]} was checked again today"
                    run([BRAINIAC, "--vault", str(vault), "remember", said], env)
                caught = _wait_caught_up(
                    vault,
                    env,
                    daemon.pid,
                    known + edits,
                    syncs_above=syncs,
                    vectors=not vectors_kept,
                    documents=documents + edits,
                )
                memory["after_edits"] = {**_rss(daemon.pid), "fill": caught}
            log(f"[{n}] daemon RSS: {memory}")
        finally:
            daemon.terminate()  # SIGTERM: the daemon stops in order
            daemon.wait(timeout=120)
    if answered != 3 * runs:
        raise RuntimeError(f"the daemon answered {answered} calls, not {3 * runs}")
    out = {
        k: {
            "p50": pct(v, 50),
            "p95": pct(v, 95),
            "cpu_p50": pct(cpu[k], 50),
            "cpu_p95": pct(cpu[k], 95),
            "runs": len(v),
        }
        for k, v in times.items()
    }
    for k, v in out.items():
        log(
            f"[{n}] {k}: p50 {v['p50'] * 1e3:.0f} ms, p95 {v['p95'] * 1e3:.0f} ms "
            f"(CPU p50 {v['cpu_p50'] * 1e3:.0f} ms)"
        )
    return {"answered_by_daemon": answered, "memory": memory, **out}


def daemon_table(results: list[dict[str, Any]]) -> str:
    rows = [
        "| notes | CLI call (wall time, spawn to exit) | p50 (ms) | p95 (ms) | CPU p50 (ms) |"
        " CPU p95 (ms) |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        d = r.get("daemon")
        for k, v in (d or {}).items():
            if isinstance(v, dict) and "p50" in v:
                rows.append(
                    f"| {r['notes']:,} | {k} | {v['p50'] * 1e3:.0f} | {v['p95'] * 1e3:.0f} | "
                    f"{v.get('cpu_p50', 0) * 1e3:.0f} | {v.get('cpu_p95', 0) * 1e3:.0f} |"
                )
    rows += ["", "| notes | daemon RSS (MB) | all | of which file pages |", "|---:|---|---:|---:|"]
    for r in results:
        memory = (r.get("daemon") or {}).get("memory") or {}
        fill = memory.get("ready", {}).get("fill", {})
        peak = fill.get("peak_rss_mb")
        if peak is not None:
            until = (
                "ready, a fill running"
                if (fill.get("meaning") or {}).get("pending")
                else ("every vector is made")
            )
            rows.append(f"| {r['notes']:,} | peak until {until} | {peak:.0f} | |")
        for when, label in (
            ("ready", "ready"),
            ("after_calls", "after the timed calls"),
            ("after_edits", "after the edits"),
        ):
            if when in memory:
                m = memory[when]
                rows.append(
                    f"| {r['notes']:,} | {label} | {m['rss_mb']:.0f} | {m['file_mb']:.0f} |"
                )
    return "\n".join(rows)


def report(
    kind: str,
    machine: dict[str, Any],
    args: argparse.Namespace,
    results: list[Any],
    md: str,
    target_lines: list[str],
) -> Path:
    """Print the table and the targets, and write everything to benchmarks/results/."""
    machine["loadavg_end"] = os.getloadavg()
    print(md)
    print()
    for line in target_lines:
        print(f"- {line}")
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = args.out / f"{kind}-{stamp}.json"
    out.write_text(
        json.dumps(
            {
                "machine": machine,
                "args": {k: str(v) for k, v in vars(args).items()},
                "results": results,
                "table": md,
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    log(f"wrote {out}")
    return out


def _git(*argv: str) -> str:
    try:
        return subprocess.run(
            ["git", *argv], cwd=HERE.parent, capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        return ""


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
