"""The corpus of bad inputs: each case writes its files into a folder and names
the command line and the exact one-line error it must give.

`{d}` in an argument or a message stands for the case's folder. The test
(tests/test_bad_inputs.py) runs every case through the real CLI and checks:
exit code 2, exactly that line on stderr, no traceback, no output directory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Writer = Callable[[Path], None]


@dataclass
class Case:
    name: str
    argv: list[str]
    error: str
    write: Writer = field(default=lambda d: None)
    #: the module run with `python -m`: the compiler's CLI, or deeploy-opt
    tool: str = "deeploy_mlir.cli"


CASES: list[Case] = []


def case(
    name: str,
    argv: list[str],
    error: str,
    write: Writer | None = None,
    tool: str = "deeploy_mlir.cli",
) -> None:
    CASES.append(Case(name, argv, error, write or (lambda d: None), tool))


# --------------------------------------------------------------------------
# builders


def vi(name: str, shape, dtype=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset: int = 17, ms: bool = True) -> onnx.ModelProto:
    ops = [helper.make_opsetid("", opset)]
    if ms:
        ops.append(helper.make_opsetid("com.microsoft", 1))
    m = helper.make_model(
        helper.make_graph(nodes, "g", inputs, outputs, list(inits)), opset_imports=ops
    )
    m.ir_version = 9
    return m


def save(m: onnx.ModelProto, name: str = "m.onnx") -> Writer:
    return lambda d: onnx.save(m, d / name)


def raw(content: bytes, name: str = "m.onnx") -> Writer:
    return lambda d: (d / name).write_bytes(content)


def init(name: str, arr) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(arr), name)


def mlp(batch: int = 3, fin: int = 4, classes: int = 5) -> onnx.ModelProto:
    """A valid Deeploy-style training graph (the base of the data cases)."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((classes, fin)).astype(np.float32)
    b = np.zeros(classes, np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["logits"], transB=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["log_prob"]),
        helper.make_node(
            "SoftmaxCrossEntropyLossGrad", ["log_prob", "labels"], ["dl"], domain="com.microsoft"
        ),
        helper.make_node("Gemm", ["dl", "x"], ["dw"], transA=1),
        helper.make_node("ReduceSum", ["dl", "axes"], ["db"], keepdims=0),
        helper.make_node("SGD", ["w", "dw"], ["w_updated"], lr=0.1),
        helper.make_node("SGD", ["b", "db"], ["b_updated"], lr=0.1),
    ]
    return model(
        nodes,
        [vi("x", [batch, fin]), vi("labels", [batch], TensorProto.INT64)],
        [vi("w_updated", [classes, fin]), vi("b_updated", [classes])],
        [init("w", w), init("b", b), init("axes", np.array([0], np.int64))],
    )


def with_data(arrays: dict[str, np.ndarray], m: onnx.ModelProto | None = None) -> Writer:
    def w(d: Path) -> None:
        onnx.save(m or mlp(), d / "m.onnx")
        np.savez(d / "data.npz", **arrays)

    return w


def unary(op: str, domain: str = "", **attrs) -> onnx.ModelProto:
    return model(
        [helper.make_node(op, ["x"], ["y"], domain=domain, name=f"{op.lower()}0", **attrs)],
        [vi("x", [2, 3])],
        [vi("y", [2, 3])],
    )


def sgd(w: np.ndarray, g: int = 3, **attrs) -> Writer:
    """One SGD node updating the parameter w (initial value `w`) with the
    graph input g of `g` elements."""
    return save(
        model(
            [helper.make_node("SGD", ["w", "g"], ["w2"], **attrs)],
            [vi("g", [g])],
            [vi("w2", [len(w)])],
            [init("w", w)],
        )
    )


def sce(
    a: list[int],
    labels: list[int],
    loss: list[int] | None = None,
    label_type: int = TensorProto.INT64,
    weights: list[int] | None = None,
    **attrs,
) -> Writer:
    """One SoftmaxCrossEntropyLoss node n0 on the scores a and the labels l
    (and the class weights w, given their shape) into the loss y (a scalar
    unless `loss` is given) and the log-probabilities p."""
    ins = [vi("a", a), vi("l", labels, label_type)] + ([vi("w", weights)] if weights else [])
    node = helper.make_node(
        "SoftmaxCrossEntropyLoss", [v.name for v in ins], ["y", "p"], name="n0", **attrs
    )
    return save(model([node], ins, [vi("y", loss or [])]))


LOWER = ["lower", "{d}/m.onnx", "-o", "{d}/out"]
M = "{d}/m.onnx"

# --------------------------------------------------------------------------
# files that are not ONNX models

case(
    "missing_file",
    ["lower", "{d}/none.onnx", "-o", "{d}/out"],
    "{d}/none.onnx: no such file or directory",
)
case(
    "missing_dir_artifacts",
    ["lower", "{d}", "-o", "{d}/out"],
    "{d}: artifact directory without training_model.onnx",
)
for i, content in enumerate(
    [
        b"",
        b"hello",
        b"\x00" * 64,
        b"\xff\xfe\xfd",
        b"PK\x03\x04zip",
        b"\x08\x07",
        b'{"json": true}',
        b"\n\n\n",
        b"\x12\x05hello",
        b"ONNX" * 100,
    ]
):
    err = (
        "{d}/m.onnx: not an ONNX model (empty graph)"
        if content in (b"", b"\x08\x07", b"\x12\x05hello")
        else "{d}/m.onnx: not an ONNX model (DecodeError)"
    )
    case(f"not_onnx_{i}", LOWER, err, raw(content))
case(
    "truncated_model",
    LOWER,
    "{d}/m.onnx: not an ONNX model (DecodeError)",
    lambda d: (d / "m.onnx").write_bytes(mlp().SerializeToString()[:-7]),
)
case(
    "checkpoint_not_a_checkpoint",
    ["lower", "{d}", "-o", "{d}/out"],
    "{d}/checkpoint: not an onnxruntime-training checkpoint (RuntimeError)",
    lambda d: (save(mlp(), "training_model.onnx")(d), (d / "checkpoint").write_bytes(b"xx")),
)

# --------------------------------------------------------------------------
# opsets and types

for v in (7, 9, 10, 22, 30):
    case(
        f"opset_{v}",
        LOWER,
        f"{{d}}/m.onnx: opset {v} is not supported (opsets 11 to 21)",
        save(
            model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=v)
        ),
    )
for tname, t in (
    ("DOUBLE", TensorProto.DOUBLE),
    ("FLOAT16", TensorProto.FLOAT16),
    ("INT32", TensorProto.INT32),
    ("UINT8", TensorProto.UINT8),
    ("STRING", TensorProto.STRING),
):
    case(
        f"input_type_{tname.lower()}",
        LOWER,
        f"{{d}}/m.onnx: graph input 'x' has element type {tname}; supported: float, int64, bool",
        save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2], t)], [vi("y", [2], t)])),
    )

# --------------------------------------------------------------------------
# dynamic, zero-sized and huge shapes

for i, shape in enumerate([["batch", 4], [3, "n"], ["b", "c"], [None, 4], [2, None, 3]]):
    sym = next(s for s in shape if not isinstance(s, int))
    case(
        f"dynamic_dim_{i}",
        LOWER,
        f"{{d}}/m.onnx: graph input 'x' has a dynamic dimension '{sym or '?'}': "
        "only static shapes compile",
        save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape)], [vi("y", shape)])),
    )
for i, shape in enumerate([[0, 4], [3, 0], [0]]):
    case(
        f"zero_dim_{i}",
        LOWER,
        "{d}/m.onnx: graph input 'x' has a dimension of size 0",
        save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape)], [vi("y", shape)])),
    )
for i, shape in enumerate([[70000, 70000], [1 << 30, 4], [2, 1 << 31]]):
    n = int(np.prod(shape, dtype=object)) * 4
    case(
        f"huge_input_{i}",
        LOWER,
        f"{{d}}/m.onnx: graph input 'x' needs {n} bytes: more than the 4 GiB a 32-bit "
        "target addresses",
        save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", shape)], [vi("y", shape)])),
    )
case(
    "huge_intermediate",
    LOWER,
    "{d}/m.onnx: "
    "node 'g0' (Gemm): a result of shape [65536, 65536] is larger than the 4 GiB a 32-bit "
    "target addresses",
    save(
        model(
            [helper.make_node("Gemm", ["a", "b"], ["y"], name="g0")],
            [vi("a", [65536, 1]), vi("b", [1, 65536])],
            [vi("y", [65536, 65536])],
        )
    ),
)

# --------------------------------------------------------------------------
# inconsistent shapes


def two(op: str, sa, sb, domain: str = "", name: str = "n0", **attrs) -> Writer:
    return save(
        model(
            [helper.make_node(op, ["a", "b"], ["y"], name=name, domain=domain, **attrs)],
            [vi("a", sa), vi("b", sb)],
            [vi("y", [1])],
        )
    )


