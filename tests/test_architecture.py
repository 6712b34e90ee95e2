"""The shape of the package, checked from its source (issue 21's acceptance):

* the import graph of deeploy_mlir has no cycle;
* no module of deeploy_mlir is over 700 lines;
* no module of deeploy_mlir/passes imports another one, and each is one pass;
* no pipeline text is built from pieces (f-strings, +, %, format, join,
  replace, lists of pass names) outside the one pipeline parser;
* every registered pass has a FileCheck test that runs it, and every op of
  every registered dialect is round-tripped by a FileCheck test.

Everything is read from the AST and the files (the import graph: every
`import` and `from ... import` anywhere in a module, function bodies and
`if TYPE_CHECKING:` blocks included, relative imports resolved, `from pkg
import module` an edge to the module). A package's __init__ is only a node
when it is imported itself: importing a.b.c does not add an edge to a.b.
"""

from __future__ import annotations

import ast
import itertools
import re
import shlex
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "deeploy_mlir"
MAX_LINES = 700
#: where pipeline text may be taken apart and put together: the one parser
#: (module path relative to ROOT, function name)
PARSER = ("deeploy_mlir/pipeline.py", "parse_pipeline")


# --------------------------------------------------------------------------
# Reading the package
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Module:
    name: str  # deeploy_mlir.frontend.core
    path: Path
    is_package: bool  # an __init__.py

    @property
    def rel(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    def tree(self) -> ast.Module:
        return ast.parse(self.path.read_text(encoding="utf-8"), filename=str(self.path))


def modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Module]:
    out: dict[str, Module] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = Module(".".join(parts), path, is_package)
    return out


def _resolve(name: str, known: dict[str, Module]) -> str | None:
    """The longest prefix of the dotted `name` that is a module of the package."""
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in known:
            return cand
        parts.pop()
    return None


def imports_of(mod: Module, known: dict[str, Module]) -> Iterator[tuple[str, int]]:
    """(imported module of the package, line) for every import statement."""
    for node in ast.walk(mod.tree()):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, known)
                if target is not None:
                    yield target, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.name.split(".")
                if not mod.is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                target = sub if sub in known else _resolve(source, known)
                if target is not None:
                    yield target, node.lineno


