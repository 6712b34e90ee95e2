"""examples/ort_reference.py, which both example scripts write their
artifacts with: a model's artifacts are the same bytes whatever the process
generated before (onnxblock's per-process name counter is reset), so the
committed examples can be regenerated file for file."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import ort_reference  # noqa: E402

FILES = ("training_model.onnx", "eval_model.onnx", "optimizer_model.onnx")


def tiny_classifier():
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "W")
    b = numpy_helper.from_array(np.zeros(3, np.float32), "B")
    g = helper.make_graph(
        [helper.make_node("Gemm", ["X", "W", "B"], ["logits"])],
        "tiny",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [2, 3])],
        [w, b],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_a_model_gives_the_same_artifacts_however_many_came_before(tmp_path: Path) -> None:
    for run in ("first", "second", "third"):
        ort_reference.generate(tiny_classifier(), tmp_path / run, ["W", "B"])
    for f in FILES:
        first = (tmp_path / "first" / f).read_bytes()
        assert (
            first == (tmp_path / "second" / f).read_bytes() == (tmp_path / "third" / f).read_bytes()
        ), f
    assert b"SoftmaxCrossEntropyLoss::" in (tmp_path / "first" / FILES[0]).read_bytes()
