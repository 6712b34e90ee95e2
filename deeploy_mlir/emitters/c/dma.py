"""The C of the dma ops: each function's DMA requests planned into static
arrays (shared where their uses never overlap), copies issued on the
cluster DMA (mchan) or the L3 RAM driver, waits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import scf
from xdsl.ir import Block, Operation, SSAValue

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.emitters.c.common import c_ident
from deeploy_mlir.errors import DeeployError


@dataclass
class FnCtx:
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
    #: objects in each static array of requests (see plan_requests)
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


def _mchan_previous_sub_copy(op: dma.CopyOp, cx: FnCtx, req: str) -> list[str]:
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


def _dma_copy(op: dma.CopyOp, cx: FnCtx) -> list[str]:
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


def _fresh_request(token: SSAValue, fam: str, cx: FnCtx) -> list[str]:
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


def plan_requests(block: Block, cx: FnCtx) -> None:
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


def dma_statements(op: Operation, cx: FnCtx) -> list[str] | None:
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