def import_graph(known: dict[str, Module]) -> dict[str, dict[str, int]]:
    """module -> {imported module: first line}; self-imports left out."""
    graph: dict[str, dict[str, int]] = {}
    for name, mod in known.items():
        edges: dict[str, int] = {}
        for target, line in imports_of(mod, known):
            if target != name:
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def find_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle (a path back to its start) per strongly connected component
    of more than one module (Tarjan's algorithm, iterative)."""
    return [_cycle_in(graph, set(c), c[0]) for c in components(graph)]


def components(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    sccs: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp: list[str] = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        sccs.append(sorted(comp))
    return sorted(sccs)


def _cycle_in(graph: dict[str, dict[str, int]], comp: set[str], start: str) -> list[str]:
    """A shortest path start -> ... -> start inside the component (BFS)."""
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in comp:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover


def _show_cycle(graph: dict[str, dict[str, int]], known: dict[str, Module], cyc: list[str]) -> str:
    hops = [f"{a} ({known[a].rel}:{graph[a][b]})" for a, b in itertools.pairwise(cyc)]
    return " -> ".join([*hops, cyc[-1]])


# --------------------------------------------------------------------------
# (a) no import cycle
# --------------------------------------------------------------------------


def test_import_graph_has_no_cycle() -> None:
    known = modules()
    graph = import_graph(known)
    comps = components(graph)
    shown = [
        f"{_show_cycle(graph, known, _cycle_in(graph, set(c), c[0]))}\n"
        f"    (the modules that import each other: {', '.join(c)})"
        for c in comps
    ]
    assert not comps, "import cycles in deeploy_mlir:\n" + "\n".join(shown)


def test_the_import_graph_reader_sees_what_it_must(tmp_path: Path) -> None:
    """The reader itself: relative imports, `from pkg import module`,
    function-level imports, and a cycle through them all is found."""
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "a.py").write_text("def f():\n    from p.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from ..c import X\n")
    (pkg / "c.py").write_text("import os\nfrom p import a\nX = 1\n")
    known = modules(tmp_path, "p")
    graph = import_graph(known)
    assert graph["p.a"] == {"p.sub.b": 2}
    assert graph["p.sub"] == {"p.sub.b": 1}
    assert graph["p.sub.b"] == {"p.c": 1}
    assert graph["p.c"] == {"p.a": 2}
    assert find_cycles(graph) == [["p.a", "p.sub.b", "p.c", "p.a"]]
    (pkg / "c.py").write_text("X = 1\n")
    assert find_cycles(import_graph(modules(tmp_path, "p"))) == []


# --------------------------------------------------------------------------
# (b) module size
# --------------------------------------------------------------------------


def test_no_module_is_over_700_lines() -> None:
    big = {
        m.rel: n
        for m in modules().values()
        if (n := len(m.path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not big, f"modules over {MAX_LINES} lines: " + ", ".join(
        f"{p} ({n})" for p, n in sorted(big.items(), key=lambda kv: -kv[1])
    )


# --------------------------------------------------------------------------
# (c) passes
# --------------------------------------------------------------------------


def _registered_passes() -> dict[str, str]:
    """Pass name -> the module universe.py loads it from (read from its AST,
    so that no pass module is imported)."""
    tree = ast.parse((ROOT / PACKAGE / "universe.py").read_text(encoding="utf-8"))
    loaders: dict[str, str] = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.module:
                    loaders[fn.name] = node.module
    out: dict[str, str] = {}
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if not (isinstance(target, ast.Name) and target.id == "PASSES"):
            continue
        assert isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict)
        for k, v in zip(node.value.keys, node.value.values, strict=True):
            assert isinstance(k, ast.Constant) and isinstance(v, ast.Name), ast.dump(node)
            out[str(k.value)] = loaders[v.id]
    assert out, "universe.py registers no PASSES"
    return out


def test_no_pass_module_imports_another() -> None:
    known = modules()
    graph = import_graph(known)
    prefix = f"{PACKAGE}.passes"
    bad = [
        f"{known[src].rel}:{line} imports {dst}"
        for src, edges in graph.items()
        if src.startswith(prefix + ".")
        for dst, line in edges.items()
        if dst == prefix or dst.startswith(prefix + ".")
    ]
    assert not bad, (
        "a pass imports another module of passes/ (shared logic goes to a library):\n"
        + ("\n".join(bad))
    )


def test_every_module_of_passes_is_one_registered_pass() -> None:
    """passes/X.py is the pass X (underscores for dashes) that universe.py
    registers, and defines one ModulePass: library code lives elsewhere."""
    registered = _registered_passes()
    by_module = {mod: name for name, mod in registered.items()}
    bad: list[str] = []
    for m in modules().values():
        if not m.name.startswith(f"{PACKAGE}.passes.") or m.is_package:
            continue
        name = by_module.get(m.name)
        if name is None:
            bad.append(f"{m.rel}: not a pass registered in universe.py")
            continue
        if m.path.stem != name.replace("-", "_"):
            bad.append(f"{m.rel}: registers the pass '{name}' (file name != pass name)")
        passes = [
            c.name
            for c in m.tree().body
            if isinstance(c, ast.ClassDef)
            and any(isinstance(b, ast.Name) and b.id == "ModulePass" for b in c.bases)
        ]
        if len(passes) != 1:
            bad.append(f"{m.rel}: defines {len(passes)} ModulePass classes ({passes})")
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------
# (d) pipeline text is not built from pieces
# --------------------------------------------------------------------------


def _fragment_re(pass_names: list[str]) -> re.Pattern[str]:
    """Pipeline text: a pass name at the start or after a comma, followed by
    its options, a comma or the end ("tile-select{", "x,arena-plan",
    "tiling-materialize"); or any `name{...=` of a registered pass."""
    names = "|".join(re.escape(n) for n in sorted(pass_names, key=len, reverse=True))
    return re.compile(rf"(?:^|,)\s*(?:{names})\s*(?:\{{|,|$)|(?:{names})\{{")


def _docstrings(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


_BUILDERS = {"format", "join", "replace", "append", "extend", "insert", "__add__"}


def pipeline_building(
    tree: ast.Module, fragment: re.Pattern[str], sources: AbstractSet[str] = frozenset()
) -> list[tuple[int, str, str]]:
    """(line, how, text) of every piece of pipeline text that takes part in
    building a string: a constant part of an f-string, an operand of + or %
    (or +=), the receiver or an argument of format / join / replace, or an
    element of a list, tuple or set, or an argument of append / extend /
    insert (a list of passes to join); and pipeline text that pipeline.py
    hands out (`sources`) patched or extended. A plain literal (a message
    that shows the syntax, a constant default pipeline) builds nothing."""
    docs = _docstrings(tree)
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    hits: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if id(node) in docs or not fragment.search(node.value):
            continue
        parent = parents.get(id(node))
        how = None
        if isinstance(parent, ast.JoinedStr):
            how = "f-string"
        elif isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add | ast.Mod):
            how = "concatenation" if isinstance(parent.op, ast.Add) else "% formatting"
        elif isinstance(parent, ast.AugAssign):
            how = "+="
        elif isinstance(parent, ast.List | ast.Tuple | ast.Set):
            how = "a list of passes"
        elif isinstance(parent, ast.Attribute) and parent.attr in _BUILDERS:
            how = f".{parent.attr}()"
        elif isinstance(parent, ast.Call):
            f = parent.func
            if isinstance(f, ast.Attribute) and f.attr in _BUILDERS:
                how = f".{f.attr}()"
        if how is not None:
            hits.append((node.lineno, how, node.value))
    return sorted(set(hits + _edits_of_pipeline_text(tree, sources)))


def pipeline_sources() -> set[str]:
    """What gives pipeline text in deeploy_mlir/pipeline.py: its module-level
    string constants and its functions that return `str`."""
    tree = ast.parse((ROOT / PARSER[0]).read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name != PARSER[1]:
            ret = node.returns
            if isinstance(ret, ast.Name) and ret.id == "str":
                out.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            if isinstance(node.value.value, str):
                out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _walk_scope(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope: not those of the functions defined in it."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))


def _is_text(e: ast.expr, tainted: set[str], sources: AbstractSet[str]) -> bool:
    """`e` is pipeline text from pipeline.py."""
    if isinstance(e, ast.Name):
        return e.id in tainted or e.id in sources
    if isinstance(e, ast.Attribute):
        return e.attr in sources
    if isinstance(e, ast.Call):
        f = e.func
        return (f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")) in sources
    if isinstance(e, ast.BoolOp):
        return any(_is_text(v, tainted, sources) for v in e.values)
    return False


def _tainted(nodes: list[ast.AST], sources: AbstractSet[str]) -> set[str]:
    """The names assigned pipeline text in a scope (to a fixed point)."""
    tainted: set[str] = set()
    while True:
        before = len(tainted)
        for node in nodes:
            if isinstance(node, ast.Assign) and _is_text(node.value, tainted, sources):
                tainted |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        if len(tainted) == before:
            return tainted


def _edits_of_pipeline_text(
    tree: ast.Module, sources: AbstractSet[str]
) -> list[tuple[int, str, str]]:
    """Pipeline text from pipeline.py (a call of one of `sources`, one of its
    constants, or a name assigned from them in the same scope) patched with
    .replace / .format / .split, or extended with + / % / +=."""
    hits: list[tuple[int, str, str]] = []
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]
    for scope in scopes:
        nodes = list(_walk_scope(scope))
        tainted = _tainted(nodes, sources)
        for node in nodes:
            how = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                edit = node.func.attr in ("replace", "format", "split")
                if edit and _is_text(node.func.value, tainted, sources):
                    how = f".{node.func.attr}() of pipeline text"
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
                if _is_text(node.left, tainted, sources) or _is_text(node.right, tainted, sources):
                    how = "pipeline text extended"
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                if node.target.id in tainted:
                    how = "pipeline text extended"
            if how is not None:
                hits.append((getattr(node, "lineno", 0), how, ast.unparse(node)))
    return hits


def _outside_parser(tree: ast.Module, rel: str) -> ast.Module:
    """The module without the parser function (when it is the parser's module)."""
    if rel != PARSER[0]:
        return tree
    body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == PARSER[1])]
    return ast.Module(body=body, type_ignores=[])


def test_no_pipeline_text_is_built_outside_the_parser() -> None:
    fragment = _fragment_re(list(_registered_passes()))
    sources = pipeline_sources()
    bad: list[str] = []
    for m in modules().values():
        tree = _outside_parser(m.tree(), m.rel)
        hits = pipeline_building(tree, fragment, sources)
        bad += [f"{m.rel}:{line}: {how}: {text!r}" for line, how, text in hits]
    assert not bad, "pipeline text built from pieces (build pass objects instead):\n" + "\n".join(
        bad
    )


def test_the_pipeline_text_check_tells_building_from_quoting() -> None:
    fragment = _fragment_re(["tile-select", "arena-plan", "tiling-materialize"])
    src = '''
"""Docstring: tile-select{l1=1} is fine here."""
A = "arena-plan{level=L2}"
def f(l1, spec, passes):
    """tile-select{l1=N}"""
    msg = "write tile-select{rlimit=N} in the pipeline instead"
    t = seconds.get("tile-select", 0.0)
    err = f"tile-select: {l1} is too small"
    s = f"tile-select{{l1={l1}}}"
    s = "tile-select{l1=" + str(l1) + "}"
    s = spec.replace("arena-plan{level=L1}", "")
    p = ["tiling-materialize"]
    p.append("arena-plan{level=L1}")
    return ",".join(p) + ",arena-plan"
def g(args):
    spec = args.pipeline or pipeline_for(l1=1)
    print(f"running {spec}")
    run(DEFAULT_PIPELINE)
    spec = spec.replace("solver=z3 buffers=1", "solver=z3 buffers=2")
    return DEFAULT_PIPELINE + ",arena-plan{level=L1}"
'''
    hits = pipeline_building(ast.parse(src), fragment, {"pipeline_for", "DEFAULT_PIPELINE"})
    assert [(line, how) for line, how, _ in hits] == [
        (9, "f-string"),
        (10, "concatenation"),
        (11, ".replace()"),
        (12, "a list of passes"),
        (13, ".append()"),
        (14, "concatenation"),
        (19, ".replace() of pipeline text"),
        (20, "concatenation"),
        (20, "pipeline text extended"),
    ]


# --------------------------------------------------------------------------
# (e) FileCheck coverage of passes and ops
# --------------------------------------------------------------------------


FILECHECK = ROOT / "filecheck"


def _run_lines(path: Path) -> list[str]:
    return [
        ln.split("RUN:", 1)[1].strip()
        for ln in path.read_text(encoding="utf-8").splitlines()
        if ln.lstrip().startswith("//") and "RUN:" in ln
    ]


def _passes_run(cmd: str) -> set[str]:
    """The pass names in the -p / --passes pipelines of a RUN command."""
    out: set[str] = set()
    for stage in cmd.split("|"):
        try:
            words = shlex.split(stage)
        except ValueError:
            continue
        if not words or words[0] != "deeploy-opt":
            continue
        for i, w in enumerate(words[:-1]):
            if w in ("-p", "--passes"):
                depth, cur, names = 0, "", []
                for ch in words[i + 1] + ",":
                    if ch == "{":
                        depth += 1
                    elif ch == "}":
                        depth -= 1
                    elif ch == "," and depth == 0:
                        names.append(cur.strip())
                        cur = ""
                        continue
                    if depth == 0 and ch not in "{}":
                        cur += ch
                out.update(n for n in names if n)
    return out


def test_every_pass_has_a_filecheck_test() -> None:
    tested: set[str] = set()
    for path in (FILECHECK / "passes").rglob("*.mlir"):
        for cmd in _run_lines(path):
            tested |= _passes_run(cmd)
    missing = sorted(set(_registered_passes()) - tested)
    assert not missing, (
        "passes registered in universe.py without a FileCheck test under filecheck/passes/ "
        f"that runs them (deeploy-opt -p ...): {', '.join(missing)}"
    )


def test_the_run_line_reader() -> None:
    cmd = (
        'deeploy-opt %s -p "tile-select{l1=4096 solver=untiled},tiling-materialize" | filecheck %s'
    )
    assert _passes_run(cmd) == {"tile-select", "tiling-materialize"}
    assert _passes_run("deeploy-opt %s | deeploy-opt | filecheck %s") == set()


def _round_trip_file(path: Path) -> bool:
    """A file whose RUN lines print the parsed IR again (no pass, no
    diagnostics check): deeploy-opt %s [| deeploy-opt] | filecheck."""
    return any(
        "deeploy-opt" in cmd
        and not _passes_run(cmd)
        and "--verify-diagnostics" not in cmd
        and "filecheck" in cmd
        for cmd in _run_lines(path)
    )


def _registered_ops() -> dict[str, list[str]]:
    from deeploy_mlir.universe import DIALECTS

    return {name: sorted(op.name for op in load().operations) for name, load in DIALECTS.items()}


def test_every_op_of_every_dialect_is_round_tripped() -> None:
    """Each op appears in the input of a round-trip FileCheck test and in its
    CHECK lines."""
    files = [p for p in FILECHECK.rglob("*.mlir") if _round_trip_file(p)]
    texts = [p.read_text(encoding="utf-8").splitlines() for p in files]
    missing: list[str] = []
    for ops in _registered_ops().values():
        for op in ops:
            word = re.compile(rf"(?<![\w.]){re.escape(op)}(?![\w])")
            found = any(
                any(word.search(ln) and not ln.lstrip().startswith("//") for ln in lines)
                and any(word.search(ln) and "CHECK" in ln for ln in lines)
                for lines in texts
            )
            if not found:
                missing.append(op)
    assert not missing, (
        "ops without a round-trip FileCheck test (the op in the input and in a CHECK line of a "
        f"filecheck/ file run as deeploy-opt %s | filecheck): {', '.join(missing)}"
    )
