"""Execute `training` IR at any stage with numpy, on xDSL's interpreter.

Tensor-form ops return new arrays; buffer-form ops write into their `outs`
arrays, so in-place decisions and arena plans are executed for real: an arena
view is a numpy view into one byte array per memory level, and two buffers that
a wrong plan overlaps corrupt each other's numbers, as they would on the device.

`TrainingSession` drives @training_step / @optimizer_step over mini-batches the
way the emitted harness does, for any stage of the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Attribute, Operation

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.tiling import TiledOp
from deeploy_mlir.interp.attrs import (  # noqa: F401  (re-exported)
    NP_OF,
    arena_sizes,
    check_arenas,
    dense_to_array,
    func_named,
    loss_output_name,
    np_dtype,
)
from deeploy_mlir.interp.families.loss import STEP as dropout_step
from deeploy_mlir.interp.reference import compute, gemm_onto


@dataclass
class _Request:
    """A DMA request: the copies issued on it that have not landed yet."""

    pending: list[Any] = field(default_factory=list[Any])


@dataclass
class Arenas:
    """One byte array per memory level; views are taken at static offsets."""

    sizes: Mapping[str, int]
    data: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])

    def __post_init__(self) -> None:
        for level, size in self.sizes.items():
            # poison, so that a read of a never-written byte shows in the numbers
            self.data[level] = np.full(size, 0xFF, dtype=np.uint8)

    def view(self, level: str, offset: int, t: Attribute) -> np.ndarray:
        dt = np.dtype(np_dtype(t))
        shape = T.shape_of(t)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        buf = self.data[level][offset : offset + n]
        if len(buf) != n:
            raise IndexError(f"view at {offset}+{n} past the end of the {level} arena")
        return buf.view(dt).reshape(shape)


class TrainingFunctions(InterpreterFunctions):
    def __init__(self, arenas: Arenas | None = None, globals_: dict[str, np.ndarray] | None = None):
        self.arenas = arenas
        self.globals = globals_ or {}

    def _compute(self, op: T.TrainingComputeOp, args: tuple[Any, ...]) -> tuple[Any, ...]:
        n_in, n_out = len(op.ins), len(op.outs)
        origin = [int(a) for a in args[n_in + n_out :]]  # a maxpool2d tile's
        n_own = n_in - op.n_onto_ins()  # without accumulate-fuse's buffers and flag
        if isinstance(op, T.GemmOp) and op.accumulated():
            # a later K tile: alpha and C (when last) apply after the sum
            y = args[n_in]
            y[...] = gemm_onto(op, [np.asarray(a) for a in args[:n_own]], np.asarray(y))
            return ()
        outs = compute(op, [np.asarray(a) for a in args[:n_own]], origin)
        if not op.is_buffer_form:
            return tuple(outs)
        acc = set(op.accumulated())
        # accumulate-fuse: reset ? f : buffer + f, as InPlaceAccumulatorV2
        onto = set(op.onto_outputs()) - acc
        keep = bool(onto) and not bool(np.asarray(args[n_in - 1]).reshape(-1)[0])
        for k, (dst, val) in enumerate(zip(args[n_in : n_in + n_out], outs, strict=True)):
            if k in acc or (keep and k in onto):  # adds into this output
                dst[...] = (dst + val).astype(dst.dtype)
            else:
                dst[...] = val
        return ()

    @impl(T.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: T.ConstantOp, args: tuple[Any, ...]):
        return (dense_to_array(op.value, op.result.type),)

    @impl(T.ArenaViewOp)
    def run_arena_view(self, interpreter: Interpreter, op: T.ArenaViewOp, args: tuple[Any, ...]):
        assert self.arenas is not None, "arena views need the arenas"
        return (self.arenas.view(op.level, op.offset.value.data, op.result.type),)

    @impl(T.ViewOp)
    def run_view(self, interpreter: Interpreter, op: T.ViewOp, args: tuple[Any, ...]):
        # a numpy view of the source's array (an arena view, an argument's
        # storage, a buffer): writes through either show in the other, as on
        # the device; setting the shape of a view never copies (it raises
        # instead, so a source that is not contiguous cannot pass unseen)
        out = args[0].view()
        out.shape = T.shape_of(op.result.type)
        return (out,)

    @impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: tuple[Any, ...]):
        t = op.memref.type
        return (
            np.full(T.shape_of(t), np.nan if np_dtype(t) is np.float32 else 0, dtype=np_dtype(t)),
        )

    @impl(TiledOp)
    def run_tiled(self, interpreter: Interpreter, op: TiledOp, args: tuple[Any, ...]):
        # tile sizes do not change what the op computes
        interpreter.run_ssacfg_region(op.body, (), "tiling.tiled")
        return ()

    @impl(dma.RequestOp)
    def run_request(self, interpreter: Interpreter, op: dma.RequestOp, args: tuple[Any, ...]):
        return ([_Request() for _ in range(op.count.value.data)],)

    @impl(dma.CopyOp)
    def run_dma_copy(self, interpreter: Interpreter, op: dma.CopyOp, args: tuple[Any, ...]):
        n_src, n_dst = len(op.src_offsets), len(op.dst_offsets)
        src, dst = args[0], args[1]
        src_off = args[2 : 2 + n_src]
        dst_off = args[2 + n_src : 2 + n_src + n_dst]
        rest = args[2 + n_src + n_dst :]
        ring = rest[0] if op.on is not None else [_Request()]
        req = ring[rest[1] if op.slot is not None else 0]
        sbox = tuple(slice(o, o + n) for o, n in zip(src_off, op.box, strict=True))
        dbox = tuple(slice(o, o + n) for o, n in zip(dst_off, op.dst_box(), strict=True))
        axes = tuple(int(k) for k in np.argsort(op.perm_list))

        def land() -> None:
            dst[dbox] = np.transpose(src[sbox], axes)

        # the copy lands at its wait, as on the hardware
        req.pending.append(land)
        return (ring,)

    @impl(dma.WaitOp)
    def run_dma_wait(self, interpreter: Interpreter, op: dma.WaitOp, args: tuple[Any, ...]):
        ring = args[0]
        req = ring[args[1] if op.slot is not None else 0]
        for land in req.pending:
            land()
        req.pending.clear()
        return ()

    @impl(dma.SlotOp)
    def run_slot(self, interpreter: Interpreter, op: dma.SlotOp, args: tuple[Any, ...]):
        return (args[0][args[1]],)

    @impl(arith.DivUIOp)
    def run_divui(self, interpreter: Interpreter, op: arith.DivUIOp, args: tuple[Any, ...]):
        return (args[0] // args[1],)

    @impl(arith.RemUIOp)
    def run_remui(self, interpreter: Interpreter, op: arith.RemUIOp, args: tuple[Any, ...]):
        return (args[0] % args[1],)

    @impl(memref.GetGlobalOp)
    def run_get_global(
        self, interpreter: Interpreter, op: memref.GetGlobalOp, args: tuple[Any, ...]
    ):
        return (self.globals[op.name_.string_value()],)


def _register_compute_impls() -> None:
    for cls in T.COMPUTE_OPS:

        def run(
            self: TrainingFunctions, interpreter: Interpreter, op: Any, args: tuple[Any, ...]
        ) -> tuple[Any, ...]:
            return self._compute(op, args)

        setattr(TrainingFunctions, f"run_{cls.name.split('.')[1]}", impl(cls)(run))


_register_compute_impls()
register_impls(TrainingFunctions)


# --------------------------------------------------------------------------
# Sessions: the training loop over any stage of the IR
# --------------------------------------------------------------------------


@dataclass
class TrainingSession:
    """Holds the training state (parameters, gradient buffers) by name and runs
    the step functions of `module`, whatever stage it is at."""

    module: ModuleOp
    params: Mapping[str, np.ndarray]
    state: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    arenas: Arenas | None = None

    def __post_init__(self) -> None:
        sizes = arena_sizes(self.module)
        self.arenas = Arenas(sizes) if sizes else None
        globals_: dict[str, np.ndarray] = {}
        for op in self.module.ops:
            if isinstance(op, memref.GlobalOp) and isinstance(
                op.initial_value, DenseIntOrFPElementsAttr
            ):
                globals_[op.sym_name.data] = dense_to_array(op.initial_value, op.type)
        self.interp = Interpreter(self.module)
        self.interp.register_implementations(FuncFunctions())
        self.interp.register_implementations(ScfFunctions())
        self.interp.register_implementations(ArithFunctions())
        self.interp.register_implementations(TrainingFunctions(self.arenas, globals_))
        fn = func_named(self.module, "training_step")
        #: what `train` returns: the parameters and batch norm's running
        #: statistics (not the optimizer's state)
        self.param_names: list[str] = []
        for i, a in enumerate(fn.args):
            info = T.arg_info(fn, i)
            kind, name = info.kind, info.name
            assert name is not None
            if kind in ("param", "grad_accum", "running_stat"):
                storage = self._storage(fn, i, a.type)
                storage[...] = self.params[name] if kind != "grad_accum" else 0
                self.state[name] = storage
                if kind in ("param", "running_stat"):
                    self.param_names.append(name)
        # the optimizer's own state (AdamW's moments and step count): its
        # value in `params` when given (a checkpoint's), else zeros; a module
        # of the training step alone (a test's) has none
        opts = [
            op
            for op in self.module.ops
            if isinstance(op, func.FuncOp) and op.sym_name.data == "optimizer_step"
        ]
        for opt in opts:
            self._init_optimizer_state(opt)

    def _init_optimizer_state(self, opt: func.FuncOp) -> None:
        for i, a in enumerate(opt.args):
            info = T.arg_info(opt, i)
            name = info.name
            if info.kind == T.ArgKind.OPTIMIZER_STATE and name is not None:
                storage = self._storage(opt, i, a.type)
                storage[...] = self.params.get(name, 0)
                self.state[name] = storage

    def _storage(self, fn: func.FuncOp, i: int, t: Attribute) -> np.ndarray:
        off = T.arg_info(fn, i).offset
        if off is not None and self.arenas is not None and isinstance(t, MemRefType):
            space = t.memory_space
            assert isinstance(space, StringAttr)
            return self.arenas.view(space.data, off, t)
        return np.zeros(T.shape_of(t), dtype=np_dtype(t))

    def call(self, name: str, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run @name with state and `feeds`; return its outputs by name."""
        fn = func_named(self.module, name)
        args: list[np.ndarray] = []
        outputs: dict[str, np.ndarray] = {}
        for i, a in enumerate(fn.args):
            info = T.arg_info(fn, i)
            n, kind = info.name, info.kind
            assert n is not None
            if n in self.state:
                args.append(self.state[n])
            else:
                buf = self._storage(fn, i, a.type)
                if kind == "output":
                    outputs[n] = buf
                else:
                    buf[...] = np.asarray(feeds[n]).reshape(buf.shape)
                args.append(buf)
        results = self.interp.call_op(fn, tuple(args))
        for i, r in enumerate(results):
            res = T.result_info(fn, i)
            n, upd = res.name, res.updates
            assert n is not None
            if upd is not None:
                target = T.arg_info(fn, upd).name
                assert target is not None
                self.state[target][...] = r
            outputs[n] = np.asarray(r)
        return {k: np.array(v) for k, v in outputs.items()}

    def train(
        self,
        data: Mapping[str, np.ndarray],
        steps: int,
        accum: int,
        lr: float,
        loss_name: str | None = None,
    ) -> tuple[list[float], dict[str, np.ndarray]]:
        """`steps` optimizer steps of `accum` mini-batches; returns the losses
        and the parameters (with batch norm's running statistics) after training."""
        losses: list[float] = []
        for s in range(steps):
            for a in range(accum):
                mb = s * accum + a
                feeds = {k: v[mb] for k, v in data.items()}
                feeds["lazy_reset_grad"] = np.array([a == 0])
                token = dropout_step.set(mb)  # the C harness's dm_minibatch
                try:
                    out = self.call("training_step", feeds)
                finally:
                    dropout_step.reset(token)
                if loss_name is not None:
                    losses.append(float(out[loss_name].reshape(-1)[0]))
            self.call("optimizer_step", {"learning_rate": np.array([lr], dtype=np.float32)})
        return losses, {k: np.array(self.state[k]) for k in self.param_names}


def run_ops(ops: Sequence[Operation]) -> None:  # pragma: no cover - debugging aid
    for op in ops:
        print(op)
