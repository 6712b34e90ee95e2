"""C emitter: planned buffer-form IR -> a C project for a PULP target.

Logic lives here (which kernel, which pointers, which sizes: a `match` over
the op classes); text lives in the jinja2 templates beside this file.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.interp.attrs import (
    arena_sizes,
    dense_to_array,
    func_named,
)
from deeploy_mlir.outputs import staged_dir
from deeploy_mlir.passes.arena_plan import nbytes
from deeploy_mlir.targets.stacks import cluster_stacks
from deeploy_mlir.targets.target import get_target

TEMPLATES = Path(__file__).parent / "templates"


#: the C dialect of every build of the emitted code and the runtime: GNU C (the
#: SDK headers use `asm`), and no a*b+c contracted by the compiler (ISO C
#: modes' default, not GNU's), so every build gives the host's bits: the
#: kernels fuse where they say so, with fmaf
C_LANG = ("-std=gnu11", "-ffp-contract=off")

C_TYPE = {"f32": "float", "i64": "int64_t", "i1": "uint8_t"}


def c_ident(name: str) -> str:
    s = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return s if s and not s[0].isdigit() else f"_{s}"


def c_type(t: Attribute) -> str:
    return C_TYPE[str(T.elem_of(t))]


def c_float(x: float) -> str:
    if not abs(float(x)) <= float(np.finfo(np.float32).max):  # NaN, Inf, or beyond float32
        raise DeeployError(f"cannot emit the float {x}: not finite as a float32")
    v = np.float32(x)
    return np.format_float_scientific(v, unique=True, exp_digits=2) + "f"


def c_values(arr: np.ndarray) -> str:
    flat = np.asarray(arr).reshape(-1)
    if flat.dtype == np.float32:
        bad = ~np.isfinite(flat)
        if bad.any():
            raise DeeployError(f"cannot emit the non-finite float {flat[bad][0]}")
        # 9 significant digits give back every float32 exactly (a weight
        # array has up to millions of elements: one format per element, in C)
        items = ["%.8ef" % v for v in flat.tolist()]  # noqa: UP031
    elif flat.dtype == np.bool_:
        items = [str(int(v)) for v in flat]
    else:
        items = [f"{int(v)}LL" for v in flat]
    lines = [", ".join(items[i : i + 8]) for i in range(0, len(items), 8)]
    return ",\n    ".join(lines)


@dataclass
class KernelCall:
    kernel: str
    args_type: str
    fields: list[tuple[str, str]]
    comment: str


@dataclass
class Buffer:
    name: str
    kind: str
    level: str
    offset: int
    size: int
    ctype: str
    shape: tuple[int, ...]


@dataclass
class _FnCtx:
    """How each memref value of one function is spelled in C."""

    exprs: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    #: the static object(s) of each DMA request (ring) value: array, first index, count
    requests: dict[SSAValue, tuple[str, int, int]] = field(
        default_factory=dict[SSAValue, tuple[str, int, int]]
    )
    #: the name of each request (ring) in the host emulation's messages
    names: dict[SSAValue, str] = field(default_factory=dict[SSAValue, str])
    #: L2 <-> L1 copies as memcpy (the L1 arena lives in L2)
    l1_as_l2: bool = False
    #: objects in each static array of requests (see _plan_requests)
    pools: dict[str, int] = field(default_factory=dict[str, int])

    def ptr(self, v: SSAValue) -> str:
        return self.exprs[v]

    def new_request(self, token: SSAValue) -> tuple[str, int, int, str]:
        """The static slots planned for a request (ring) and its name."""
        base = c_ident(token.name_hint or "req")
        var = f"dm_req_{base}"
        n = 1
        used = set(self.names.values())
        while var in used:
            n += 1
            var = f"dm_req_{base}_{n}"
        self.names[token] = var
        arr, first, count = self.requests[token]
        return arr, first, count, var

    def request(self, token: SSAValue, slot: SSAValue | None = None) -> str:
        """The request a token stands for (a copy on a ring slot: that slot)."""
        owner = token.owner
        if isinstance(owner, dma.CopyOp) and owner.on is not None:
            return self.request(owner.on, owner.slot)
        arr, first, _ = self.requests[token]
        if isinstance(owner, dma.RequestOp) and slot is not None:
            return f"{arr}[{first}u + {self.ptr(slot)}]"
        return f"{arr}[{first}u]"

    def pool_declarations(self) -> list[str]:
        return [
            f"static {_REQ_TYPE[fam]} {arr}[{n}];"
            for fam, arr in _POOL.items()
            if (n := self.pools.get(arr, 0)) > 0
        ]


#: C request type, issue and wait calls of each engine family (PMSIS names)
_REQ_TYPE = {"mchan": "pi_cl_dma_cmd_t", "ram": "pi_cl_ram_req_t"}
_WAIT = {"mchan": "pi_cl_dma_cmd_wait", "ram": "pi_cl_ram_copy_wait"}
#: the function-scope static array that holds each family's requests
_POOL = {"mchan": "dm_dma_cmds", "ram": "dm_ram_reqs"}


def _family(engine: dma.EngineAttr) -> str:
    return "ram" if engine.ext.data == "L3" else "mchan"


def _request_engine(token: SSAValue) -> dma.EngineAttr:
    """The engine of the copies issued on a request (all must agree)."""
    engines = {
        u.operation.engine
        for u in token.uses
        if isinstance(u.operation, dma.CopyOp) and u.operation.on is token
    }
    owner = token.owner
    if isinstance(owner, dma.CopyOp) and owner.engine is not None:
        engines.add(owner.engine)
    if None in engines:
        raise DeeployError("dma.copy without an engine: run dma-decompose{engine=TARGET} first")
    if len({_family(e) for e in engines if e is not None}) > 1:
        raise DeeployError("copies of two DMA engines share one request")
    if not engines:
        return dma.MCHAN
    return next(iter(e for e in engines if e is not None))


def _root_request(token: SSAValue) -> SSAValue:
    owner = token.owner
    if isinstance(owner, dma.CopyOp) and owner.on is not None:
        return _root_request(owner.on)
    return token


def _box_origin(base: str, shape: Sequence[int], offsets: Sequence[str], elem: int) -> str:
    """Byte address expression of a box origin: base + linear offset."""
    st = dma.contiguous_strides(shape)
    terms = [f"{o} * {s}u" if s != 1 else o for o, s in zip(offsets, st, strict=True) if o != "0u"]
    if not terms:
        return f"(uintptr_t){base}"
    return f"((uintptr_t){base} + ({' + '.join(terms)}) * {elem}u)"


def _mchan_previous_sub_copy(op: dma.CopyOp, cx: _FnCtx, req: str) -> list[str]:
    """Before a cluster-DMA sub-copy of a dma-decompose loop nest (all issued on
    one command), the wait for the previous one: each transfer takes one of
    the DMA's 16 transfer ids and a wait frees only the command's latest, so
    issuing several on one command would leak ids (the core stalls once all
    16 are taken). The first sub-copy has no previous one (its command is
    fresh or was waited for); the last is waited for by the copy's waits."""
    loops: list[scf.ForOp] = []
    parent = op.parent_op()
    while isinstance(parent, scf.ForOp) and dma.SUB_COPY_LOOP in parent.attributes:
        loops.append(parent)
        parent = parent.parent_op()
    if not loops:
        return []
    later = " || ".join(
        f"{cx.ptr(lp.body.block.args[0])} != {cx.ptr(lp.lb)}" for lp in reversed(loops)
    )
    return [f"if ({later}) pi_cl_dma_cmd_wait(&{req}); /* the previous sub-copy */"]


