"""The scaffolding of the op tests (tests/test_conv_ops.py,
tests/test_transformer_ops.py):

* one op in tensor form on block arguments (for the reference semantics and
  the iteration spaces), or in buffer form in a function on L2 memrefs,
  interpreted, and tiled by tile-select + tiling-materialize;
* runtime_c kernels built with the host emulation into a shared library
  (gcc; a file of the C layouts of the ctypes struct mirrors linked in) and
  called through ctypes on numpy arrays, each output with a guard element.

The struct mirrors come from runtime_c's headers (tests/c_structs.py)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.interpreter import Interpreter
from xdsl.ir import Attribute, Block, Region

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.tiling import TiledOp
from deeploy_mlir.interp.interpreter import TrainingFunctions
from deeploy_mlir.passes.tile_select import TileSelect
from deeploy_mlir.passes.tiling_materialize import TilingMaterialize

ROOT = Path(__file__).resolve().parents[1]
RT = ROOT / "runtime_c"
GCC = shutil.which("gcc")

# ---------------------------------------------------------------- ops

XDSL_ELEM = {np.float32: f32, np.int64: i64, np.bool_: IntegerType(1)}

#: the outputs of a buffer-form op: (shape, numpy dtype) each
Outs = Sequence[tuple[Sequence[int], Any]]


def tensor(shape: Sequence[int], elem: Attribute = f32) -> TensorType[Attribute]:
    return TensorType(elem, list(shape))


def build(
    cls: type[T.TrainingComputeOp],
    arrays: Sequence[np.ndarray],
    outs: Sequence[TensorType[Attribute]],
    props: dict[str, Attribute] | None = None,
) -> T.TrainingComputeOp:
    """The op in tensor form on block arguments shaped like `arrays`, verified."""
    block = Block(arg_types=[tensor(a.shape, XDSL_ELEM[a.dtype.type]) for a in arrays])
    op = cls(list(block.args), list(outs), properties=props)
    op.verify()
    block.add_op(op)
    return op


def buffer_module(
    cls: type[T.TrainingComputeOp],
    ins: Sequence[np.ndarray],
    outs: Outs,
    props: dict[str, Attribute] | None,
) -> ModuleOp:
    """func @f(ins..., outs...) { cls ins(...) outs(...) } on L2 memrefs."""

    def mt(shape: Sequence[int], dtype: Any) -> MemRefType[Attribute]:
        return MemRefType(XDSL_ELEM[dtype], list(shape), memory_space=StringAttr("L2"))

    types = [mt(a.shape, a.dtype.type) for a in ins] + [mt(s, d) for s, d in outs]
    block = Block(arg_types=types)
    n = len(ins)
    block.add_op(cls(list(block.args[:n]), (), list(block.args[n:]), properties=props))
    block.add_op(func.ReturnOp())
    return ModuleOp([func.FuncOp("f", (types, []), Region(block))])


def interpret(module: ModuleOp, ins: Sequence[np.ndarray], outs: Outs) -> list[np.ndarray]:
    """@f of `module` interpreted on copies of `ins`, into outputs that start
    as NaN (floats) or -7 (integers)."""
    from xdsl.interpreters.arith import ArithFunctions
    from xdsl.interpreters.func import FuncFunctions
    from xdsl.interpreters.scf import ScfFunctions

    interp = Interpreter(module)
    for f in (TrainingFunctions(), ArithFunctions(), FuncFunctions(), ScfFunctions()):
        interp.register_implementations(f)
    bufs = [np.full(s, np.nan if d is np.float32 else -7, d) for s, d in outs]
    interp.call_op("f", (*[a.copy() for a in ins], *bufs))
    return bufs


def untiled(
    cls: type[T.TrainingComputeOp],
    ins: Sequence[np.ndarray],
    outs: Outs,
    props: dict[str, Attribute] | None,
) -> tuple[ModuleOp, list[np.ndarray]]:
    """The op's buffer_module, verified, and its interpreted numbers."""
    module = buffer_module(cls, ins, outs, props)
    module.verify()
    return module, interpret(module, ins, outs)


def compute_op(module: ModuleOp) -> T.TrainingComputeOp:
    """The first compute op of `module`, which has an iteration space."""
    op = next(o for o in module.walk() if isinstance(o, T.TrainingComputeOp))
    assert isinstance(op, T.IterationSpaceInterface)
    return op