case(
    "gemm_inner",
    LOWER,
    "{d}/m.onnx: node 'n0' (Gemm): inner dimensions differ: A gives K=3 (trans_a=0) "
    "but B gives K=4 (trans_b=0)",
    two("Gemm", [2, 3], [4, 5]),
)
case(
    "gemm_inner_transposed",
    LOWER,
    "{d}/m.onnx: node 'n0' (Gemm): inner dimensions differ: A gives K=2 "
    "(trans_a=1) but B gives K=5 (trans_b=1)",
    two("Gemm", [2, 3], [4, 5], transA=1, transB=1),
)
case(
    "gemm_rank",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (Gemm): A and B must have rank 2 or more (batch dims, then a matrix), got 4 and 4x5",
    two("Gemm", [4], [4, 5]),
)
case(
    "gemm_bias",
    LOWER,
    "{d}/m.onnx: node 'n0' (Gemm): bias C of shape 7 does not broadcast to the result 2x5",
    save(
        model(
            [helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="n0")],
            [vi("a", [2, 3]), vi("b", [3, 5]), vi("c", [7])],
            [vi("y", [2, 5])],
        )
    ),
)
case(
    "matmul_inner",
    LOWER,
    "{d}/m.onnx: node 'n0' (MatMul): inner dimensions differ: A gives K=3 "
    "(trans_a=0) but B gives K=2 (trans_b=0)",
    two("MatMul", [2, 3], [2, 3]),
)
case(
    "matmul_rank1",
    LOWER,
    "{d}/m.onnx: node 'n0' (MatMul): MatMul of rank-1 operands is not supported, got ranks [1, 2]",
    two("MatMul", [3], [3, 2]),
)
case(
    "matmul_batch_dims",
    LOWER,
    "{d}/m.onnx: node 'n0' (MatMul): the batch dims of A (2) and B (3) do not broadcast together",
    two("MatMul", [2, 3, 4], [3, 4, 5]),
)
case(
    "matmul_batched_inner",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (MatMul): inner dimensions differ: A gives K=4 (trans_a=0) but B gives K=5 "
    "(trans_b=0)",
    two("MatMul", [2, 3, 4], [5, 6]),
)
case(
    "gemm_batched_bias",
    LOWER,
    "{d}/m.onnx: node 'n0' (Gemm): bias C of shape 4 does not broadcast to the result 2x3x5",
    lambda d: onnx.save(
        model(
            [helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="n0")],
            [vi("a", [2, 3, 4]), vi("b", [4, 5]), vi("c", [4])],
            [vi("y", [1])],
        ),
        d / "m.onnx",
    ),
)
for op in ("Add", "Sub", "Mul", "Div", "Pow"):
    case(
        f"{op.lower()}_broadcast",
        LOWER,
        f"{{d}}/m.onnx: node 'n0' ({op}): shapes 3x4 and 5 do not broadcast together",
        two(op, [3, 4], [5]),
    )
case(
    "relu_grad_shapes",
    LOWER,
    "{d}/m.onnx: node 'n0' (ReluGrad): gradient dY (3) and X (4) must have the same shape",
    two("ReluGrad", [3], [4], domain="com.microsoft"),
)
case(
    "sce_labels_shape",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (SoftmaxCrossEntropyLoss): labels must have shape 2 (one per batch row), got 3",
    sce([2, 5], [3]),
)
case(
    "sce_labels_float",
    LOWER,
    "{d}/m.onnx: node 'n0' (SoftmaxCrossEntropyLoss): labels must have i64 elements, got f32",
    sce([2, 5], [2], label_type=TensorProto.FLOAT),
)
case(
    "sce_rank3",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (SoftmaxCrossEntropyLoss): scores must be rank 2 [batch, classes], got 2x5x3",
    sce([2, 5, 3], [2]),
)
case(
    "sce_reduction_none",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (SoftmaxCrossEntropyLoss): reduction 'none' is not supported (mean, sum)",
    sce([2, 5], [2], loss=[2], reduction="none"),
)
case(
    "dropout_ratio_one",
    LOWER,
    "{d}/m.onnx: node 'n0' (Dropout): ratio 1.0 is not in [0, 1)",
    save(
        model(
            [helper.make_node("Dropout", ["a", "r", "t"], ["y", "m"], name="n0")],
            [vi("a", [2, 3])],
            [vi("y", [2, 3])],
            [init("r", np.float32(1.0)), init("t", np.bool_(True))],
        )
    ),
)
case(
    "dropout_ratio_computed",
    LOWER,
    "{d}/m.onnx: node 'n0' (Dropout): the ratio 'r' must be a constant (an initializer), "
    "it is computed at run time",
    save(
        model(
            [helper.make_node("Dropout", ["a", "r", "t"], ["y", "m"], name="n0")],
            [vi("a", [2, 3]), vi("r", [])],
            [vi("y", [2, 3])],
            [init("t", np.bool_(True))],
        )
    ),
)
case(
    "sce_weights",
    LOWER,
    "{d}/m.onnx: node 'n0' (SoftmaxCrossEntropyLoss): class weights are not supported",
    sce([2, 5], [2], weights=[5]),
)
case(
    "sce_grad_dy_vector",
    LOWER,
    "{d}/m.onnx: node 'n0' (SoftmaxCrossEntropyLossGrad): upstream gradient "
    "dY must be a scalar (the loss is reduced), got 2",
    save(
        model(
            [
                helper.make_node(
                    "SoftmaxCrossEntropyLossGrad",
                    ["dy", "a", "l"],
                    ["y"],
                    name="n0",
                    domain="com.microsoft",
                )
            ],
            [vi("dy", [2]), vi("a", [2, 5]), vi("l", [2], TensorProto.INT64)],
            [vi("y", [2, 5])],
        )
    ),
)
case(
    "reduce_axes_range",
    LOWER,
    "{d}/m.onnx: node 'n0' (ReduceSum): axes [2] out of range for rank 2",
    save(
        model(
            [helper.make_node("ReduceSum", ["a", "ax"], ["y"], name="n0")],
            [vi("a", [2, 3])],
            [vi("y", [2])],
            [init("ax", np.array([2], np.int64))],
        )
    ),
)
case(
    "reduce_axes_not_constant",
    LOWER,
    "{d}/m.onnx: node 'n0' (ReduceSum): input 'ax' must be a constant (an initializer)",
    save(
        model(
            [helper.make_node("ReduceSum", ["a", "ax"], ["y"], name="n0")],
            [vi("a", [2, 3]), vi("ax", [1], TensorProto.INT64)],
            [vi("y", [2])],
        )
    ),
)
case(
    "accumulate_not_input",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (InPlaceAccumulatorV2): the accumulation buffer 't' must be a graph input",
    save(
        model(
            [
                helper.make_node("Relu", ["a"], ["t"]),
                helper.make_node(
                    "InPlaceAccumulatorV2",
                    ["t", "a", "r"],
                    ["f"],
                    name="n0",
                    domain="com.microsoft",
                ),
            ],
            [vi("a", [3]), vi("r", [1], TensorProto.BOOL)],
            [vi("f", [1], TensorProto.BOOL)],
        )
    ),
)
case(
    "accumulate_no_reset",
    LOWER,
    "{d}/m.onnx: node 'n0' (InPlaceAccumulatorV2): the lazy_reset_grad input is required",
    save(
        model(
            [
                helper.make_node(
                    "InPlaceAccumulatorV2", ["buf", "a"], ["f"], name="n0", domain="com.microsoft"
                )
            ],
            [vi("buf", [3]), vi("a", [3])],
            [vi("f", [1], TensorProto.BOOL)],
        )
    ),
)
case(
    "accumulate_shapes",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (InPlaceAccumulatorV2): buffer (3) and gradient (4) must have the same shape",
    save(
        model(
            [
                helper.make_node(
                    "InPlaceAccumulatorV2",
                    ["buf", "a", "r"],
                    ["f"],
                    name="n0",
                    domain="com.microsoft",
                )
            ],
            [vi("buf", [3]), vi("a", [4]), vi("r", [1], TensorProto.BOOL)],
            [vi("f", [1], TensorProto.BOOL)],
        )
    ),
)
case(
    "sgd_no_lr",
    LOWER,
    "{d}/m.onnx: node 'n0' (SGD): SGD needs an 'lr' attribute",
    sgd(np.zeros(3, np.float32), name="n0"),
)
case(
    "sgd_not_parameter",
    LOWER,
    "{d}/m.onnx: node 'n0' (SGD): the updated weight 't' must be a parameter",
    save(
        model(
            [
                helper.make_node("Relu", ["g"], ["t"]),
                helper.make_node("SGD", ["t", "g"], ["w2"], name="n0", lr=0.1),
            ],
            [vi("g", [3])],
            [vi("w2", [3])],
        )
    ),
)
case(
    "sgd_shapes",
    LOWER,
    "{d}/m.onnx: node 'n0' (SGD): weight (3) and gradient (4) must have the same shape",
    sgd(np.zeros(3, np.float32), g=4, name="n0", lr=0.1),
)
case(
    "undefined_input",
    LOWER,
    "{d}/m.onnx: node 'n0' (Relu): input 'ghost' is not defined before use",
    save(
        model(
            [helper.make_node("Relu", ["ghost"], ["y"], name="n0")], [vi("x", [2])], [vi("y", [2])]
        )
    ),
)
case(
    "output_never_computed",
    LOWER,
    "{d}/m.onnx: graph output 'z' is never computed",
    save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("z", [2])])),
)

# --------------------------------------------------------------------------
# unsupported ops (all listed at once, with their node names)

for op, dom in [
    ("Softsign", ""),
    ("HardSigmoid", ""),
    ("Foo", "my.domain"),
    ("Softplus", ""),
]:
    key = f"{dom}:{op}" if dom else op
    case(
        f"unsupported_{op.lower()}",
        LOWER,
        f"{{d}}/m.onnx: unsupported ONNX ops: {key} (nodes: {op.lower()}0)",
        save(unary(op, dom)),
    )
