"""Pass pipelines: parsing (xdsl-opt syntax) and running with our passes."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms import get_all_passes
from xdsl.utils.exceptions import ArgSpecParseError, VerifyException

from deeploy_mlir.errors import DeeployError
from deeploy_mlir.universe import DIALECTS, PASSES

#: kernels straight on the L2 buffers (no tiles, no L1)
DEFAULT_PIPELINE = "training-inplace-alias,training-bufferize{level=L2},arena-plan{level=L2}"
#: the same without in-place reuse: every result gets its own buffer
NO_INPLACE_PIPELINE = "training-bufferize{level=L2},arena-plan{level=L2}"
TILINGS = ("tiled", "untiled", "none")


def pipeline_for(tiling: str = "tiled", l1: int = 65536, inplace: bool = True) -> str:
    """The pipeline `lower`/`run` use: L2 planning, then for `tiled` Z3-chosen
    tiles in L1 (`untiled`: one tile per tensor, the whole tensor in L1),
    materialized with copies, and the L1 plan. `none` runs kernels on L2."""
    base = DEFAULT_PIPELINE if inplace else NO_INPLACE_PIPELINE
    if tiling == "none":
        return base
    solver = "z3" if tiling == "tiled" else "untiled"
    return (
        f"{base},tile-select{{l1={l1} solver={solver}}},tiling-materialize,arena-plan{{level=L1}}"
    )


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    out = dict(get_all_passes())
    out.update(PASSES)
    return out


def make_context() -> Context:
    from xdsl.dialects import get_all_dialects

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    for name, factory in DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_pipeline(spec: str) -> PassPipeline:
    try:
        return PassPipeline.parse_spec(available_passes(), spec)
    except ArgSpecParseError as e:  # a BaseException in xdsl 0.74
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        raise DeeployError(f"--pass-pipeline '{spec}': {lines[-1]} ({lines[1]})") from None
    except Exception as e:  # unknown passes or options: ValueError and friends
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DeeployError(f"--pass-pipeline '{spec}': {msg}") from None


def run_pipeline(module: ModuleOp, spec: str) -> list[str]:
    """Run `spec` on `module`, verifying after each pass; returns the pass names."""
    pipeline = parse_pipeline(spec)
    ctx = make_context()
    names: list[str] = []
    for p in pipeline.passes:
        try:
            p.apply(ctx, module)
            module.verify()
        except VerifyException as e:
            raise DeeployError(f"pass {p.name}: the IR it produced does not verify: {e}") from None
        names.append(p.name)
    return names
