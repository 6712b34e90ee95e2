"""The dialects and passes of deeploy-mlir, for deeploy-opt and for a plain
`xdsl-opt` (through the `xdsl.universe` entry point)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from xdsl.ir import Dialect
from xdsl.passes import ModulePass

if TYPE_CHECKING:
    from xdsl.universe import Universe


def _training() -> Dialect:
    from deeploy_mlir.dialects.training import Training

    return Training


def _inplace() -> type[ModulePass]:
    from deeploy_mlir.passes.training_inplace_alias import TrainingInplaceAlias

    return TrainingInplaceAlias


def _bufferize() -> type[ModulePass]:
    from deeploy_mlir.passes.training_bufferize import TrainingBufferize

    return TrainingBufferize


def _accumulate_fuse() -> type[ModulePass]:
    from deeploy_mlir.passes.accumulate_fuse import AccumulateFuse

    return AccumulateFuse


def _transpose_fold() -> type[ModulePass]:
    from deeploy_mlir.passes.transpose_fold import TransposeFold

    return TransposeFold


def _relu_fuse() -> type[ModulePass]:
    from deeploy_mlir.passes.relu_fuse import ReluFuse

    return ReluFuse


def _arena_plan() -> type[ModulePass]:
    from deeploy_mlir.passes.arena_plan import ArenaPlan

    return ArenaPlan


def _tiling() -> Dialect:
    from deeploy_mlir.dialects.tiling import Tiling

    return Tiling


def _kernel() -> Dialect:
    from deeploy_mlir.dialects.kernel import Kernel

    return Kernel


def _kernel_select() -> type[ModulePass]:
    from deeploy_mlir.passes.kernel_select import KernelSelect

    return KernelSelect


def _dma() -> Dialect:
    from deeploy_mlir.dialects.dma import DMA

    return DMA


def _tile_select() -> type[ModulePass]:
    from deeploy_mlir.passes.tile_select import TileSelect

    return TileSelect


def _materialize() -> type[ModulePass]:
    from deeploy_mlir.passes.tiling_materialize import TilingMaterialize

    return TilingMaterialize


def _memory_home() -> type[ModulePass]:
    from deeploy_mlir.passes.memory_home import MemoryHome

    return MemoryHome


def _memory_regime() -> type[ModulePass]:
    from deeploy_mlir.passes.memory_regime import MemoryRegime

    return MemoryRegime


def _dma_decompose() -> type[ModulePass]:
    from deeploy_mlir.passes.dma_decompose import DmaDecompose

    return DmaDecompose


def _l3_overlap() -> type[ModulePass]:
    from deeploy_mlir.passes.l3_overlap import L3Overlap

    return L3Overlap


def _dma_multibuffer() -> type[ModulePass]:
    from deeploy_mlir.passes.dma_multibuffer import DmaMultibuffer

    return DmaMultibuffer


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "training": _training,
    "tiling": _tiling,
    "dma": _dma,
    "kernel": _kernel,
}
PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "transpose-fold": _transpose_fold,
    "training-inplace-alias": _inplace,
    "training-bufferize": _bufferize,
    "accumulate-fuse": _accumulate_fuse,
    "relu-fuse": _relu_fuse,
    "memory-home": _memory_home,
    "memory-regime": _memory_regime,
    "arena-plan": _arena_plan,
    "tile-select": _tile_select,
    "tiling-materialize": _materialize,
    "dma-multibuffer": _dma_multibuffer,
    "dma-decompose": _dma_decompose,
    "l3-overlap": _l3_overlap,
    "kernel-select": _kernel_select,
}


def __getattr__(name: str) -> Any:
    """`DEEPLOY_UNIVERSE`, the `xdsl.universe` entry point, made when xdsl
    asks for it: xdsl.universe imports xdsl.transforms and xdsl.targets,
    which a compile does not use (issue 22's start-up)."""
    if name == "DEEPLOY_UNIVERSE":
        return universe()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def universe() -> Universe:
    """deeploy-mlir's dialects and passes as an xdsl Universe."""
    from xdsl.universe import Universe

    return Universe(all_dialects=DIALECTS, all_passes=PASSES)