# an optimizer_model.onnx op in a training graph
case(
    "adamw_in_training_graph",
    LOWER,
    "{d}/m.onnx: node 'adamwoptimizer0' (AdamWOptimizer): AdamWOptimizer belongs in "
    "optimizer_model.onnx (onnxruntime-training's artifacts), not in the training graph",
    save(unary("AdamWOptimizer", "com.microsoft")),
)
case(
    "sgdv2_in_training_graph",
    LOWER,
    "{d}/m.onnx: node 'sgdoptimizerv20' (SGDOptimizerV2): SGDOptimizerV2 belongs in "
    "optimizer_model.onnx (onnxruntime-training's artifacts), not in the training graph",
    save(unary("SGDOptimizerV2", "com.microsoft")),
)
# ops that are supported, given inputs they cannot take
case(
    "conv_missing_weight",
    LOWER,
    "{d}/m.onnx: node 'conv0' (Conv): input #1 is missing (Conv needs it)",
    save(unary("Conv")),
)
case(
    "convgrad_missing_input",
    LOWER,
    "{d}/m.onnx: node 'convgrad0' (ConvGrad): input #1 is missing (ConvGrad needs it)",
    save(unary("ConvGrad", "com.microsoft")),
)
case(
    "maxpool_rank2",
    LOWER,
    "{d}/m.onnx: "
    "node 'maxpool0' (MaxPool): only 2-D MaxPool is supported: X must be rank 4 (NCHW), got "
    "shape [2, 3]",
    save(unary("MaxPool", kernel_shape=[2, 2])),
)
case(
    "reshape_missing_shape",
    LOWER,
    "{d}/m.onnx: node 'reshape0' (Reshape): input #1 is missing (Reshape needs it)",
    save(unary("Reshape")),
)
case(
    "unsupported_several",
    LOWER,
    "{d}/m.onnx: unsupported ONNX ops: Bar (nodes: b1); Foo (nodes: f1, f2)",
    save(
        model(
            [
                helper.make_node("Foo", ["x"], ["a"], name="f1"),
                helper.make_node("Bar", ["a"], ["b"], name="b1"),
                helper.make_node("Foo", ["b"], ["y"], name="f2"),
            ],
            [vi("x", [2])],
            [vi("y", [2])],
        )
    ),
)

# --------------------------------------------------------------------------
# parameters

case(
    "nan_initializer",
    LOWER,
    "parameter 'w': initial value holds NaN or Inf",
    sgd(np.array([1, np.nan, 0], np.float32), lr=0.1),
)
case(
    "inf_initializer",
    LOWER,
    "parameter 'w': initial value holds NaN or Inf",
    sgd(np.array([np.inf, 0, 0], np.float32), lr=0.1),
)
case(
    "nan_constant",
    LOWER,
    "{d}/m.onnx: node 'y' (Add): input 'k': a constant (initializer) holds NaN or Inf",
    save(
        model(
            [helper.make_node("Add", ["x", "k"], ["y"])],
            [vi("x", [2])],
            [vi("y", [2])],
            [init("k", np.array([np.nan, 1], np.float32))],
        )
    ),
)
case(
    "params_wrong_shape",
    [*LOWER, "--params", "{d}/p.npz"],
    "parameter 'w': initial value has shape [2] but the graph expects [5, 4]",
    lambda d: (
        save(mlp())(d),
        np.savez(d / "p.npz", w=np.zeros(2, np.float32), b=np.zeros(5, np.float32)),
    ),
)
case(
    "params_nan",
    [*LOWER, "--params", "{d}/p.npz"],
    "parameter 'b': initial value holds NaN or Inf",
    lambda d: (
        save(mlp())(d),
        np.savez(d / "p.npz", w=np.zeros((5, 4), np.float32), b=np.full(5, np.nan, np.float32)),
    ),
)
case(
    "params_missing_file",
    [*LOWER, "--params", "{d}/none.npz"],
    "{d}/none.npz: no such file",
    save(mlp()),
)
case(
    "params_not_npz",
    [*LOWER, "--params", "{d}/p.npz"],
    "{d}/p.npz: not a .npz file (ValueError)",
    lambda d: (save(mlp())(d), (d / "p.npz").write_text("nope")),
)
case(
    "param_without_value",
    ["lower", "{d}", "-o", "{d}/out"],
    "{d}/training_model.onnx: no initial value for parameter 'w' (give a checkpoint or "
    "--params PARAMS.npz)",
    save(
        model(
            [
                helper.make_node(
                    "InPlaceAccumulatorV2",
                    ["w_grad.accumulation.buffer", "w", "r"],
                    ["f"],
                    domain="com.microsoft",
                )
            ],
            [vi("w", [3]), vi("w_grad.accumulation.buffer", [3]), vi("r", [1], TensorProto.BOOL)],
            [vi("f", [1], TensorProto.BOOL)],
        ),
        "training_model.onnx",
    ),
)

# --------------------------------------------------------------------------
# data that does not match the graph

GOOD_X = np.zeros((2, 3, 4), np.float32)
GOOD_L = np.zeros((2, 3), np.int64)
RUN = ["run", M, "--data", "{d}/data.npz", "--steps", "2"]
for i, (arrays, err) in enumerate(
    [
        ({"x": GOOD_X}, "no array for graph input 'labels'"),
        ({"labels": GOOD_L}, "no array for graph input 'x'"),
        (
            {"x": GOOD_X, "labels": GOOD_L, "z": GOOD_L},
            "array 'z' matches no graph input (inputs: x, labels)",
        ),
        (
            {"x": np.zeros((2, 3, 5), np.float32), "labels": GOOD_L},
            "array 'x' has shape [2, 3, 5]; expected [2, 3, 4] (2 mini-batches of the graph "
            "input's "
            "shape [3, 4])",
        ),
        (
            {"x": np.zeros((1, 3, 4), np.float32), "labels": np.zeros((1, 3), np.int64)},
            "array 'x' has shape [1, 3, 4]; expected [2, 3, 4] (2 mini-batches of the graph "
            "input's "
            "shape [3, 4])",
        ),
        (
            {"x": np.zeros((3, 4), np.float32), "labels": GOOD_L},
            "array 'x' has shape [3, 4]; expected [2, 3, 4] (2 mini-batches of the graph input's "
            "shape [3, 4])",
        ),
        (
            {"x": GOOD_X, "labels": np.zeros((2, 4), np.int64)},
            "array 'labels' has shape [2, 4]; expected [2, 3] (2 mini-batches of the graph input's "
            "shape [3])",
        ),
        (
            {"x": GOOD_X, "labels": np.full((2, 3), 5, np.int64)},
            "array 'labels' holds the label 5, outside [0, 5)",
        ),
        (
            {"x": GOOD_X, "labels": np.full((2, 3), -1, np.int64)},
            "array 'labels' holds the label -1, outside [0, 5)",
        ),
        (
            {"x": GOOD_X, "labels": np.zeros((2, 3), np.float32)},
            "array 'labels' must hold integers, got float32",
        ),
        (
            {"x": np.full((2, 3, 4), np.nan, np.float32), "labels": GOOD_L},
            "array 'x' holds NaN or Inf",
        ),
        (
            {"x": np.full((2, 3, 4), np.inf, np.float32), "labels": GOOD_L},
            "array 'x' holds NaN or Inf",
        ),
        (
            {"x": np.array([["a"] * 4] * 3 * 2).reshape(2, 3, 4), "labels": GOOD_L},
            "array 'x' must be numeric, got <U1",
        ),
        (
            {"x": GOOD_X.astype(np.complex64), "labels": GOOD_L},
            "array 'x' must be numeric, got complex64",
        ),
    ]
):
    case(f"data_{i}", RUN, "{d}/data.npz: " + err, with_data(arrays))
case(
    "data_missing", ["run", M, "--data", "{d}/none.npz"], "{d}/none.npz: no such file", save(mlp())
)
case(
    "data_not_npz",
    ["run", M, "--data", "{d}/data.npz"],
    "{d}/data.npz: not a .npz file (ValueError)",
    lambda d: (save(mlp())(d), (d / "data.npz").write_text("x")),
)
case(
    "data_required",
    ["run", M],
    "deeploy-mlir run: error: the following arguments are required: --data",
    save(mlp()),
)

# --------------------------------------------------------------------------
# budgets, pipelines and options

# An L2 budget too small even with every persistent tensor in L3: see
# tests/test_cli_errors.py::test_l2_budget_too_small (the bytes still needed
# depend on the staging plan, so that test checks the message's parts).
for b in ("1", "64", "96"):
    case(
        f"l3_budget_{b}",
        [*LOWER, "--weights-in-l3", "--l3", b],
        # w: 5x4 fp32 = 80 bytes, b: 5 fp32 = 20 bytes, both in L3
        f"the L3 arena needs 100 bytes but the L3 budget is {b} bytes (--l3)",
        save(mlp()),
    )
for i, (pipe, err) in enumerate(
    [
        ("no-such-pass", "Unrecognized passes: ['no-such-pass']"),
        ("arena-plan{level=L9}", "arena-plan: level must be one of L1, L2, L3, got 'L9'"),
        (
            "arena-plan{strategy=best}",
            "arena-plan: strategy must be one of greedy, exact, got 'best'",
        ),
        (
            "arena-plan{bogus=1}",
            'Provided arguments ["bogus"] not found in expected arguments '
            '["level", "strategy", "capacity", "stacks", "name_option", "rlimit"]',
        ),
        ("arena-plan{", "Expected argument name here (pass-pipeline:1:12)"),
        (
            "training-bufferize,arena-plan{capacity=8}",
            "the L2 arena needs 372 bytes but the L2 budget is 8 bytes",
        ),
        (
            "training-inplace-alias",
            "@training_step: argument 'x' has no arena offset (run arena-plan before emitting C)",
        ),
    ]
):
    msg = err if i in (1, 2) or i >= 5 else f"--pass-pipeline '{pipe}': {err}"
    case(f"pipeline_{i}", [*LOWER, "--pass-pipeline", pipe], msg, save(mlp()))
