"""The `dma` dialect: asynchronous copies between memory levels.

Types and attributes:

* ``!dma.token`` -- a DMA request: what a copy is issued on and what a wait
  waits for. ``dma.request`` makes a ring of ``count`` requests (slot 0 when
  used without an index).
* ``#dma.engine<"name", L2 -> L1, rank = 2, max_bytes = 131071, max_row = 65535,
  align = 4, shared_request = false>`` -- a DMA engine: the levels it connects
  (`ext`, the larger and slower one, then `loc`), the highest rank of copy it
  takes (1: one contiguous run; 2: rows of contiguous bytes on the `ext` side,
  with the `loc` side contiguous), the most bytes one copy may move, the most
  contiguous bytes of one run (a rank-1 copy's size, a rank-2 copy's row), the
  alignment of addresses and sizes in bytes, and whether the sub-copies of one
  transfer share one request that can hold a single transfer in flight (the
  L3 RAM requests do: each sub-copy must be waited before the next is issued).

Ops:

* ``%t = dma.copy %src[%i, %j] -> %dst[%k, %l] sizes [4, 8] perm [0, 1]
  (engine #dma.engine<...>)? (on %r[%s])? : memref<..>, memref<..>`` --
  starts copying the box of `sizes` (indexed like `src`'s dims) at the given
  offsets of `src` into the box of `dst` at its offsets; box dim k lands in
  `dst` dim perm[k] (a transposing copy when perm is not the identity). The
  copy lands at a wait on its token; reading `dst` or writing `src` before
  then is a race. Without `on` the copy has a request of its own; with
  ``on %r[%s]`` it is issued on slot %s of the request ring %r (and returns
  that request).
* ``dma.wait %t`` / ``dma.wait %r[%s]`` -- blocks until every copy issued on
  the request has landed.
* ``%slot = dma.slot %ring[%i] : memref<2x4x8xf32, "L1"> -> memref<4x8xf32, "L1">``
  -- slot %i of a ring of tile buffers (multi-buffering).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from deeploy_mlir.dialects import training as T

LEVELS = ("L3", "L2", "L1")
#: unit attribute of the `scf.for` loops of sub-copies that dma-decompose
#: makes out of one copy (all issued on one request)
SUB_COPY_LOOP = "dma.sub_copies"


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """A DMA request (or a ring of them)."""

    name = "dma.token"


@irdl_attr_definition
class EngineAttr(ParametrizedAttribute):
    name = "dma.engine"

    engine: StringAttr
    ext: StringAttr
    loc: StringAttr
    rank: IntAttr
    max_bytes: IntAttr
    max_row: IntAttr
    align: IntAttr
    shared_request: IntAttr

    FIELDS: ClassVar[tuple[str, ...]] = (
        "rank",
        "max_bytes",
        "max_row",
        "align",
        "shared_request",
    )

    def __init__(
        self,
        engine: str,
        ext: str,
        loc: str,
        rank: int,
        max_bytes: int,
        max_row: int,
        align: int,
        shared_request: bool,
    ):
        super().__init__(
            StringAttr(engine),
            StringAttr(ext),
            StringAttr(loc),
            IntAttr(rank),
            IntAttr(max_bytes),
            IntAttr(max_row),
            IntAttr(align),
            IntAttr(int(shared_request)),
        )

    @property
    def shared(self) -> bool:
        return bool(self.shared_request.data)

    @property
    def hop(self) -> tuple[str, str]:
        return self.ext.data, self.loc.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        engine = parser.parse_str_literal()
        parser.parse_punctuation(",")
        ext = parser.parse_identifier()
        parser.parse_punctuation("->")
        loc = parser.parse_identifier()
        values: dict[str, int] = {}
        for key in cls.FIELDS:
            parser.parse_punctuation(",")
            parser.parse_keyword(key)
            parser.parse_punctuation("=")
            if key == "shared_request":
                values[key] = int(parser.parse_boolean())
            else:
                values[key] = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(">")
        return (
            StringAttr(engine),
            StringAttr(ext),
            StringAttr(loc),
            *(IntAttr(values[k]) for k in cls.FIELDS),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f'<"{self.engine.data}", {self.ext.data} -> {self.loc.data}')
        printer.print_string(
            f", rank = {self.rank.data}, max_bytes = {self.max_bytes.data}, "
            f"max_row = {self.max_row.data}, align = {self.align.data}, "
            f"shared_request = {'true' if self.shared else 'false'}>"
        )

    def verify(self) -> None:
        ext, loc = self.hop
        if ext not in LEVELS or loc not in LEVELS:
            raise VerifyException(f"engine '{self.engine.data}': levels must be L3, L2 or L1")
        if LEVELS.index(ext) >= LEVELS.index(loc):
            raise VerifyException(
                f"engine '{self.engine.data}': the first level ({ext}) must be the larger, "
                f"slower one (L3 -> L2 or L2 -> L1), got {ext} -> {loc}"
            )
        if not 1 <= self.rank.data <= 2:
            raise VerifyException(
                f"engine '{self.engine.data}': rank must be 1 or 2, got {self.rank.data}"
            )
        if self.max_bytes.data <= 0 or self.max_row.data <= 0 or self.align.data <= 0:
            raise VerifyException(
                f"engine '{self.engine.data}': max_bytes, max_row and align must be positive"
            )
        if self.max_row.data > self.max_bytes.data:
            raise VerifyException(
                f"engine '{self.engine.data}': max_row ({self.max_row.data}) exceeds max_bytes "
                f"({self.max_bytes.data}): a row is part of one copy"
            )
        if self.shared_request.data not in (0, 1):
            raise VerifyException(f"engine '{self.engine.data}': shared_request is a boolean")


# --------------------------------------------------------------------------
# The engines of our targets
# --------------------------------------------------------------------------

#: cluster DMA (mchan) of PULPOpen/Siracusa and GAP9: L2 <-> L1, 1-D and 2-D;
#: byte-granular; one command struct may be reused while in flight (transfers
#: complete in order; the C emitter waits for a command's previous sub-copy
#: before it issues the next, so that no transfer id leaks). Sizes as pulp-sdk
#: passes them (rtos/pulpos/common/include/pos/implem/dma.h): a 1-D size and a
#: 2-D row length as unsigned short (at most 65535 bytes), a 2-D size into
#: mchan_v7's 17-bit length field (archi/dma/mchan_v7.h: at most 131071 bytes)
MCHAN = EngineAttr("mchan", "L2", "L1", 2, 0x1FFFF, 0xFFFF, 1, False)
#: PULPOpen's L3 RAM copies (pi_cl_ram_copy/_2d): a pi_cl_ram_req_t holds one
#: transfer, so the sub-copies of one transfer on one request are waited for
#: one by one, as on GAP9
PULP_OPEN_RAM = EngineAttr("pulp-open-ram", "L3", "L2", 2, 1 << 20, 1 << 20, 4, True)
#: GAP9's L3 RAM copies: the sub-copies of one transfer share one request
GAP9_RAM = EngineAttr("gap9-ram", "L3", "L2", 2, 1 << 20, 1 << 20, 4, True)

#: the engines by name (which engines a target has: its Target record,
#: deeploy_mlir.targets.target)
ENGINES: dict[str, EngineAttr] = {e.engine.data: e for e in (MCHAN, PULP_OPEN_RAM, GAP9_RAM)}


# --------------------------------------------------------------------------
# Access patterns
# --------------------------------------------------------------------------


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    out = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


@dataclass(frozen=True)
class Dim:
    """One dim of a copy in bytes: `count` steps of `ext` bytes on the ext side
    and `loc` bytes on the loc side."""

    count: int
    ext: int
    loc: int


def canonical_dims(
    sizes: Sequence[int],
    ext_strides: Sequence[int],
    loc_strides: Sequence[int],
    elem_bytes: int,
) -> list[Dim]:
    """The copy's access pattern in canonical form, outermost first: unit dims
    dropped, dims ordered by the loc side's strides (so the loc side reads
    in order), a final dim of contiguous bytes, and every pair of dims merged
    that is one dim on both sides. A contiguous copy is one dim; a copy of
    rows is two."""
    dims = [
        Dim(n, e * elem_bytes, lo * elem_bytes)
        for n, e, lo in zip(sizes, ext_strides, loc_strides, strict=True)
        if n != 1
    ]
    dims.sort(key=lambda d: -d.loc)
    dims.append(Dim(elem_bytes, 1, 1))
    merged: list[Dim] = []
    for d in reversed(dims):  # innermost first
        if merged:
            inner = merged[-1]
            if d.ext == inner.count * inner.ext and d.loc == inner.count * inner.loc:
                merged[-1] = Dim(d.count * inner.count, inner.ext, inner.loc)
                continue
        merged.append(d)
    return list(reversed(merged))


def copy_rank(dims: Sequence[Dim]) -> int:
    """The engine rank a canonical pattern needs: 1 for a contiguous run, 2 for
    rows whose loc side is contiguous, else one more per outer dim."""
    if len(dims) == 1:
        return 1
    if len(dims) == 2 and dims[0].loc == dims[1].count:
        return 2
    return len(dims) + (dims[-2].loc != dims[-1].count)


# --------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------


def _parse_index_list(parser: Parser) -> list[SSAValue]:
    return parser.parse_comma_separated_list(
        Parser.Delimiter.SQUARE,
        lambda: parser.resolve_operand(parser.parse_unresolved_operand(), IndexType()),
    )


def _parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(
        Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
    )


def _print_index_list(printer: Printer, vals: Sequence[SSAValue]) -> None:
    printer.print_string("[")
    printer.print_list(vals, printer.print_operand)
    printer.print_string("]")


@irdl_op_definition
class RequestOp(IRDLOperation):
    """A ring of `count` DMA requests, idle."""

    name = "dma.request"
    count = prop_def(IntegerAttr[I64])
    token = result_def(TokenType)
    assembly_format = "`count` $count attr-dict"

    def __init__(self, count: int = 1):
        super().__init__(properties={"count": IntegerAttr(count, i64)}, result_types=[TokenType()])

    def verify_(self) -> None:
        if self.count.value.data < 1:
            raise VerifyException(f"count must be at least 1, got {self.count.value.data}")


@dataclass(frozen=True)
class CopyShape:
    """A copy as the engines see it -- the source and destination memref
    types, the box (sizes, in source order) and the perm -- without the op:
    dma-decompose tries sub-boxes with it, and the checks are cached per
    shape (a tiled model has thousands of copies of a few shapes)."""

    src: Attribute
    dst: Attribute
    box: tuple[int, ...]
    perm: tuple[int, ...]

    @property
    def is_in(self) -> bool:
        """From the larger level to the smaller (ext to loc)."""
        return LEVELS.index(level_of(self.src)) < LEVELS.index(level_of(self.dst))

    @property
    def hop(self) -> tuple[str, str]:
        """(ext, loc): the larger level first."""
        a, b = level_of(self.src), level_of(self.dst)
        return (a, b) if self.is_in else (b, a)

    def pattern(self) -> tuple[Dim, ...]:
        return _pattern(self)

    def bytes(self) -> int:
        n = T.elem_bytes(self.src)
        for s in self.box:
            n *= s
        return n

    def legality(self, engine: EngineAttr) -> str | None:
        return _legality(self, engine)

    def misalignment(self, engine: EngineAttr) -> str | None:
        align = engine.align.data
        dims = self.pattern()
        sizes = [dims[-1].count] + [x for d in dims[:-1] for x in (d.ext, d.loc)]
        bad = next((x for x in sizes if x % align), None)
        if bad is None:
            return None
        return (
            f"engine '{engine.engine.data}' needs sizes and strides aligned to {align} bytes, "
            f"the copy has {bad}"
        )


@functools.lru_cache(maxsize=8192)
def _pattern(c: CopyShape) -> tuple[Dim, ...]:
    src_st = contiguous_strides(T.shape_of(c.src))
    dst_full = contiguous_strides(T.shape_of(c.dst))
    dst_st = [dst_full[p] for p in c.perm]  # per box dim
    ext, loc = (src_st, dst_st) if c.is_in else (dst_st, src_st)
    return tuple(canonical_dims(c.box, ext, loc, T.elem_bytes(c.src)))


@functools.lru_cache(maxsize=8192)
def _legality(c: CopyShape, engine: EngineAttr) -> str | None:
    if c.hop != engine.hop:
        src, dst = level_of(c.src), level_of(c.dst)
        return (
            f"engine '{engine.engine.data}' moves {engine.ext.data} <-> {engine.loc.data}, "
            f"the copy {src} -> {dst}"
        )
    pattern = c.pattern()
    r = copy_rank(list(pattern))
    if r > engine.rank.data:
        return f"the copy has rank {r}, engine '{engine.engine.data}' takes {engine.rank.data}"
    n = c.bytes()
    if n > engine.max_bytes.data:
        return (
            f"the copy moves {n} bytes, engine '{engine.engine.data}' at most "
            f"{engine.max_bytes.data}"
        )
    run = pattern[-1].count  # contiguous bytes: the whole copy (rank 1) or a row
    if run > engine.max_row.data:
        what = "one contiguous run" if r == 1 else "rows"
        return (
            f"the copy moves {what} of {run} bytes, engine '{engine.engine.data}' at most "
            f"{engine.max_row.data} contiguous bytes"
        )
    return None


@irdl_op_definition
class CopyOp(IRDLOperation):
    name = "dma.copy"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    src_offsets = var_operand_def(IndexType)
    dst_offsets = var_operand_def(IndexType)
    on = opt_operand_def(TokenType)
    slot = opt_operand_def(IndexType)
    sizes = prop_def(DenseArrayBase)
    perm = prop_def(DenseArrayBase)
    engine = opt_prop_def(EngineAttr)
    token = result_def(TokenType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        src: SSAValue | Operation,
        src_offsets: Sequence[SSAValue | Operation],
        dst: SSAValue | Operation,
        dst_offsets: Sequence[SSAValue | Operation],
        sizes: Sequence[int],
        perm: Sequence[int] | None = None,
        engine: EngineAttr | None = None,
        on: SSAValue | Operation | None = None,
        slot: SSAValue | Operation | None = None,
    ):
        props: dict[str, Attribute] = {
            "sizes": DenseArrayBase.from_list(i64, list(sizes)),
            "perm": DenseArrayBase.from_list(
                i64, list(range(len(sizes))) if perm is None else list(perm)
            ),
        }
        if engine is not None:
            props["engine"] = engine
        super().__init__(
            operands=[
                src,
                dst,
                list(src_offsets),
                list(dst_offsets),
                [] if on is None else [on],
                [] if slot is None else [slot],
            ],
            properties=props,
            result_types=[TokenType()],
        )

    # ---- text form -------------------------------------------------------

    @classmethod
    def parse(cls, parser: Parser) -> CopyOp:
        src_u = parser.parse_unresolved_operand()
        src_off = _parse_index_list(parser)
        parser.parse_punctuation("->")
        dst_u = parser.parse_unresolved_operand()
        dst_off = _parse_index_list(parser)
        parser.parse_keyword("sizes")
        sizes = _parse_int_list(parser)
        perm = _parse_int_list(parser) if parser.parse_optional_keyword("perm") else None
        engine = None
        if parser.parse_optional_keyword("engine"):
            e = parser.parse_attribute()
            if not isinstance(e, EngineAttr):
                parser.raise_error("expected a #dma.engine attribute")
            engine = e
        on = slot = None
        if parser.parse_optional_keyword("on"):
            on = parser.resolve_operand(parser.parse_unresolved_operand(), TokenType())
            if parser.parse_optional_punctuation("["):
                slot = parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())
                parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation(",")
        dt = parser.parse_type()
        src = parser.resolve_operand(src_u, st)
        dst = parser.resolve_operand(dst_u, dt)
        op = cls(src, src_off, dst, dst_off, sizes, perm, engine, on, slot)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        _print_index_list(printer, self.src_offsets)
        printer.print_string(" -> ")
        printer.print_operand(self.dst)
        _print_index_list(printer, self.dst_offsets)
        printer.print_string(f" sizes [{', '.join(map(str, self.box))}]")
        if self.perm_list != list(range(len(self.box))):
            printer.print_string(f" perm [{', '.join(map(str, self.perm_list))}]")
        if self.engine is not None:
            printer.print_string(" engine ")
            printer.print_attribute(self.engine)
        if self.on is not None:
            printer.print_string(" on ")
            printer.print_operand(self.on)
            if self.slot is not None:
                printer.print_string("[")
                printer.print_operand(self.slot)
                printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(", ")
        printer.print_attribute(self.dst.type)

    # ---- meaning ---------------------------------------------------------

    @property
    def box(self) -> list[int]:
        return list(self.sizes.get_values())  # type: ignore[arg-type]

    @property
    def perm_list(self) -> list[int]:
        return list(self.perm.get_values())  # type: ignore[arg-type]

    @property
    def src_level(self) -> str:
        return level_of(self.src.type)

    @property
    def dst_level(self) -> str:
        return level_of(self.dst.type)

    @property
    def hop(self) -> tuple[str, str]:
        """(ext, loc): the larger level first."""
        a, b = self.src_level, self.dst_level
        return (a, b) if LEVELS.index(a) < LEVELS.index(b) else (b, a)

    @property
    def is_in(self) -> bool:
        """From the larger level to the smaller (ext to loc)."""
        return self.src_level == self.hop[0]

    def dst_box(self) -> list[int]:
        box = self.box
        out = [0] * len(box)
        for k, p in enumerate(self.perm_list):
            out[p] = box[k]
        return out

    def elem_bytes(self) -> int:
        return T.elem_bytes(self.src.type)

    def shape(self) -> CopyShape:
        """What the engine checks depend on: the two types, box and perm."""
        return CopyShape(self.src.type, self.dst.type, tuple(self.box), tuple(self.perm_list))

    def pattern(self) -> list[Dim]:
        """Canonical access pattern (see canonical_dims) of this copy."""
        return list(self.shape().pattern())

    def bytes(self) -> int:
        return self.shape().bytes()

    def legality(self, engine: EngineAttr) -> str | None:
        """Why `engine` cannot run this copy as one transfer (None: it can)."""
        return self.shape().legality(engine)

    def verify_(self) -> None:
        st, dt = self.src.type, self.dst.type
        assert isinstance(st, MemRefType) and isinstance(dt, MemRefType)
        ss, ds = T.shape_of(st), T.shape_of(dt)
        box, perm = self.box, self.perm_list
        for side, offsets, shape in (
            ("source", self.src_offsets, ss),
            ("destination", self.dst_offsets, ds),
        ):
            if len(offsets) != len(shape):
                raise VerifyException(
                    f"expects one {side} offset per {side} dim ({len(shape)}), got {len(offsets)}"
                )
        if len(box) != len(ss) or len(ds) != len(ss):
            raise VerifyException(
                f"sizes, source and destination must have one rank: sizes has {len(box)}, "
                f"source {len(ss)}, destination {len(ds)}"
            )
        if sorted(perm) != list(range(len(box))):
            raise VerifyException(f"perm {perm} is not a permutation of 0..{len(box) - 1}")
        if any(b < 1 for b in box):
            raise VerifyException(f"sizes {box} must be positive")
        if any(b > s for b, s in zip(box, ss, strict=True)):
            raise VerifyException(f"sizes {box} exceed the source shape {list(ss)}")
        dst_box = self.dst_box()
        if any(b > s for b, s in zip(dst_box, ds, strict=True)):
            raise VerifyException(
                f"sizes {dst_box} (in destination order) exceed the destination shape {list(ds)}"
            )
        if st.get_element_type() != dt.get_element_type():
            raise VerifyException("source and destination element types differ")
        for t in (st, dt):
            if not isinstance(t.memory_space, StringAttr) or t.memory_space.data not in LEVELS:
                raise VerifyException(f"{t} is not in memory level L3, L2 or L1")
        if self.src_level == self.dst_level:
            raise VerifyException("a copy moves data between two memory levels")
        if (self.slot is not None) and self.on is None:
            raise VerifyException("a slot index needs a request ring (`on`)")
        self._verify_engine()

    def _verify_engine(self) -> None:
        if self.engine is not None:
            why = self.legality(self.engine)
            if why is not None:
                raise VerifyException(f"{why} (run dma-decompose)")
            bad = self.misalignment(self.engine)
            if bad is not None:
                raise VerifyException(bad)

    def misalignment(self, engine: EngineAttr) -> str | None:
        """Why `engine` cannot align this copy's sizes and strides (None: it can)."""
        return self.shape().misalignment(engine)


