"""onnxruntime-training's AdamW optimizer (OptimType.AdamW): optimizer_model.onnx
holds one com.microsoft ``AdamWOptimizer`` node over sequences of parameters,
gradients and the two moments. Like SGDOptimizerV2 it is not imported node by
node: `adamw_function` builds @optimizer_step from the trainable parameters.

Its arguments: ``learning_rate`` (kind lr, fed by the harness like SGD's),
``step`` (kind optimizer_state, int64: the optimizer steps done so far, as
onnxruntime's training loop counts them), then per parameter P the parameter,
its gradient buffer and its moments ``P.momentum0`` and ``P.momentum1``
(kind optimizer_state, onnxruntime's names for them), which persist from step
to step like the parameters. The body: `training.step_count` (the count
including this step: onnxruntime feeds the node ``step + 1`` and counts the
step when the node reports an update), then one `training.adamw` per
parameter; the new count, parameters and moments are returned as the new
values of their arguments.

The node's optional ``update_signal`` input is read when it is a constant
(an initializer); fed at run time it is refused (the harness feeds only the
learning rate).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, f32, i1, i64
from xdsl.ir import Attribute, SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import (
    KIND_LR,
    MS,
    ArgInfo,
    Importer,
    Result,
    attrs,
    handles,
    node_label,
    ssa_name,
    tensor_type,
)
from deeploy_mlir.frontend.ops.optimizer import not_in_training_graph, step_block, step_function

KIND_STATE = T.ArgKind.OPTIMIZER_STATE.value
#: the graph inputs onnxruntime's training loop feeds the node, in order
INPUTS = (
    "learning_rate",
    "step",
    "params",
    "gradients",
    "first_order_moments",
    "second_order_moments",
)
_FLOAT, _INT = pb.AttributeProto.FLOAT, pb.AttributeProto.INT
ATTRIBUTES = {
    "alpha": _FLOAT,
    "beta": _FLOAT,
    "epsilon": _FLOAT,
    "weight_decay": _FLOAT,
    "adam_mode": _INT,
    "correct_bias": _INT,
    "enable_grad_clipping": _INT,
}
STEP = "step"


def moment_names(param: str) -> tuple[str, str]:
    """The names of a parameter's two moments (onnxruntime's state names)."""
    return f"{param}.momentum0", f"{param}.momentum1"


@handles(f"{MS}:AdamWOptimizer", attributes=ATTRIBUTES)
def adamw(im: Importer, node: pb.NodeProto) -> None:
    raise not_in_training_graph(node)


def is_adamw(opt: pb.ModelProto | None) -> bool:
    """Whether optimizer_model.onnx holds an AdamWOptimizer node."""
    return opt is not None and any(
        n.op_type == "AdamWOptimizer" and n.domain == MS for n in opt.graph.node
    )


@dataclass
class AdamWConfig:
    """The node's attributes, checked, and its constant update_signal."""

    props: dict[str, Attribute]
    signal: bool | None


def _config(im: Importer, where: str) -> AdamWConfig:
    assert im.opt is not None
    g = im.opt.graph
    kinds = [n.op_type for n in g.node]
    if kinds != ["AdamWOptimizer"]:
        raise DeeployError(f"{where}: expected one AdamWOptimizer node, got {', '.join(kinds)}")
    node = g.node[0]
    label = f"{where}: {node_label(node)}"
    names = [i.name for i in g.input]
    inits = {t.name: t for t in g.initializer}
    fed = [n for n in names if n not in inits]
    if tuple(fed) != INPUTS:
        raise DeeployError(
            f"{where}: graph inputs must be {', '.join(INPUTS)} (what onnxruntime's training "
            f"loop feeds), got {', '.join(fed) or 'none'}"
        )
    if tuple(node.input[:6]) != INPUTS:
        raise DeeployError(f"{label}: inputs must be {', '.join(INPUTS)}, in that order")
    signal: bool | None = None
    if len(node.input) > 6 and node.input[6]:
        name = node.input[6]
        if name not in inits:
            raise DeeployError(
                f"{label}: update_signal '{name}' is fed at run time: not supported (the "
                "harness feeds only the learning rate; make it a constant)"
            )
        v = pb.to_array(inits[name])
        if v.dtype != np.bool_ or v.size != 1:
            raise DeeployError(f"{label}: update_signal must be one bool, got {v.dtype} {v.shape}")
        signal = bool(v.reshape(-1)[0])
    a = {**T.ADAMW_DEFAULTS, "enable_grad_clipping": 0, **attrs(node)}
    for k in ("adam_mode", "correct_bias"):
        if int(a[k]) not in (0, 1):
            raise DeeployError(f"{label}: {k} must be 0 or 1, got {int(a[k])}")
    if int(a["enable_grad_clipping"]) != 0:
        raise DeeployError(
            f"{label}: enable_grad_clipping is not supported (onnxruntime's CPU kernel has none)"
        )
    for k in ("alpha", "beta", "epsilon", "weight_decay"):
        if not np.isfinite(np.float32(a[k])):
            raise DeeployError(f"{label}: {k} must be finite as a float32, got {a[k]}")
    props: dict[str, Attribute] = {
        k: FloatAttr(float(np.float32(a[k])), f32)
        for k in ("alpha", "beta", "epsilon", "weight_decay")
    }
    props.update({k: IntegerAttr(int(a[k]), i64) for k in ("adam_mode", "correct_bias")})
    return AdamWConfig(props, signal)