for i, (opts, err) in enumerate(
    [
        (["--steps", "0"], "argument --steps: --steps must be positive, got 0"),
        (["--accum", "-1"], "argument --accum: --accum must be positive, got -1"),
        (["--steps", "x"], "argument --steps: --steps must be an integer, got 'x'"),
        (["--l1", "abc"], "argument --l1: --l1 must be an integer, got 'abc'"),
        (["--l2", "0"], "argument --l2: --l2 must be positive, got 0"),
        (["--l3", "-5"], "argument --l3: --l3 must be positive, got -5"),
        (["--lr", "nan"], "argument --lr: learning rate must be finite, got nan"),
        (["--lr", "inf"], "argument --lr: learning rate must be finite, got inf"),
        (["--lr", "fast"], "argument --lr: learning rate must be a number, got 'fast'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ]
):
    case(
        f"option_{i}",
        [*LOWER, *opts],
        f"deeploy-mlir lower: error: {err}"
        if "unrecognized" not in err
        else f"deeploy-mlir: error: {err}",
        save(mlp()),
    )
# DMA options and passes
case(
    "buffering_unknown",
    [*LOWER, "--buffering", "triple"],
    "deeploy-mlir lower: error: argument --buffering: invalid choice: 'triple' "
    "(choose from 'single', 'double', 'double-l3')",
    save(mlp()),
)
case(
    "home_unknown",
    [*LOWER, "--home", "L4"],
    "deeploy-mlir lower: error: argument --home: invalid choice: 'L4' (choose from 'L2', 'L3')",
    save(mlp()),
)
for name, pipe, err in [
    (
        "memory_home_home",
        "training-bufferize,memory-home{home=L1}",
        "memory-home: home must be one of L2, L3, got 'L1'",
    ),
    (
        "memory_home_stage",
        "training-bufferize,memory-home{stage=halves}",
        "memory-home: stage must be one of whole, tiled, got 'halves'",
    ),
    (
        "tile_select_l3_buffers",
        "training-bufferize,tile-select{l3_buffers=0}",
        "tile-select: l1 must be positive and buffers and l3_buffers at least 1",
    ),
    (
        "tile_select_l2_negative",
        "training-bufferize,tile-select{l2=-1}",
        "tile-select: l2 must not be negative, got -1",
    ),
    (
        "multibuffer_levels",
        "training-bufferize,arena-plan,tile-select,tiling-materialize,dma-multibuffer{levels=l2}",
        "dma-multibuffer: levels must be one of all, l3-only, got 'l2'",
    ),
    (
        "multibuffer_count",
        "training-bufferize,arena-plan,tile-select,tiling-materialize,dma-multibuffer{count=0}",
        "dma-multibuffer: count must be at least 1, got 0",
    ),
    (
        "decompose_engine",
        "training-bufferize,arena-plan,tile-select,tiling-materialize,dma-decompose{engine=x86}",
        "dma-decompose: engine must be one of pulp-open, gap9, mchan, pulp-open-ram, gap9-ram, "
        "got 'x86'",
    ),
    (
        "no_decompose",
        "training-bufferize,arena-plan,tile-select,tiling-materialize,arena-plan{level=L1}",
        "dma.copy without an engine: run dma-decompose{engine=TARGET} first",
    ),
]:
    case(f"dma_{name}", [*LOWER, "--pass-pipeline", pipe], err, save(mlp()))
case(
    "target_unknown",
    [*LOWER, "--target", "x86"],
    "unknown target 'x86' (available: pulp-open, gap9)",
    save(mlp()),
)
case(
    "output_is_a_file",
    ["lower", M, "-o", "{d}/m.onnx"],
    "{d}/m.onnx: exists and is not a directory",
    save(mlp()),
)
case("no_command", [], "deeploy-mlir: error: the following arguments are required: command")
case(
    "unknown_command",
    ["compile"],
    "deeploy-mlir: error: argument command: invalid choice: "
    "'compile' (choose from 'lower', 'run', 'minimal-l1', 'report', 'board', 'test', 'sweep')",
)


# --------------------------------------------------------------------------
# board files (deeploy-mlir board FILE): each field a user can get wrong


def _board(**changes: object) -> Writer:
    """The shipped Siracusa board with `changes` applied ("a.b": value; None
    deletes the field), written as {d}/b.yaml."""
    import yaml
    from board_edits import DELETE, edited, siracusa

    doc = edited(siracusa(), {k: DELETE if v is None else v for k, v in changes.items()})
    return lambda d: (d / "b.yaml").write_text(yaml.safe_dump(doc))


BOARD = ["board", "{d}/b.yaml"]
for name, changes, err in [
    (
        "bandwidth_zero",
        {"engines.mchan.bandwidth": 0},
        "engines.mchan.bandwidth must be > 0, got 0",
    ),
    (
        "bandwidth_negative",
        {"engines.ram.bandwidth": -1.5},
        "engines.ram.bandwidth must be > 0, got -1.5",
    ),
    (
        "bandwidth_text",
        {"engines.ram.bandwidth": "fast"},
        "engines.ram.bandwidth must be a number, got 'fast'",
    ),
    ("l1_zero", {"levels.L1": 0}, "levels.L1 must be >= 1, got 0"),
    ("l2_negative", {"levels.L2": -4}, "levels.L2 must be >= 1, got -4"),
    (
        "l3_4gib",
        {"levels.L3": 1 << 32},
        "levels.L3 must be < 4 GiB (4294967296 bytes), got 4294967296",
    ),
    ("cores_zero", {"cores": 0}, "cores must be >= 1, got 0"),
    ("clock_float", {"clock_hz": 3.6e8}, "clock_hz must be an integer, got 360000000.0"),
    ("unknown_key", {"voltage": 0.8}, "voltage is not a known field"),
    (
        "unknown_engine_key",
        {"engines.mchan.latency": 3},
        "engines.mchan.latency is not a known field",
    ),
    ("missing_cores", {"cores": None}, "cores is missing"),
    ("missing_l3", {"levels.L3": None}, "levels.L3 is missing"),
    ("missing_setup", {"engines.ram.setup": None}, "engines.ram.setup is missing"),
    (
        "bad_hop",
        {"engines.ram.hop": "L3-L1"},
        "engines.ram.hop must be one of L2-L1, L3-L2, got 'L3-L1'",
    ),
    ("rank_three", {"engines.mchan.rank": 3}, "engines.mchan.rank must be 1 or 2, got 3"),
    (
        "shared_text",
        {"engines.ram.shared_request": "yes"},
        "engines.ram.shared_request must be true or false, got 'yes'",
    ),
    ("no_l3_engine", {"engines.ram": None}, "engines has no engine for the L3-L2 hop"),
    (
        "throughput_zero",
        {"kernels.gemm.macs_per_cycle_per_core": 0},
        "kernels.gemm.macs_per_cycle_per_core must be > 0, got 0",
    ),
    ("setup_negative", {"engines.mchan.setup": -30}, "engines.mchan.setup must be >= 0, got -30"),
]:
    case(f"board_{name}", BOARD, f"board '{{d}}/b.yaml': {err}", _board(**changes))
case(
    "board_not_yaml",
    BOARD,
    "board '{d}/b.yaml': not valid YAML at line 2",
    lambda d: (d / "b.yaml").write_text("cores: [8\n"),
)  # an unclosed list, found at the end
case(
    "board_not_mapping",
    BOARD,
    "board '{d}/b.yaml': the file must be a mapping, got list",
    lambda d: (d / "b.yaml").write_text("- 8\n"),
)
case(
    "board_missing_file",
    ["board", "{d}/none.yaml"],
    "board '{d}/none.yaml': cannot read it (No such file or directory)",
)
case(
    "board_unknown_name",
    ["board", "sirakusa"],
    "unknown board 'sirakusa' (available: gap9_evk, pulp_slowram, siracusa, siracusa_zfinx)",
)


# --------------------------------------------------------------------------
# memory regimes (--regime, --board, memory-regime) and report --plot

case(
    "regime_unknown",
    [*LOWER, "--regime", "fast"],
    "deeploy-mlir lower: error: argument --regime: invalid choice: 'fast' "
    "(choose from 'auto', 'resident', 'spill', 'stream')",
    save(mlp()),
)
case(
    "regime_board_unknown",
    [*LOWER, "--board", "sirakusa"],
    "unknown board 'sirakusa' (available: gap9_evk, pulp_slowram, siracusa, siracusa_zfinx)",
    save(mlp()),
)
case(
    "regime_board_missing_file",
    [*LOWER, "--board", "{d}/none.yaml"],
    "board '{d}/none.yaml': cannot read it (No such file or directory)",
    save(mlp()),
)


def _mlp_and_board(**changes: object) -> Writer:
    board = _board(**changes)
    return lambda d: (save(mlp())(d), board(d))


case(
    "regime_board_bad_field",
    ["report", M, "--board", "{d}/b.yaml"],
    "board '{d}/b.yaml': engines.mchan.bandwidth must be > 0, got 0",
    _mlp_and_board(**{"engines.mchan.bandwidth": 0}),
)
# mlp() streamed: x (48 B) and labels (24 B) stay in L2 for the whole step;
# the op that stages the most through L2 is the gemm (w 80 + b 20 + logits 60
# = 160; the SGD of w stages w 80 + dw 80 = 160 too): 72 + 160 = 232 bytes.
case(
    "regime_forced_does_not_fit",
    [*LOWER, "--regime", "stream", "--l2", "200"],
    "memory-regime: regime 'stream' needs 232 bytes of L2 but the L2 capacity is 200 bytes "
    "(l2=200)",
    save(mlp()),
)
case(
    "regime_auto_nothing_fits",
    [*LOWER, "--regime", "auto", "--l2", "200"],
    "memory-regime: no regime fits: regime 'stream' needs 232 bytes of L2 but the L2 capacity "
    "is 200 bytes (l2=200)",
    save(mlp()),
)
case(
    "regime_with_weights_in_l3",
    [*LOWER, "--regime", "spill", "--weights-in-l3"],
    "--regime/--board choose where tensors live: do not combine them with --weights-in-l3 or "
    "--home L3",
    save(mlp()),
)
for name, pipe, err in [
    (
        "regime",
        "training-bufferize,memory-regime{regime=fast}",
        "memory-regime: regime must be one of auto, resident, spill, stream, got 'fast'",
    ),
    (
        "negative_l2",
        "training-bufferize,memory-regime{l2=-1}",
        "memory-regime: l2 and l3 must not be negative, got l2=-1 l3=0",
    ),
    (
        "tensor_form",
        "memory-regime",
        "memory-regime: expects buffer-form IR (run it right after training-bufferize)",
    ),
    (
        "after_memory_home",
        "training-bufferize,memory-home{weights=L3},memory-regime",
        "memory-regime: expects every tensor in L2 (run it right after training-bufferize, "
        "instead of memory-home)",
    ),
]:
    case(f"memory_regime_{name}", [*LOWER, "--pass-pipeline", pipe], err, save(mlp()))
case(
    "plot_not_png",
    ["report", M, "--plot", "{d}/cycles.txt"],
    "--plot {d}/cycles.txt: must name a .png file",
    save(mlp()),
)
case(
    "plot_no_directory",
    ["report", M, "--plot", "{d}/nodir/cycles.png"],
    "--plot {d}/nodir/cycles.png: the directory {d}/nodir does not exist",
    save(mlp()),
)
case(
    "plot_is_a_directory",
    ["report", M, "--plot", "{d}/cycles.png"],
    "--plot {d}/cycles.png: is a directory",
    lambda d: (save(mlp())(d), (d / "cycles.png").mkdir()),
)


# --------------------------------------------------------------------------
# transformer ops: attributes and shapes the importer refuses


def one(op: str, shape, domain: str = "", n_in: int = 1, **attrs) -> Writer:
    """A node `op` named n0 reading x (shape) n_in times."""
    return save(
        model(
            [helper.make_node(op, ["x"] * n_in, ["y"], name="n0", domain=domain, **attrs)],
            [vi("x", shape)],
            [vi("y", [1])],
            opset=20,
        )
    )


for name, op, shape, dom, n_in, attrs, err in [
    ("softmax_axis", "Softmax", [2, 3], "", 1, {"axis": 2}, "axis 2 is out of range for rank 2"),
    (
        "softmax_grad_middle_axis",
        "SoftmaxGrad",
        [2, 3, 4],
        "com.microsoft",
        2,
        {"axis": 1},
        "SoftmaxGrad flattens its input to 2-D at axis 1; only the last axis (2) is supported "
        "for rank 3",
    ),
    (
        "gelu_tanh",
        "Gelu",
        [4],
        "",
        1,
        {"approximate": "tanh"},
        "approximate = 'tanh' is not supported (only the erf form)",
    ),
    (
        "transpose_perm",
        "Transpose",
        [2, 3],
        "",
        1,
        {"perm": [1, 1]},
        "perm [1, 1] is not a permutation of the 2 dims",
    ),
    (
        "layer_norm_stash",
        "LayerNormalization",
        [2, 4],
        "",
        2,
        {"stash_type": 0},
        "stash_type 0 is not supported (only 1: float)",
    ),
    (
        "layer_norm_axis",
        "LayerNormalization",
        [2, 4],
        "",
        2,
        {"axis": -3},
        "axis -3 is out of range for rank 2",
    ),
    (
        "layer_norm_grad_inputs",
        "LayerNormalizationGrad",
        [2, 4],
        "com.microsoft",
        2,
        {},
        "expects (dY, X, scale, Mean, InvStdDev) or Deeploy's (dY, X, scale, bias), got 2 inputs",
    ),
]:
    case(name, LOWER, f"{{d}}/m.onnx: node 'n0' ({op}): {err}", one(op, shape, dom, n_in, **attrs))
case(
    "squeeze_wide_axis",
    LOWER,
    "{d}/m.onnx: node 'n0' (Squeeze): cannot squeeze axis 1 of size 3 (input shape [2, 3])",
    lambda d: onnx.save(
        model(
            [helper.make_node("Squeeze", ["x", "ax"], ["y"], name="n0")],
            [vi("x", [2, 3])],
            [vi("y", [1])],
            [init("ax", np.array([1], np.int64))],
        ),
        d / "m.onnx",
    ),
)
case(
    "layer_norm_scale_shape",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (LayerNormalization): scale must have the normalized shape 4 (X's dims from "
    "axis 1), got 3",
    lambda d: onnx.save(
        model(
            [helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="n0")],
            [vi("x", [2, 4]), vi("s", [3])],
            [vi("y", [1])],
        ),
        d / "m.onnx",
    ),
)
case(
    "layer_norm_grad_dscale_without_stats",
    LOWER,
    "{d}/m.onnx: node 'n0' (LayerNormalizationGrad): dScale and dBias need the forward's Mean and "
    "InvStdDev as inputs #3 and #4",
    lambda d: onnx.save(
        model(
            [
                helper.make_node(
                    "LayerNormalizationGrad",
                    ["x", "x", "s"],
                    ["dx", "ds"],
                    name="n0",
                    domain="com.microsoft",
                )
            ],
            [vi("x", [2, 4]), vi("s", [4])],
            [vi("ds", [4])],
        ),
        d / "m.onnx",
    ),
)

# --------------------------------------------------------------------------
# deeploy-mlir test DIR: Deeploy's test folders (network.onnx, inputs.npz,
# outputs.npz)


def folder(
    inputs: dict[str, np.ndarray] | bytes | None,
    outputs: dict[str, np.ndarray] | None,
    network: bool = True,
) -> Writer:
    """A test folder around a Relu of x [2, 3]."""

    def w(d: Path) -> None:
        if network:
            onnx.save(
                model(
                    [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])]
                ),
                d / "network.onnx",
            )
        if isinstance(inputs, bytes):
            (d / "inputs.npz").write_bytes(inputs)
        elif inputs is not None:
            np.savez(d / "inputs.npz", **inputs)
        if outputs is not None:
            np.savez(d / "outputs.npz", **outputs)

    return w