def _dma_copy(op: dma.CopyOp, cx: _FnCtx) -> list[str]:
    engine = op.engine
    if engine is None:
        raise DeeployError("dma.copy without an engine: run dma-decompose{engine=TARGET} first")
    why = op.legality(engine)
    if why is not None:
        raise DeeployError(f"dma.copy the engine cannot run: {why} (run dma-decompose)")
    fam = _family(engine)
    elem = op.elem_bytes()
    src = _box_origin(
        cx.ptr(op.src), T.shape_of(op.src.type), [cx.ptr(o) for o in op.src_offsets], elem
    )
    dst = _box_origin(
        cx.ptr(op.dst), T.shape_of(op.dst.type), [cx.ptr(o) for o in op.dst_offsets], elem
    )
    ext, loc = (src, dst) if op.is_in else (dst, src)
    dims = op.pattern()
    size = op.bytes()
    lines: list[str] = []
    if fam == "mchan" and cx.l1_as_l2:  # synchronous copies, no request
        d, s_ = (loc, ext) if op.is_in else (ext, loc)
        if len(dims) == 1:
            return [f"memcpy((void *){d}, (const void *){s_}, {size}u);"]
        rows, row = dims[0].count, dims[1].count
        ext_step = f"r * {dims[0].ext}u"
        loc_step = f"r * {row}u"
        d_r, s_r = (loc_step, ext_step) if op.is_in else (ext_step, loc_step)
        return [
            f"for (uint32_t r = 0; r < {rows}u; r++) {{",
            f"    memcpy((void *)({d} + {d_r}), (const void *)({s_} + {s_r}), {row}u);",
            "}",
        ]
    if op.on is None:
        lines += _fresh_request(op.token, fam, cx)
    req = cx.request(op.token)
    if fam == "mchan":
        d = "PI_CL_DMA_DIR_EXT2LOC" if op.is_in else "PI_CL_DMA_DIR_LOC2EXT"
        lines += _mchan_previous_sub_copy(op, cx, req)
        if len(dims) == 1:
            lines.append(f"pi_cl_dma_cmd({ext}, {loc}, {size}u, {d}, &{req});")
        else:
            lines.append(
                f"pi_cl_dma_cmd_2d({ext}, {loc}, {size}u, {dims[0].ext}u, {dims[1].count}u, "
                f"{d}, &{req});"
            )
    else:
        e2l = 1 if op.is_in else 0
        if len(dims) == 1:
            lines.append(
                f"pi_cl_ram_copy(&dm_ram, (uint32_t){ext}, (void *){loc}, {size}u, {e2l}, &{req});"
            )
        else:
            lines.append(
                f"pi_cl_ram_copy_2d(&dm_ram, (uint32_t){ext}, (void *){loc}, {size}u, "
                f"{dims[0].ext}u, {dims[1].count}u, {e2l}, &{req});"
            )
    return lines


def _fresh_request(token: SSAValue, fam: str, cx: _FnCtx) -> list[str]:
    """Where a request (ring) is created: its static object(s) zeroed, as a
    fresh local would be, and named for the host emulation's messages."""
    arr, first, count, var = cx.new_request(token)
    ring = isinstance(token.owner, dma.RequestOp)
    lines: list[str] = []
    for k in range(count):
        name = f"{var}[{k}]" if ring else var
        lines += [
            f"{arr}[{first + k}u] = ({_REQ_TYPE[fam]}){{0}};",
            f'DM_REQ_NAME(&{arr}[{first + k}u], "{name}");',
        ]
    return lines


def _request_roots(block: Block, l1_as_l2: bool) -> list[tuple[SSAValue, str, int]]:
    """Every request (ring) a function creates, in program order: its token,
    engine family and number of requests."""
    roots: list[tuple[SSAValue, str, int]] = []
    for op in block.walk():
        if isinstance(op, dma.RequestOp):
            fam = _family(_request_engine(op.token))
            n = op.count.value.data
        elif isinstance(op, dma.CopyOp) and op.on is None and op.engine is not None:
            fam = _family(op.engine)
            n = 1
        else:
            continue
        if fam == "mchan" and l1_as_l2:
            continue
        roots.append((op.token, fam, n))
    return roots


def _token_users(token: SSAValue) -> list[Operation]:
    """The ops that use a request: its copies and waits, and those of the
    copies issued on it."""
    out: list[Operation] = []
    for u in token.uses:
        out.append(u.operation)
        if isinstance(u.operation, dma.CopyOp) and u.operation.on is token:
            out += _token_users(u.operation.token)
    return out


