"""Issue 20's logic family end to end: Clip (ReLU6, Hardtanh) and its
exported gradient (GreaterOrEqual, LessOrEqual, And, Cast, Mul), Less,
Greater, Equal, And / Or / Xor / Not, Where with broadcasting, Cast between
bool, int64 and float, OneHot.

* zoo models (examples/zoo.py, exported by onnxruntime-training) train like
  onnxruntime-training at 1e-4: untiled on the host, and tiled
  double-buffered at the model's minimal L1;
* a hand-built Deeploy-style training graph using every op of the family
  (bool and int64 tensors through bufferization, arena planning, tiling, DMA
  and the C printer) trains like torch autograd of the same loss;
* the reference semantics on values whose results are worked out by hand,
  interpretation before / after every pass, and the one-line refusals.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_cli
from onnx import TensorProto, helper
from onnx_builders import init, make_model, vi

from deeploy_mlir.config import CompileConfig
from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.interpreter import TrainingSession, loss_output_name
from deeploy_mlir.interp.reference import compute
from deeploy_mlir.pipeline import l2_pipeline, make_context, pipeline

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import zoo  # noqa: E402

ZOO = ("mlp_relu6", "mlp_hardtanh", "inside_huber")
TOL = zoo.XCHECK_TOL  # rtol 1e-4, atol 1e-5, as examples/zoo.py's run_status


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zoo-logic")
    assert zoo.main([str(out), "--only", ",".join(ZOO)]) == 0
    return out


def _minimal_l1(d: Path) -> int:
    r = run_cli("minimal-l1", d, "--buffering", "double", "--json")
    assert r.code == 0, r.err
    return int(json.loads(r.out)["tiled"])


def test_relu6_and_hardtanh_import_as_clip_and_its_gradient(exported: Path) -> None:
    """ReLU6 is Clip(0, 6), Hardtanh(-0.5, 0.5) as zoo.py builds it; the
    gradient is two compares of the Clip's input, an and, a cast to float and
    a multiply."""
    for name, lo, hi in (("mlp_relu6", 0.0, 6.0), ("mlp_hardtanh", -0.5, 0.5)):
        ops = list(import_model(exported / name).module.walk())
        (clip,) = [op for op in ops if isinstance(op, T.ClipOp)]
        assert (T.float_of(clip.lo), T.float_of(clip.hi)) == (lo, hi)
        kinds = sorted(op.kind.data for op in ops if isinstance(op, T.CompareOp))
        assert kinds == ["greater_equal", "less_equal"]
        (logical,) = [op for op in ops if isinstance(op, T.LogicalOp)]
        assert logical.kind.data == "and"
        (cast,) = [op for op in ops if isinstance(op, T.CastOp)]
        assert T.elem_name(cast.to) == "f32" and T.is_int(cast.ins[0].type, 1)


# ---------------------------------------------------------------- hand-built


B, FIN, C = 6, 5, 5
CST = np.array([[2.0, -1.0, 0.0, 3.0, 5.0]], np.float32)  # a column gate, [1, C]
LR = 0.2


def _gate() -> np.ndarray:
    """keep = ((CST > 0) or (CST == -1)) and not (CST == 5), xor (CST < -5):
    [1, 1, 0, 1, 0] worked out by hand."""
    return np.array([[1.0, 1.0, 0.0, 1.0, 0.0]], np.float32)


def logic_graph() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A Deeploy-style training graph of
    loss = sum(gate * where(d < 1, d*d/2, d - 1/2)) / B,
    d = clip(x W^T + b, -2, 2) - onehot(labels), with its gradient written
    out by hand as onnxruntime writes Clip's and Where's: every op of the
    family, bool [B, C] and [1, C] tensors, int64 labels and one-hot."""
    rng = np.random.default_rng(20)
    w = (rng.standard_normal((C, FIN)) * 0.8).astype(np.float32)
    b = (rng.standard_normal(C) * 0.3).astype(np.float32)
    n = helper.make_node
    nodes = [
        n("Gemm", ["x", "w", "b"], ["z"], transB=1),
        n("Clip", ["z", "lo", "hi"], ["p"]),
        n("OneHot", ["labels", "depth", "values"], ["oh"], axis=-1),
        n("Cast", ["oh"], ["oh_b"], to=TensorProto.BOOL),  # int64 -> bool
        n("Cast", ["oh_b"], ["oh_f"], to=TensorProto.FLOAT),  # bool -> float
        n("Sub", ["p", "oh_f"], ["d"]),
        # the column gate, from a constant: Greater, Equal, Or, Not, And, Less, Xor
        n("Greater", ["cst", "zero"], ["g_pos"]),
        n("Equal", ["cst", "minus1"], ["g_m1"]),
        n("Or", ["g_pos", "g_m1"], ["g_or"]),
        n("Equal", ["cst", "five"], ["g_5"]),
        n("Not", ["g_5"], ["g_n5"]),
        n("And", ["g_or", "g_n5"], ["g_and"]),
        n("Less", ["cst", "minus5"], ["g_never"]),
        n("Xor", ["g_and", "g_never"], ["g_keep"]),
        n("Cast", ["g_keep"], ["gate"], to=TensorProto.FLOAT),
        # dL/dd = gate * where(d < 1, d, 1) / B  (Mul of a cast bool broadcasts)
        n("Less", ["d", "one"], ["m"]),
        n("Where", ["m", "d", "ones1"], ["g0"]),
        n("Mul", ["g0", "gate"], ["g1"]),
        n("Mul", ["g1", "inv_b"], ["dp"]),
        # Clip's gradient as onnxruntime writes it
        n("GreaterOrEqual", ["z", "lo"], ["c_min"]),
        n("LessOrEqual", ["z", "hi"], ["c_max"]),
        n("And", ["c_min", "c_max"], ["c_in"]),
        n("Cast", ["c_in"], ["c_f"], to=TensorProto.FLOAT),
        n("Mul", ["dp", "c_f"], ["dz"]),
        n("Gemm", ["dz", "x"], ["dw"], transA=1),
        n("ReduceSum", ["dz", "axes0"], ["db"], keepdims=0),
        n("SGD", ["w", "dw"], ["w_updated"], lr=LR),
        n("SGD", ["b", "db"], ["b_updated"], lr=LR),
    ]
    inits = [
        init("w", w),
        init("b", b),
        init("lo", np.array(-2.0, np.float32)),
        init("hi", np.array(2.0, np.float32)),
        init("depth", np.array(C, np.int64)),
        init("values", np.array([0, 1], np.int64)),
        init("cst", CST),
        init("zero", np.array(0.0, np.float32)),
        init("minus1", np.array(-1.0, np.float32)),
        init("five", np.array(5.0, np.float32)),
        init("minus5", np.array(-5.0, np.float32)),
        init("one", np.array(1.0, np.float32)),
        init("ones1", np.ones(1, np.float32)),
        init("inv_b", np.array([1.0 / B], np.float32)),
        init("axes0", np.array([0], np.int64)),
    ]
    m = make_model(
        nodes,
        [vi("x", [B, FIN]), vi("labels", [B], TensorProto.INT64)],
        [vi("w_updated", [C, FIN]), vi("b_updated", [C])],
        inits,
        ms=True,
    )
    return m, {"w": w, "b": b}


