"""The arena of one memory level, read off the IR: the buffers that live in
it with their lifetimes, and the size of their plan.

Lifetimes follow the training rules (what arena-plan plans): the arguments of
the step functions live the whole step and are keyed by name (an argument of
@optimizer_step with the name of one of @training_step shares its buffer);
a `memref.alloc` lives from its allocation to its last use -- a use of a
`training.view` of it counts (the same storage) --, a use inside a loop
keeping it live until the end of that loop; the functions run one after
the other. Time is an op's place in a walk of the functions.

`arena_size` is the probe the passes that decide homes and stage tiles use
(memory-home, memory-regime, tile-select): the greedy plan's size, with no
pass object, no pipeline and no change to the module. A library module: it
imports the planner, the buffer facts and xDSL.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation

from deeploy_mlir.dialects import dma
from deeploy_mlir.dialects import training as T
from deeploy_mlir.memory.buffers import arg_kind, arg_name, level_of, nbytes, step_functions
from deeploy_mlir.memory.planner import Buffer, plan_greedy


@dataclass
class ArenaBuffers:
    """The buffers of one level: by key, with the arguments (function,
    index, key) and allocations (op, key) they come from."""

    buffers: dict[str, Buffer] = field(default_factory=dict[str, Buffer])
    args: list[tuple[func.FuncOp, int, str]] = field(
        default_factory=list[tuple[func.FuncOp, int, str]]
    )
    allocs: list[tuple[memref.AllocOp, str]] = field(
        default_factory=list[tuple[memref.AllocOp, str]]
    )


def align_of(t: Attribute) -> int:
    """The arena alignment of a buffer of type `t`."""
    return 8 if str(T.elem_of(t)) == "i64" else 4


def walk_function(fn: func.FuncOp) -> Iterator[Operation]:
    """The ops of `fn`'s body in program order, nested ones included."""
    block = fn.body.blocks.first
    assert block is not None
    for o in block.ops:
        yield from o.walk()


def _last_use(alloc: memref.AllocOp, index: dict[Operation, int]) -> int:
    """The time of the last op during which `alloc`'s buffer is live (its
    views' uses are its own: `T.uses_through_views`): a use inside a loop
    (or any region) keeps it live until the end of the op that holds the
    use in the alloc's own block -- every iteration reads it. A buffer
    allocated inside a loop body lives within one iteration."""
    block = alloc.parent_block()
    end = index[alloc]
    users: list[Operation] = []
    for u in T.uses_through_views(alloc.memref):
        users.append(u.operation)
        c = u.operation
        if isinstance(c, dma.CopyOp) and c.src_level != "L3" and c.dst_level == "L3":
            # a store to L3 reads its source until its wait (l3-overlap
            # moves that wait below the next op)
            users += [w.operation for w in c.token.uses]
    for user in users:
        o: Operation | None = user
        while o is not None and o.parent_block() is not block:
            o = o.parent_op()
        assert o is not None, "a use outside the block of its alloc"
        end = max(end, max(index[n] for n in o.walk()))
    return end


def arena_buffers(module: ModuleOp, level: str) -> ArenaBuffers:
    """Every buffer of `level` in `module` with its lifetime."""
    fns = step_functions(module)
    lengths = [sum(1 for _ in walk_function(f)) for f in fns]
    total_time = sum(lengths) + 1
    out = ArenaBuffers()
    t0 = 0
    for fn, n in zip(fns, lengths, strict=True):
        for i, a in enumerate(fn.body.block.args):
            if level_of(a.type) != level:
                continue
            name = arg_name(fn, i)
            if name not in out.buffers:
                out.buffers[name] = Buffer(
                    name, nbytes(a.type), 0, total_time, align_of(a.type), arg_kind(fn, i)
                )
            out.args.append((fn, i, name))
        index = {o: t0 + k for k, o in enumerate(walk_function(fn))}
        for o in walk_function(fn):
            if isinstance(o, memref.AllocOp) and level_of(o.memref.type) == level:
                key = f"{fn.sym_name.data}/%{o.memref.name_hint or 'tmp'}#{index[o]}"
                end = _last_use(o, index) + 1
                out.buffers[key] = Buffer(
                    key, nbytes(o.memref.type), index[o], end, align_of(o.memref.type)
                )
                out.allocs.append((o, key))
        t0 += n
    return out


def arena_size(module: ModuleOp, level: str) -> int:
    """Bytes of the arena arena-plan{level} (greedy) would plan for `module`
    as it is (0 when nothing lives in `level`). The module is not changed."""
    bl = list(arena_buffers(module, level).buffers.values())
    if not bl:
        return 0
    return plan_greedy(bl)[1]
