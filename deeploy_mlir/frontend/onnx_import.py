"""ONNX training graphs -> the `training` dialect: `import_model`.

Two conventions are read:

* onnxruntime-training artifacts: a directory with training_model.onnx (forward,
  loss, backward, InPlaceAccumulatorV2 gradient accumulation with its
  lazy_reset_grad input), optimizer_model.onnx (SGDOptimizerV2 over sequences of
  parameters and gradients) and checkpoint (the initial parameters);
* Deeploy-style training ONNX: one file in which parameters are initializers,
  SoftmaxCrossEntropyLoss has only the log-probability output,
  SoftmaxCrossEntropyLossGrad takes (log_prob, labels) and SGD (attribute `lr`)
  returns the updated weight.

The result is a module with two functions, ``@training_step`` and
``@optimizer_step``. Their arguments carry ``training.arg = #training.arg<KIND
"NAME">`` (the kind: input, param, grad_accum, reset_flag, lr, running_stat --
batch norm's running mean and variance --; the ONNX name); a
result carries ``training.result = #training.result<"NAME">``, with ``updates I``
when it is the new value of argument I.

This module drives the import: it reads and checks the files (graph.py),
sorts out the arguments and builds the two functions, handing every node to
the handler the op families (ops/) registered in the core's registry
(core.py). It is the only frontend module that imports the op families.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import (
    FOLDERS,
    KIND_GRAD,
    KIND_INPUT,
    KIND_PARAM,
    KIND_RESET,
    KIND_RUNNING,
    ONNX_DTYPES_BY_NP,
    REGISTRY,
    ArgInfo,
    ImportedModel,
    Importer,
    arg_attrs,
    domain_of,
    node_label,
    result_attrs,
    ssa_name,
    tensor_type,
)
from deeploy_mlir.frontend.graph import (
    check_attributes,
    check_graph,
    check_names,
    check_opset,
    check_supported,
    input_type,
    load_checkpoint,
    load_onnx,
    load_optimizer_state,
    load_params_npz,
    read_initializer,
    topological_order,
)
from deeploy_mlir.frontend.ops import FAMILIES
from deeploy_mlir.frontend.ops.adamw import adamw_function, is_adamw
from deeploy_mlir.frontend.ops.batchnorm import running_stats
from deeploy_mlir.frontend.ops.optimizer import optimizer_function

__all__ = ["ArgInfo", "ImportedModel", "import_model"]

#: the op families, whose import registered their handlers
OP_FAMILIES = FAMILIES


def import_model(
    path: str | Path, params_file: str | Path | None = None, seed: int = T.DEFAULT_SEED
) -> ImportedModel:
    """Import an artifact directory or a single training ONNX file; `seed`:
    the dropout masks' (`--seed`; each dropout op gets its own stream)."""
    p = Path(path)
    if p.is_dir():
        train_path = p / "training_model.onnx"
        if not train_path.is_file():
            raise DeeployError(f"{p}: artifact directory without training_model.onnx")
        opt_path = p / "optimizer_model.onnx"
        ckpt = p / "checkpoint"
    elif p.exists():
        train_path, opt_path, ckpt = p, p.parent / "__none__", p.parent / "__none__"
    else:
        raise DeeployError(f"{p}: no such file or directory")
    train = load_onnx(train_path)
    opt = load_onnx(opt_path) if opt_path.is_file() else None
    given = load_params_npz(Path(params_file)) if params_file is not None else None
    checkpoint = load_checkpoint(ckpt) if given is None and ckpt.is_file() else None
    im = Importer(train, opt, given if given is not None else checkpoint, str(train_path))
    im.params_file = str(params_file) if given is not None else None
    if checkpoint is not None:
        im.opt_state = load_optimizer_state(ckpt)
    model = _run(im)
    T.number_dropouts(model.module, seed)
    return model