X23 = np.zeros((2, 3), np.float32)
TEST = ["test", "{d}"]
case(
    "test_not_a_folder",
    ["test", "{d}/none"],
    "{d}/none: not a directory (a test folder holds network.onnx, inputs.npz, outputs.npz)",
)
case(
    "test_no_network", TEST, "{d}/network.onnx: no such file", folder({"x": X23}, {"y": X23}, False)
)
case("test_no_inputs", TEST, "{d}/inputs.npz: no such file", folder(None, {"y": X23}))
case("test_no_outputs", TEST, "{d}/outputs.npz: no such file", folder({"x": X23}, None))
case(
    "test_inputs_not_npz",
    TEST,
    "{d}/inputs.npz: not a .npz file (ValueError)",
    folder(b"garbage", {"y": X23}),
)
case(
    "test_too_few_inputs",
    TEST,
    "{d}/inputs.npz: holds 0 arrays but the graph has 1 inputs (x)",
    folder({}, {"y": X23}),
)
case(
    "test_input_size",
    TEST,
    "{d}/inputs.npz: array 'x' has shape [5] (5 elements) but graph input 'x' has shape [2, 3] "
    "(6 elements)",
    folder({"x": np.zeros(5, np.float32)}, {"y": X23}),
)
case(
    "test_input_nan",
    TEST,
    "{d}/inputs.npz: array 'x' holds NaN or Inf",
    folder({"x": np.full((2, 3), np.nan, np.float32)}, {"y": X23}),
)
case(
    "test_input_strings",
    TEST,
    "{d}/inputs.npz: array 'x' is not numeric (<U1)",
    folder({"x": np.array([["a"] * 3] * 2)}, {"y": X23}),
)
case("test_no_expected", TEST, "{d}/outputs.npz: holds no arrays", folder({"x": X23}, {}))
case(
    "test_output_count",
    TEST,
    "{d}/outputs.npz: holds 2 arrays but the graph has 1 outputs (y)",
    folder({"x": X23}, {"y": X23, "z": X23}),
)
case(
    "test_output_size",
    TEST,
    "{d}/outputs.npz: array 'y' has 4 elements but graph output 'y' has 6",
    folder({"x": X23}, {"y": np.zeros(4, np.float32)}),
)
for value in ("-1", "nan", "x"):
    msg = (
        f"--atol must be a number, got '{value}'"
        if value == "x"
        else f"--atol must be a non-negative number, got {value}"
    )
    case(
        f"test_atol_{'neg' if value == '-1' else value}",
        [*TEST, "--atol", value],
        f"deeploy-mlir test: error: argument --atol: {msg}",
        folder({"x": X23}, {"y": X23}),
    )


# --------------------------------------------------------------------------
# issue 17: budgets, mini-batch counts and learning rates out of range

OPT_ERR = "deeploy-mlir lower: error: argument "
for name, opts, err in [
    (
        "l1_huge",
        ["--l1", "10000000000000"],
        "--l1: --l1 must be at most 4294967295 (a 32-bit target addresses 4 GiB), got "
        "10000000000000",
    ),
    (
        "l2_4gib",
        ["--l2", "4294967296"],
        "--l2: --l2 must be at most 4294967295 (a 32-bit target addresses 4 GiB), got 4294967296",
    ),
    (
        "l3_hex_huge",
        ["--l3", "0x1000000000"],
        "--l3: --l3 must be at most 4294967295 (a 32-bit target addresses 4 GiB), got 68719476736",
    ),
    ("lr_negative", ["--lr", "-0.5"], "--lr: learning rate must be positive, got -0.5"),
    ("lr_zero", ["--lr", "0"], "--lr: learning rate must be positive, got 0"),
    ("lr_negative_zero", ["--lr", "-0.0"], "--lr: learning rate must be positive, got -0.0"),
    (
        "lr_overflows_fp32",
        ["--lr", "1e40"],
        "--lr: learning rate 1e40 does not fit a float32 (at most 3.4028235e+38)",
    ),
    ("lr_underflows_fp32", ["--lr", "1e-46"], "--lr: learning rate 1e-46 is 0 as a float32"),
]:
    case(name, [*LOWER, *opts], OPT_ERR + err, save(mlp()))
