"""Run the emitted schedule on a board: cycles of one training step and of one
optimizer step.

The schedule is the IR after the whole pipeline -- what the C emitter turns
into `RunTrainingNetwork` and `RunOptimizerNetwork` -- walked op by op in
program order, as the cluster would run it:

- index arithmetic (`arith.constant`, `addi`, `subi`, `muli`, `divui`,
  `remui`, `minui`, `maxui`, `cmpi`, `select`) is evaluated, so `scf.for`
  loops run their static trip counts and each `scf.if` (the prefetch of the
  next tile, the guarded waits of a ring) takes the branch of that iteration;
- `dma.copy` -> a Transfer on the board's engine for the copy's hop
  (`Board.engine_between(src level, dst level)`) of element count x element
  size bytes, of its kind (in or out, 1-D or 2-D: "in-1d" ...), on the
  request it is issued on (its own, or a slot of a `dma.request` ring: the
  slot's value in that iteration);
- `dma.wait` -> a Wait on that request (a ring without a slot: every slot;
  a request nothing was issued on is idle and its wait returns at once);
- each training compute op -> a Compute of its kernel family with its MACs,
  its output elements, its kernel calls and the busiest core's share of
  them (deeploy_mlir.cost.kernels `op_split`), at the board's throughput x
  cores plus the family's cycles per call and per output element; its calls
  are cold (the family's `cold` cycles each) unless the cluster's previous
  kernel call ran the same kernel (an op of the same name and family with one
  kernel call: a tile loop's second call on);
- buffers, views, slots and requests cost nothing.

The events run through deeploy_mlir.cost.events.Simulator (exact integer
cycles). Every event is simulated, no loop is shortcut: each op is compiled
once into a closure over integer value slots, and a schedule of the example
models (85 to 1,426 copies and kernel calls per training step) takes 15 to
65 ms, most of it compiling (`python -m deeploy_mlir.cost.schedule` prints
the time per model and board). Loop iterations then cost some microseconds
per event: a schedule of a million events would take seconds; periodic loop
bodies could be simulated once per distinct state if that ever matters.

Besides the totals, each function records per compute op (static op of the
IR, all its calls) the cycles it computed and the cycles the cluster stalled
in the waits before it, and the bytes live in each memory level over the
schedule (for `deeploy-mlir report --plot`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from deeploy_mlir.cost.events import Simulator, Timeline
from deeploy_mlir.cost.kernels import (
    kernel_family,
    narrow_macs,
    op_forks,
    op_macs,
    op_share,
    term_sum,
)
from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.targets.boards import Board

#: the two step functions, by the name the report uses
FUNCTIONS = {"train": "training_step", "optimizer": "optimizer_step"}


@dataclass
class OpCost:
    """One compute op of the schedule (a static op: every call of it summed)."""

    label: str  # "<op name> #<k>": the k-th compute op of its function
    family: str  # its kernel family
    calls: int = 0
    compute: int = 0  # cycles it computed
    stall: int = 0  # cycles the cluster waited for DMA right before its calls
    macs: int = 0
    forks: int = 1  # kernel calls (cluster forks) per call of the op
    #: the busiest core's share of each call's MACs and outputs (`op_share`;
    #: None until it runs: 1 / cores for an even split)
    share: Fraction | None = None
    outputs: int = 0  # output elements written (every call summed)
    cold: int = 0  # kernel calls that followed another kernel's (every call summed)


@dataclass
class FunctionCost:
    name: str
    timeline: Timeline
    ops: list[OpCost]
    #: level -> [(cluster cycle, bytes live from that cycle on)]
    memory: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: "L2->L1" etc. -> [transfers, bytes] (the host emulation's counters)
    hops: dict[str, list[int]] = field(default_factory=dict)
    #: cycles after the last compute op: its waits, and copies still in flight
    tail: int = 0

    @property
    def transfers(self) -> int:
        return sum(n for n, _ in self.hops.values())

    @property
    def cycles(self) -> int:
        return self.timeline.total


_BINARY: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivUIOp: lambda a, b: a // b,
    arith.DivSIOp: lambda a, b: int(a / b),
    arith.RemUIOp: lambda a, b: a % b,
    arith.MinUIOp: min,
    arith.MaxUIOp: max,
}
#: arith.cmpi predicates (indices are >= 0: signed and unsigned agree)
_CMP: dict[int, Callable[[int, int], bool]] = {
    0: lambda a, b: a == b,
    1: lambda a, b: a != b,
    2: lambda a, b: a < b,
    3: lambda a, b: a <= b,
    4: lambda a, b: a > b,
    5: lambda a, b: a >= b,
    6: lambda a, b: a < b,
    7: lambda a, b: a <= b,
    8: lambda a, b: a > b,
    9: lambda a, b: a >= b,
}
#: ops that cost nothing and define nothing the walk needs
_FREE = (
    T.ArenaViewOp,
    T.ViewOp,
    memref.AllocOp,
    memref.DeallocOp,
    memref.GetGlobalOp,
    dma.SlotOp,
    dma.RequestOp,
    func.ReturnOp,
    scf.YieldOp,
)


Run = Callable[[], None]


class _Walker:
    """Runs one function's body, feeding a Simulator. Each op is compiled once
    into a closure over integer value slots (loop bodies run many times; the
    static facts of an op -- engine, bytes, kernel family, MACs, which request
    a wait resolves to -- are looked up once)."""

    def __init__(self, board: Board, fn: func.FuncOp) -> None:
        self.board = board
        self.fn = fn
        self.sim = Simulator(board)
        self.slots: dict[SSAValue, int] = {}
        self.env: list[int | None] = []
        self.ops: dict[Operation, OpCost] = {}
        self.stall = 0  # cycles stalled since the last compute op
        self.hops: dict[str, list[int]] = {}
        self.issues = 0  # copies on their own request: one token per issue
        self.last: tuple[str, str] | None = None  # the previous kernel call's (op, family)
        self.own: dict[SSAValue, int] = {}
        k = 0
        for o in fn.walk():
            if isinstance(o, T.TrainingComputeOp):
                self.ops[o] = OpCost(f"{o.name.removeprefix('training.')} #{k}", kernel_family(o))
                k += 1

    def slot(self, v: SSAValue) -> int:
        s = self.slots.get(v)
        if s is None:
            s = self.slots[v] = len(self.env)
            self.env.append(None)
        return s

    def run(self, o: Operation) -> None:
        try:
            self.compile(o)()
        except TypeError:  # an operand the walk never gave a value
            raise DeeployError(
                f"cost model: @{self.fn.sym_name.data}: {o.name} uses a value that is not a "
                "static index"
            ) from None

    def block(self, block: Block) -> list[Run]:
        return [self.compile(o) for o in block.ops]

    def compile(self, o: Operation) -> Run:  # noqa: C901 -- one case per op kind
        env = self.env
        match o:
            case dma.CopyOp():
                return self.copy(o)
            case dma.WaitOp():
                return self.wait(o)
            case T.TrainingComputeOp():
                return self.kernel(o)
            case scf.ForOp():
                if o.iter_args:
                    raise DeeployError("cost model: scf.for with loop-carried values")
                lb, ub, step = self.slot(o.lb), self.slot(o.ub), self.slot(o.step)
                iv, body = self.slot(o.body.block.args[0]), self.block(o.body.block)

                def loop() -> None:
                    for i in range(env[lb], env[ub], env[step]):  # type: ignore[arg-type]
                        env[iv] = i
                        for run in body:
                            run()

                return loop
            case scf.IfOp():
                cond = self.slot(o.cond)
                then = self.block(o.true_region.block)
                other = self.block(o.false_region.block) if o.false_region.blocks else []

                def branch() -> None:
                    for run in then if env[cond] else other:
                        run()

                return branch
            case arith.ConstantOp():
                assert isinstance(o.value, IntegerAttr)
                r, k = self.slot(o.result), o.value.value.data

                def const() -> None:
                    env[r] = k

                return const
            case arith.SelectOp():
                r, c, x, y = (self.slot(v) for v in (o.result, o.cond, o.lhs, o.rhs))

                def select() -> None:
                    env[r] = env[x] if env[c] else env[y]

                return select
            case arith.CmpiOp():
                return self.binary(o, _CMP[o.predicate.value.data])
            case _ if type(o) in _BINARY:
                return self.binary(o, _BINARY[type(o)])
            case _ if isinstance(o, _FREE):
                return _nothing
            case _:
                raise DeeployError(f"cost model: cannot run {o.name} (not part of a schedule)")

    def binary(self, o: Operation, f: Callable[[int, int], int]) -> Run:
        env = self.env
        r, a, b = self.slot(o.results[0]), self.slot(o.operands[0]), self.slot(o.operands[1])

        def run() -> None:
            env[r] = int(f(env[a], env[b]))  # type: ignore[arg-type]

        return run

    def kernel(self, o: T.TrainingComputeOp) -> Run:
        c, macs, sim = self.ops[o], op_macs(o), self.sim
        share = op_share(o, sim.board.cores, sim.board.gemm_tiles)
        assert isinstance(o, T.IterationSpaceInterface)
        sizes = o.iteration_space().dims
        forks = [
            (
                f.family,
                narrow_macs(f, sizes, term_sum(f.macs, sizes), sim.board.conv_tiles),
                f.calls,
                term_sum(f.outputs, sizes),
                (o.name, f.family),
            )
            for f in op_forks(o)
        ]
        c.forks, c.share = sum(f[2] for f in forks), share

        def run() -> None:
            c.calls += 1
            c.macs += macs
            for family, m, calls, outputs, me in forks:
                # a call after another kernel's refills the instruction
                # cache; a fork of several kernels runs each after another
                cold = calls if calls > 1 or self.last != me else 0
                self.last = me
                c.outputs += outputs
                c.cold += cold
                c.compute += sim.compute(family, m, calls, 0, outputs, cold, share)
            c.stall += self.stall
            self.stall = 0

        return run

    def copy(self, o: dma.CopyOp) -> Run:
        try:
            engine = self.board.engine_between(o.src_level, o.dst_level).name
        except ValueError as e:
            raise DeeployError(f"cost model: {e}") from None
        nbytes, sim = o.bytes(), self.sim
        dims = o.pattern()
        kind = f"{'in' if o.is_in else 'out'}-{'1d' if len(dims) == 1 else '2d'}"
        rows = 1
        for d in dims[:-1]:
            rows *= d.count
        count = self.hops.setdefault(f"{o.src_level}->{o.dst_level}", [0, 0])
        if o.on is None:
            token = o.token

            def own() -> None:
                self.issues += 1
                self.own[token] = self.issues
                count[0] += 1
                count[1] += nbytes
                sim.transfer(engine, nbytes, (token, self.issues), kind, rows)

            return own
        (key,) = self.keys(o.token, None)

        def on_request() -> None:
            count[0] += 1
            count[1] += nbytes
            sim.transfer(engine, nbytes, key(), kind, rows)

        return on_request

    def wait(self, o: dma.WaitOp) -> Run:
        keys, done, sim = self.keys(o.token, o.slot), self.sim.done, self.sim

        def run() -> None:
            for key in keys:
                k = key()
                # a request nothing was issued on is idle: its wait returns
                if k in done:
                    self.stall += sim.wait(k)

        return run

    def keys(self, token: SSAValue, slot: SSAValue | None) -> list[Callable[[], Hashable]]:
        """The requests a wait on `token` (slot `slot`) waits for, as the C
        emitter resolves them: a copy issued on a ring waits on its slot."""
        owner = token.owner
        if isinstance(owner, dma.CopyOp) and owner.on is not None:
            return self.keys(owner.on, owner.slot)
        env = self.env
        if isinstance(owner, dma.RequestOp):
            if slot is not None:
                s = self.slot(slot)
                return [lambda: (token, env[s])]
            return [lambda k=k: (token, k) for k in range(owner.count.value.data)]
        return [lambda: (token, self.own.get(token, 0))]


def _nothing() -> None:
    pass


def _levels_live(fn: func.FuncOp) -> list[dict[str, int]]:
    """Bytes live in each level during each top-level op of `fn`: arguments
    the whole function, a buffer (view or alloc) from its definition to the
    top-level op that holds its last use."""
    from deeploy_mlir.passes.arena_plan import nbytes

    top = list(fn.body.block.ops)
    where = {o: k for k, o in enumerate(top)}
    base: dict[str, int] = dict.fromkeys(T.MEMORY_LEVELS, 0)
    for a in fn.body.block.args:
        lv = T.memory_level(a.type)
        if lv is not None:
            base[lv] += nbytes(a.type)
    delta: list[dict[str, int]] = [dict.fromkeys(T.MEMORY_LEVELS, 0) for _ in range(len(top) + 1)]
    for k, o in enumerate(top):
        for r in o.results:
            lv = T.memory_level(r.type) if isinstance(r.type, MemRefType) else None
            if lv is None or isinstance(o, memref.GetGlobalOp | dma.SlotOp):
                continue
            end = k
            for u in r.uses:
                user: Operation | None = u.operation
                while user is not None and user not in where:
                    user = user.parent_op()
                if user is not None:
                    end = max(end, where[user])
            delta[k][lv] += nbytes(r.type)
            delta[end + 1][lv] -= nbytes(r.type)
    out: list[dict[str, int]] = []
    live = dict(base)
    for k in range(len(top)):
        for lv in T.MEMORY_LEVELS:
            live[lv] += delta[k][lv]
        out.append(dict(live))
    return out


def function_cost(board: Board, fn: func.FuncOp) -> FunctionCost:
    """Run one step function of a lowered module on `board`."""
    w = _Walker(board, fn)
    live = _levels_live(fn)
    memory: dict[str, list[tuple[int, int]]] = {lv: [] for lv in T.MEMORY_LEVELS}
    for k, o in enumerate(fn.body.block.ops):
        for lv in T.MEMORY_LEVELS:
            memory[lv].append((w.sim.now, live[k][lv]))
        w.run(o)
    tl = w.sim.timeline()
    for lv in T.MEMORY_LEVELS:
        memory[lv].append((tl.total, memory[lv][-1][1] if memory[lv] else 0))
    ops = list(w.ops.values())
    tail = tl.total - sum(o.compute + o.stall for o in ops)
    return FunctionCost(fn.sym_name.data, tl, ops, memory, w.hops, tail)


def schedule_cost(module: ModuleOp, board: Board) -> dict[str, FunctionCost]:
    """{"train": cost of @training_step, "optimizer": cost of @optimizer_step}
    (a function the module lacks is left out)."""
    fns = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks}
    return {key: function_cost(board, fns[name]) for key, name in FUNCTIONS.items() if name in fns}


def main() -> None:  # pragma: no cover - a measurement, printed
    """Time the cost model on each example model and board (default pipeline)."""
    import time
    from pathlib import Path

    from deeploy_mlir.config import CompileConfig
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.pipeline import pipeline, run_pipeline
    from deeploy_mlir.targets.boards import available_boards, load_board

    root = Path(__file__).resolve().parents[2] / "examples"
    for d in sorted(p.parent for p in root.glob("*/expected.json")):
        for name in available_boards():
            board = load_board(name)
            for l1 in (board.levels["L1"], 2048):
                m = import_model(str(d), None).module.clone()
                run_pipeline(m, pipeline(CompileConfig(l1=l1, board=name, regime="auto")))
                t0 = time.perf_counter()
                cost = schedule_cost(m, board)
                dt = time.perf_counter() - t0
                events = sum(c.transfers + sum(o.calls for o in c.ops) for c in cost.values())
                print(
                    f"{d.name:10} {name:13} L1={l1:<7} {events:>7} events "
                    f"{dt * 1e3:8.1f} ms  train {cost['train'].cycles} cycles"
                )


if __name__ == "__main__":  # pragma: no cover
    main()