def _run(im: Importer) -> ImportedModel:
    g = im.train.graph
    check_opset(im.train, im.source)
    check_graph(g, im.source)
    models = [(im.train, im.source)] + ([(im.opt, _opt_source(im))] if im.opt else [])
    check_supported(models)
    check_attributes(im.train, im.source)
    if im.opt is not None:
        check_attributes(im.opt, _opt_source(im))
    im.inits = {t.name: read_initializer(t, im.source) for t in g.initializer}
    for vi in [*g.value_info, *g.output]:
        dims = vi.type.tensor_type.shape.dim
        # a value without a shape field is of unknown shape, not a scalar
        has_shape = vi.type.tensor_type.HasField("shape")
        if has_shape and all(d.HasField("dim_value") for d in dims):
            im.value_shapes[vi.name] = tuple(d.dim_value for d in dims)
    style = "ort" if any(n.op_type == "InPlaceAccumulatorV2" for n in g.node) else "deeploy"
    args = _training_args(im, style)
    train_fn = _function(im, "training_step", args, topological_order(g))
    params = _param_values(im, args)
    check_names(args, im.source)
    funcs = [train_fn]
    trainable = [a.name for a in args if a.kind == KIND_PARAM and _has_grad(im, a.name, style)]
    opt_state: dict[str, np.ndarray] = {}
    if style == "ort" and trainable and is_adamw(im.opt):
        opt_fn, state_args, opt_state = adamw_function(im, args, trainable, _opt_source(im))
        check_names(args + state_args, im.source)
        funcs.append(opt_fn)
    else:
        funcs.append(optimizer_function(im, args, trainable, style))
    module = ModuleOp(funcs)
    try:
        module.verify()
    except VerifyException as e:  # an importer bug, or a graph we mis-read
        raise DeeployError(f"{im.source}: imported IR does not verify: {e}") from None
    return ImportedModel(module, params, args, trainable, im.source, style, opt_state)


def _opt_source(im: Importer) -> str:
    """The path of optimizer_model.onnx (beside training_model.onnx), for errors."""
    return str(Path(im.source).with_name("optimizer_model.onnx"))


# --------------------------------------------------------------------------
# Arguments and initial values
# --------------------------------------------------------------------------


def _training_args(im: Importer, style: str) -> list[ArgInfo]:
    g = im.train.graph
    accum_bufs = {n.input[0] for n in g.node if n.op_type == "InPlaceAccumulatorV2"}
    known = set(im.given_params or {})
    stats = running_stats(g)
    args: list[ArgInfo] = []
    for vi in g.input:
        if vi.name in im.inits:
            continue  # an initializer listed as input (old IR): a constant
        shape, dtype = input_type(vi, im.source)
        if vi.name in stats:
            kind = KIND_RUNNING
        elif vi.name in accum_bufs:
            kind = KIND_GRAD
        elif dtype is np.bool_:
            kind = KIND_RESET
        elif vi.name in known or f"{vi.name}_grad.accumulation.buffer" in accum_bufs:
            kind = KIND_PARAM
        else:
            kind = KIND_INPUT
        args.append(ArgInfo(vi.name, kind, shape, dtype))
    if style == "deeploy":
        # parameters are the float initializers that an SGD node updates
        for n in g.node:
            if n.op_type == "SGD" and n.input[0] in im.inits:
                w = im.inits[n.input[0]]
                args.append(ArgInfo(n.input[0], KIND_PARAM, tuple(w.shape), np.float32))
                im.deeploy_params.append(n.input[0])
    # batch norm's running statistics (initializers of onnxruntime's graph)
    # are state of the step, updated and written back like parameters
    for name in stats:
        if name in im.inits and all(a.name != name for a in args):
            v = im.inits[name]
            args.append(ArgInfo(name, KIND_RUNNING, tuple(v.shape), np.float32))
    return args


def _has_grad(im: Importer, name: str, style: str) -> bool:
    if style == "deeploy":
        return name in im.deeploy_params
    return any(
        n.op_type == "InPlaceAccumulatorV2" and n.input[0] == f"{name}_grad.accumulation.buffer"
        for n in im.train.graph.node
    )