@irdl_op_definition
class WaitOp(IRDLOperation):
    """Wait until every copy issued on the request (slot) has landed."""

    name = "dma.wait"
    token = operand_def(TokenType)
    slot = opt_operand_def(IndexType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = "$token (`[` $slot^ `]`)? attr-dict"

    def __init__(self, token: SSAValue | Operation, slot: SSAValue | Operation | None = None):
        super().__init__(operands=[token, [] if slot is None else [slot]])


@irdl_op_definition
class SlotOp(IRDLOperation):
    """Slot %i of a ring of buffers: `ring` has one more (leading) dim than the slot."""

    name = "dma.slot"
    ring = operand_def(MemRefType)
    index = operand_def(IndexType)
    result = result_def(MemRefType)
    assembly_format = "$ring `[` $index `]` attr-dict `:` type($ring) `->` type($result)"

    def __init__(self, ring: SSAValue | Operation, index: SSAValue | Operation):
        rt = SSAValue.get(ring).type
        assert isinstance(rt, MemRefType)
        shape = list(rt.get_shape())[1:]
        super().__init__(
            operands=[ring, index],
            result_types=[MemRefType(rt.get_element_type(), shape, memory_space=rt.memory_space)],
        )

    def verify_(self) -> None:
        rt, st = self.ring.type, self.result.type
        assert isinstance(rt, MemRefType) and isinstance(st, MemRefType)
        if not rt.get_shape():
            raise VerifyException(
                f"the ring {rt} has no slot dim: a ring has one more (leading) dim than its slots"
            )
        if list(rt.get_shape())[1:] != list(st.get_shape()):
            raise VerifyException(
                f"a slot of {rt} has shape {list(rt.get_shape())[1:]}, got {list(st.get_shape())}"
            )
        if rt.get_element_type() != st.get_element_type() or rt.memory_space != st.memory_space:
            raise VerifyException("a slot has the ring's element type and memory level")


def level_of(t: Attribute) -> str:
    assert isinstance(t, MemRefType) and isinstance(t.memory_space, StringAttr)
    return t.memory_space.data


DMA = Dialect("dma", [CopyOp, WaitOp, RequestOp, SlotOp], [TokenType, EngineAttr])
