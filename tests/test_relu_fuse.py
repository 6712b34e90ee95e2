"""relu-fuse changes no bit (translation validation with the reference
interpreter):

* on the pass's FileCheck functions (the CCT tokenizer's conv -> relu ->
  maxpool and its backward, a ResNet-like conv -> relu -> conv) with NaNs,
  infinities, signed zeros and ties in the data: the function's outputs
  before and after the pass, bit for bit;
* on examples/cct and examples/resnet8 trained over 3 steps of 2
  mini-batches through the default pipeline, untiled and tiled with double
  buffering: the losses and parameters with the pass are the bits of the
  pipeline without it, and onnxruntime-training's numbers; the ops it
  removes are the ones the ONNX graph says it can (counted here from the
  graph: a Relu whose input is a Conv's output read by nothing else but the
  Relu and its ReluGrad, a ReluGrad of a MaxPoolGrad whose MaxPool reads
  that Relu's output)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import pytest
from validation import reference, train
from xdsl.dialects import func
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.parser import Parser

from deeploy_mlir.config import CompileConfig as C
from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend.onnx_import import import_model
from deeploy_mlir.interp.interpreter import TrainingFunctions
from deeploy_mlir.passes.relu_fuse import ReluFuse
from deeploy_mlir.pipeline import make_context, pipeline, run_pipeline

ROOT = Path(__file__).resolve().parents[1]
FILECHECK = ROOT / "filecheck" / "passes" / "relu-fuse" / "relu-fuse.mlir"
RNG = np.random.default_rng(19)


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _special(shape: tuple[int, ...]) -> np.ndarray:
    x = RNG.standard_normal(shape).astype(np.float32)
    m = RNG.random(shape)
    x[m < 0.05] = np.nan
    x[(m >= 0.05) & (m < 0.08)] = np.inf
    x[(m >= 0.08) & (m < 0.11)] = -np.inf
    x[(m >= 0.11) & (m < 0.2)] = -0.0
    x[(m >= 0.2) & (m < 0.3)] = 0.0
    x[(m >= 0.3) & (m < 0.35)] = 1.0  # ties
    return x


def _call(module, name: str, args: tuple[np.ndarray, ...]) -> list[np.ndarray]:
    it = Interpreter(module)
    it.register_implementations(TrainingFunctions())
    it.register_implementations(FuncFunctions())
    return [np.asarray(r) for r in it.call_op(name, args)]


@pytest.mark.parametrize(
    ("fn", "shapes", "gone"),
    [
        ("tokenizer", [(2, 3, 8, 8), (4, 3, 3, 3), (2, 4, 4, 4)], {"relu", "relu_grad"}),
        ("conv_chain", [(1, 2, 4, 4), (2, 2, 1, 1), (2, 2, 1, 1), (1, 2, 4, 4)], {"relu"}),
    ],
)
def test_the_pass_keeps_the_bits_of_special_values(
    fn: str, shapes: list[tuple[int, ...]], gone: set[str]
) -> None:
    before = Parser(make_context(), FILECHECK.read_text()).parse_module()
    after = before.clone()
    ReluFuse().apply(make_context(), after)
    after.verify()
    f_after = next(o for o in after.ops if isinstance(o, func.FuncOp) and o.sym_name.data == fn)
    left = {o.name.removeprefix("training.") for o in f_after.walk()}
    assert not (gone & left), left
    for trial in range(4):
        args = tuple(_special(s) for s in shapes)
        if trial == 0:  # one all-non-positive input: every mask false
            args = (-np.abs(args[0]), *args[1:])
        with np.errstate(invalid="ignore"):  # inf - inf in the convolutions' sums
            want = _call(before, fn, args)
            got = _call(after, fn, args)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert _bits(g) == _bits(w), fn


def _expected_fusions(d: Path) -> tuple[int, int]:
    """(Relus folded into their Conv, ReluGrads folded into MaxPoolGrad), from
    the ONNX training graph."""
    g = onnx.load(str(d / "training_model.onnx")).graph
    prod = {o: n for n in g.node for o in n.output}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}
    convs = 0
    grads = 0
    for n in g.node:
        if n.op_type == "Relu":
            x = n.input[0]
            others = [r for r in readers.get(x, []) if r is not n and r.op_type != "ReluGrad"]
            src = prod.get(x)
            if src is not None and src.op_type == "Conv" and not others and x not in outputs:
                convs += 1
        if n.op_type == "ReluGrad":
            dy = prod.get(n.input[0])
            if dy is None or dy.op_type != "MaxPoolGrad":
                continue
            pool = prod[dy.input[1]]
            relu = prod.get(pool.input[0])
            if relu is not None and relu.op_type == "Relu" and relu.input[0] == n.input[1]:
                grads += 1
    return convs, grads


UNTILED, TILED = C(tiling="untiled", l1=1 << 20), C(l1=8192, buffering="double")


@pytest.mark.parametrize(
    ("model", "cfg"),
    [("cct", UNTILED), ("cct", TILED), ("resnet8", UNTILED)],
    ids=["cct-untiled", "cct-tiled-double-8k", "resnet8-untiled"],
)
def test_relu_fuse_keeps_the_bits_of_training(model: str, cfg: C) -> None:
    d = ROOT / "examples" / model
    exp = reference(d)
    m = import_model(d)
    relus0 = sum(isinstance(o, T.ReluOp) for o in m.module.walk())
    grads0 = sum(isinstance(o, T.ReluGradOp) for o in m.module.walk())
    convs, grads = _expected_fusions(d)
    assert convs > 0
    got = {}
    for fuse in (True, False):
        module = m.module.clone()
        passes = pipeline(dataclasses.replace(cfg, relu_fuse=fuse))
        # all three rewrites (the default pipeline leaves the conv one off)
        passes = tuple(
            dataclasses.replace(p, conv=True) if p.name == "relu-fuse" else p for p in passes
        )
        run_pipeline(module, passes)
        relus = sum(isinstance(o, T.ReluOp) for o in module.walk())
        rgrads = sum(isinstance(o, T.ReluGradOp) for o in module.walk())
        fused_convs = sum(isinstance(o, T.Conv2dOp) and o.relu is not None for o in module.walk())
        masked = sum(
            isinstance(o, T.MaxPool2dOp) and o.relu_mask is not None for o in module.walk()
        )
        if fuse:
            assert relus0 - relus == convs
            assert grads0 - rgrads == grads
            assert fused_convs >= convs  # tiles: one op per tile
            assert (masked > 0) == (grads > 0)
        else:
            assert (relus, rgrads, fused_convs, masked) == (relus0, grads0, 0, 0)
        got[fuse] = train(module, m.params, d, exp)
    (l_f, p_f), (l_u, p_u) = got[True], got[False]
    assert _bits(np.asarray(l_f, np.float32)) == _bits(np.asarray(l_u, np.float32))
    for k in p_u:
        assert _bits(np.asarray(p_f[k])) == _bits(np.asarray(p_u[k])), k
    np.testing.assert_allclose(l_f, exp["losses"], rtol=1e-5, atol=1e-6)
