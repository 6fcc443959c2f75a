"""A sentence-embedding model that runs offline: all-MiniLM-L6-v2, in numpy.

What it is: sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0; 6 layers, 384 wide, trained on
a billion sentence pairs to put texts that mean the same near each other), as one ONNX file with
int8 weights (a scale per output column, or per row for the embedding tables), 23 MB, pinned by
its SHA-256. The file and the tokenizer's vocabulary ship inside brainiac's package, in `minilm/`
(with their Apache-2.0 LICENSE and a NOTICE of where they come from; language/wordpiece.py splits
the words): nothing is downloaded and no other package holds them, so no release deleted
elsewhere can take recall by meaning away. Without a readable file of that SHA-256 the search
works by words only (`ModelUnavailable`, said once in one line).

How it runs: the ONNX file is read for its weights only (a few dozen lines of protobuf reading
below; no ONNX runtime). The weights stay int8 as the file has them (23 MB with the word table),
each matrix turned into floats just before its product and dropped after (for a short text, a
prompt, a block of columns at a time in a buffer the core's cache holds), and a word's row when
a text uses it. The forward pass is BERT's, written out (its cost: docs/benchmarks.md,
"Speed" and "Ingest"). Many texts at once (a fill's batch) are packed: every text's token rows
stacked into one matrix for the weight products, attention within each text, no padding; so a
text's vector is the one it gets alone, bit for bit, whatever it is embedded with, where the BLAS
kernel sums each output alike in any shape (OpenBLAS's SkylakeX and Sandybridge kernels; its
Haswell and Zen ones, on AVX2 machines without AVX-512, differ in the last bits: within 1e-6).

One concept: the model, text in, unit vectors out. What is done with the vectors is
semantic.py's; the index never sees them.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from brainiac.core.errors import BrainiacError
from brainiac.language.wordpiece import WordPiece

log = logging.getLogger(__name__)

# What the stored vectors were made with (semantic.py): the weights and the tokenizer, since the
# ids a text gets make its vector. Changed whenever either changes, so old vectors are made again.
MODEL_ID = "all-MiniLM-L6-v2/int8-2"
DIMENSIONS = 384
_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_MODEL_DIR = Path(__file__).with_name("minilm")
MODEL_FILE = _MODEL_DIR / "all-MiniLM-L6-v2-int8.onnx"
_VOCABULARY = _MODEL_DIR / "vocab.txt"
# What a person whose model file is missing or damaged can do about it.
_REINSTALL = (
    "search works by words only until brainiac is installed again "
    "(`pip install --force-reinstall .` in its source folder)"
)
_LAYERS = 6
_HEADS = 12
# The model was trained on at most 128 tokens; longer is cut, as sentence-transformers does.
_MAX_TOKENS = 128
_EPS = 1e-12
_BATCH_TOKENS = 1024
# Rows of the element-wise steps (LayerNorm, GELU) done at a time: their temporaries (up to
# 768 KB for the 1536-wide rows) stay in the core's cache instead of going out to memory.
_ROWS = 128
# Texts of at most this many tokens take their attention scores' row maxima a column at a time
# (`_row_max`); longer ones by numpy's reduction, then the faster.
_COLUMN_MAX_UP_TO = 48
# Inputs of at most this many tokens (a prompt, a title) are multiplied by each weight matrix a
# block of columns at a time, turned into floats in a buffer that stays in the core's cache: a
# whole matrix turned into floats (up to 2.4 MB) is written out to memory and read back by the
# product, which for a few rows costs more than the product itself. Larger inputs (a batch of
# events) take the whole matrix at once, whose product then dominates.
_BLOCKED_TOKENS = 64
# A block's columns: the narrowest of these whose block has at least _BLOCK_OUTPUTS outputs. Each
# output is then summed in the order the whole product sums it (a text's vector is the same
# either way: tests/test_semantic.py); a smaller product is one BLAS (OpenBLAS) may hand to a
# kernel that sums in another order. Every width divides every matrix's columns.
_BLOCK_WIDTHS = (96, 192, 384)
_BLOCK_OUTPUTS = 768
_BLOCK_COLUMNS = 96  # how the int8 weights are kept (`_Matrix`): the narrowest block width
# What LayerNorm's mean divides by, as numpy's mean does: an integer scalar (`_mean`).
_WIDTH = np.intp(DIMENSIONS)


def _block_width(rows: int) -> int:
    """The columns of a block (`_Matrix.times`) for an input of `rows` tokens (at least two)."""
    return next((w for w in _BLOCK_WIDTHS if rows * w >= _BLOCK_OUTPUTS), max(_BLOCK_WIDTHS))


def _mean(x: Any) -> Any:
    """x.mean(-1, keepdims=True) over the last axis of DIMENSIONS, without numpy's wrapper
    around it (its Python costs more than a short input's sum): the same sum and the same
    division (by an integer scalar, so in double precision as numpy's), so the same result."""
    total = np.add.reduce(x, axis=-1, keepdims=True)
    np.true_divide(total, _WIDTH, out=total, casting="unsafe")
    return total


def _row_max(scores: Any) -> Any:
    """scores.max(-1, keepdims=True): for short rows, a column at a time (numpy's reduction
    over a short last axis costs more per number than the whole softmax besides). A maximum is
    exact, so the result is the same either way."""
    length = scores.shape[-1]
    if length > _COLUMN_MAX_UP_TO:
        return scores.max(-1, keepdims=True)
    top = scores[..., :1].copy()
    for column in range(1, length):
        np.maximum(top, scores[..., column : column + 1], out=top)
    return top


class ModelUnavailable(BrainiacError):
    """The sentence model's file cannot be read or is not the one pinned."""


# -- reading the weights out of an ONNX file -------------------------------------------------------
# An ONNX file is a protobuf ModelProto; its graph (field 7) lists the weights as TensorProto
# initializers (graph field 5): dims (1), data type (2), name (8), raw little-endian bytes (9).


def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: memoryview) -> Any:
    """(field number, wire type, value) of each field of one message; a length-delimited value is
    a view of its bytes, a varint its integer (fixed-width fields are skipped)."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield number, wire, value
        elif wire == 2:
            size, pos = _varint(data, pos)
            yield number, wire, data[pos : pos + size]
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"protobuf wire type {wire} at byte {pos}")


_ONNX_TYPES = {1: np.float32, 3: np.int8, 7: np.int64}


def _initializers(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, _, graph in _fields(memoryview(data)):
        if number != 7:
            continue
        for field, _, tensor in _fields(graph):
            if field != 5:
                continue
            dims: list[int] = []
            kind, name, raw = 0, "", b""
            for n, wire, value in _fields(tensor):
                if n == 1 and wire == 0:
                    dims.append(value)
                elif n == 1:  # packed
                    pos = 0
                    while pos < len(value):
                        d, pos = _varint(value, pos)
                        dims.append(d)
                elif n == 2:
                    kind = value
                elif n == 8:
                    name = bytes(value).decode("utf-8")
                elif n == 9:
                    raw = value
            if kind in _ONNX_TYPES and raw:
                # A copy: a view would keep the whole file's bytes alive with the model.
                out[name] = np.frombuffer(raw, dtype=_ONNX_TYPES[kind]).reshape(dims).copy()
    return out


class _Matrix:
    """A weight matrix as the file has it: int8, (in, out), with a float32 scale per output
    column. Kept so (a quarter of the memory of floats) and turned into floats one matrix (or
    block of columns) at a time, just before its product: x @ (q * scale) == (x @ q) * scale.

    Kept as blocks of _BLOCK_COLUMNS columns, each block's rows side by side in memory: a
    short input's block of columns is then turned into floats from one run of bytes, not from
    a slice of every row (a third less time), and the floats are the same either way."""

    def __init__(self, q: Any, scale: Any) -> None:
        self.shape: tuple[int, int] = q.shape
        inputs, columns = q.shape
        self._blocks = np.ascontiguousarray(
            q.reshape(inputs, columns // _BLOCK_COLUMNS, _BLOCK_COLUMNS).transpose(1, 0, 2)
        )
        self.scale = scale

    def times(self, x: Any, scratch: Any = None) -> Any:
        """x @ (q * scale); with `scratch` (float32, room for 1536 x _block_width of x's rows)
        a block of columns at a time through it, for an input of a few rows."""
        inputs, columns = self.shape
        blocks = self._blocks
        if scratch is None:
            whole = np.empty((inputs, len(blocks), _BLOCK_COLUMNS), np.float32)
            np.copyto(whole, blocks.transpose(1, 0, 2), casting="unsafe")
            out = x @ whole.reshape(inputs, columns)
        else:
            rows = x.shape[0]
            width = _block_width(rows)
            step = width // _BLOCK_COLUMNS
            out = np.empty((rows, columns), np.float32)
            block = scratch[: inputs * width].reshape(inputs, width)
            parts = block.reshape(inputs, step, _BLOCK_COLUMNS)
            for at in range(0, len(blocks), step):
                if step == 1:
                    np.copyto(block, blocks[at], casting="unsafe")
                else:
                    np.copyto(parts, blocks[at : at + step].transpose(1, 0, 2), casting="unsafe")
                start = at * _BLOCK_COLUMNS
                np.matmul(x, block, out=out[:, start : start + width])
        out *= self.scale
        return out


@dataclass(frozen=True)
class _Layer:
    qkv: _Matrix  # (384, 1152): query, key and value side by side, one product makes all three
    qkv_bias: Any
    attention_out: _Matrix
    attention_out_bias: Any
    norm1: tuple[Any, Any]
    inner: _Matrix  # (384, 1536)
    inner_bias: Any
    out: _Matrix  # (1536, 384)
    out_bias: Any
    norm2: tuple[Any, Any]


def _weights(init: dict[str, Any]) -> tuple[Any, Any, Any, tuple[Any, Any], list[_Layer]]:
    """The model's weights by role. The file names its biases and norms as the original model
    does (`inner.encoder.layer.0.attention.self.query.bias`) but its quantized matrices by graph
    value (`val_49_q`), in layer order and, within a layer, query, key, value, attention output,
    intermediate, output; each stored as (in, out) with a scale per output column."""

    def dequantized(name: str) -> Any:
        q = init[f"{name}_q"]
        return (q.astype(np.float32) * init[f"{name}_scale"]).astype(np.float32)

    def matrix(name: str) -> _Matrix:
        return _Matrix(init[f"{name}_q"], init[f"{name}_scale"].astype(np.float32))

    matrices = sorted(
        (n[: -len("_q")] for n in init if n.startswith("val_") and n.endswith("_q")),
        key=lambda n: int(n.split("_")[1]),
    )
    if len(matrices) != 6 * _LAYERS:
        raise ValueError(f"expected {6 * _LAYERS} weight matrices, found {len(matrices)}")
    prefix = "inner.encoder.layer."
    layers = []
    for i in range(_LAYERS):
        q, k, v = matrices[6 * i : 6 * i + 3]
        attention_out, inner, out = (matrix(n) for n in matrices[6 * i + 3 : 6 * i + 6])
        p = f"{prefix}{i}."
        bias = [init[f"{p}attention.self.{part}.bias"] for part in ("query", "key", "value")]
        layer = _Layer(
            qkv=_Matrix(
                np.concatenate([init[f"{n}_q"] for n in (q, k, v)], axis=1),
                np.concatenate([init[f"{n}_scale"].astype(np.float32) for n in (q, k, v)], axis=1),
            ),
            qkv_bias=np.concatenate(bias),
            attention_out=attention_out,
            attention_out_bias=init[f"{p}attention.output.dense.bias"],
            norm1=(
                init[f"{p}attention.output.LayerNorm.weight"],
                init[f"{p}attention.output.LayerNorm.bias"],
            ),
            inner=inner,
            inner_bias=init[f"{p}intermediate.dense.bias"],
            out=out,
            out_bias=init[f"{p}output.dense.bias"],
            norm2=(init[f"{p}output.LayerNorm.weight"], init[f"{p}output.LayerNorm.bias"]),
        )
        shapes = (layer.qkv.shape, layer.inner.shape, layer.out.shape)
        if shapes != ((384, 1152), (384, 1536), (1536, 384)):
            raise ValueError(f"layer {i}: unexpected weight shapes {shapes}")
        layers.append(layer)
    emb = "inner.embeddings."
    words = (init[f"{emb}word_embeddings.weight_q"], init[f"{emb}word_embeddings.weight_scale"])
    # Token type 0 is the only one a single text uses: folded into the positions once.
    positions = (
        dequantized(f"{emb}position_embeddings.weight")
        + init[f"{emb}token_type_embeddings.weight"][0]
    )
    norm = (init[f"{emb}LayerNorm.weight"], init[f"{emb}LayerNorm.bias"])
    return words[0], words[1], positions.astype(np.float32), norm, layers


class SentenceModel:
    """all-MiniLM-L6-v2: `encode` turns texts into unit vectors whose dot product is their
    cosine similarity. Thread-safe (it keeps no state between calls but the tokenizer's cache)."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or MODEL_FILE
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ModelUnavailable(
                f"{path}: the sentence model cannot be read ({exc.strerror or exc}); {_REINSTALL}"
            ) from exc
        if hashlib.sha256(data).hexdigest() != _SHA256:
            raise ModelUnavailable(
                f"{path}: not the sentence model brainiac was built for (its SHA-256 differs); "
                f"{_REINSTALL}"
            )
        try:
            init = _initializers(data)
            del data
            self._words, self._word_scale, self._positions, self._norm, self._layers = _weights(
                init
            )
        except (KeyError, ValueError, IndexError) as exc:
            raise ModelUnavailable(f"{path}: the model file cannot be read ({exc})") from exc
        vocabulary = _VOCABULARY.read_text(encoding="utf-8").splitlines()
        self.tokenizer = WordPiece(vocabulary)

    def encode(self, texts: Sequence[str]) -> Any:
        """One unit vector (float32, 384) per text, in order. Texts are embedded shortest first,
        up to `_BATCH_TOKENS` tokens at a time (the intermediate activations are 6 KB a token,
        and big temporary arrays stay in the process's heap after they are freed), each batch
        packed without padding (`_forward`): a text's vector is the one it gets alone, bit for
        bit, whatever texts it is embedded with."""
        out = np.zeros((len(texts), DIMENSIONS), np.float32)
        ids = [self.tokenizer.encode(t, _MAX_TOKENS) for t in texts]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        chunk: list[int] = []
        tokens = 0
        for i in order:
            if chunk and tokens + len(ids[i]) > _BATCH_TOKENS:
                out[chunk] = self._forward([ids[j] for j in chunk])
                chunk, tokens = [], 0
            chunk.append(i)
            tokens += len(ids[i])
        if chunk:
            out[chunk] = self._forward([ids[j] for j in chunk])
        return out

    @staticmethod
    def _normed(x: Any, weight_bias: tuple[Any, Any]) -> Any:
        """LayerNorm of each row of x, in place, `_ROWS` rows at a time (their temporaries stay
        in the core's cache); each row's result is the same whatever the rows around it."""
        for at in range(0, len(x), _ROWS):
            rows = x[at : at + _ROWS]
            rows -= _mean(rows)
            rows *= 1.0 / np.sqrt(_mean(rows * rows) + _EPS)
            rows *= weight_bias[0]
            rows += weight_bias[1]
        return x

    @staticmethod
    def _gelu(h: Any, bias: Any) -> Any:
        """GELU(h + bias) in place, `_ROWS` rows at a time. In the tanh form: within 1e-3 of the
        exact one, and numpy has no erf."""
        for at in range(0, len(h), _ROWS):
            rows = h[at : at + _ROWS]
            rows += bias
            t = rows * rows
            t *= rows
            t *= 0.044715
            t += rows
            t *= 0.7978845608
            np.tanh(t, out=t)
            t += 1.0
            t *= 0.5
            rows *= t
        return h

    @staticmethod
    def _attended(qkv: Any, groups: list[tuple[int, int, int]]) -> Any:
        """Self-attention within each text: `groups` are runs of texts of one length, as
        (first token row, texts, length); the texts' token rows lie one after the other in qkv
        (query, key and value side by side). A text attends to its own tokens only, with no
        padding, so its rows are the ones it gets alone."""
        width = DIMENSIONS // _HEADS
        attended = np.empty((len(qkv), DIMENSIONS), np.float32)
        for start, count, length in groups:
            end = start + count * length
            part = qkv[start:end].reshape(count, length, 3, _HEADS, width)
            q, k, v = part.transpose(2, 0, 3, 1, 4)
            scores = np.matmul(q, k.transpose(0, 1, 3, 2))
            scores *= width**-0.5
            scores -= _row_max(scores)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            heads = np.matmul(scores, v).transpose(0, 2, 1, 3)
            attended[start:end] = heads.reshape(count * length, DIMENSIONS)
        return attended

    def _forward(self, batch: list[list[int]]) -> Any:
        """The unit vectors of `batch` (token ids, shortest first). Every text's token rows are
        stacked into one matrix, so each weight matrix takes one product for the whole batch;
        only attention (`_attended`) and the mean are per text."""
        lengths = [len(b) for b in batch]
        ids = np.fromiter((i for b in batch for i in b), np.int64, sum(lengths))
        groups: list[tuple[int, int, int]] = []  # (first row, texts, length) of equal lengths
        start = 0
        for length, run in itertools.groupby(lengths):
            count = len(list(run))
            groups.append((start, count, length))
            start += count * length
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = self._words[ids].astype(np.float32) * self._word_scale[ids]
        x += self._positions[positions]
        x = self._normed(x, self._norm)
        # A block of a weight matrix as floats (`_Matrix.times`), for a short input: room for a
        # block of the tallest matrix.
        scratch = None
        if len(ids) <= _BLOCKED_TOKENS:
            scratch = np.empty(4 * DIMENSIONS * _block_width(len(ids)), np.float32)
        for layer in self._layers:
            qkv = layer.qkv.times(x, scratch)
            qkv += layer.qkv_bias
            h = layer.attention_out.times(self._attended(qkv, groups), scratch)
            del qkv
            h += layer.attention_out_bias
            h += x
            x = self._normed(h, layer.norm1)
            h = self._gelu(layer.inner.times(x, scratch), layer.inner_bias)
            out = layer.out.times(h, scratch)
            del h
            out += layer.out_bias
            out += x
            x = self._normed(out, layer.norm2)
        pooled = np.empty((len(batch), DIMENSIONS), np.float32)
        text = 0
        for start, count, length in groups:
            rows = x[start : start + count * length].reshape(count, length, DIMENSIONS)
            pooled[text : text + count] = rows.sum(1) / np.float32(length)
            text += count
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), _EPS)
