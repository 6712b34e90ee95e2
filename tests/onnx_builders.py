"""Small ONNX graphs built in tests (never copied from ../shared)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_model(nodes, inputs, outputs, inits=(), ms: bool = False) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", 17)]
    if ms:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 9
    return m


def vi(name: str, shape, dtype=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name: str, arr: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(arr, name)


def deeploy_mlp(
    batch: int = 3, fin: int = 4, classes: int = 5, lr: float = 0.1, seed: int = 0
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A Deeploy-style training graph: Gemm -> SCE loss (log_prob only) ->
    SCE grad (log_prob, labels) -> weight/bias gradients -> SGD(lr)."""
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((classes, fin)) * 0.5).astype(np.float32)
    b = (rng.standard_normal(classes) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["logits"], transB=1),
        helper.make_node(
            "SoftmaxCrossEntropyLoss", ["logits", "labels"], ["log_prob"], reduction="mean"
        ),
        helper.make_node(
            "SoftmaxCrossEntropyLossGrad",
            ["log_prob", "labels"],
            ["dlogits"],
            domain="com.microsoft",
            reduction="mean",
        ),
        helper.make_node("Gemm", ["dlogits", "x"], ["dw"], transA=1),
        helper.make_node("ReduceSum", ["dlogits", "axes0"], ["db"], keepdims=0),
        helper.make_node("SGD", ["w", "dw"], ["w_updated"], lr=lr),
        helper.make_node("SGD", ["b", "db"], ["b_updated"], lr=lr),
    ]
    m = make_model(
        nodes,
        [vi("x", [batch, fin]), vi("labels", [batch], TensorProto.INT64)],
        [vi("w_updated", [classes, fin]), vi("b_updated", [classes])],
        [init("w", w), init("b", b), init("axes0", np.array([0], dtype=np.int64))],
        ms=True,
    )
    return m, {"w": w, "b": b}


def deeploy_mlp_layers(
    batch: int, widths: list[int], lr: float = 0.05, seed: int = 0
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A Deeploy-style training graph of a ReLU MLP with any number of layers:
    forward, SCE loss, the whole backward pass and SGD on every parameter."""
    rng = np.random.default_rng(seed)
    n = len(widths) - 1
    params: dict[str, np.ndarray] = {}
    nodes = []
    act = "x"
    for i in range(n):
        params[f"w{i}"] = (
            rng.standard_normal((widths[i + 1], widths[i])) / np.sqrt(widths[i])
        ).astype(np.float32)
        params[f"b{i}"] = (rng.standard_normal(widths[i + 1]) * 0.1).astype(np.float32)
        nodes.append(helper.make_node("Gemm", [act, f"w{i}", f"b{i}"], [f"z{i}"], transB=1))
        act = f"z{i}"
        if i < n - 1:
            nodes.append(helper.make_node("Relu", [act], [f"a{i}"]))
            act = f"a{i}"
    nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", [act, "labels"], ["lp"]))
    nodes.append(
        helper.make_node(
            "SoftmaxCrossEntropyLossGrad", ["lp", "labels"], [f"dz{n - 1}"], domain="com.microsoft"
        )
    )
    for i in reversed(range(n)):
        inp = "x" if i == 0 else f"a{i - 1}"
        nodes.append(helper.make_node("Gemm", [f"dz{i}", inp], [f"dw{i}"], transA=1))
        nodes.append(helper.make_node("ReduceSum", [f"dz{i}", "axes0"], [f"db{i}"], keepdims=0))
        if i > 0:
            nodes.append(helper.make_node("Gemm", [f"dz{i}", f"w{i}"], [f"da{i - 1}"]))
            nodes.append(
                helper.make_node(
                    "ReluGrad", [f"da{i - 1}", f"a{i - 1}"], [f"dz{i - 1}"], domain="com.microsoft"
                )
            )
    outs = []
    for i in range(n):
        for p in (f"w{i}", f"b{i}"):
            nodes.append(helper.make_node("SGD", [p, f"d{p}"], [f"{p}_updated"], lr=lr))
            outs.append(vi(f"{p}_updated", list(params[p].shape)))
    m = make_model(
        nodes,
        [vi("x", [batch, widths[0]]), vi("labels", [batch], TensorProto.INT64)],
        outs,
        [*(init(k, v) for k, v in params.items()), init("axes0", np.array([0], dtype=np.int64))],
        ms=True,
    )
    return m, params