# mlp(): x [3, 4] float32 (48 bytes) and labels [3] int64 (24 bytes) per mini-batch
case(
    "steps_accum_zero_data_too_large",
    [*LOWER, "--steps", "1000000", "--accum", "100"],
    "--steps 1000000 x --accum 100 = 100000000 mini-batches of 72 bytes of inputs need "
    "7200000000 bytes of data: more than the 4 GiB a 32-bit target addresses",
    save(mlp()),
)
case(
    "steps_accum_data_too_large",
    [*RUN[:4], "--steps", "60000000"],
    "--steps 60000000 x --accum 1 = 60000000 mini-batches of 72 bytes of inputs need "
    "4320000000 bytes of data: more than the 4 GiB a 32-bit target addresses",
    with_data({"x": GOOD_X, "labels": GOOD_L}),
)
case(
    "steps_accum_count",
    [*LOWER, "--steps", "65536", "--accum", "65536"],
    "--steps 65536 x --accum 65536 = 4294967296 mini-batches: more than the 4294967295 the "
    "harness counts (32-bit)",
    save(mlp()),
)

# --------------------------------------------------------------------------
# data arrays of the wrong dtype, hostile .npz files


def _npy_member(name: str, header_shape: tuple[int, ...], payload: bytes = b"") -> Writer:
    """data.npz whose member `name` claims `header_shape` float32 in its .npy
    header but holds only `payload` (a header can claim anything)."""
    import io
    import zipfile

    def w(d: Path) -> None:
        onnx.save(mlp(), d / "m.onnx")
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            buf, {"descr": "<f4", "fortran_order": False, "shape": header_shape}
        )
        with zipfile.ZipFile(d / "data.npz", "w") as z:
            z.writestr(f"{name}.npy", buf.getvalue() + payload)
            z.writestr("labels.npy", _npy_bytes(GOOD_L))

    return w


def _npy_bytes(arr: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _zip_with(members: dict[str, bytes], name: str = "data.npz") -> Writer:
    import zipfile

    def w(d: Path) -> None:
        onnx.save(mlp(), d / "m.onnx")
        with zipfile.ZipFile(d / name, "w") as z:
            for k, v in members.items():
                z.writestr(k, v)

    return w


DATA = "{d}/data.npz: "
for name, arrays, err in [
    (
        "x_float64",
        {"x": GOOD_X.astype(np.float64), "labels": GOOD_L},
        "array 'x' has dtype float64; expected float32 (or a dtype that converts to it exactly)",
    ),
    (
        "x_int64",
        {"x": GOOD_X.astype(np.int64), "labels": GOOD_L},
        "array 'x' has dtype int64; expected float32 (or a dtype that converts to it exactly)",
    ),
    (
        "x_int32",
        {"x": GOOD_X.astype(np.int32), "labels": GOOD_L},
        "array 'x' has dtype int32; expected float32 (or a dtype that converts to it exactly)",
    ),
    (
        "labels_uint64",
        {"x": GOOD_X, "labels": GOOD_L.astype(np.uint64)},
        "array 'labels' has dtype uint64; expected int64 (or a dtype that converts to it exactly)",
    ),
    ("labels_bool", {"x": GOOD_X, "labels": GOOD_L.astype(bool)}, None),
    (
        "x_scalar",
        {"x": np.float32(1), "labels": GOOD_L},
        "array 'x' has shape []; expected [2, 3, 4] (2 mini-batches of the graph input's shape "
        "[3, 4])",
    ),
    (
        "x_float16_nan",
        {"x": np.full((2, 3, 4), np.nan, np.float16), "labels": GOOD_L},
        "array 'x' holds NaN or Inf",
    ),
    (
        "x_bytes",
        {"x": np.zeros((2, 3, 4), "S2"), "labels": GOOD_L},
        "array 'x' must be numeric, got |S2",
    ),
]:
    if err is None:  # bool labels: kind 'b' is not an integer kind for labels
        err = "array 'labels' must hold integers, got bool"
    case(f"data_{name}", RUN, DATA + err, with_data(arrays))
case(
    "data_object_array",
    RUN,
    DATA + "array 'x' holds Python objects",
    lambda d: (
        onnx.save(mlp(), d / "m.onnx"),
        np.savez(d / "data.npz", x=np.array([1, "a"], dtype=object), labels=GOOD_L),
    ),
)
case(
    "data_one_npy",
    RUN,
    DATA + "not a .npz file (one .npy array, not a zip of named arrays)",
    lambda d: (onnx.save(mlp(), d / "m.onnx"), (d / "data.npz").write_bytes(_npy_bytes(GOOD_X))),
)
case(
    "data_text_member",
    RUN,
    DATA + "member 'readme.txt' is not a .npy array",
    _zip_with({"x.npy": _npy_bytes(GOOD_X), "readme.txt": b"hello"}),
)
case(
    "data_header_claims_64gib",
    RUN,
    DATA + "array 'x' of shape [4294967296, 4] needs 68719476736 bytes: more than the 4 GiB a "
    "32-bit target addresses",
    _npy_member("x", (1 << 32, 4)),
)
case(
    "data_header_longer_than_data",
    RUN,
    DATA + "not a .npz file (ValueError)",
    _npy_member("x", (2, 3, 4), b"\x00" * 8),
)
case(
    "data_truncated_zip",
    RUN,
    DATA + "not a .npz file (BadZipFile)",
    lambda d: (
        onnx.save(mlp(), d / "m.onnx"),
        np.savez(d / "full.npz", x=GOOD_X, labels=GOOD_L),
        (d / "data.npz").write_bytes((d / "full.npz").read_bytes()[:300]),
    ),
)

# --------------------------------------------------------------------------
# --params: arrays that are not parameters, or of the wrong dtype

PARAMS = [*LOWER, "--params", "{d}/p.npz"]
W54 = np.zeros((5, 4), np.float32)
B5 = np.zeros(5, np.float32)
for name, arrays, err in [
    (
        "extra_array",
        {"w": W54, "b": B5, "bias2": B5},
        "{d}/p.npz: array 'bias2' matches no parameter of the graph (parameters: w, b)",
    ),
    (
        "scalar",
        {"w": np.float32(0), "b": B5},
        "parameter 'w': initial value has shape [] but the graph expects [5, 4]",
    ),
    (
        "float64",
        {"w": W54.astype(np.float64), "b": B5},
        "parameter 'w': initial value has dtype float64; expected float32 (or a dtype that "
        "converts to it exactly)",
    ),
    (
        "int64",
        {"w": W54, "b": B5.astype(np.int64)},
        "parameter 'b': initial value has dtype int64; expected float32 (or a dtype that "
        "converts to it exactly)",
    ),
    (
        "strings",
        {"w": W54, "b": np.array(["a"] * 5)},
        "parameter 'b': initial value has dtype <U1; expected float32 (or a dtype that "
        "converts to it exactly)",
    ),
]:
    case(
        f"params_{name}",
        PARAMS,
        err,
        lambda d, arrays=arrays: (save(mlp())(d), np.savez(d / "p.npz", **arrays)),
    )
case(
    "params_object_array",
    PARAMS,
    "{d}/p.npz: array 'w' holds Python objects",
    lambda d: (save(mlp())(d), np.savez(d / "p.npz", w=np.array([None]), b=B5)),
)

# --------------------------------------------------------------------------
# initializers whose data does not match their declaration


def _with_init(t: onnx.TensorProto) -> Writer:
    """x + k with the initializer k given as a TensorProto."""
    return save(
        model(
            [helper.make_node("Add", ["x", "k"], ["y"], name="n0")],
            [vi("x", [5, 4])],
            [vi("y", [5, 4])],
            [t],
        )
    )


def _raw(dims: list[int], data: bytes, dtype: int = TensorProto.FLOAT) -> onnx.TensorProto:
    """An initializer k declared with `dims` holding `data` as raw bytes, as a
    hostile file can (onnx.helper checks the size, a protobuf does not)."""
    t = onnx.TensorProto(name="k", data_type=dtype, raw_data=data)
    t.dims.extend(dims)
    return t


def _floats_init(dims: list[int], values: list[float]) -> onnx.TensorProto:
    t = onnx.TensorProto(name="k", data_type=TensorProto.FLOAT)
    t.dims.extend(dims)
    t.float_data.extend(values)
    return t


INIT = "{d}/m.onnx: initializer 'k'"
case(
    "init_raw_data_short",
    LOWER,
    f"{INIT} holds 12 bytes of data but its shape [5, 4] of FLOAT needs 80",
    _with_init(_raw([5, 4], b"\x00" * 12)),
)
case(
    "init_raw_data_long",
    LOWER,
    f"{INIT} holds 84 bytes of data but its shape [5, 4] of FLOAT needs 80",
    _with_init(_raw([5, 4], b"\x00" * 84)),
)
case(
    "init_float_data_short",
    LOWER,
    f"{INIT}: its data does not match its shape [5, 4] of FLOAT (cannot reshape array of size "
    "3 into shape (5,4))",
    _with_init(_floats_init([5, 4], [1.0, 2.0, 3.0])),
)
case(
    "init_negative_dim",
    LOWER,
    f"{INIT} has a negative dimension: shape [-1, 4]",
    _with_init(_raw([-1, 4], b"")),
)
case(
    "init_huge",
    LOWER,
    f"{INIT} of shape [70000, 70000] needs 19600000000 bytes: more than the 4 GiB a 32-bit "
    "target addresses",
    _with_init(_raw([70000, 70000], b"")),
)
case(
    "init_string",
    LOWER,
    f"{INIT} has element type STRING: not a numeric tensor",
    _with_init(helper.make_tensor("k", TensorProto.STRING, [1], [b"a"])),
)


def _external() -> onnx.TensorProto:
    t = _raw([5, 4], b"")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "../../../etc/passwd"
    return t


case(
    "init_external_data",
    LOWER,
    f"{INIT} keeps its data in an external file: not supported (save the model with its "
    "data inside)",
    _with_init(_external()),
)
case(
    "init_int32_constant",
    LOWER,
    "{d}/m.onnx: node 'n0' (Add): input 'k': constant of dtype int32 is not supported",
    _with_init(init("k", np.ones((5, 4), np.int32))),
)
case(
    "init_double_beyond_float32",
    LOWER,
    "{d}/m.onnx: "
    "node 'n0' (Add): input 'k': a constant (initializer) holds values beyond float32's range",
    _with_init(init("k", np.full((5, 4), 1e300))),
)
case(
    "sgd_double_parameter",
    LOWER,
    "parameter 'w': initial value has dtype float64; expected float32 (or a dtype that "
    "converts to it exactly)",
    sgd(np.array([0.1, 0.2, 0.3]), lr=0.1),
)

# --------------------------------------------------------------------------
# graphs whose names do not add up

RELU_X = [vi("x", [2])]


def _graph(nodes, inputs=RELU_X, outputs=None, inits=()) -> Writer:
    return save(model(nodes, inputs, outputs if outputs is not None else [vi("y", [2])], inits))


case(
    "graph_without_nodes",
    LOWER,
    "{d}/m.onnx: the graph has no nodes",
    _graph([], outputs=[vi("x", [2])]),
)
case(
    "two_nodes_write_one_tensor",
    LOWER,
    "{d}/m.onnx: node 'b' (Relu): output 'y' is also written by node 'a' (Relu)",
    _graph([helper.make_node("Relu", ["x"], ["y"], name=n) for n in ("a", "b")]),
)
case(
    "node_writes_graph_input",
    LOWER,
    "{d}/m.onnx: node 'a' (Relu): output 'x' is a graph input",
    _graph([helper.make_node("Relu", ["x"], ["x"], name="a")], outputs=[vi("x", [2])]),
)
case(
    "node_writes_initializer",
    LOWER,
    "{d}/m.onnx: node 'a' (Relu): output 'k' is an initializer",
    _graph(
        [helper.make_node("Relu", ["x"], ["k"], name="a")],
        outputs=[vi("k", [2])],
        inits=[init("k", np.zeros(2, np.float32))],
    ),
)
case(
    "duplicate_graph_output",
    LOWER,
    "{d}/m.onnx: graph output 'y' is listed twice",
    _graph([helper.make_node("Relu", ["x"], ["y"])], outputs=[vi("y", [2]), vi("y", [2])]),
)
case(
    "duplicate_graph_input",
    LOWER,
    "{d}/m.onnx: graph input 'x' is listed twice",
    _graph([helper.make_node("Relu", ["x"], ["y"])], inputs=[vi("x", [2]), vi("x", [2])]),
)
case(
    "duplicate_initializer",
    LOWER,
    "{d}/m.onnx: initializer 'k' is listed twice",
    _graph(
        [helper.make_node("Add", ["x", "k"], ["y"])],
        inits=[init("k", np.zeros(2, np.float32)), init("k", np.ones(2, np.float32))],
    ),
)
case(
    "node_without_outputs",
    LOWER,
    "{d}/m.onnx: node 'r' (Relu): has no outputs",
    _graph([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["x"], [], name="r")]),
)
case(
    "unnamed_node_without_outputs",
    LOWER,
    "{d}/m.onnx: node '#1' (Relu): has no outputs",
    _graph([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["x"], [""])]),
)
case(
    "same_c_name",
    LOWER,
    "{d}/m.onnx: 'a.b' and 'a_b' have the same C name 'a_b': rename one",
    _graph(
        [helper.make_node("Add", ["a.b", "a_b"], ["y"])],
        inputs=[vi("a.b", [2]), vi("a_b", [2])],
    ),
)


