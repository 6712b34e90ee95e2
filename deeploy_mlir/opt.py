"""deeploy-opt: xdsl-opt with the deeploy-mlir dialects and passes registered.

Bad input (a missing or unreadable file, text that is not UTF-8, IR that does
not parse or verify, an unknown pass or option, a pass run where its input
form is absent) is one line on stderr and exit code 2; Ctrl-C is one line and
exit code 130; a bug of ours is one line and exit code 1 (DEEPLOY_MLIR_DEBUG=1
shows the traceback). xDSL is imported inside `main`, so that Ctrl-C while it
loads is handled too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn


def _fail(msg: str, code: int = 2) -> NoReturn:
    print(f"deeploy-opt: {msg}", file=sys.stderr)
    raise SystemExit(code)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _check_input(name: str) -> None:
    """The input file exists, is a file, and is UTF-8 text."""
    p = Path(name)
    if not p.exists():
        _fail(f"error: {name}: no such file")
    if p.is_dir():
        _fail(f"error: {name}: is a directory")
    if not p.is_file():  # a device or a pipe: /dev/zero would never end
        _fail(f"error: {name}: not a regular file")
    try:
        p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        _fail(f"error: {name}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})")
    except OSError as e:
        _fail(f"error: {name}: cannot read it ({e.strerror})")


def main(args: Sequence[str] | None = None) -> None:
    try:
        _main(args)
    except KeyboardInterrupt:
        # objects the interrupt left half-built (a z3.Context stopped in its
        # __init__) fail in their __del__ when the traceback is freed: after a
        # Ctrl-C nothing but "interrupted" is printed
        sys.unraisablehook = _ignore_unraisable
        _fail("interrupted", 130)


def _ignore_unraisable(unraisable: object) -> None:
    pass


def _tool_class() -> type:
    """xdsl-opt's driver with our dialects and passes, and pipelines whose
    Literal options are checked in words that name the pass and the option."""
    from xdsl.xdsl_opt_main import xDSLOptMain

    from deeploy_mlir.pipeline import check_choices
    from deeploy_mlir.universe import DIALECTS, PASSES

    class DeeployOptMain(xDSLOptMain):
        def register_all_dialects(self) -> None:
            super().register_all_dialects()
            for name, factory in DIALECTS.items():
                if name not in self.ctx.registered_dialect_names:
                    self.ctx.register_dialect(name, factory)

        def register_all_passes(self) -> None:
            super().register_all_passes()
            for name, factory in PASSES.items():
                self.available_passes.setdefault(name, factory)

        def setup_pipeline(self) -> None:
            # a Literal option's value not among its choices: a line naming them
            if self.args.passes:
                check_choices(self.args.passes, self.available_passes)
            super().setup_pipeline()

    return DeeployOptMain


def _main(args: Sequence[str] | None) -> None:
    import warnings

    from xdsl.utils.exceptions import (
        ArgSpecParseError,
        DiagnosticException,
        ParseError,
        PassFailedException,
        VerifyException,
    )

    from deeploy_mlir.errors import DeeployError

    warnings.filterwarnings("error", category=RuntimeWarning, module=r"deeploy_mlir\.")

    try:  # the command line and the pass pipeline: bad ones are the user's
        tool = _tool_class()(description="deeploy-mlir modular optimizer driver", args=args)
    except (ArgSpecParseError, ValueError, DeeployError) as e:
        _fail(f"error: pass pipeline: {_first_line(e)}")
    src, out = tool.args.input_file, tool.args.output_file
    if src is not None:
        _check_input(src)
        if out is not None and Path(out).resolve() == Path(src).resolve():
            _fail(f"error: -o {out}: is the input file (write the output elsewhere)")
        ext = tool.args.frontend or os.path.splitext(src)[1].lstrip(".")
        if ext not in tool.available_frontends:
            _fail(
                f"error: {src}: unknown file extension '{ext}' (known: "
                f"{', '.join(sorted(tool.available_frontends))}; or give --frontend)"
            )
    if out is not None and not Path(out).parent.is_dir():
        _fail(f"error: -o {out}: the directory {Path(out).parent} does not exist")
    try:
        tool.run()
    except DeeployError as e:
        _fail(f"error: {e}")
    except (ParseError, VerifyException, DiagnosticException, PassFailedException) as e:
        # the message (with the annotated IR where xDSL gives one), not a traceback
        _fail(f"error: {e}")
    except Exception as e:  # a bug of ours: one line, unless debugging
        if os.environ.get("DEEPLOY_MLIR_DEBUG"):
            raise
        _fail(
            f"internal error: {type(e).__name__}: {_first_line(e)} "
            "(set DEEPLOY_MLIR_DEBUG=1 for the traceback)",
            1,
        )


if __name__ == "__main__":
    main()