def _plan_requests(block: Block, cx: _FnCtx) -> None:
    """Static storage for the DMA requests of one function, shared where the
    uses never overlap.

    Every op gets its pre-order position; a request (ring) is live from the
    op that creates it to the end of the last op of its block that contains
    one of its uses (its copies, its waits; a use inside a loop keeps it live
    for the whole loop). The request is zeroed where it is created, as the
    fresh local it used to be, so requests live at different times can take
    the same object: first fit over each family's array, in program order.
    A use outside the creating op's block (not produced by the passes) gets
    an object of its own."""
    pos: dict[Operation, int] = {}
    end: dict[Operation, int] = {}

    def visit(op: Operation) -> None:
        pos[op] = len(pos)
        for region in op.regions:
            for b in region.blocks:
                for o in b.ops:
                    visit(o)
        end[op] = len(pos) - 1

    for op in block.ops:
        visit(op)
    #: per family, the last position each object is live at
    busy: dict[str, list[int]] = {fam: [] for fam in _POOL}
    for token, fam, n in _request_roots(block, cx.l1_as_l2):
        owner = token.owner
        assert isinstance(owner, Operation)
        home = owner.parent_block()
        start, stop, shared = pos[owner], pos[owner], True
        for user in _token_users(token):
            anchor: Operation | None = user
            while anchor is not None and anchor.parent_block() is not home:
                anchor = anchor.parent_op()
            if anchor is None:
                shared = False
                break
            stop = max(stop, end[anchor])
        slots = busy[fam]
        first = len(slots)
        if shared:
            for i in range(len(slots) - n + 1):
                if all(slots[i + k] < start for k in range(n)):
                    first = i
                    break
        while len(slots) < first + n:
            slots.append(-1)
        for k in range(n):
            slots[first + k] = stop if shared else len(pos)
        cx.requests[token] = (_POOL[fam], first, n)
    cx.pools = {_POOL[fam]: len(slots) for fam, slots in busy.items()}


_INDEX_OPS: dict[type, str] = {
    arith.MuliOp: "*",
    arith.AddiOp: "+",
    arith.SubiOp: "-",
    arith.DivUIOp: "/",
    arith.RemUIOp: "%",
}
#: arith.cmpi predicates on indices (signed and unsigned agree: indices are >= 0)
_CMP = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}


def _value_expr(op: Operation, cx: _FnCtx, globals_: dict[str, str]) -> bool:
    """Ops that become a C expression, not a statement; False for the others."""
    match op:
        case T.ArenaViewOp():
            off = op.offset.value.data
            cx.exprs[op.result] = (
                f"((uint32_t)(dm_arena_L3 + {off}u))"  # an L3 address, not a pointer
                if op.level == "L3"
                else f"(({c_type(op.result.type)} *)(dm_arena_{op.level} + {off}u))"
            )
        case memref.GetGlobalOp():
            cx.exprs[op.memref] = globals_[op.name_.string_value()]
        case arith.ConstantOp():
            assert isinstance(op.value, IntegerAttr)
            cx.exprs[op.result] = f"{op.value.value.data}u"
        case arith.CmpiOp():
            pred = op.predicate.value.data
            if pred not in _CMP:
                raise DeeployError(f"the C emitter does not handle arith.cmpi {pred}")
            cx.exprs[op.result] = f"({cx.ptr(op.lhs)} {_CMP[pred]} {cx.ptr(op.rhs)})"
        case dma.SlotOp():
            n = 1
            for d in T.shape_of(op.result.type):
                n *= d
            cx.exprs[op.result] = f"({cx.ptr(op.ring)} + {cx.ptr(op.index)} * {n}u)"
        case _ if type(op) in _INDEX_OPS:
            lhs, rhs = op.operands
            cx.exprs[op.results[0]] = f"({cx.ptr(lhs)} {_INDEX_OPS[type(op)]} {cx.ptr(rhs)})"
        case _:
            return False
    return True


def _dma_statements(op: Operation, cx: _FnCtx) -> list[str] | None:
    """C statements of a dma op (None: not a dma op)."""
    match op:
        case dma.CopyOp():
            return _dma_copy(op, cx)
        case dma.RequestOp():
            fam = _family(_request_engine(op.token))
            if fam == "mchan" and cx.l1_as_l2:
                return []
            return _fresh_request(op.token, fam, cx)
        case dma.WaitOp():
            fam = _family(_request_engine(_root_request(op.token)))
            if fam == "mchan" and cx.l1_as_l2:
                return []
            return [f"{_WAIT[fam]}(&{cx.request(op.token, op.slot)});"]
        case _:
            return None