def _not_utf8_name(d: Path) -> None:
    data = bytearray(mlp().SerializeToString())
    i = data.find(b"logits")
    data[i + 1] = 0xFF  # a name that is not UTF-8: protobuf hands it out as bytes
    (d / "m.onnx").write_bytes(bytes(data))


case(
    "model_is_a_device",
    ["lower", "/dev/null", "-o", "{d}/out"],
    "/dev/null: not a regular file",
)
case(
    "data_is_a_directory",
    ["run", M, "--data", "{d}"],
    "{d}: not a regular file",
    save(mlp()),
)
case(
    "params_is_a_device",
    [*LOWER, "--params", "/dev/zero"],
    "/dev/zero: not a regular file",
    save(mlp()),
)
case(
    "name_not_utf8",
    LOWER,
    "{d}/m.onnx: not an ONNX model (the name b'l\\xffgits' is not UTF-8 text)",
    _not_utf8_name,
)
case(
    "no_default_opset",
    LOWER,
    "{d}/m.onnx: the model imports no default-domain opset",
    lambda d: onnx.save(
        helper.make_model(
            helper.make_graph(
                [helper.make_node("Relu", ["x"], ["y"])], "g", RELU_X, [vi("y", [2])]
            ),
            opset_imports=[helper.make_opsetid("com.microsoft", 1)],
        ),
        d / "m.onnx",
    ),
)


def _sequence_input(d: Path) -> None:
    seq = helper.make_tensor_sequence_value_info("x", TensorProto.FLOAT, [2])
    onnx.save(model([helper.make_node("Relu", ["x"], ["y"])], [seq], [vi("y", [2])]), d / "m.onnx")


case("input_not_a_tensor", LOWER, "{d}/m.onnx: graph input 'x' is not a tensor", _sequence_input)

# --------------------------------------------------------------------------
# attributes of the wrong type or value


def _gemm(**attrs) -> Writer:
    return save(
        model(
            [helper.make_node("Gemm", ["a", "b"], ["y"], name="n0", **attrs)],
            [vi("a", [2, 3]), vi("b", [3, 4])],
            [vi("y", [2, 4])],
        )
    )


def _attr(name: str, value, kind: int) -> onnx.AttributeProto:
    """An attribute of the given type whatever the value's Python type."""
    a = onnx.AttributeProto(name=name, type=kind)
    if kind == onnx.AttributeProto.FLOAT:
        a.f = value
    elif kind == onnx.AttributeProto.INT:
        a.i = value
    elif kind == onnx.AttributeProto.STRING:
        a.s = value
    elif kind == onnx.AttributeProto.FLOATS:
        a.floats.extend(value)
    return a


def _with_attr(w_node: onnx.NodeProto, *attrs: onnx.AttributeProto) -> onnx.NodeProto:
    w_node.attribute.extend(attrs)
    return w_node


AP = onnx.AttributeProto
for name, node, inputs, err in [
    (
        "gemm_transa_float",
        _with_attr(
            helper.make_node("Gemm", ["a", "b"], ["y"], name="n0"), _attr("transA", 1.0, AP.FLOAT)
        ),
        [vi("a", [2, 3]), vi("b", [3, 4])],
        "{d}/m.onnx: node 'n0' (Gemm): attribute 'transA' must be INT, got FLOAT",
    ),
    (
        "gemm_alpha_string",
        _with_attr(
            helper.make_node("Gemm", ["a", "b"], ["y"], name="n0"), _attr("alpha", b"2", AP.STRING)
        ),
        [vi("a", [2, 3]), vi("b", [3, 4])],
        "{d}/m.onnx: node 'n0' (Gemm): attribute 'alpha' must be FLOAT, got STRING",
    ),
    (
        "gemm_alpha_inf",
        helper.make_node("Gemm", ["a", "b"], ["y"], name="n0", alpha=float("inf")),
        [vi("a", [2, 3]), vi("b", [3, 4])],
        "{d}/m.onnx: node 'n0' (Gemm): attribute 'alpha' must be finite, got inf",
    ),
    (
        "softmax_axis_string",
        _with_attr(
            helper.make_node("Softmax", ["a"], ["y"], name="n0"), _attr("axis", b"1", AP.STRING)
        ),
        [vi("a", [2, 3])],
        "{d}/m.onnx: node 'n0' (Softmax): attribute 'axis' must be INT, got STRING",
    ),
    (
        "layer_norm_epsilon_nan",
        helper.make_node("LayerNormalization", ["a", "s"], ["y"], name="n0", epsilon=float("nan")),
        [vi("a", [2, 3]), vi("s", [3])],
        "{d}/m.onnx: node 'n0' (LayerNormalization): attribute 'epsilon' must be finite, got nan",
    ),
    (
        "conv_strides_floats",
        _with_attr(
            helper.make_node("Conv", ["a", "w"], ["y"], name="n0"),
            _attr("strides", [1.0, 1.0], AP.FLOATS),
        ),
        [vi("a", [1, 1, 4, 4]), vi("w", [1, 1, 3, 3])],
        "{d}/m.onnx: node 'n0' (Conv): attribute 'strides' must be INTS, got FLOATS",
    ),
    (
        "sgd_lr_string",
        _with_attr(
            helper.make_node("SGD", ["a", "b"], ["y"], name="n0"), _attr("lr", b"0.1", AP.STRING)
        ),
        [vi("a", [2]), vi("b", [2])],
        "{d}/m.onnx: node 'n0' (SGD): attribute 'lr' must be FLOAT, got STRING",
    ),
    (
        "sgd_lr_inf",
        helper.make_node("SGD", ["a", "b"], ["y"], name="n0", lr=float("inf")),
        [vi("a", [2]), vi("b", [2])],
        "{d}/m.onnx: node 'n0' (SGD): attribute 'lr' must be finite, got inf",
    ),
    (
        "sce_grad_reduction_int",
        _with_attr(
            helper.make_node(
                "SoftmaxCrossEntropyLossGrad", ["a", "l"], ["y"], name="n0", domain="com.microsoft"
            ),
            _attr("reduction", 1, AP.INT),
        ),
        [vi("a", [2, 3]), vi("l", [2], TensorProto.INT64)],
        "{d}/m.onnx: "
        "node 'n0' (SoftmaxCrossEntropyLossGrad): attribute 'reduction' must be STRING, got INT",
    ),
]:
    case(name, LOWER, err, save(model([node], inputs, [vi("y", [2])])))