def _torch_train(params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> dict:
    """The same loss in torch autograd (clamp, one_hot, where), SGD per batch."""
    import torch

    w = torch.tensor(params["w"], requires_grad=True)
    b = torch.tensor(params["b"], requires_grad=True)
    gate = torch.tensor(_gate())
    for i in range(len(x)):
        p = torch.clamp(torch.tensor(x[i]) @ w.T + b, -2.0, 2.0)
        d = p - torch.nn.functional.one_hot(torch.tensor(y[i]), C).to(torch.float32)
        loss = (gate * torch.where(d < 1.0, 0.5 * d * d, d - 0.5)).sum() / B
        loss.backward()
        with torch.no_grad():
            for t in (w, b):
                assert t.grad is not None
                t -= LR * t.grad
                t.grad = None
    return {"w": w.detach().numpy(), "b": b.detach().numpy()}


@pytest.fixture(scope="module")
def hand(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    d = tmp_path_factory.mktemp("logic-graph")
    model, params = logic_graph()
    onnx.save(model, d / "m.onnx")
    rng = np.random.default_rng(7)
    steps = 3
    x = (rng.standard_normal((steps, B, FIN)) * 1.5).astype(np.float32)
    y = rng.integers(0, C, (steps, B)).astype(np.int64)
    np.savez(d / "d.npz", x=x, labels=y)
    want = _torch_train(params, x, y)
    # the data reach every branch: clipped and not, d < 1 and not
    z = x @ params["w"].T + params["b"]
    assert (np.abs(z) > 2).any() and (np.abs(z) < 2).any()
    return d / "m.onnx", d / "d.npz", want


def _run_hand(hand: tuple[Path, Path, dict], tmp_path: Path, *opts: str) -> dict:
    model, data, _ = hand
    out = tmp_path / "o.json"
    r = run_cli("run", model, "-q", "--data", data, "--steps", "3", "--json", out,
                "--keep", tmp_path / "proj", *opts)  # fmt: skip
    assert r.code == 0, r.err
    return json.loads(out.read_text())["params"]


@pytest.mark.parametrize("mode", ["untiled", "tiled-double-min-l1"])
def test_hand_built_graph_trains_like_torch(
    hand: tuple[Path, Path, dict], tmp_path: Path, mode: str
) -> None:
    opts: list[str] = []
    if mode != "untiled":
        opts = ["--l1", str(_minimal_l1(hand[0])), "--buffering", "double"]
    got = _run_hand(hand, tmp_path, *opts)
    for k, want in hand[2].items():
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-4, atol=1e-6, err_msg=k)
    # bool tensors are bytes in the emitted C, int64 labels int64_t; the
    # family's kernels are the ones called
    c = (tmp_path / "proj" / "TrainingNetwork.c").read_text()
    for kernel in ("dm_compare_fp32", "dm_where_fp32", "dm_cast", "dm_unary_ext_fp32"):
        assert f"pi_cl_team_fork(NUM_CORES, {kernel}, &args)" in c, kernel
    assert "(uint8_t *)" in c and "DM_CMP_LESS_EQUAL" in c and "DM_LOGIC_XOR" in c
    assert "DM_CAST_I64_TO_F32" in c and "DM_CAST_F32_TO_U8" in c
    if mode != "untiled":  # a compare writes a bool tile in L1, moved by DMA
        assert ".Y = ((uint8_t *)(dm_arena_L1" in c and "pi_cl_dma_cmd" in c


def test_hand_built_graph_tiles_bool_and_int64(hand: tuple[Path, Path, dict]) -> None:
    """Through the tiled pipeline (4 KiB of L1, double buffering): the
    compares write i1 tiles in L1, and DMA copies move i1 and i64 tiles
    (labels, masks) between L2 and L1, each copy's memrefs of one element
    type."""
    from deeploy_mlir.dialects import dma

    m = import_model(hand[0]).module
    ctx = make_context()
    for p in pipeline(CompileConfig(l1=4096, buffering="double")):
        p.apply(ctx, m)
    m.verify()
    outs = [op.outs[0].type for op in m.walk() if isinstance(op, T.CompareOp)]
    assert outs and all(T.is_int(t, 1) and T.memory_level(t) == "L1" for t in outs)
    moved: set[str] = set()
    for op in m.walk():
        if isinstance(op, dma.CopyOp):
            src, dst = T.elem_name(T.elem_of(op.src.type)), T.elem_name(T.elem_of(op.dst.type))
            assert src == dst
            moved.add(src)
    assert {"i1", "i64", "f32"} <= moved


# ------------------------------------------------------ translation validation


def _interp(module, params: dict, data: dict) -> dict[str, np.ndarray]:
    _, got = TrainingSession(module, params).train(data, 3, 1, LR, loss_output_name(module))
    return got


TV_PIPELINES = {
    "l2": l2_pipeline(),
    "tiled-single-1k": pipeline(CompileConfig(l1=1024, buffering="single")),
    "tiled-double-gap9-2k": pipeline(CompileConfig(l1=2048, target="gap9", buffering="double")),
}


@pytest.mark.parametrize("which", sorted(TV_PIPELINES))
def test_every_pass_preserves_the_numbers(hand: tuple[Path, Path, dict], which: str) -> None:
    """The hand-built graph interpreted before the pipeline trains like torch,
    and after each pass gives the same numbers."""
    model = import_model(hand[0])
    with np.load(hand[1]) as z:
        data = {k: z[k] for k in z.files}
    ref = _interp(model.module, model.params, data)
    for k, want in hand[2].items():
        np.testing.assert_allclose(ref[k], want, rtol=1e-4, atol=1e-6)
    ctx = make_context()
    for p in TV_PIPELINES[which]:
        p.apply(ctx, model.module)
        model.module.verify()
        got = _interp(model.module, model.params, data)
        for k in ref:
            np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-7, err_msg=p.name)


