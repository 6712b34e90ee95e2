"""C emitter: planned buffer-form IR -> a C project for a PULP target.

Deciding and printing are apart: kernel-select (passes/kernel_select.py)
turns every compute op into `kernel.call` ops (on a copy of the module) and
the modules here only print. Text lives in the jinja2 templates
(emitters/templates/common).

* common.py: C spellings (identifiers, types, floats, arrays), the C dialect
  of the builds, the templates' environment, runtime_c's location;
* dma.py: the DMA requests of a function and the C of the dma ops;
* printer.py: the statements of a function body (index arithmetic, loops,
  kernel calls, dma ops);
* project.py: the project (buffers, constants, functions, manifest) and
  writing it.
"""

from deeploy_mlir.emitters.c.common import (
    C_LANG,
    C_TYPE,
    TEMPLATES,
    c_float,
    c_ident,
    c_type,
    c_values,
    runtime_dir,
    template_env,
)
from deeploy_mlir.emitters.c.printer import KernelCall, StatementPrinter, function_statements
from deeploy_mlir.emitters.c.project import (
    Buffer,
    EmitOptions,
    Project,
    emitted_sources,
    render,
    write_project,
    write_project_files,
)

__all__ = [
    "C_LANG",
    "C_TYPE",
    "TEMPLATES",
    "Buffer",
    "EmitOptions",
    "KernelCall",
    "Project",
    "StatementPrinter",
    "c_float",
    "c_ident",
    "c_type",
    "c_values",
    "emitted_sources",
    "function_statements",
    "render",
    "runtime_dir",
    "template_env",
    "write_project",
    "write_project_files",
]