for name, lr in (("negative", -0.1), ("zero", 0.0)):
    case(
        f"sgd_lr_{name}",
        LOWER,
        f"{{d}}/m.onnx: node 'n0' (SGD): lr must be positive, got {lr:g}",
        sgd(np.zeros(3, np.float32), name="n0", lr=lr),
    )

# --------------------------------------------------------------------------
# pass pipelines in the wrong order: each pass checks its input form

for name, pipe, err in [
    (
        "tile_select_before_bufferize",
        "tile-select,training-bufferize,arena-plan",
        "tile-select: expects buffer-form IR (run training-bufferize first)",
    ),
    (
        "bufferize_twice",
        "training-bufferize,training-bufferize",
        "training-bufferize: expects tensor-form IR (run it before training-bufferize, once)",
    ),
    (
        "inplace_after_bufferize",
        "training-bufferize,training-inplace-alias,arena-plan",
        "training-inplace-alias: expects tensor-form IR (run it before training-bufferize, once)",
    ),
    (
        "arena_plan_on_tensors",
        "arena-plan",
        "arena-plan: expects buffer-form IR (run training-bufferize first)",
    ),
    (
        "materialize_without_select",
        "training-bufferize,tiling-materialize,arena-plan",
        "tiling-materialize: finds no tile choices (run tile-select first)",
    ),
    (
        "tile_select_twice",
        "training-bufferize,tile-select,tile-select",
        "tile-select: expects IR without tile choices (run it once, before tiling-materialize)",
    ),
    (
        "tile_select_after_materialize",
        "training-bufferize,tile-select,tiling-materialize,tile-select",
        "tile-select: expects IR without tile choices (run it once, before tiling-materialize)",
    ),
    (
        "multibuffer_without_tiles",
        "training-bufferize,dma-multibuffer,arena-plan",
        "dma-multibuffer: finds no tile copies (run tile-select and tiling-materialize first)",
    ),
    (
        "multibuffer_before_materialize",
        "training-bufferize,tile-select,dma-multibuffer",
        "dma-multibuffer: finds tile choices not yet materialized (run tiling-materialize first)",
    ),
    (
        "multibuffer_after_decompose",
        "training-bufferize,arena-plan,tile-select,tiling-materialize,dma-decompose,"
        "dma-multibuffer,arena-plan{level=L1}",
        "dma-multibuffer: must run before dma-decompose",
    ),
    (
        "decompose_before_materialize",
        "training-bufferize,tile-select,dma-decompose",
        "dma-decompose: finds tile choices not yet materialized (run tiling-materialize first)",
    ),
    (
        "decompose_on_tensors",
        "dma-decompose",
        "dma-decompose: expects buffer-form IR (run training-bufferize first)",
    ),
    (
        "memory_home_on_tensors",
        "memory-home",
        "memory-home: expects buffer-form IR (run training-bufferize first)",
    ),
    (
        "memory_home_after_arena_plan",
        "training-bufferize,arena-plan,memory-home",
        "memory-home: must run before arena-plan",
    ),
    (
        "memory_home_after_tile_select",
        "training-bufferize,tile-select,memory-home",
        "memory-home: expects IR without tile choices (run it once, before tiling-materialize)",
    ),
    (
        "memory_regime_after_arena_plan",
        "training-bufferize,arena-plan,memory-regime",
        "memory-regime: must run before arena-plan",
    ),
    (
        "arena_plan_negative_capacity",
        "training-bufferize,arena-plan{capacity=-1}",
        "arena-plan: capacity must not be negative, got -1",
    ),
    (
        "tile_select_l1_huge",
        "training-bufferize,tile-select{l1=99999999999999}",
        "tile-select: l1 must be at most 4294967295 (a 32-bit target addresses 4 GiB), got "
        "99999999999999",
    ),
    (
        "tile_select_l2_huge",
        "training-bufferize,tile-select{l2=4294967296}",
        "tile-select: l2 must be at most 4294967295 (a 32-bit target addresses 4 GiB), got "
        "4294967296",
    ),
]:
    case(f"order_{name}", [*LOWER, "--pass-pipeline", pipe], err, save(mlp()))

# --------------------------------------------------------------------------
# boards and minimal-l1

for name, changes, err in [
    (
        "l1_larger_than_l2",
        {"levels.L1": 4194304},
        "levels.L1 (4194304 bytes) must not be larger than levels.L2 (2097152 bytes)",
    ),
    ("cores_huge", {"cores": 1000000}, "cores must be <= 1024, got 1000000"),
    ("clock_text", {"clock_hz": "fast"}, "clock_hz must be an integer, got 'fast'"),
    (
        "bandwidth_inf",
        {"engines.mchan.bandwidth": float("inf")},
        "engines.mchan.bandwidth must be a finite number, got inf",
    ),
    ("name_empty", {"name": ""}, "name must be a non-empty string, got ''"),
]:
    case(f"board_{name}", BOARD, f"board '{{d}}/b.yaml': {err}", _board(**changes))
case(
    "board_python_tag",
    BOARD,
    "board '{d}/b.yaml': not valid YAML at line 1",
    lambda d: (d / "b.yaml").write_text("!!python/object/apply:os.system ['true']\n"),
)
case(
    "board_empty",
    BOARD,
    "board '{d}/b.yaml': the file is empty",
    lambda d: (d / "b.yaml").write_text(""),
)
case(
    "board_not_utf8",
    BOARD,
    "board '{d}/b.yaml': not valid YAML (not UTF-8 text)",
    lambda d: (d / "b.yaml").write_bytes(b"cores: \xff\xfe\n"),
)
case(
    "board_endless_device",
    ["board", "/dev/zero"],
    "board '/dev/zero': cannot read it (not a regular file)",
)
case(
    "board_directory",
    ["board", "{d}/"],
    "board '{d}': cannot read it (Is a directory)",
)
case(
    "board_nested_too_deeply",
    BOARD,
    "board '{d}/b.yaml': not valid YAML (nested too deeply)",
    lambda d: (d / "b.yaml").write_text("[" * 100000 + "]" * 100000),
)
case(
    "board_l1_larger_than_l2_in_lower",
    [*LOWER, "--board", "{d}/b.yaml"],
    "board '{d}/b.yaml': levels.L1 (4194304 bytes) must not be larger than levels.L2 "
    "(2097152 bytes)",
    _mlp_and_board(**{"levels.L1": 4194304}),
)
case(
    "minimal_l1_nothing_compiles",
    ["minimal-l1", M, "--l2", "10"],
    "minimal-l1: the model compiles with no L1 budget up to the L2 budget (10 bytes), tiled "
    "or untiled: memory-home: the L2 budget of 10 bytes is too small: with every tensor that "
    "can live in L3 there the L2 arena still needs 148 bytes",
    save(mlp()),
)

# --------------------------------------------------------------------------
# deeploy-opt: files it cannot read, pipelines it cannot run

OPT = "deeploy_mlir.opt"


def _tensor_form_mlir(d: Path) -> None:
    from deeploy_mlir.frontend.onnx_import import import_model

    onnx.save(mlp(), d / "m.onnx")
    (d / "m.mlir").write_text(str(import_model(d / "m.onnx").module) + "\n")


for name, argv, err, write in [
    ("missing_file", ["{d}/none.mlir"], "{d}/none.mlir: no such file", None),
    (
        "not_utf8",
        ["{d}/m.mlir"],
        "{d}/m.mlir: not UTF-8 text (byte 0xff at offset 10)",
        lambda d: (d / "m.mlir").write_bytes(b"// comment\xff\n"),
    ),
    ("directory", ["{d}"], "{d}: is a directory", None),
    ("device", ["/dev/zero"], "/dev/zero: not a regular file", None),
    (
        "unknown_extension",
        ["{d}/m.onnx"],
        "{d}/m.onnx: unknown file extension 'onnx' (known: mlir; or give --frontend)",
        lambda d: (d / "m.onnx").write_text("builtin.module {}\n"),
    ),
    (
        "output_is_input",
        ["{d}/m.mlir", "-o", "{d}/m.mlir"],
        "-o {d}/m.mlir: is the input file (write the output elsewhere)",
        lambda d: (d / "m.mlir").write_text("builtin.module {}\n"),
    ),
    (
        "output_directory_missing",
        ["{d}/m.mlir", "-o", "{d}/none/o.mlir"],
        "-o {d}/none/o.mlir: the directory {d}/none does not exist",
        lambda d: (d / "m.mlir").write_text("builtin.module {}\n"),
    ),
    (
        "unknown_pass",
        ["{d}/m.mlir", "-p", "tile-pick"],
        "pass pipeline: Unrecognized passes: ['tile-pick']",
        lambda d: (d / "m.mlir").write_text("builtin.module {}\n"),
    ),
    (
        "tile_select_on_tensors",
        ["{d}/m.mlir", "-p", "tile-select"],
        "tile-select: expects buffer-form IR (run training-bufferize first)",
        _tensor_form_mlir,
    ),
    (
        "bufferize_twice",
        ["{d}/m.mlir", "-p", "training-bufferize,training-bufferize"],
        "training-bufferize: expects tensor-form IR (run it before training-bufferize, once)",
        _tensor_form_mlir,
    ),
]:
    case(f"opt_{name}", argv, f"deeploy-opt: error: {err}", write, tool=OPT)
