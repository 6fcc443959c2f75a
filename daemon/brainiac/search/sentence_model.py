"""A sentence-embedding model that runs offline: all-MiniLM-L6-v2, int8, under onnxruntime.

What it is: sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0; 6 layers, 384 wide, trained on
a billion sentence pairs to put texts that mean the same near each other), as one ONNX file whose
products are int8 x int8 (each weight matrix with a scale per output column, the activations
quantized per run), 23 MB, pinned by its SHA-256. The file and the tokenizer's vocabulary ship
inside brainiac's package, in `minilm/` (with their Apache-2.0 LICENSE and a NOTICE of where they
come from and how the file was made; text/wordpiece.py splits the words): nothing is downloaded
and no other package holds them, so no release deleted elsewhere can take recall by meaning away.
Without a readable file of that SHA-256, or without onnxruntime, the search works by words only
(`ModelUnavailable`, said once in one line).

How it runs: onnxruntime, on one thread (the daemon's other core answers the agent), runs the
integer products with the CPU's dot-product instructions, one text at a time: the activations
are quantized per run, so in a batch the other texts would shift a text's vector and a prompt
embedded alone would not meet its own event (its costs: docs/benchmarks.md, "Memory" and
"Ingest"). onnxruntime's memory arena is off: what a text's activations take is handed back
after it, not kept.

One concept: the model, text in, unit vectors out. What is done with the vectors is
semantic.py's; the index never sees them.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from brainiac.core.errors import BrainiacError
from brainiac.text.wordpiece import WordPiece

log = logging.getLogger(__name__)

# What the stored vectors were made with (semantic.py): the weights, how their products are
# computed and the tokenizer, since each changes the vectors. Changed whenever any of them
# changes, so old vectors are made again.
MODEL_ID = "all-MiniLM-L6-v2/int8-dynamic-1"
DIMENSIONS = 384
_SHA256 = "9e80251537633bab7d98c9a4f07070371d83f1d28e6994a1f5d93c53de3c5454"
_MODEL_DIR = Path(__file__).with_name("minilm")
MODEL_FILE = _MODEL_DIR / "all-MiniLM-L6-v2-int8-dynamic.onnx"
_VOCABULARY = _MODEL_DIR / "vocab.txt"
# What a person whose model file is missing or damaged can do about it.
_REINSTALL = (
    "search works by words only until brainiac is installed again "
    "(`pip install --force-reinstall .` in its source folder)"
)
# The model was trained on at most 128 tokens; longer is cut, as sentence-transformers does.
_MAX_TOKENS = 128
_EPS = 1e-12


class ModelUnavailable(BrainiacError):
    """The sentence model's file cannot be read or is not the one pinned, or onnxruntime is
    missing."""


def _session(path: Path) -> Any:
    """onnxruntime's session of the model file, read from its path: given the file's bytes
    instead, it kept 22 MB more for good."""
    try:
        import onnxruntime
    except ImportError as exc:
        raise ModelUnavailable(
            f"{path}: the sentence model needs onnxruntime, which is not installed ({exc}); "
            "search works by words only until it is (`pip install onnxruntime`)"
        ) from exc
    options = onnxruntime.SessionOptions()
    # One core, as the rest of brainiac's matrix work (interfaces/entry.py one_matrix_thread).
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    # The arena would keep the longest text's activations for good.
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.log_severity_level = 3  # errors only: its warnings are for the model's authors
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's own error types; any of them means no model
        raise ModelUnavailable(f"{path}: the model file cannot be read ({exc})") from exc


class SentenceModel:
    """all-MiniLM-L6-v2: `encode` turns texts into unit vectors whose dot product is their
    cosine similarity. Thread-safe (onnxruntime's sessions are; the tokenizer keeps a cache)."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or MODEL_FILE
        try:
            with path.open("rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
        except OSError as exc:
            raise ModelUnavailable(
                f"{path}: the sentence model cannot be read ({exc.strerror or exc}); {_REINSTALL}"
            ) from exc
        if digest != _SHA256:
            raise ModelUnavailable(
                f"{path}: not the sentence model brainiac was built for (its SHA-256 differs); "
                f"{_REINSTALL}"
            )
        self._session = _session(path)
        vocabulary = _VOCABULARY.read_text(encoding="utf-8").splitlines()
        self.tokenizer = WordPiece(vocabulary)

    def encode(self, texts: Sequence[str]) -> Any:
        """One unit vector (float32, 384) per text, in order. Each text is run alone: the
        products quantize their input per run, so a batch's other texts would move a text's
        vector (a prompt would not get the vector its event has), and a text alone has no
        padding; batches were a fifth faster, no more."""
        out = np.zeros((len(texts), DIMENSIONS), np.float32)
        for row, text in enumerate(texts):
            ids = np.array([self.tokenizer.encode(text, _MAX_TOKENS)], np.int64)
            feed = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": ids * 0,
            }
            tokens = self._session.run(None, feed)[0][0]  # (length, 384), float32
            pooled = tokens.mean(0)
            out[row] = pooled / max(float(np.linalg.norm(pooled)), _EPS)
        return out
