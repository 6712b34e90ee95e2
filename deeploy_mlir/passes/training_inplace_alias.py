"""training-inplace-alias: decide which results reuse an operand's storage.

The decision is read from the ops' `AliasingInterface` (never from op names):
a candidate (result r, operand k) is taken when

* the operand dies at this op (no later reader, not returned), and
* the operand's storage is not a function argument -- unless the op is a
  *state update* (SGD, gradient accumulation) whose result is returned as the
  new value of that very argument (`updates` of its `#training.result`), and
* the operand is not a constant, and the result is not returned (a returned
  result is written straight into its output argument, or is the new value of
  another argument).

A *view* candidate (`AliasingInterface.VIEW`: a reshape's result as its
operand's bytes under another shape) is taken unless the result is returned
(it is then written into its output argument, or is an argument's new value:
a copy). The operand may stay live after a view, so storage is shared by a
group of values (a buffer, its views, and what is written in place into
them): an in-place candidate is refused while any value of the operand's
group is read later or returned, or is another operand of the same op.

Chosen decisions are written as ``training.inplace = #training.inplace<k, ...>``
(one entry per result, -1 = own buffer); `training-bufferize` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import TENSOR, require
from deeploy_mlir.memory.aliasing import set_inplace, updates_of


@dataclass
class _FunctionAliasing:
    """The in-place analysis of one function."""

    fn: func.FuncOp
    ops: list[Operation] = field(default_factory=list[Operation])
    index: dict[Operation, int] = field(default_factory=dict[Operation, int])
    updates: dict[int, int] = field(default_factory=dict[int, int])
    #: value -> the value whose storage it lives in (through in-place chains and views)
    root: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    #: storage root -> every value that lives in it (itself first)
    group: dict[SSAValue, list[SSAValue]] = field(default_factory=dict[SSAValue, list[SSAValue]])

    def __post_init__(self) -> None:
        block = self.fn.body.blocks.first
        assert block is not None
        self.ops = list(block.ops)
        self.index = {o: i for i, o in enumerate(self.ops)}
        self.updates = updates_of(self.fn)

    @property
    def ret(self) -> Operation:
        return self.ops[-1]

    def returned_as(self, v: SSAValue) -> list[int]:
        return [i for i, r in enumerate(self.ret.operands) if r is v]

    def sharing(self, v: SSAValue) -> list[SSAValue]:
        """The values that live in `v`'s storage (`v` among them)."""
        root = self.root.get(v, v)
        return self.group.get(root, [root])

    def share(self, res: SSAValue, v: SSAValue) -> None:
        """`res` lives in `v`'s storage from now on."""
        root = self.root.get(v, v)
        self.root[res] = root
        self.group.setdefault(root, [root]).append(res)

    def view_refusal(self, o: T.TrainingComputeOp, r: int) -> str | None:
        """Why result `r` of `o` may not be a view of its operand (None: it may)."""
        if self.returned_as(o.results[r]):
            return (
                f"result #{r} is returned: it is written into its output argument or is an "
                "argument's new value (a copy)"
            )
        return None

    def refusal(self, o: T.TrainingComputeOp, r: int, k: int) -> str | None:
        """Why result `r` of `o` may not take operand `k`'s storage (None: it may)."""
        v = o.ins[k]
        shared = self.sharing(v)
        for w in shared:
            what = f"operand #{k}" if w is v else f"operand #{k}'s storage (as %{w.name_hint})"
            if any(
                self.index[u.operation] > self.index[o]
                for u in w.uses
                if u.operation is not self.ret
            ):
                return f"{what} is read later"
            if self.returned_as(w):
                return f"{what} is returned"
        for j, u in enumerate(o.operands):
            if u is not v and any(u is w for w in shared):
                return f"operand #{j} is operand #{k}'s storage under another shape (a view)"
        res_returns = self.returned_as(o.results[r])
        target = self.root.get(v, v)
        if isinstance(target, BlockArgument):
            # only a state update may write its own argument, and only when its
            # result is returned as that argument's new value
            wanted = [self.updates.get(i) for i in res_returns]
            if not (o.STATE_UPDATE and wanted == [target.index]):  # type: ignore[attr-defined]
                return f"operand #{k} lives in function argument #{target.index}"
            return None
        if isinstance(target.owner, T.ConstantOp):
            return f"operand #{k} is a constant"
        if any(i in self.updates for i in res_returns):
            return f"result #{r} is the new value of another argument"
        if res_returns:
            return f"result #{r} is returned: it is written straight into its output argument"
        return None

    def run(self) -> None:
        for o in self.ops:
            if not isinstance(o, T.TrainingComputeOp) or not isinstance(o, T.AliasingInterface):
                continue
            if o.is_buffer_form:
                continue  # decided already: bufferization has run
            decision = [-1] * len(o.results)
            for r, k in o.alias_candidates():
                if decision[r] != -1 or k in decision:
                    continue
                why = self.view_refusal(o, r) if o.VIEW else self.refusal(o, r, k)
                if why is not None:
                    continue
                decision[r] = k
                self.share(o.results[r], o.ins[k])
            set_inplace(o, decision if any(d != -1 for d in decision) else None)


@dataclass(frozen=True)
class TrainingInplaceAlias(ModulePass):
    name = "training-inplace-alias"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require(op, self.name, TENSOR)
        for fn in op.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                _FunctionAliasing(fn).run()
