"""memory-regime{board=NAME regime=auto|resident|spill|stream l2=BYTES l3=BYTES}:
which kinds of tensors live in L2 and which in L3, from the board's capacities.

Runs on buffer-form IR right after training-bufferize (everything in L2). The
footprint by kind (bytes, no reuse):

- weights: the parameters (`#training.arg<param ...>` arguments);
- gradients: the gradient accumulation buffers (`grad_accum`);
- optimizer_state: what the optimizer step reads besides them (`lr`; SGD has
  no per-parameter state; AdamW's moments and step count, `optimizer_state`
  arguments, persist from step to step like the parameters);
- activations: the temporaries of the two steps (top-level `memref.alloc`s);
- inputs: the mini-batch (`input`); and outputs (`output`) and control
  (`reset_flag`), which always stay in L2.

The regimes, cheapest first:

- `resident`: everything in L2;
- `spill`: the activations in L3;
- `stream`: the activations, weights, gradients and the optimizer's state in
  L3 -- the step's state is streamed from L3 per op.

A tensor in L3 is staged whole through an L2 buffer around every op that uses
it (memory/staging.py move_to_l3 / stage_uses: fetch and wait before an op that
reads it, store and wait after an op that writes it); tensors whose size the
L3 engines cannot move (not a multiple of 4 bytes) stay in L2. A regime's need
is the L2 and L3 arenas of the module with its moves (planned as arena-plan
will plan them, staging buffers included); it fits when both are within the
capacities: the board's levels, or `l2`/`l3` when given (> 0). `auto` takes
the first regime that fits; a forced regime that does not fit, or a model that
no regime fits, is an error naming the regime, the need and the capacity.

The pass records on the module `training.regime = #training.regime<REGIME,
{kind = bytes, ...}>` (the regime it applied and the footprint per kind).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import UNPLANNED, UNTILED, require
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.memory.buffers import arg_kind, arg_name, nbytes, step_functions
from deeploy_mlir.memory.probe import arena_size
from deeploy_mlir.memory.staging import move_to_l3, stage_uses
from deeploy_mlir.targets.boards import Board, load_board

#: the regimes in the order `auto` tries them (cheapest first)
REGIMES = ("resident", "spill", "stream")
#: footprint kinds, by argument kind (of its `#training.arg`)
ARG_KINDS = {
    "param": "weights",
    "grad_accum": "gradients",
    "lr": "optimizer_state",
    "optimizer_state": "optimizer_state",
    "input": "inputs",
    "output": "outputs",
    "reset_flag": "control",
    "running_stat": "weights",  # batch norm's running statistics: state like weights
}
FOOTPRINT_KINDS = (
    "weights",
    "gradients",
    "optimizer_state",
    "activations",
    "inputs",
    "outputs",
    "control",
)
#: the argument kinds each regime moves to L3 (activations: spill and stream)
L3_ARGS = {
    "resident": (),
    "spill": (),
    "stream": ("param", "grad_accum", "running_stat", "optimizer_state"),
}


def _args(module: ModuleOp) -> dict[str, tuple[str, int]]:
    """Every memref argument of the step functions: name -> (kind, bytes); an
    argument of both functions (parameters, gradients) once."""
    out: dict[str, tuple[str, int]] = {}
    for fn in step_functions(module):
        for i, a in enumerate(fn.body.block.args):
            if isinstance(a.type, MemRefType):
                out.setdefault(arg_name(fn, i), (arg_kind(fn, i), nbytes(a.type)))
    return out


def _temporaries(module: ModuleOp) -> list[memref.AllocOp]:
    return [
        o
        for fn in step_functions(module)
        for o in fn.body.block.ops
        if isinstance(o, memref.AllocOp) and isinstance(o.memref.type, MemRefType)
    ]


def footprint(module: ModuleOp) -> dict[str, int]:
    """Bytes per kind (FOOTPRINT_KINDS), without any reuse."""
    out: dict[str, int] = dict.fromkeys(FOOTPRINT_KINDS, 0)
    for kind, size in _args(module).values():
        out[ARG_KINDS.get(kind, "inputs")] += size
    out["activations"] = sum(nbytes(a.memref.type) for a in _temporaries(module))
    return out


def _movable(size: int) -> bool:
    """The L3 engines move multiples of 4 bytes; an empty tensor needs no move."""
    return size > 0 and size % 4 == 0


def apply_regime(module: ModuleOp, regime: str) -> None:
    """Move what `regime` puts in L3 there, staged whole through L2 around
    each op that uses it."""
    if regime == "resident":
        return
    for alloc in _temporaries(module):
        t = alloc.memref.type
        assert isinstance(t, MemRefType)
        if _movable(nbytes(t)) and t.memory_space == StringAttr("L2"):
            new = memref.AllocOp(
                [],
                [],
                MemRefType(t.get_element_type(), t.get_shape(), memory_space=StringAttr("L3")),
            )
            new.memref.name_hint = alloc.memref.name_hint
            Rewriter.replace_op(alloc, new)
            T.retype_views(new.memref)
            stage_uses(new.memref)
    names = {n for n, (k, size) in _args(module).items() if k in L3_ARGS[regime] and _movable(size)}
    if names:
        move_to_l3(module, names)


@dataclass(frozen=True)
class Need:
    """The L2 and L3 arenas a regime needs."""

    regime: str
    l2: int
    l3: int


def regime_need(module: ModuleOp, regime: str) -> Need:
    """What `regime` needs, planned on a copy of `module`."""
    probe = module.clone()
    apply_regime(probe, regime)
    return Need(regime, arena_size(probe, "L2"), arena_size(probe, "L3"))


@dataclass(frozen=True)
class Capacity:
    l2: int
    l3: int
    where: dict[str, str]  # level -> where the number comes from, for messages

    def shortfall(self, need: Need) -> str | None:
        """Why `need` does not fit (None: it does)."""
        for lv, n, cap in (("L2", need.l2, self.l2), ("L3", need.l3, self.l3)):
            if n > cap:
                return (
                    f"regime '{need.regime}' needs {n} bytes of {lv} but the {lv} capacity is "
                    f"{cap} bytes ({self.where[lv]})"
                )
        return None


def capacity(board: Board, l2: int = 0, l3: int = 0) -> Capacity:
    where = {
        lv: f"board '{board.name}'" if v in (0, board.levels[lv]) else f"{lv.lower()}={v}"
        for lv, v in (("L2", l2), ("L3", l3))
    }
    return Capacity(l2 or board.levels["L2"], l3 or board.levels["L3"], where)


def choose(module: ModuleOp, regime: str, cap: Capacity) -> str:
    """The regime to apply: `regime` if it fits, or for `auto` the first that fits."""
    if regime != "auto":
        why = cap.shortfall(regime_need(module, regime))
        if why is not None:
            raise DeeployError(f"memory-regime: {why}")
        return regime
    why = ""
    for r in REGIMES:
        why = cap.shortfall(regime_need(module, r)) or ""
        if not why:
            return r
    raise DeeployError(f"memory-regime: no regime fits: {why}")


@dataclass(frozen=True)
class MemoryRegime(ModulePass):
    name = "memory-regime"

    #: a shipped board's name or a board file's path
    board: str = "siracusa"
    #: auto (the first that fits: resident, spill, stream) or one of REGIMES
    regime: Literal["auto", "resident", "spill", "stream"] = "auto"
    #: L2 / L3 capacity in bytes (0: the board's)
    l2: int = 0
    l3: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.regime not in ("auto", *REGIMES):
            raise DeeployError(
                f"memory-regime: regime must be auto, resident, spill or stream, got "
                f"'{self.regime}'"
            )
        if self.l2 < 0 or self.l3 < 0:
            raise DeeployError(
                f"memory-regime: l2 and l3 must not be negative, got l2={self.l2} l3={self.l3}"
            )
        types = [a.type for fn in step_functions(op) for a in fn.body.block.args]
        if any(isinstance(t, TensorType) for t in types):
            raise DeeployError(
                "memory-regime: expects buffer-form IR (run it right after training-bufferize)"
            )
        types += [a.memref.type for a in _temporaries(op)]
        for t in types:
            if isinstance(t, MemRefType) and t.memory_space != StringAttr("L2"):
                raise DeeployError(
                    "memory-regime: expects every tensor in L2 (run it right after "
                    "training-bufferize, instead of memory-home)"
                )
        require(op, self.name, UNPLANNED, UNTILED)
        board = load_board(self.board)
        fp = footprint(op)
        chosen = choose(op, self.regime, capacity(board, self.l2, self.l3))
        apply_regime(op, chosen)
        T.set_regime(op, chosen, fp)
