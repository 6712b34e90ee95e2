"""Which stage of the pipeline a module is in, read from the IR itself.

Every pass needs its input in a given form (tensor or buffer form, tile
choices made or materialized, copies given an engine or not). A pass run in
the wrong place would otherwise do nothing, silently; each pass calls
`require` first, so a pipeline in the wrong order fails naming the pass and
what it needs (`deeploy-mlir --pass-pipeline` and `deeploy-opt` alike).
"""

from __future__ import annotations

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp, TensorType

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects.tiling import STOPPED_EARLY, TiledOp, is_loop
from deeploy_mlir.errors import DeeployError

#: the forms a pass can require, and the message part naming what to do
TENSOR = "tensor"  # before training-bufferize
BUFFER = "buffer"  # after training-bufferize
UNPLANNED = "unplanned"  # no arena-plan yet (memory-home, memory-regime)
UNTILED = "untiled"  # no tile-select yet
CHOSEN = "chosen"  # tile-select ran, tiling-materialize not yet
MATERIALIZED = "materialized"  # no tiling.tiled left (tiling-materialize ran, if tile-select did)
COPIES = "copies"  # tile copies exist (tiling-materialize ran)
UNDECOMPOSED = "undecomposed"  # no copy has an engine yet (dma-decompose not run)


def tensor_form(module: ModuleOp) -> bool:
    """Any function argument or op result is a tensor (training-bufferize has not run)."""
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
            continue
        if any(isinstance(a.type, TensorType) for a in fn.body.block.args):
            return True
        for o in fn.walk():
            if any(isinstance(r.type, TensorType) for r in o.results):
                return True
    return False


def _planned(module: ModuleOp) -> bool:
    return any(k.startswith("training.arena_") for k in module.attributes)


def _ops(module: ModuleOp, cls: type) -> list[object]:
    return [o for o in module.walk() if isinstance(o, cls)]


#: the module attribute tile-select always sets (its stopped-early list):
#: tile-select ran, even when every op fits whole and tiling-materialize
#: left neither tile choices nor loops behind
_TILE_SELECTED = STOPPED_EARLY


def _materialized(module: ModuleOp) -> bool:
    """tiling-materialize ran: tile or stage loops, or copies to or from L1
    (an op of one tile has no loop). memory-home and memory-regime stage whole
    tensors with L3 <-> L2 copies: those do not count."""
    for o in module.walk():
        if isinstance(o, scf.ForOp) and is_loop(o):
            return True
        if isinstance(o, dma.CopyOp) and "L1" in o.hop:
            return True
    return False


def problems(module: ModuleOp, needs: tuple[str, ...]) -> str | None:
    """Why `module` is not in every form of `needs` (None: it is)."""
    tensors = tensor_form(module)
    for need in needs:
        if need == TENSOR and not tensors:
            return "expects tensor-form IR (run it before training-bufferize, once)"
        if need == BUFFER and tensors:
            return "expects buffer-form IR (run training-bufferize first)"
        if need == UNPLANNED and _planned(module):
            return "must run before arena-plan"
        if need == UNTILED and (
            _ops(module, TiledOp) or _materialized(module) or _TILE_SELECTED in module.attributes
        ):
            return "expects IR without tile choices (run it once, before tiling-materialize)"
        if need == CHOSEN and not _ops(module, TiledOp):
            return "finds no tile choices (run tile-select first)"
        if need == MATERIALIZED and _ops(module, TiledOp):
            return "finds tile choices not yet materialized (run tiling-materialize first)"
        if need == COPIES and not _materialized(module):
            return "finds no tile copies (run tile-select and tiling-materialize first)"
        if need == UNDECOMPOSED and any(
            c.engine is not None for c in _ops(module, dma.CopyOp) if isinstance(c, dma.CopyOp)
        ):
            return "must run before dma-decompose"
    return None


def require(module: ModuleOp, pass_name: str, *needs: str) -> None:
    """Raise a DeeployError naming `pass_name` unless `module` is in every form of `needs`."""
    why = problems(module, needs)
    if why is not None:
        raise DeeployError(f"{pass_name}: {why}")