def adamw_function(
    im: Importer, train_args: list[ArgInfo], trainable: list[str], where: str
) -> tuple[func.FuncOp, list[ArgInfo], dict[str, np.ndarray]]:
    """@optimizer_step for optimizer_model.onnx's AdamWOptimizer, the state
    arguments it adds, and their initial values (`_initial`). `where`: optimizer_model.onnx's path,
    for errors."""
    cfg = _config(im, where)
    by_name = {a.name: a for a in train_args}
    state: list[ArgInfo] = [ArgInfo(STEP, KIND_STATE, (1,), np.int64)]
    args: list[ArgInfo] = [ArgInfo("learning_rate", KIND_LR, (1,), np.float32), state[0]]
    for p in trainable:
        w = by_name[p]
        m1, m2 = (ArgInfo(n, KIND_STATE, w.shape, np.float32) for n in moment_names(p))
        state += [m1, m2]
        args += [w, by_name[f"{p}_grad.accumulation.buffer"], m1, m2]
    for s in [args[0], *state]:
        if s.name in by_name:
            raise DeeployError(
                f"{where}: the optimizer's '{s.name}' has the name of an argument of the "
                "training graph: rename it"
            )
    types, block, b = step_block(args)
    lr, count = block.args[0], block.args[1]
    signal: list[SSAValue] = []
    if cfg.signal is not None:
        t = tensor_type((1,), i1)
        attr = DenseIntOrFPElementsAttr.from_list(t, [int(cfg.signal)])  # pyright: ignore[reportCallIssue, reportArgumentType]
        signal = [b.insert(T.ConstantOp(attr)).result]
    step = b.insert(T.StepCountOp([count, *signal], [count.type])).res[0]
    step.name_hint = "step_next"
    results = [Result(step, STEP, updates=1)]
    for i, p in enumerate(trainable):
        w, g, m1, m2 = block.args[2 + 4 * i : 6 + 4 * i]
        op = b.insert(
            T.AdamWOp([w, g, m1, m2, lr, step, *signal], [w.type] * 3, properties=cfg.props)
        )
        for k, (res, name) in enumerate(zip(op.res, (p, *moment_names(p)), strict=True)):
            res.name_hint = ssa_name(f"{name}_new")
            results.append(Result(res, name, updates=2 + 4 * i + (0, 2, 3)[k]))
    return step_function(types, b, args, results), state, _initial(im, state, trainable)


def _initial(im: Importer, state: list[ArgInfo], trainable: list[str]) -> dict[str, np.ndarray]:
    """The state's initial values: the checkpoint's optimizer state (its step
    count, each parameter's momentum0 and momentum1) where it holds one, else
    zeros, as onnxruntime's Optimizer starts."""
    out = {s.name: np.zeros(s.shape, dtype=s.dtype) for s in state}
    saved = im.opt_state
    if saved is None:
        return out
    where = str(Path(im.source).with_name("checkpoint"))
    out[STEP] = np.array([int(saved.step)], dtype=np.int64)
    for p in trainable:
        moments = saved.moments.get(p, {})
        for key, name in zip(("momentum0", "momentum1"), moment_names(p), strict=True):
            if key not in moments:
                continue
            v = np.asarray(moments[key], dtype=np.float32)
            if v.shape != out[name].shape:
                raise DeeployError(
                    f"{where}: optimizer state '{key}' of '{p}' has shape {list(v.shape)} "
                    f"but the parameter has {list(out[name].shape)}"
                )
            if not np.all(np.isfinite(v)):
                raise DeeployError(f"{where}: optimizer state '{key}' of '{p}' holds NaN or Inf")
            out[name] = v
    return out
