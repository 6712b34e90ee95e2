"""deeploy-opt: xdsl-opt with the deeploy-mlir dialects and passes registered."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import (
    DiagnosticException,
    ParseError,
    PassFailedException,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from deeploy_mlir.errors import DeeployError
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


def main(args: Sequence[str] | None = None) -> None:
    try:
        DeeployOptMain(description="deeploy-mlir modular optimizer driver", args=args).run()
    except DeeployError as e:
        print(f"deeploy-opt: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    except (ParseError, VerifyException, DiagnosticException, PassFailedException) as e:
        # the message (with the annotated IR where xDSL gives one), not a traceback
        print(f"deeploy-opt: error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