def _param_values(im: Importer, args: list[ArgInfo]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    source = im.given_params
    if im.params_file is not None and source is not None:
        names = [a.name for a in args if a.kind == KIND_PARAM]
        stats = {a.name for a in args if a.kind == KIND_RUNNING}
        extra = sorted(set(source) - set(names) - stats)
        if extra:
            listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise DeeployError(
                f"{im.params_file}: array '{extra[0]}' matches no parameter of the graph "
                f"(parameters: {listed or 'none'})"
            )
    for a in args:
        if a.kind not in (KIND_PARAM, KIND_RUNNING):
            continue
        if source is not None and a.name in source:
            v = source[a.name]
        elif a.name in im.inits:
            v = im.inits[a.name]
        else:
            raise DeeployError(
                f"{im.source}: no initial value for parameter '{a.name}' (give a checkpoint "
                "or --params PARAMS.npz)"
            )
        if tuple(v.shape) != a.shape:
            raise DeeployError(
                f"parameter '{a.name}': initial value has shape {list(v.shape)} but the graph "
                f"expects {list(a.shape)}"
            )
        v = np.asarray(v)
        if v.dtype != np.float32 and (
            v.dtype.kind not in "biuf" or not np.can_cast(v.dtype, np.float32, "safe")
        ):
            raise DeeployError(
                f"parameter '{a.name}': initial value has dtype {v.dtype}; expected float32 "
                "(or a dtype that converts to it exactly)"
            )
        if not np.all(np.isfinite(v)):
            raise DeeployError(f"parameter '{a.name}': initial value holds NaN or Inf")
        out[a.name] = np.asarray(v, dtype=np.float32)
    return out


# --------------------------------------------------------------------------
# @training_step
# --------------------------------------------------------------------------


def _function(
    im: Importer, name: str, args: list[ArgInfo], nodes: list[pb.NodeProto]
) -> func.FuncOp:
    types = [tensor_type(a.shape, ONNX_DTYPES_BY_NP[a.dtype]) for a in args]
    block = Block(arg_types=types)
    im.env = {}
    im.results = []
    im.arg_index = {}
    for i, (a, v) in enumerate(zip(args, block.args, strict=True)):
        v.name_hint = ssa_name(a.name)
        im.env[a.name] = v
        im.arg_index[a.name] = i
    im.builder = Builder(InsertPoint.at_end(block))
    for node in nodes:
        try:
            if any(fold(im, node) for fold in FOLDERS):
                continue
            REGISTRY[(domain_of(node), node.op_type)].handler(im, node)
        except DeeployError as e:
            if not str(e).startswith("node '"):
                raise
            # a node's error names the file that holds the node
            raise DeeployError(f"{im.source}: {e}") from None
        except (ValueError, TypeError, IndexError, KeyError, OverflowError) as e:
            # a hostile graph the handler's own checks did not foresee: name the node
            if os.environ.get("DEEPLOY_MLIR_DEBUG"):
                raise
            msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise DeeployError(
                f"{im.source}: {node_label(node)}: cannot import it ({type(e).__name__}: {msg})"
            ) from None
    if name == "training_step":
        _graph_outputs(im)
    im.builder.insert(func.ReturnOp(*[r.value for r in im.results]))
    return func.FuncOp(
        name,
        (types, [r.value.type for r in im.results]),
        Region(block),
        arg_attrs=arg_attrs(args),
        res_attrs=result_attrs(im.results),
    )


def _graph_outputs(im: Importer) -> None:
    g = im.train.graph
    updated = im.updated
    for out in g.output:
        if out.name in updated:
            continue  # added with its update target already
        if out.name not in im.env and out.name in im.inits:
            # a value evaluated at import (folded shape arithmetic)
            im.env[out.name] = im.constant(im.inits[out.name])
        if out.name not in im.env:
            if out.name in im.dropped:
                continue
            raise DeeployError(f"{im.source}: graph output '{out.name}' is never computed")
        im.add_result(im.env[out.name], out.name)