def select_tiles(ctx: Context, module: ModuleOp, l1: int) -> list[int]:
    """tile-select at an L1 budget of `l1` bytes: the tile sizes of the one
    tiled op it makes."""
    TileSelect(l1=l1).apply(ctx, module)
    (tiled,) = [o for o in module.walk() if isinstance(o, TiledOp)]
    return tiled.tile_sizes()


def materialize(
    ctx: Context, module: ModuleOp, ins: Sequence[np.ndarray], outs: Outs
) -> list[np.ndarray]:
    """tiling-materialize, verify, and the numbers of the tiled module."""
    TilingMaterialize().apply(ctx, module)
    module.verify()
    return interpret(module, ins, outs)


# ---------------------------------------------------------------- runtime_c kernels

PTR = ctypes.c_void_p


def layout_c(structs: Sequence[type[ctypes.Structure]]) -> str:
    """C arrays dm_layout_<c_name> of each struct's size and field offsets."""
    lines = ['#include <stddef.h>\n#include "dm_kernels.h"']
    for st in structs:
        name: str = st.c_name  # type: ignore[attr-defined]
        items = [f"sizeof({name})"] + [f"offsetof({name}, {f[0]})" for f in st._fields_]
        lines.append(f"const size_t dm_layout_{name}[] = {{{', '.join(items)}}};")
    return "\n".join(lines) + "\n"


def mirror_layout(s: type[ctypes.Structure]) -> list[int]:
    """The ctypes mirror's size and field offsets (what layout_c gives in C)."""
    return [ctypes.sizeof(s)] + [getattr(s, f[0]).offset for f in s._fields_]


def kernel_library(
    d: Path,
    name: str,
    cores: int,
    kernels: Sequence[str],
    structs: Sequence[type[ctypes.Structure]],
    opt: Sequence[str] = ("-O2",),
) -> Path:
    """runtime_c/kernels/<kernels> and the host emulation for NUM_CORES
    `cores`, with the layouts of `structs`, as the shared library
    d/lib<name><cores>.so (skips the test without gcc)."""
    if GCC is None:
        pytest.skip("gcc is needed to build runtime_c")
    layout = d / "layout.c"
    layout.write_text(layout_c(structs))
    srcs = [RT / "kernels" / k for k in kernels] + [RT / "host" / "pmsis_host.c", layout]
    flags = ["-std=gnu11", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared"]
    flags += opt
    so = d / f"lib{name}{cores}.so"
    r = subprocess.run(
        [GCC, *flags, f"-DNUM_CORES={cores}", f"-I{RT / 'include'}", f"-I{RT / 'host'}"]
        + [str(s) for s in srcs]
        + ["-o", str(so), "-lm"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return so


class KernelLib:
    """A library of kernel_library, loaded."""

    def __init__(self, path: Path, cores: int) -> None:
        self.cores = cores
        self.lib = ctypes.CDLL(str(path))
        self.lib.pi_cl_team_fork.argtypes = [ctypes.c_int, PTR, PTR]
        self.lib.pi_cl_team_fork.restype = None

    def run(self, kernel: str, args: ctypes.Structure, team: int = 0) -> None:
        """pi_cl_team_fork(team, kernel, &args) (team 0: the whole cluster)."""
        fn = ctypes.cast(getattr(self.lib, kernel), PTR)
        self.lib.pi_cl_team_fork(team, fn, ctypes.addressof(args))

    def teams(self) -> list[int]:
        """Team sizes to run each kernel with: the whole cluster, and an uneven one."""
        return [0, 3] if self.cores >= 3 else [0]

    def layout(self, s: type[ctypes.Structure]) -> list[int]:
        """The C size and field offsets of the struct `s` mirrors."""
        arr = (ctypes.c_size_t * (1 + len(s._fields_))).in_dll(
            self.lib,
            f"dm_layout_{s.c_name}",  # type: ignore[attr-defined]
        )
        return list(arr)


def p(a: np.ndarray | None) -> int | None:
    """The address of a C-contiguous array (None: NULL)."""
    if a is None:
        return None
    assert a.flags.c_contiguous
    return a.ctypes.data


class Guarded:
    """An output array with a guard element after it that a kernel must not touch."""

    def __init__(self, shape: Sequence[int], dtype: Any = np.float32) -> None:
        size = int(np.prod(shape, dtype=np.int64))
        self.buf = np.full(size + 1, 7, dtype)
        self.arr = self.buf[:size].reshape(shape)

    @property
    def ptr(self) -> int:
        return self.buf.ctypes.data

    def check(self) -> np.ndarray:
        assert self.buf[-1] == 7, "the kernel wrote past the end of its output"
        return self.arr