def _strides(shape: Sequence[int]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def _bcast_strides(out: Sequence[int], shape: Sequence[int]) -> list[int]:
    pad = [1] * (len(out) - len(shape)) + list(shape)
    st = _strides(pad)
    return [0 if pad[i] == 1 and out[i] != 1 else st[i] for i in range(len(out))]


def _arr(vals: Sequence[int], n: int = 4) -> str:
    v = list(vals) + [0] * (n - len(vals))
    return "{" + ", ".join(f"{x}u" for x in v) + "}"


def _size(t: Attribute) -> int:
    return int(np.prod(T.shape_of(t), dtype=np.int64))


def _u32(v: int) -> str:
    return f"{v}u"


def _window_fields(win: T.Window2d) -> list[tuple[str, str]]:
    return [
        (".stride_h", _u32(win.strides[0])),
        (".stride_w", _u32(win.strides[1])),
        (".dil_h", _u32(win.dilations[0])),
        (".dil_w", _u32(win.dilations[1])),
        (".pad_top", _u32(win.pads[0])),
        (".pad_left", _u32(win.pads[1])),
    ]


def _conv_geometry_fields(g: T.ConvGeometry) -> list[tuple[str, str]]:
    sizes = [
        ("batch", g.n),
        ("in_ch", g.c),
        ("in_h", g.h),
        ("in_w", g.w),
        ("out_ch", g.m),
        ("k_h", g.kh),
        ("k_w", g.kw),
        ("out_h", g.oh),
        ("out_w", g.ow),
        ("groups", g.groups),
    ]
    return [(f".{k}", _u32(v)) for k, v in sizes] + _window_fields(g.window)


def _pool_fields(op: T.PoolOp, x: Sequence[int], y: Sequence[int]) -> list[tuple[str, str]]:
    """Geometry of a pooling kernel call: X (or dX) of shape x, Y (or dY) y."""
    win = op.window()
    inc = isinstance(op, T.AvgPool2dOp | T.AvgPool2dGradOp) and op.count_include_pad is not None
    sizes = [
        ("planes", x[0] * x[1]),
        ("in_h", x[2]),
        ("in_w", x[3]),
        ("out_h", y[2]),
        ("out_w", y[3]),
        ("k_h", win.kernel[0]),
        ("k_w", win.kernel[1]),
    ]
    return (
        [(f".{k}", _u32(v)) for k, v in sizes]
        + _window_fields(win)
        + [(".count_include_pad", _u32(int(inc)))]
    )


def conv_pool_calls(op: T.TrainingComputeOp, cx: _FnCtx) -> list[KernelCall]:
    """Kernel calls of the convolution and pooling ops (runtime_c dm_conv.h,
    dm_pool.h); the geometry is the operands' own (a tile's, when tiled)."""
    p = cx.ptr
    ins, outs = list(op.ins), list(op.outs)
    note = op.name
    match op:
        case T.Conv2dOp():
            b = p(ins[2]) if len(ins) == 3 else "NULL"
            f = [(".X", p(ins[0])), (".W", p(ins[1])), (".B", b), (".Y", p(outs[0]))]
            f += _conv_geometry_fields(op.geometry())
            return [KernelCall("dm_conv2d_fp32", "dm_conv2d_args_t", f, note)]
        case T.Conv2dGradOp():
            grads = dict(zip(op.grads(), outs, strict=True))
            f = [(".dY", p(ins[0])), (".X", p(ins[1])), (".W", p(ins[2]))]
            f += [(f".{k}", p(grads[k]) if k in grads else "NULL") for k in T.CONV_GRADS]
            f += _conv_geometry_fields(op.geometry())
            # a tile of a reduction after the first: add to the sums so far
            f += [(f".acc_{op.grads()[k]}", "1u") for k in op.accumulated()]
            calls: list[KernelCall] = []
            if "dX" in grads:
                calls.append(
                    KernelCall("dm_conv2d_grad_input_fp32", "dm_conv2d_grad_args_t", f, note)
                )
            if "dW" in grads or "dB" in grads:
                calls.append(
                    KernelCall(
                        "dm_conv2d_grad_weight_fp32", "dm_conv2d_grad_args_t", f, f"{note} (dW, dB)"
                    )
                )
            return calls
        case T.MaxPool2dOp() | T.AvgPool2dOp():
            x, y = T.shape_of(ins[0].type), T.shape_of(outs[0].type)
            idx = p(outs[1]) if len(outs) == 2 else "NULL"
            f = [(".X", p(ins[0])), (".Y", p(outs[0])), (".indices", idx)]
            f += _pool_fields(op, x, y)
            if isinstance(op, T.MaxPool2dOp) and len(outs) == 2 and len(op.origin) == 4:
                # a tile: Indices count in the whole input, from the tile's origin
                fc, fh, fw = op.frame()
                f += [(".tile_ch", _u32(x[1]))]
                f += [(f".frame_{k}", _u32(v)) for k, v in zip("chw", (fc, fh, fw), strict=True)]
                f += [(f".org_{k}", p(v)) for k, v in zip("nchw", op.origin, strict=True)]
            kernel = "dm_maxpool2d_fp32" if isinstance(op, T.MaxPool2dOp) else "dm_avgpool2d_fp32"
            return [KernelCall(kernel, "dm_pool2d_args_t", f, note)]
        case T.MaxPool2dGradOp() | T.AvgPool2dGradOp():
            dy, dx = T.shape_of(ins[0].type), T.shape_of(outs[0].type)
            idx = p(ins[1]) if isinstance(op, T.MaxPool2dGradOp) else "NULL"
            f = [(".dY", p(ins[0])), (".indices", idx), (".dX", p(outs[0]))]
            f += _pool_fields(op, dx, dy)
            kernel = (
                "dm_maxpool2d_grad_fp32"
                if isinstance(op, T.MaxPool2dGradOp)
                else "dm_avgpool2d_grad_fp32"
            )
            return [KernelCall(kernel, "dm_pool2d_grad_args_t", f, note)]
        case T.GlobalAvgPoolOp():
            n, c, h, w = T.shape_of(ins[0].type)
            f = [(".X", p(ins[0])), (".Y", p(outs[0])), (".planes", _u32(n * c))]
            f += [(".size", _u32(h * w))]
            return [KernelCall("dm_global_avgpool_fp32", "dm_global_avgpool_args_t", f, note)]
        case T.GlobalAvgPoolGradOp():
            n, c, h, w = T.shape_of(outs[0].type)
            f = [(".dY", p(ins[0])), (".dX", p(outs[0])), (".planes", _u32(n * c))]
            f += [(".size", _u32(h * w))]
            return [
                KernelCall("dm_global_avgpool_grad_fp32", "dm_global_avgpool_grad_args_t", f, note)
            ]
        case _:
            raise DeeployError(f"the C emitter has no kernel for {op.name}")


def kernel_calls(op: Operation, cx: _FnCtx) -> list[KernelCall]:
    """The runtime_c kernel calls that implement one buffer-form op."""
    assert isinstance(op, T.TrainingComputeOp)
    p = cx.ptr
    ins, outs = list(op.ins), list(op.outs)
    note = op.name
    match op:
        case T.GemmOp() | T.MatmulOp():
            m, n, k = (
                op.mnk()
                if isinstance(op, T.GemmOp)
                else (
                    T.shape_of(ins[0].type)[0],
                    T.shape_of(ins[1].type)[1],
                    T.shape_of(ins[0].type)[1],
                )
            )
            ta = isinstance(op, T.GemmOp) and op.trans_a is not None
            tb = isinstance(op, T.GemmOp) and op.trans_b is not None
            alpha = op.alpha.value.data if isinstance(op, T.GemmOp) else 1.0
            beta = op.beta.value.data if isinstance(op, T.GemmOp) else 0.0
            f = _gemm_fields(cx, ins, outs[0], (m, n, k), (ta, tb), alpha, beta)
            return [KernelCall("dm_gemm_fp32", "dm_gemm_args_t", f, note)]
        case T.BinaryOp():
            out = T.shape_of(outs[0].type)
            if len(out) > 4:
                raise DeeployError(f"{note}: rank {len(out)} > 4 is not supported by the kernel")
            kinds = {
                "add": "DM_BINARY_ADD",
                "sub": "DM_BINARY_SUB",
                "mul": "DM_BINARY_MUL",
                "div": "DM_BINARY_DIV",
                "pow": "DM_BINARY_POW",
            }
            f = [
                (".A", p(ins[0])),
                (".B", p(ins[1])),
                (".Y", p(outs[0])),
                (".rank", f"{len(out)}u"),
                (".shape", _arr(out)),
                (".a_strides", _arr(_bcast_strides(out, T.shape_of(ins[0].type)))),
                (".b_strides", _arr(_bcast_strides(out, T.shape_of(ins[1].type)))),
                (".op", kinds[op.kind.data]),
            ]
            return [KernelCall("dm_binary_fp32", "dm_binary_args_t", f, note)]
        case T.ReluOp():
            f = [(".X", p(ins[0])), (".Y", p(outs[0])), (".size", f"{_size(ins[0].type)}u")]
            return [KernelCall("dm_relu_fp32", "dm_unary_args_t", f, note)]
        case T.ReluGradOp():
            f = [
                (".dY", p(ins[0])),
                (".X", p(ins[1])),
                (".dX", p(outs[0])),
                (".size", f"{_size(ins[0].type)}u"),
            ]
            return [KernelCall("dm_relu_grad_fp32", "dm_relu_grad_args_t", f, note)]
        case T.SoftmaxCrossEntropyLossOp():
            b, c = T.shape_of(ins[0].type)
            red = "DM_REDUCTION_MEAN" if op.reduction.data == "mean" else "DM_REDUCTION_SUM"
            f = [
                (".logits", p(ins[0])),
                (".labels", p(ins[1])),
                (".log_prob", p(outs[1])),
                (".row_loss", "NULL"),
                (".loss", p(outs[0])),
                (".batch", f"{b}u"),
                (".classes", f"{c}u"),
                (".reduction", red),
            ]
            return [
                KernelCall("dm_sce_logprob_fp32", "dm_sce_args_t", f, note),
                KernelCall("dm_sce_reduce_fp32", "dm_sce_args_t", f, f"{note} (reduce)"),
            ]
        case T.SoftmaxCrossEntropyLossGradOp():
            b, c = T.shape_of(ins[1].type)
            red = "DM_REDUCTION_MEAN" if op.reduction.data == "mean" else "DM_REDUCTION_SUM"
            f = [
                (".dY", p(ins[0])),
                (".log_prob", p(ins[1])),
                (".labels", p(ins[2])),
                (".dX", p(outs[0])),
                (".batch", f"{b}u"),
                (".classes", f"{c}u"),
                (".reduction", red),
            ]
            return [KernelCall("dm_sce_grad_fp32", "dm_sce_grad_args_t", f, note)]
        case T.ReduceSumOp():
            shape = T.shape_of(ins[0].type)
            if len(shape) > 4:
                raise DeeployError(f"{note}: rank {len(shape)} > 4 is not supported by the kernel")
            mask = sum(1 << a for a in op.axes_list())
            f = [
                (".X", p(ins[0])),
                (".Y", p(outs[0])),
                (".rank", f"{len(shape)}u"),
                (".shape", _arr(shape)),
                (".reduce_mask", f"{mask}u"),
            ]
            return [KernelCall("dm_reduce_sum_fp32", "dm_reduce_args_t", f, note)]
        case T.AccumulateOp():
            f = [
                (".buffer", p(ins[0])),
                (".grad", p(ins[1])),
                (".reset", p(ins[2])),
                (".out", p(outs[0])),
                (".size", f"{_size(ins[0].type)}u"),
            ]
            return [KernelCall("dm_accumulate_fp32", "dm_accumulate_args_t", f, note)]
        case T.SgdOp():
            f = [
                (".weight", p(ins[0])),
                (".grad", p(ins[1])),
                (".lr", p(ins[2])),
                (".out", p(outs[0])),
                (".size", f"{_size(ins[0].type)}u"),
            ]
            return [KernelCall("dm_sgd_fp32", "dm_sgd_args_t", f, note)]
        case T.CopyOp() | T.ReshapeOp():
            f = [(".src", p(ins[0])), (".dst", p(outs[0])), (".bytes", f"{nbytes(ins[0].type)}u")]
            return [KernelCall("dm_copy", "dm_copy_args_t", f, note)]
        case T.WindowedOp() | T.GlobalAvgPoolOp() | T.GlobalAvgPoolGradOp():
            return conv_pool_calls(op, cx)
        case _:
            return transformer_calls(op, cx)  # the rest, or an error


def _prod(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _gemm_fields(
    cx: _FnCtx,
    ins: Sequence[SSAValue],
    y: SSAValue,
    mnk: tuple[int, int, int],
    trans: tuple[bool, bool],
    alpha: float,
    beta: float,
) -> list[tuple[str, str]]:
    """The fields of a dm_gemm_args_t: A, B and C (when there are three
    operands; its stride 0 broadcasts a dim of 1) and Y; sizes, flags, scales."""
    p = cx.ptr
    f = [(".A", p(ins[0])), (".B", p(ins[1]))]
    if len(ins) == 3:
        cm, cn = [1, 1, *T.shape_of(ins[2].type)][-2:]
        f += [
            (".C", p(ins[2])),
            (".c_stride_m", f"{cn if cm != 1 else 0}u"),
            (".c_stride_n", f"{1 if cn != 1 else 0}u"),
        ]
    else:
        f += [(".C", "NULL"), (".c_stride_m", "0u"), (".c_stride_n", "0u")]
    m, n, k = mnk
    return [
        *f,
        (".Y", p(y)),
        (".M", f"{m}u"),
        (".N", f"{n}u"),
        (".K", f"{k}u"),
        (".trans_a", f"{int(trans[0])}u"),
        (".trans_b", f"{int(trans[1])}u"),
        (".alpha", c_float(alpha)),
        (".beta", c_float(beta)),
    ]


def _batch_matmul_call(op: T.BatchMatmulOp, cx: _FnCtx) -> KernelCall:
    """dm_batch_matmul_fp32 over the operands' own shapes (a tile's, when tiled)."""
    ins, outs = list(op.ins), list(op.outs)
    batch, m, n, k = op.geometry()
    if len(batch) > 4:
        raise DeeployError(
            f"{op.name}: {len(batch)} batch dims > 4 are not supported by the kernel"
        )

    def batch_strides(t: Attribute, rank: int) -> list[int]:
        s = [1] * (rank - len(T.shape_of(t))) + list(T.shape_of(t))
        mat = s[-2] * s[-1]
        return [st * mat for st in _bcast_strides(batch, s[:-2])]

    trans = (op.trans_a is not None, op.trans_b is not None)
    gemm = _gemm_fields(cx, ins, outs[0], (m, n, k), trans, op.alpha.value.data, op.beta.value.data)
    c_strides = batch_strides(ins[2].type, len(batch) + 2) if len(ins) == 3 else []
    f = [(f".gemm{name}", expr) for name, expr in gemm] + [  # batch 0's product
        (".batch_rank", f"{len(batch)}u"),
        (".batch_shape", _arr(batch)),
        (".a_strides", _arr(batch_strides(ins[0].type, len(batch) + 2))),
        (".b_strides", _arr(batch_strides(ins[1].type, len(batch) + 2))),
        (".c_strides", _arr(c_strides)),
    ]
    return KernelCall("dm_batch_matmul_fp32", "dm_batch_matmul_args_t", f, op.name)


def _rows_cols(op: T.NormOp) -> tuple[int, int]:
    x, axis = op.x_shape(), op.norm_axis()
    return _prod(x[:axis]), _prod(x[axis:])


def transformer_calls(op: T.TrainingComputeOp, cx: _FnCtx) -> list[KernelCall]:
    """Kernel calls of the transformer ops (runtime_c dm_batch_matmul.h,
    dm_softmax.h, dm_layernorm.h, dm_gelu.h, dm_transpose.h, dm_reduce.h);
    sizes come from the operands' own shapes (a tile's, when tiled)."""
    p = cx.ptr
    ins, outs = list(op.ins), list(op.outs)
    note = op.name
    match op:
        case T.BatchMatmulOp():
            return [_batch_matmul_call(op, cx)]
        case T.SoftmaxOp() | T.SoftmaxGradOp():
            shape = T.shape_of(outs[0].type)
            axis = op.axis.value.data
            geo = [
                (".outer", f"{_prod(shape[:axis])}u"),
                (".len", f"{shape[axis]}u"),
                (".inner", f"{_prod(shape[axis + 1 :])}u"),
            ]
            if isinstance(op, T.SoftmaxOp):
                f = [(".X", p(ins[0])), (".Y", p(outs[0])), *geo]
                return [KernelCall("dm_softmax_fp32", "dm_softmax_args_t", f, note)]
            f = [(".dY", p(ins[0])), (".Y", p(ins[1])), (".dX", p(outs[0])), *geo]
            return [KernelCall("dm_softmax_grad_fp32", "dm_softmax_grad_args_t", f, note)]
        case T.LayerNormOp():
            rows, cols = _rows_cols(op)
            stats = [p(o) for o in outs[1:]] + ["NULL"] * (3 - len(outs))
            f = [
                (".X", p(ins[0])),
                (".scale", p(ins[1])),
                (".bias", p(ins[2]) if len(ins) == 3 else "NULL"),
                (".Y", p(outs[0])),
                (".mean", stats[0]),
                (".inv_std", stats[1]),
                (".rows", f"{rows}u"),
                (".cols", f"{cols}u"),
                (".epsilon", c_float(op.epsilon.value.data)),
            ]
            return [KernelCall("dm_layernorm_fp32", "dm_layernorm_args_t", f, note)]
        case T.LayerNormGradOp():
            rows, cols = _rows_cols(op)
            grads = dict(zip(op.grads(), outs, strict=True))
            mean, inv = (p(ins[3]), p(ins[4])) if len(ins) == 5 else ("NULL", "NULL")
            size = [(".rows", f"{rows}u"), (".cols", f"{cols}u")]
            calls: list[KernelCall] = []
            if "dScale" in grads or "dBias" in grads:
                # first: the dX kernel below may overwrite dY in place
                f = [(".dY", p(ins[0])), (".X", p(ins[1])), (".mean", mean), (".inv_std", inv)]
                f += [(f".{g}", p(grads[g]) if g in grads else "NULL") for g in ("dScale", "dBias")]
                if op.accumulated():
                    # a tile of the rows after the first: add to the sums so far
                    f.append((".acc", "1u"))
                calls.append(
                    KernelCall(
                        "dm_layernorm_grad_params_fp32",
                        "dm_layernorm_grad_params_args_t",
                        f + size,
                        f"{note} (dScale, dBias)",
                    )
                )
            if "dX" in grads:
                f = [(".dY", p(ins[0])), (".X", p(ins[1])), (".scale", p(ins[2]))]
                f += [(".mean", mean), (".inv_std", inv), (".dX", p(grads["dX"])), *size]
                f += [(".epsilon", c_float(op.epsilon.value.data))]
                calls.append(
                    KernelCall("dm_layernorm_grad_fp32", "dm_layernorm_grad_args_t", f, note)
                )
            return calls
        case T.GeluOp():
            f = [(".X", p(ins[0])), (".Y", p(outs[0])), (".size", f"{_size(ins[0].type)}u")]
            return [KernelCall("dm_gelu_fp32", "dm_gelu_args_t", f, note)]
        case T.GeluGradOp():
            f = [(".dY", p(ins[0])), (".X", p(ins[1])), (".dX", p(outs[0]))]
            f += [(".size", f"{_size(ins[0].type)}u")]
            return [KernelCall("dm_gelu_grad_fp32", "dm_gelu_grad_args_t", f, note)]
        case T.TransposeOp():
            shape = T.shape_of(ins[0].type)
            if len(shape) > 6:
                raise DeeployError(f"{note}: rank {len(shape)} > 6 is not supported by the kernel")
            f = [
                (".X", p(ins[0])),
                (".Y", p(outs[0])),
                (".rank", f"{len(shape)}u"),
                (".shape", _arr(shape, 6)),
                (".perm", _arr(op.perm_list(), 6)),
            ]
            return [KernelCall("dm_transpose_fp32", "dm_transpose_args_t", f, note)]
        case T.ReduceMeanOp():
            shape = T.shape_of(ins[0].type)
            if len(shape) > 4:
                raise DeeployError(f"{note}: rank {len(shape)} > 4 is not supported by the kernel")
            f = [
                (".X", p(ins[0])),
                (".Y", p(outs[0])),
                (".rank", f"{len(shape)}u"),
                (".shape", _arr(shape)),
                (".reduce_mask", f"{sum(1 << a for a in op.axes_list())}u"),
            ]
            return [KernelCall("dm_reduce_mean_fp32", "dm_reduce_args_t", f, note)]
        case _:
            raise DeeployError(f"the C emitter has no kernel for {op.name}")


@dataclass
class EmitOptions:
    target: str = "pulp-open"
    steps: int = 1
    accum: int = 1
    lr: float = 0.01
    num_cores: int = 8
    #: L1 buffers allocated in L2 and the L2 <-> L1 copies done with memcpy
    #: (a baseline and debugging mode: the numbers must not change)
    l1_as_l2: bool = False


@dataclass
class Project:
    """Everything the templates need, computed once from the module."""

    module: ModuleOp
    params: Mapping[str, np.ndarray]
    data: Mapping[str, np.ndarray]
    opts: EmitOptions
    buffers: list[Buffer] = field(default_factory=list[Buffer])
    constants: list[tuple[str, str, int, str]] = field(
        default_factory=list[tuple[str, str, int, str]]
    )
    #: the C statements of each step function
    functions: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    n_calls: int = 0
    env: jinja2.Environment = field(default_factory=lambda: template_env())

    def __post_init__(self) -> None:
        globals_: dict[str, str] = {}
        for op in self.module.ops:
            if isinstance(op, memref.GlobalOp):
                name = "dm_" + c_ident(op.sym_name.data)
                init = op.initial_value
                assert isinstance(init, DenseIntOrFPElementsAttr)
                arr = dense_to_array(init, op.type)
                self.constants.append((name, c_type(op.type), max(arr.size, 1), c_values(arr)))
                globals_[op.sym_name.data] = name
        seen: set[str] = set()
        for fname in ("training_step", "optimizer_step"):
            fn = func_named(self.module, fname)
            self.functions[fname] = self._function(fn, globals_, seen)

    def _function(self, fn: func.FuncOp, globals_: dict[str, str], seen: set[str]) -> list[str]:
        cx = _FnCtx(l1_as_l2=self.opts.l1_as_l2)
        block = fn.body.blocks.first
        assert block is not None
        for i, a in enumerate(block.args):
            info = T.arg_info(fn, i)
            off, name, kind = info.offset, info.name_or(f"arg{i}"), info.kind
            if off is None:
                raise DeeployError(
                    f"@{fn.sym_name.data}: argument '{name}' has no arena offset "
                    "(run arena-plan before emitting C)"
                )
            level = _level(a.type)
            cx.exprs[a] = (
                f"((uint32_t)(dm_arena_L3 + {off}u))"  # an L3 address, not a pointer
                if level == "L3"
                else f"(({c_type(a.type)} *)(dm_arena_{level} + {off}u))"
            )
            if name not in seen:
                seen.add(name)
                self.buffers.append(
                    Buffer(
                        name, kind, level, off, nbytes(a.type), c_type(a.type), T.shape_of(a.type)
                    )
                )
        _plan_requests(block, cx)
        body = self._block(block, cx, globals_, 1)
        return ["    " + ln for ln in cx.pool_declarations()] + body

    def _block(self, block: Block, cx: _FnCtx, globals_: dict[str, str], depth: int) -> list[str]:
        """C statements of a block, indented `depth` levels."""
        pad = "    " * depth
        lines: list[str] = []
        for op in block.ops:
            if _value_expr(op, cx, globals_):
                continue
            dma_lines = _dma_statements(op, cx)
            if dma_lines is not None:
                lines += [pad + ln for ln in dma_lines]
                continue
            match op:
                case scf.ForOp():
                    iv = f"i{depth}_{len(cx.exprs)}"
                    cx.exprs[op.body.block.args[0]] = iv
                    lines.append(
                        f"{pad}for (uint32_t {iv} = {cx.ptr(op.lb)}; {iv} < {cx.ptr(op.ub)}; "
                        f"{iv} += {cx.ptr(op.step)}) {{"
                    )
                    lines += self._block(op.body.block, cx, globals_, depth + 1)
                    lines.append(f"{pad}}}")
                case scf.IfOp():
                    if op.results:
                        raise DeeployError("the C emitter does not handle scf.if with results")
                    lines.append(f"{pad}if ({cx.ptr(op.cond)}) {{")
                    lines += self._block(op.true_region.block, cx, globals_, depth + 1)
                    if op.false_region.blocks:
                        lines.append(f"{pad}}} else {{")
                        lines += self._block(op.false_region.block, cx, globals_, depth + 1)
                    lines.append(f"{pad}}}")
                case func.ReturnOp() | scf.YieldOp():
                    pass
                case T.TrainingComputeOp():
                    if any(_level(v.type) == "L3" for v in (*op.ins, *op.outs)):
                        raise DeeployError(
                            f"{op.name} reads or writes L3 directly; kernels run on L2/L1 "
                            "buffers (run memory-home to stage L3 tensors through L2)"
                        )
                    for call in kernel_calls(op, cx):
                        self.n_calls += 1
                        lines += [
                            pad + ln
                            for ln in self.env.get_template("kernel_call.c.j2")
                            .render(call=call)
                            .splitlines()
                        ]
                case memref.AllocOp():
                    raise DeeployError(
                        "memref.alloc left in the IR: run arena-plan before emitting"
                    )
                case _:
                    raise DeeployError(f"the C emitter does not handle {op.name}")
        return lines

    def _tiling(self) -> dict[str, Any]:
        """What tile selection decided (no timings: the output is byte-identical
        from one compile to the next)."""
        from deeploy_mlir.dialects.tiling import stopped_early

        stopped = stopped_early(self.module)
        if stopped is None:
            return {}
        ops = [{"op": op, "reason": why} for op, why in stopped]
        return {"tiling": {"stopped_early": len(ops), "stopped_early_ops": ops}}

    def _rv32_memory(self) -> dict[str, str]:
        """Flash (code + constant data) and RAM (arenas + stack) for QEMU's virt
        machine, sized to the model with room to spare, in whole MiB."""
        mib = 1 << 20
        data = sum(np.asarray(v).nbytes for v in self.data.values())
        data += sum(np.asarray(v).nbytes for v in self.params.values())
        flash = (2 * data + 2 * mib + mib - 1) // mib * mib
        ram = (sum(arena_sizes(self.module).values()) + 2 * mib + mib - 1) // mib * mib
        return {"flash": hex(flash), "ram": hex(ram), "ram_base": hex(0x80000000 + flash)}

    # -- views for the templates ---------------------------------------------
    def arg_buffers(self, kind: str) -> list[Buffer]:
        return [b for b in self.buffers if b.kind == kind]

    def context(self) -> dict[str, Any]:
        sizes = arena_sizes(self.module)
        n_mb = self.opts.steps * self.opts.accum
        data_arrays = []
        for b in self.arg_buffers("input"):
            arr = np.asarray(self.data[b.name])
            data_arrays.append(
                {
                    "buf": b,
                    "ident": c_ident(b.name),
                    "per_mb": int(np.prod(b.shape, dtype=np.int64)),
                    "text": c_values(arr.reshape(n_mb, -1).astype(_NP[b.ctype])),
                    "count": n_mb * max(int(np.prod(b.shape, dtype=np.int64)), 1),
                }
            )
        params = [
            {
                "buf": b,
                "ident": c_ident(b.name),
                "text": c_values(np.asarray(self.params[b.name], dtype=np.float32)),
                "count": max(b.size // 4, 1),
            }
            for b in self.arg_buffers("param")
        ]
        return {
            "opts": self.opts,
            "arenas": sizes,
            "constants": self.constants,
            "functions": self.functions,
            "buffers": self.buffers,
            "inputs": data_arrays,
            "params": params,
            "grads": self.arg_buffers("grad_accum"),
            "resets": self.arg_buffers("reset_flag"),
            "lrs": self.arg_buffers("lr"),
            "outputs": self.arg_buffers("output"),
            "n_minibatches": n_mb,
            "c_float": c_float,
            "c_ident": c_ident,
            "n_calls": self.n_calls,
            "sdk": get_target(self.opts.target).sdk,
            "c_lang": " ".join(C_LANG),
            "stacks": cluster_stacks(self.opts.num_cores),
            "rv32": self._rv32_memory(),
        }

    def manifest(self) -> dict[str, Any]:
        from deeploy_mlir.memory.report import MANIFEST_VERSION, memory_summary

        summary = memory_summary(self.module)  # the schema: docs/manifest.md
        stacks = cluster_stacks(self.opts.num_cores)
        summary["memory"]["L1"]["stack_bytes"] = stacks.total
        return {
            "version": MANIFEST_VERSION,
            "target": self.opts.target,
            "regime": summary["regime"],
            "footprint": summary["footprint"],
            "memory": summary["memory"],
            "buffers": summary["buffers"],
            "kernel_calls": self.n_calls,
            "cluster_stacks": {
                "stack_size": stacks.cc,
                "slave_stack_size": stacks.worker,
                "cores": stacks.cores,
                "l1_bytes": stacks.total,
            },
            **self._tiling(),
        }


_NP = {"float": np.float32, "int64_t": np.int64, "uint8_t": np.bool_}


def _level(t: Attribute) -> str:
    lv = T.memory_level(t)
    if lv is None:
        raise DeeployError(f"buffer of type {t} has no memory level")
    return lv


def runtime_dir() -> Path:
    """runtime_c/ of this checkout (editable install), else the copy a wheel
    installs under <prefix>/share/deeploy-mlir (pyproject's data-files)."""
    import sys

    here = Path(__file__).resolve().parents[2] / "runtime_c"
    installed = Path(sys.prefix) / "share" / "deeploy-mlir" / "runtime_c"
    for d in (here, installed):
        if (d / "include").is_dir():
            return d
    raise DeeployError(
        f"runtime_c/ not found at {here} nor {installed}: reinstall deeploy-mlir "
        "(pip install -e . from its source tree)"
    )


def template_env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(TEMPLATES / "common")]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(project: Project) -> dict[str, str]:
    """File name -> text of every generated file (runtime sources excluded)."""
    get_target(project.opts.target)  # an unknown target: one line
    env = project.env
    ctx = project.context()
    files = {}
    for name in (
        "Makefile.sdk",
        "Network.h",
        "Network.c",
        "TrainingNetwork.c",
        "OptimizerNetwork.c",
        "data.h",
        "harness.c",
        "Makefile",
        "README.md",
    ):
        files[name] = env.get_template(name + ".j2").render(**ctx)
    files["manifest.json"] = json.dumps(project.manifest(), indent=2) + "\n"
    return files


def write_project(project: Project, out: Path, *, force: bool = False) -> None:
    """Write the project to `out` whole or not at all: into a hidden directory
    beside it, which replaces `out` when complete (deeploy_mlir.outputs). An
    existing `out` is replaced only if it is a previous output (or `force`)."""
    files = render(project)
    with staged_dir(out, force=force) as tmp:
        write_project_files(project, tmp, files)


def write_project_files(
    project: Project, directory: Path, files: Mapping[str, str] | None = None
) -> None:
    """Write the project's files (`files`: render(project), if already made)
    and the runtime sources into the existing empty `directory`."""
    files = render(project) if files is None else files
    rt = runtime_dir()
    for name, text in files.items():
        (directory / name).write_text(text)
    for sub in ("include", "kernels", "host", "gvsoc"):
        shutil.copytree(
            rt / sub, directory / "runtime" / sub, ignore=shutil.ignore_patterns("*.o", "*.so")
        )


def emitted_sources(files: Mapping[str, str]) -> Sequence[str]:
    return [k for k in files if k.endswith((".c", ".h"))]


class _Statements:
    """Emits the C statements of one function outside a whole project."""

    _block = Project._block

    def __init__(self) -> None:
        self.env = template_env()
        self.n_calls = 0


def function_statements(fn: func.FuncOp, arg_exprs: Sequence[str]) -> list[str]:
    """C statements of `fn`'s body with its arguments spelled `arg_exprs`
    (for tests and tools that wrap one function in their own C)."""
    block = fn.body.blocks.first
    assert block is not None
    cx = _FnCtx()
    for a, e in zip(block.args, arg_exprs, strict=True):
        cx.exprs[a] = e
    _plan_requests(block, cx)
    body = _Statements()._block(block, cx, {}, 1)  # type: ignore[arg-type]
    return ["    " + ln for ln in cx.pool_declarations()] + body
