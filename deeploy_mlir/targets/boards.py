"""Board descriptions: cores, clock, memory levels, DMA engines, kernel throughput.

A board is a YAML file (`deeploy_mlir/targets/boards/<name>.yaml`, or any path):

    name: siracusa
    cores: 8
    clock_hz: 360000000
    isa: f            # optional (f): the cluster cores' float ISA the kernel
                      # numbers are of: f (separate float registers) or zfinx
                      # (floats in the integer registers, the real Siracusa's);
                      # the emitted Makefile's GVSOC_ISA default, and the GVSoC
                      # build `run --on gvsoc` / `report --measure` use
    levels: {L1: 262144, L2: 2097152, L3: 8388608}
    engines:
      mchan: {hop: L2-L1, bandwidth: 8.0, setup: 30, rank: 2, shared_request: false,
              issue: 20,        # issue: optional, cluster cycles per transfer (0)
              copies: {in-1d: {setup: 80, bandwidth: 8.0}, out-2d: {...}}}
                                # copies: optional, per direction (in: towards the
                                # smaller level) and rank; the others use setup/bandwidth
      ram: {..., queue: 8,      # optional (unbounded): transfers queued before an
                                # issue waits (0: synchronous copies)
            chunk: 32768,       # optional (0: any): bytes per transfer, each its setup
            row_transfers: true}  # optional (false): a 2-D copy is a transfer per row
      ram: {hop: L3-L2, bandwidth: 1.0, setup: 300, rank: 2, shared_request: false}
    kernels:
      gemm: {macs_per_cycle_per_core: 0.5, call: 300,   # call: optional (0)
             per_output: 2.5,   # optional (0): cycles per output element (busiest core)
             cold: 400}         # optional (0): cycles a call pays after another kernel
      ...                       # one entry per family in KERNEL_FAMILIES;
      depthwise: {...}          # optional (OPTIONAL_FAMILIES): conv's if absent
      grouped: {...}            # optional: depthwise's if absent
      conv_dx: {...}            # optional: conv2d_grad's input gradient (conv's if absent),
      conv_dw: {...}            # its weight gradient; also depthwise_dx/_dw, grouped_dx/_dw,
                                # strided convs conv_s, conv_s_dx/_dw, grouped_s(_dx/_dw),
                                # binary, transpose, batch_matmul (OPTIONAL_FAMILIES)
    gemm_tiles: {edge: 1.3, single: 2.0, alone: 0.75}  # optional (1.0 each): gemm.c's
                                # 4x1/1x4 and 1x1 micro-tiles' MACs, and a core's whose FPU
                                # partner idles, relative to the 4x4 body's (`GemmTiles`)
    conv_tiles: {narrow: 13}    # optional (1.0): conv.c's one-channel path (`ConvTiles`)

Every field is checked by the small schema below (no schema library); a bad
file is one DeeployError naming the file and the field path, e.g.
`board 'x.yaml': engines.ram.bandwidth must be > 0, got 0`.

Numbers: sizes are bytes in [1, 4 GiB) -- the emitted C addresses with 32-bit
sizes, so a larger value is rejected, never wrapped. Bandwidths (bytes per
cycle) and throughputs (MACs per cycle per core) are finite floats > 0. Every
quantity derived from them (cycles = setup + bytes / bandwidth, cycles = macs /
(throughput * cores), footprints, sums over a schedule) is computed in Python
ints or exact fractions (see deeploy_mlir.cost), which do not overflow; only
the C side is 32-bit, and only sizes reach the C side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from deeploy_mlir.errors import DeeployError

#: the shipped boards; a data directory next to this module (package data:
#: pyproject's [tool.setuptools.package-data] lists "targets/boards/*.yaml")
BOARDS_DIR = Path(__file__).parent / "boards"
LEVELS = ("L1", "L2", "L3")
#: the hops an engine may serve, written "<larger level>-<smaller level>"
HOPS = ("L2-L1", "L3-L2")
#: the kernel families a board gives a throughput for (the cost model's
#: Compute events name one of these)
KERNEL_FAMILIES = ("gemm", "conv", "elementwise", "reduce", "loss", "optimizer")
#: families a board may give; without one the family of the second member
#: stands in (depthwise convolutions run the conv kernels)
OPTIONAL_FAMILIES = {
    "depthwise": "conv",
    "grouped": "depthwise",
    # conv2d_grad's kernels: the input gradient (dx), the weight and bias gradients (dw)
    "conv_dx": "conv",
    "conv_dw": "conv",
    "depthwise_dx": "depthwise",
    "depthwise_dw": "depthwise",
    "grouped_dx": "grouped",
    "grouped_dw": "grouped",
    # strided convolutions (stride > 1) and their gradients
    "conv_s": "conv",
    "conv_s_dx": "conv_dx",
    "conv_s_dw": "conv_dw",
    "grouped_s": "grouped",
    "grouped_s_dx": "grouped_dx",
    "grouped_s_dw": "grouped_dw",
    # kernels of their own, measured unlike the family they default to
    "binary": "elementwise",
    "transpose": "elementwise",
    "batch_matmul": "gemm",
    # reductions, pooling and transcendental elementwise kernels measured
    # unlike the families they default to (cost/kernels.py FAMILY)
    "maxpool": "reduce",
    "maxpool_grad": "reduce",
    "norm": "reduce",
    "norm_grad": "reduce",
    "reduce_sum": "reduce",
    "softmax": "loss",
    "gelu": "loss",
    "gelu_grad": "loss",
}
#: the cluster cores' float ISAs a board may name (deeploy_mlir.targets.gvsoc.ISAS
#: less the compiler comparison f-clang): "f" separate float registers (RV32F),
#: "zfinx" floats in the integer registers (the real Siracusa's cores)
BOARD_ISAS = ("f", "zfinx")
#: the copy kinds an engine's `copies` may give (direction x rank): "in"
#: copies towards the smaller level (L2 -> L1), "out" away from it
COPY_KINDS = ("in-1d", "in-2d", "out-1d", "out-2d")
#: the largest size in bytes: sizes are uint32_t in the emitted C
MAX_BYTES = (1 << 32) - 1
#: the most cores a board may have (PULP clusters have 8 to 16; a cluster of clusters a few more)
MAX_CORES = 1024


@dataclass(frozen=True)
class Engine:
    """One DMA engine: it copies in both directions across its hop."""

    name: str
    hop: tuple[str, str]  # (ext, loc): the larger level first, e.g. ("L2", "L1")
    bandwidth: float  # bytes per cycle, > 0
    setup: int  # cycles per transfer (programming it), >= 0
    rank: int  # the largest copy rank one transfer may have (1 or 2)
    shared_request: bool  # sub-copies of one transfer share one request
    issue: int = 0  # cycles the cluster spends issuing one transfer, >= 0
    #: per copy kind (COPY_KINDS) its own (setup, bandwidth); a kind not
    #: given uses `setup` and `bandwidth`
    copies: tuple[tuple[str, int, float], ...] = ()
    #: how the engine queues its transfers (None: an unbounded FIFO, issuing
    #: never waits): issuing a transfer waits until fewer than `queue` are
    #: queued or running (0: until the transfer itself is done: a synchronous
    #: copy). Each transfer costs the cluster `issue`.
    queue: int | None = None
    #: bytes per transfer (0: any): a larger copy is several transfers, each
    #: with its own setup
    chunk: int = 0
    #: a 2-D copy is one transfer (or `chunk`s) per row, each with its setup
    #: (a 2-D copy done row by row in software), not one 2-D transfer
    row_transfers: bool = False

    def copy_cost(self, kind: str | None) -> tuple[int, float]:
        """(setup, bandwidth) of one copy of `kind` ("in-1d" ...; None: the engine's)."""
        for k, setup, bw in self.copies:
            if k == kind:
                return setup, bw
        return self.setup, self.bandwidth


@dataclass(frozen=True)
class KernelThroughput:
    macs_per_cycle_per_core: float  # > 0
    call: int = 0  # fixed cycles of one kernel call (fork, barrier), >= 0
    #: cycles per output element the busiest core writes (loop set-up,
    #: stores), >= 0
    per_output: float = 0.0
    #: cycles a call pays when the cluster's previous kernel call ran
    #: another kernel (instruction cache refills), >= 0
    cold: int = 0


@dataclass(frozen=True)
class GemmTiles:
    """What runtime_c/kernels/gemm.c's micro-tiles cost beside its 4 x 4
    body (the gemm family's `macs_per_cycle_per_core`, measured with every
    core busy), each the cycles of one MAC relative to one of the body's:
    `edge` in a 4 x 1 or 1 x 4 micro-tile (the edges of N and of a core's
    rows), `single` in a 1 x 1 one, `alone` on a core whose FPU partner (the
    core cores / 2 away, sharing its FPU) has no work left. 1.0 each: every
    MAC costs the body's (deeploy_mlir/cost/kernels.py `gemm_share`)."""

    edge: float = 1.0
    single: float = 1.0
    alone: float = 1.0


@dataclass(frozen=True)
class ConvTiles:
    """What runtime_c/kernels/conv.c's one-channel path costs beside the
    conv families' fits: a block of fewer than 4 channels (the last
    channels % 4 of the output channels of the forward, of the input
    channels of the input gradient) runs one channel at a time, and on
    planes narrower than 8 columns column by column (1 x 1 micro-tiles):
    `narrow`, the cycles of one of its MACs relative to the family's. 1.0:
    no such cost (deeploy_mlir/cost/kernels.py `narrow_macs`)."""

    narrow: float = 1.0


@dataclass(frozen=True)
class Board:
    name: str
    cores: int  # cores that compute (kernels split their work over them)
    clock_hz: int
    levels: dict[str, int]  # "L1"/"L2"/"L3" -> bytes
    engines: dict[str, Engine]  # engine name -> engine, one per hop
    #: family -> throughput: every KERNEL_FAMILIES and OPTIONAL_FAMILIES
    #: (an optional one the board leaves out is its stand-in's)
    kernels: dict[str, KernelThroughput]
    #: the cluster cores' float ISA (BOARD_ISAS) the kernel numbers are of
    isa: str = "f"
    #: gemm.c's micro-tiles and FPU sharing (gemm and batch_matmul)
    gemm_tiles: GemmTiles = GemmTiles()
    #: conv.c's one-channel path on narrow planes (conv and conv_dx)
    conv_tiles: ConvTiles = ConvTiles()

    def engine_between(self, a: str, b: str) -> Engine:
        """The engine that copies between levels `a` and `b` (either order)."""
        for e in self.engines.values():
            if {a, b} == set(e.hop):
                return e
        raise ValueError(f"board '{self.name}' has no engine between {a} and {b}")


def available_boards() -> list[str]:
    """The names of the shipped boards, sorted."""
    return sorted(p.stem for p in BOARDS_DIR.glob("*.yaml"))


class _Checker:
    """Reads one board file; every problem is one error naming the field path."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, why: str) -> DeeployError:
        return DeeployError(f"board '{self.where}': {path or 'the file'} {why}")

    def mapping(
        self, v: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> dict[Any, Any]:
        if not isinstance(v, dict):
            raise self.fail(path, f"must be a mapping, got {_kind(v)}")
        d = cast(dict[Any, Any], v)
        unknown = sorted(str(k) for k in d if k not in required and k not in optional)
        if unknown:
            raise self.fail(_join(path, unknown[0]), "is not a known field")
        for k in required:
            if k not in d:
                raise self.fail(_join(path, k), "is missing")
        return d

    def named(self, v: Any, path: str, what: str) -> dict[str, Any]:
        """A non-empty mapping whose keys are names the user chooses."""
        if not isinstance(v, dict) or not v:
            raise self.fail(path, f"must be a non-empty mapping of {what}")
        d = cast(dict[Any, Any], v)
        for k in d:
            if not isinstance(k, str) or not k:
                raise self.fail(path, f"has a key {k!r} that is not a name")
        return cast(dict[str, Any], d)

    def integer(self, v: Any, path: str, lo: int, hi: int | None = None) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(path, f"must be an integer, got {v!r}")
        if v < lo:
            raise self.fail(path, f"must be >= {lo}, got {v}")
        if hi is not None and v > hi:
            raise self.fail(path, f"must be < 4 GiB ({hi + 1} bytes), got {v}")
        return v

    def positive(self, v: Any, path: str) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.fail(path, f"must be a number, got {v!r}")
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f):
            raise self.fail(path, f"must be a finite number, got {v}")
        if f <= 0:
            raise self.fail(path, f"must be > 0, got {v}")
        return f

    def non_negative(self, v: Any, path: str) -> float:
        if isinstance(v, int | float) and not isinstance(v, bool) and v == 0:
            return 0.0
        if isinstance(v, int | float) and not isinstance(v, bool) and v < 0:
            raise self.fail(path, f"must be >= 0, got {v}")
        return self.positive(v, path)

    def boolean(self, v: Any, path: str) -> bool:
        if not isinstance(v, bool):
            raise self.fail(path, f"must be true or false, got {v!r}")
        return v


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(v: Any) -> str:
    return "nothing" if v is None else type(v).__name__


def _parse(doc: Any, where: str) -> Board:
    c = _Checker(where)
    if doc is None:
        raise c.fail("", "is empty")
    top = c.mapping(
        doc,
        "",
        ("name", "cores", "clock_hz", "levels", "engines", "kernels"),
        ("isa", "gemm_tiles", "conv_tiles"),
    )
    name = top["name"]
    if not isinstance(name, str) or not name:
        raise c.fail("name", f"must be a non-empty string, got {name!r}")
    cores = c.integer(top["cores"], "cores", 1)
    if cores > MAX_CORES:
        raise c.fail("cores", f"must be <= {MAX_CORES}, got {cores}")
    clock = c.integer(top["clock_hz"], "clock_hz", 1)
    isa = top.get("isa", "f")
    if not isinstance(isa, str) or isa not in BOARD_ISAS:
        raise c.fail("isa", f"must be one of {', '.join(BOARD_ISAS)}, got {isa!r}")
    lv = c.mapping(top["levels"], "levels", LEVELS)
    levels = {k: c.integer(lv[k], f"levels.{k}", 1, MAX_BYTES) for k in LEVELS}
    if "L1" in levels and "L2" in levels and levels["L1"] > levels["L2"]:
        # tiles of L2 tensors live in L1: a cluster memory larger than the SoC's is a typo
        raise c.fail(
            "levels.L1",
            f"({levels['L1']} bytes) must not be larger than levels.L2 ({levels['L2']} bytes)",
        )
    engines = _engines(c, top["engines"])
    ks = c.mapping(top["kernels"], "kernels", KERNEL_FAMILIES, tuple(OPTIONAL_FAMILIES))
    kernels: dict[str, KernelThroughput] = {}
    for kn in (*KERNEL_FAMILIES, *OPTIONAL_FAMILIES):
        if kn not in ks:
            kernels[kn] = kernels[OPTIONAL_FAMILIES[kn]]
            continue
        p = f"kernels.{kn}"
        k = c.mapping(ks[kn], p, ("macs_per_cycle_per_core",), ("call", "per_output", "cold"))
        kernels[kn] = KernelThroughput(
            c.positive(k["macs_per_cycle_per_core"], f"{p}.macs_per_cycle_per_core"),
            c.integer(k.get("call", 0), f"{p}.call", 0),
            c.non_negative(k.get("per_output", 0), f"{p}.per_output"),
            c.integer(k.get("cold", 0), f"{p}.cold", 0),
        )
    gt = c.mapping(top.get("gemm_tiles", {}), "gemm_tiles", (), ("edge", "single", "alone"))
    tiles = GemmTiles(
        *(c.positive(gt.get(f, 1.0), f"gemm_tiles.{f}") for f in ("edge", "single", "alone"))
    )
    ct = c.mapping(top.get("conv_tiles", {}), "conv_tiles", (), ("narrow",))
    conv = ConvTiles(c.positive(ct.get("narrow", 1.0), "conv_tiles.narrow"))
    return Board(name, cores, clock, levels, engines, kernels, isa, tiles, conv)


def _engines(c: _Checker, doc: Any) -> dict[str, Engine]:
    engines: dict[str, Engine] = {}
    by_hop: dict[str, str] = {}
    for en, e in c.named(doc, "engines", "engine names").items():
        p = f"engines.{en}"
        e = c.mapping(
            e,
            p,
            ("hop", "bandwidth", "setup", "rank", "shared_request"),
            ("issue", "copies", "queue", "chunk", "row_transfers"),
        )
        hop = e["hop"]
        if hop not in HOPS:
            raise c.fail(f"{p}.hop", f"must be one of {', '.join(HOPS)}, got {hop!r}")
        if hop in by_hop:
            raise c.fail(f"{p}.hop", f"{hop} is already served by engine '{by_hop[hop]}'")
        by_hop[hop] = en
        ext, loc = str(hop).split("-")
        engines[en] = Engine(
            en,
            (ext, loc),
            c.positive(e["bandwidth"], f"{p}.bandwidth"),
            c.integer(e["setup"], f"{p}.setup", 0),
            _rank(c, e["rank"], f"{p}.rank"),
            c.boolean(e["shared_request"], f"{p}.shared_request"),
            c.integer(e.get("issue", 0), f"{p}.issue", 0),
            _copies(c, e.get("copies", {}), f"{p}.copies"),
            None if e.get("queue") is None else c.integer(e["queue"], f"{p}.queue", 0),
            c.integer(e.get("chunk", 0), f"{p}.chunk", 0),
            c.boolean(e.get("row_transfers", False), f"{p}.row_transfers"),
        )
    for hop in HOPS:
        if hop not in by_hop:
            raise c.fail("engines", f"has no engine for the {hop} hop")
    return engines


def _copies(c: _Checker, doc: Any, path: str) -> tuple[tuple[str, int, float], ...]:
    kinds = c.mapping(doc, path, (), COPY_KINDS)
    out: list[tuple[str, int, float]] = []
    for kind in COPY_KINDS:
        if kind in kinds:
            p = f"{path}.{kind}"
            k = c.mapping(kinds[kind], p, ("setup", "bandwidth"))
            out.append(
                (
                    kind,
                    c.integer(k["setup"], f"{p}.setup", 0),
                    c.positive(k["bandwidth"], f"{p}.bandwidth"),
                )
            )
    return tuple(out)


def _rank(c: _Checker, v: Any, path: str) -> int:
    # the dma dialect's engines copy rank 1 or 2; dma-decompose splits the rest
    if isinstance(v, bool) or v not in (1, 2):
        raise c.fail(path, f"must be 1 or 2, got {v!r}")
    return int(v)


def load_board(name_or_path: str) -> Board:
    """A shipped board by name, or a board file by path (a "/" in it, or a
    name ending in .yaml/.yml). Any problem is one DeeployError line."""
    if "/" in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        path = Path(name_or_path)
    else:
        path = BOARDS_DIR / f"{name_or_path}.yaml"
        if not path.is_file():
            raise DeeployError(
                f"unknown board '{name_or_path}' (available: {', '.join(available_boards())})"
            )
    where = str(path) if "/" in name_or_path else path.name
    if path.exists() and not path.is_file() and not path.is_dir():  # /dev/zero never ends
        raise DeeployError(f"board '{where}': cannot read it (not a regular file)")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise DeeployError(f"board '{where}': cannot read it ({e.strerror})") from None
    except UnicodeDecodeError:
        raise DeeployError(f"board '{where}': not valid YAML (not UTF-8 text)") from None
    try:
        doc = yaml.safe_load(text)
    except RecursionError:
        raise DeeployError(f"board '{where}': not valid YAML (nested too deeply)") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise DeeployError(f"board '{where}': not valid YAML{at}") from None
    return _parse(doc, where)