# ---------------------------------------------------------------- reference


def _op(cls, ins_types, props=None, n_res=1):
    from xdsl.dialects.builtin import TensorType

    from deeploy_mlir.dialects.training.base import TrainingComputeOp

    assert issubclass(cls, TrainingComputeOp)
    from xdsl.utils.test_value import create_ssa_value

    vals = [create_ssa_value(TensorType(e, s)) for e, s in ins_types]
    probe = cls(vals, [TensorType(T.f32, [])] * n_res, properties=props)
    shapes, elems = probe.infer_shapes(), probe.output_elem_types()
    return cls(vals, [TensorType(e, s) for e, s in zip(elems, shapes, strict=True)],
               properties=props)  # fmt: skip


def test_reference_semantics_by_hand() -> None:
    from xdsl.dialects.builtin import FloatAttr, StringAttr, f32, i1, i64

    nan = np.float32("nan")
    a = np.array([[1.0, -2.0, nan, 0.0]], np.float32)
    b = np.array([[0.0], [-2.0]], np.float32)  # broadcasts to [2, 4]
    op = _op(T.CompareOp, [(f32, [1, 4]), (f32, [2, 1])], {"kind": StringAttr("greater_equal")})
    (y,) = compute(op, [a, b])
    assert y.dtype == np.bool_
    assert y.tolist() == [[True, False, False, True], [True, True, False, True]]
    op = _op(T.LogicalOp, [(i1, [4]), (i1, [1])], {"kind": StringAttr("xor")})
    (y,) = compute(op, [np.array([0, 1, 1, 0], bool), np.array([1], bool)])
    assert y.tolist() == [True, False, False, True]
    op = _op(T.WhereOp, [(i1, [2, 1]), (f32, [3]), (f32, [1])])
    (y,) = compute(op, [np.array([[True], [False]]), np.array([1, 2, 3], np.float32),
                        np.array([9], np.float32)])  # fmt: skip
    assert y.tolist() == [[1, 2, 3], [9, 9, 9]]
    op = _op(T.CastOp, [(f32, [4])], {"to": i64})
    (y,) = compute(op, [np.array([2.7, -2.7, -0.5, 7.0], np.float32)])
    assert y.dtype == np.int64 and y.tolist() == [2, -2, 0, 7]  # toward zero
    op = _op(T.CastOp, [(f32, [3])], {"to": i1})
    (y,) = compute(op, [np.array([0.0, -0.0, nan], np.float32)])
    assert y.tolist() == [False, False, True]
    op = _op(T.ClipOp, [(f32, [4])], {"lo": FloatAttr(-1.0, f32), "hi": FloatAttr(0.5, f32)})
    (y,) = compute(op, [np.array([-3.0, 0.25, 4.0, nan], np.float32)])
    assert y[:3].tolist() == [-1.0, 0.25, 0.5] and np.isnan(y[3])


