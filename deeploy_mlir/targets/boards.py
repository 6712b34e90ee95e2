"""Board descriptions: cores, clock, memory levels, DMA engines, kernel throughput.

A board is a YAML file (`deeploy_mlir/targets/boards/<name>.yaml`, or any path):

    name: siracusa
    cores: 8
    clock_hz: 360000000
    levels: {L1: 262144, L2: 2097152, L3: 8388608}
    engines:
      mchan: {hop: L2-L1, bandwidth: 8.0, setup: 30, rank: 2, shared_request: false}
    kernels:
      gemm: {macs_per_cycle_per_core: 0.5}

Every field is checked; a bad file is one DeeployError naming the file and the
field path. Sizes are bytes below 4 GiB (the emitted C addresses with 32-bit
sizes: larger values are rejected, not wrapped). Products of these numbers
are computed in Python ints and floats, which do not overflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from deeploy_mlir.errors import DeeployError

BOARDS_DIR = Path(__file__).parent / "boards"
LEVELS = ("L1", "L2", "L3")
HOPS = ("L2-L1", "L3-L2")
MAX_BYTES = (1 << 32) - 1


@dataclass(frozen=True)
class Engine:
    name: str
    hop: tuple[str, str]  # (ext, loc): the larger level first
    bandwidth: float  # bytes per cycle
    setup: int  # cycles per transfer
    rank: int
    shared_request: bool


@dataclass(frozen=True)
class KernelThroughput:
    macs_per_cycle_per_core: float


@dataclass(frozen=True)
class Board:
    name: str
    cores: int
    clock_hz: int
    levels: dict[str, int]
    engines: dict[str, Engine]
    kernels: dict[str, KernelThroughput]


def available_boards() -> list[str]:
    return sorted(p.stem for p in BOARDS_DIR.glob("*.yaml"))


class _Checker:
    """Reads one board file; every problem is one error naming the field path."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, why: str) -> DeeployError:
        return DeeployError(f"board '{self.where}': {path or 'the file'} {why}")

    def mapping(self, v: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()):
        if not isinstance(v, dict):
            raise self.fail(path, f"must be a mapping, got {type(v).__name__}")
        unknown = sorted(set(map(str, v)) - set(required) - set(optional))
        if unknown:
            raise self.fail(f"{path}.{unknown[0]}" if path else unknown[0], "is not a known field")
        for k in required:
            if k not in v:
                raise self.fail(f"{path}.{k}" if path else k, "is missing")
        return v

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
        if not v > 0 or v != v or v == float("inf"):
            raise self.fail(path, f"must be > 0, got {v}")
        return float(v)

    def boolean(self, v: Any, path: str) -> bool:
        if not isinstance(v, bool):
            raise self.fail(path, f"must be true or false, got {v!r}")
        return v


def _parse(doc: Any, where: str) -> Board:
    c = _Checker(where)
    top = c.mapping(doc, "", ("name", "cores", "clock_hz", "levels", "engines", "kernels"))
    name = top["name"]
    if not isinstance(name, str) or not name:
        raise c.fail("name", f"must be a non-empty string, got {name!r}")
    cores = c.integer(top["cores"], "cores", 1)
    clock = c.integer(top["clock_hz"], "clock_hz", 1)
    lv = c.mapping(top["levels"], "levels", LEVELS)
    levels = {k: c.integer(lv[k], f"levels.{k}", 1, MAX_BYTES) for k in LEVELS}
    engines: dict[str, Engine] = {}
    eng = top["engines"]
    if not isinstance(eng, dict) or not eng:
        raise c.fail("engines", "must be a non-empty mapping of engine names")
    for en, e in eng.items():
        p = f"engines.{en}"
        e = c.mapping(e, p, ("hop", "bandwidth", "setup", "rank", "shared_request"))
        if e["hop"] not in HOPS:
            raise c.fail(f"{p}.hop", f"must be one of {', '.join(HOPS)}, got {e['hop']!r}")
        ext, loc = str(e["hop"]).split("-")
        engines[str(en)] = Engine(
            str(en),
            (ext, loc),
            c.positive(e["bandwidth"], f"{p}.bandwidth"),
            c.integer(e["setup"], f"{p}.setup", 0),
            _rank(c, e["rank"], f"{p}.rank"),
            c.boolean(e["shared_request"], f"{p}.shared_request"),
        )
    for hop in HOPS:
        if not any("-".join(e.hop) == hop for e in engines.values()):
            raise c.fail("engines", f"has no engine for the {hop} hop")
    kernels: dict[str, KernelThroughput] = {}
    ks = top["kernels"]
    if not isinstance(ks, dict) or not ks:
        raise c.fail("kernels", "must be a non-empty mapping of kernel families")
    for kn, k in ks.items():
        p = f"kernels.{kn}"
        k = c.mapping(k, p, ("macs_per_cycle_per_core",))
        kernels[str(kn)] = KernelThroughput(
            c.positive(k["macs_per_cycle_per_core"], f"{p}.macs_per_cycle_per_core")
        )
    return Board(name, cores, clock, levels, engines, kernels)


def _rank(c: _Checker, v: Any, path: str) -> int:
    if isinstance(v, bool) or v not in (1, 2):
        raise c.fail(path, f"must be 1 or 2, got {v!r}")
    return int(v)


def load_board(name_or_path: str) -> Board:
    """A shipped board by name, or a board file by path."""
    if "/" in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        path = Path(name_or_path)
    else:
        path = BOARDS_DIR / f"{name_or_path}.yaml"
        if not path.is_file():
            raise DeeployError(
                f"unknown board '{name_or_path}' (available: {', '.join(available_boards())})"
            )
    where = str(path) if "/" in name_or_path else path.name
    try:
        text = path.read_text()
    except OSError as e:
        raise DeeployError(f"board '{where}': cannot read it ({e.strerror})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise DeeployError(f"board '{where}': not valid YAML{at}") from None
    return _parse(doc, where)