def test_one_hot_by_hand(tmp_path: Path) -> None:
    """OneHot over axis 0 with negative indices, values [off, on] = [-1, 3],
    out-of-range indices all off; interpreted and checked by hand."""
    n = helper.make_node
    nodes = [n("OneHot", ["idx", "depth", "values"], ["oh"], axis=0),
             n("Cast", ["oh"], ["y"], to=TensorProto.FLOAT)]  # fmt: skip
    m = make_model(
        nodes,
        [vi("idx", [4], TensorProto.INT64)],
        [vi("y", [3, 4])],
        [init("depth", np.array([3], np.int64)), init("values", np.array([-1, 3], np.int64))],
    )
    onnx.save(m, tmp_path / "m.onnx")
    imported = import_model(tmp_path / "m.onnx")
    feeds = {"idx": np.array([0, 2, -1, 5])}
    outs = TrainingSession(imported.module, {}).call("training_step", feeds)
    want = np.array([[3, -1, -1, -1], [-1, -1, -1, -1], [-1, 3, 3, -1]], np.float32)
    np.testing.assert_array_equal(outs["y"], want)


# ---------------------------------------------------------------- refusals


def _one_node(tmp_path: Path, node, inputs, outputs, inits=()) -> Path:
    p = tmp_path / "m.onnx"
    onnx.save(make_model([node], inputs, outputs, inits), p)
    return p


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("cast_double", "Cast to DOUBLE is not supported"),
        ("clip_dynamic", "min 'lo' must be a constant"),
        ("where_int", "Where is supported with float values"),
        ("less_int", "Less is supported on float tensors"),
    ],
)
def test_refusals_are_one_line(tmp_path: Path, case: str, message: str) -> None:
    n = helper.make_node
    i64 = TensorProto.INT64
    if case == "cast_double":
        p = _one_node(tmp_path, n("Cast", ["x"], ["y"], to=TensorProto.DOUBLE),
                      [vi("x", [2])], [vi("y", [2], TensorProto.DOUBLE)])  # fmt: skip
    elif case == "clip_dynamic":
        p = _one_node(tmp_path, n("Clip", ["x", "lo"], ["y"]),
                      [vi("x", [2]), vi("lo", [])], [vi("y", [2])])  # fmt: skip
    elif case == "where_int":
        ins = [vi("c", [2], TensorProto.BOOL), vi("a", [2], i64)]
        p = _one_node(tmp_path, n("Where", ["c", "a", "a"], ["y"]), ins, [vi("y", [2], i64)])
    else:
        p = _one_node(tmp_path, n("Less", ["a", "a"], ["y"]),
                      [vi("a", [2], i64)], [vi("y", [2], TensorProto.BOOL)])  # fmt: skip
    r = run_cli("lower", p, "-o", tmp_path / "out")
    assert r.code == 2, r.err
    assert message in r.err and len(r.err.strip().splitlines()) == 1, r.err
    assert "Traceback" not in r.err and not (tmp_path / "out").exists()


def test_forward_ops_agree_with_onnxruntime(tmp_path: Path) -> None:
    """A forward graph of the family's ops, ONNX's own corner cases included
    (Clip without min, Clip with min > max, OneHot over axis 0 with negative
    and out-of-range indices and float values, Where broadcasting all three
    operands, casts int64 -> bool -> float and float -> int64), imported and
    interpreted, against onnxruntime's inference of the same graph."""
    import onnxruntime as ort

    n = helper.make_node
    nodes = [
        n("Clip", ["x", "", "hi"], ["clip_nomin"]),
        n("Clip", ["x", "two", "one"], ["clip_swapped"]),
        n("OneHot", ["idx", "depth", "fvalues"], ["oh"], axis=0),
        n("Greater", ["x", "row"], ["gt"]),
        n("Equal", ["x", "one"], ["eq"]),
        n("Xor", ["gt", "eq"], ["xo"]),
        n("Not", ["xo"], ["nx"]),
        n("Where", ["col_b", "x", "row"], ["wh"]),
        n("Cast", ["idx"], ["idx_b"], to=TensorProto.BOOL),
        n("Cast", ["idx_b"], ["idx_f"], to=TensorProto.FLOAT),
        n("Cast", ["x"], ["x_i"], to=TensorProto.INT64),
        n("Cast", ["nx"], ["nx_f"], to=TensorProto.FLOAT),
    ]
    outs = [
        vi("clip_nomin", [3, 4]),
        vi("clip_swapped", [3, 4]),
        vi("oh", [3, 5]),
        vi("wh", [3, 4]),
        vi("idx_f", [5]),
        vi("x_i", [3, 4], TensorProto.INT64),
        vi("nx_f", [3, 4]),
    ]
    inits = [
        init("hi", np.array(0.5, np.float32)),
        init("one", np.array(1.0, np.float32)),
        init("two", np.array(2.0, np.float32)),
        init("depth", np.array(3, np.int64)),
        init("fvalues", np.array([-0.25, 2.5], np.float32)),
        init("row", np.array([[0.0, 1.0, -1.0, 0.5]], np.float32)),
        init("col_b", np.array([[True], [False], [True]])),
    ]
    m = make_model(nodes, [vi("x", [3, 4]), vi("idx", [5], TensorProto.INT64)], outs, inits)
    onnx.checker.check_model(m)
    onnx.save(m, tmp_path / "m.onnx")
    x = np.array(
        [[-3.0, 1.0, 0.25, 7.5], [1.0, -0.5, -1.0, 2.0], [0.0, -2.7, 2.7, 0.5]], np.float32
    )
    feeds = {"x": x, "idx": np.array([0, 2, -1, 3, -4], np.int64)}
    want = ort.InferenceSession(str(tmp_path / "m.onnx")).run(None, feeds)
    got = TrainingSession(import_model(tmp_path / "m.onnx").module, {}).call("training_step", feeds)
    for v, w in zip(outs, want, strict=True):
        assert got[v.name].dtype == w.dtype, v.name
        np.testing.assert_array_equal(got[v.name], w, err_msg=v.name)
