"""jittape's import graph and its layers: a check and a diagram.

jittape's modules live in subpackages stacked in layers (``LAYERS``, lowest first): a
module may import modules of its own layer and of the layers below it, never above. This
file reads every ``.py`` file of the package with ``ast`` (nothing is imported) and collects
every import statement, including those inside functions, methods and ``if``/``try``
blocks: a deferred import is still a dependency. From that graph it reports module
cycles, cycles between layers, upward imports, modules of no known layer, imports of
modules that do not exist and subpackages without a docstring, and it draws the layers.

    python tests/layers.py           # print the diagram
    python tests/layers.py --check   # print the problems; exit status 1 if there are any
    python tests/layers.py --write   # put the diagram in docs/guides/how-it-works.md

tests/test_layers.py runs the checks on the real tree and on small synthetic trees.
Imports done by name at run time (``importlib.import_module``) are not seen.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "jittape"
DOC = ROOT.parent / "docs" / "guides" / "how-it-works.md"
BEGIN, END = "<!-- layers:begin -->", "<!-- layers:end -->"
WIDTH = 99  # the diagram's widest line

#: The layers, lowest first: a subpackage of jittape each, and "" for the modules directly
#: in jittape/ (__init__, __main__, ops, testing, demo), the top.
LAYERS = ["_base", "optable", "tape", "sweeps", "compiler", "numpy", "scipy", "derivatives",
          "custom", "explain", "api", "optimize", "dask", ""]


class ImportGraph(dict):
    """``{module: set of the tree's modules it imports}``, every module of the tree a key.

    Also ``root`` (the package directory), ``files`` (``{module: path}``), ``sites``
    (``{(importer, imported): (path, line)}``, one import statement per edge) and
    ``unresolved`` (``[(module, name, path, line)]``: imports of a name inside the package
    that is no module of the tree).
    """

    def __init__(self, root: Path):
        super().__init__()
        self.root = Path(root)
        self.files: dict[str, Path] = {}
        self.sites: dict[tuple[str, str], tuple[Path, int]] = {}
        self.unresolved: list[tuple[str, str, Path, int]] = []

    def where(self, a: str, b: str) -> str:
        """``path:line`` of an import of ``b`` by ``a``, the path relative to the repository."""
        path, line = self.sites[a, b]
        return f"{_rel(path, self.root)}:{line}"


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root.parent).as_posix()


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """``{dotted name: file}`` of every ``.py`` file under root (a package: its __init__.py)."""
    root = Path(root)
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((root.name, *parts))] = path
    return out


def _from_base(node: ast.ImportFrom, package: str) -> str | None:
    """The absolute ``X`` of ``from X import ...``; None if it climbs above the top package."""
    if node.level == 0:
        return node.module
    parts = package.split(".")
    if node.level > len(parts):
        return None
    base = ".".join(parts[:len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def _imported(node: ast.Import | ast.ImportFrom, package: str, modules) -> list[tuple[str, bool]]:
    """``[(name, in the tree)]``: the modules an import statement names."""
    if isinstance(node, ast.Import):
        return [(a.name, a.name in modules) for a in node.names]
    base = _from_base(node, package)
    if base is None:
        return [("." * node.level + (node.module or ""), False)]
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"  # from A import b: the module A.b if there is one
        out.append((sub, True) if sub in modules else (base, base in modules))
    return out


def import_graph(root: Path = ROOT) -> ImportGraph:
    """The import graph of the package at root: every import statement, at any depth."""
    graph = ImportGraph(root)
    graph.files = module_files(root)
    top = graph.root.name
    for module, path in graph.files.items():
        graph[module] = set()
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for name, known in _imported(node, package, graph.files):
                if known and name != module:
                    graph[module].add(name)
                    graph.sites.setdefault((module, name), (path, node.lineno))
                elif not known and (name == top or name.startswith((top + ".", "."))):
                    graph.unresolved.append((module, name, path, node.lineno))
    return graph


def _sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        return v, iter(sorted(graph.get(v, ())))

    for start in sorted(graph):
        if start in index:
            continue
        work = [visit(start)]
        while work:
            v, successors = work[-1]
            for w in successors:
                if w not in index:
                    work.append(visit(w))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:  # all of v's successors done
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while not component or component[-1] != v:
                        component.append(stack.pop())
                        on_stack.discard(component[-1])
                    out.append(sorted(component))
    return out


def module_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: components of more than one module, each sorted."""
    return sorted(c for c in _sccs(graph) if len(c) > 1)


def cycle_path(graph: dict[str, set[str]], members: list[str]) -> list[str]:
    """A shortest cycle through ``members[0]`` inside ``members``: ``[m0, ..., m0]``."""
    start, inside = members[0], set(members)
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v] & inside):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1] + [start]
            if w not in previous:
                previous[w] = v
                queue.append(w)
    raise ValueError(f"no cycle through {start}")


def layer_of(module: str, root: Path = ROOT) -> str:
    """The layer of a module: X for jittape.X.… when jittape/X/ is a package, else ""."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (Path(root) / parts[1]).is_dir() else ""


def _rank(layer: str) -> int:
    """The position of a layer in LAYERS; unknown layers after them all."""
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


def _root(graph) -> Path:
    return getattr(graph, "root", ROOT)


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """``[(importer, imported)]``: imports of a module of a higher layer (known layers only)."""
    root = _root(graph)
    out = []
    for a in sorted(graph):
        la = layer_of(a, root)
        for b in sorted(graph[a]):
            lb = layer_of(b, root)
            if la in LAYERS and lb in LAYERS and _rank(la) < _rank(lb):
                out.append((a, b))
    return out


def unknown_layers(graph: dict[str, set[str]]) -> list[str]:
    """The modules whose layer is not in LAYERS."""
    root = _root(graph)
    return [m for m in sorted(graph) if layer_of(m, root) not in LAYERS]


def layer_edges(graph: dict[str, set[str]]) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """``{layer: {other layer it imports: [(importer, imported), ...]}}``, sorted."""
    root = _root(graph)
    out: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for a in sorted(graph):
        la = layer_of(a, root)
        out.setdefault(la, {})
        for b in sorted(graph[a]):
            lb = layer_of(b, root)
            if lb != la:
                out[la].setdefault(lb, []).append((a, b))
    return out


def layer_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles between layers (the graph collapsed to layers), each in LAYERS order."""
    layered = {la: set(imports) for la, imports in layer_edges(graph).items()}
    return sorted(sorted(c, key=lambda la: (_rank(la), la))
                  for c in _sccs(layered) if len(c) > 1)


def _subpackages(root: Path) -> list[Path]:
    """The directories under root that hold ``.py`` files."""
    return sorted(d for d in Path(root).rglob("*") if d.is_dir() and any(d.glob("*.py")))


def undocumented_packages(root: Path = ROOT) -> list[str]:
    """Subpackage directories whose ``__init__.py`` is missing or has no docstring."""
    root = Path(root)
    return [f"{_rel(d, root)}/__init__.py" for d in _subpackages(root)
            if _docstring(d / "__init__.py") is None]


def _docstring(path: Path) -> str | None:
    if not path.is_file():
        return None
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or None


def _name(layer: str) -> str:
    return f"'{layer}'" if layer else "'' (top)"


def problems(root: Path = ROOT) -> list[str]:
    """Every problem of the tree at root, one message each (empty: all is well)."""
    graph = import_graph(root)
    out = []
    for members in module_cycles(graph):
        path = cycle_path(graph, members)
        steps = "\n".join(f"    {a} -> {b}  ({graph.where(a, b)})" for a, b in zip(path, path[1:]))
        out.append(f"import cycle of {len(members)} modules: {', '.join(members)}\n"
                   f"  for instance:\n{steps}")
    edges = layer_edges(graph)
    for layers in layer_cycles(graph):
        lines = [f"    {_name(la)} -> {_name(lb)}: {a} -> {b}  ({graph.where(a, b)})"
                 for la in layers for lb in layers if lb in edges[la]
                 for a, b in edges[la][lb][:1]]
        out.append(f"cycle between layers {', '.join(map(_name, layers))}:\n" + "\n".join(lines))
    for a, b in upward_imports(graph):
        out.append(f"upward import: {a} (layer {_name(layer_of(a, root))}) imports {b} "
                   f"(layer {_name(layer_of(b, root))}) at {graph.where(a, b)}")
    for m in unknown_layers(graph):
        out.append(f"module of no known layer: {m} ({_rel(graph.files[m], graph.root)}): "
                   f"layer {_name(layer_of(m, root))} is not in LAYERS")
    for m, name, path, line in graph.unresolved:
        out.append(f"import of a module not in the tree: {m} imports {name} "
                   f"at {_rel(path, graph.root)}:{line}")
    for init in undocumented_packages(root):
        out.append(f"subpackage without a docstring: {init} (missing, or no docstring)")
    return out


def first_sentence(text: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line, without ``."""
    paragraph = " ".join(text.strip().split("\n\n")[0].split()).replace("``", "")
    m = re.match(r"(.+?(?<!e\.g)(?<!i\.e)[.!?])(\s|$)", paragraph)
    return m.group(1) if m else paragraph


def _numbers(numbers: list[int]) -> str:
    """``1 2 3 4 7 9 10`` as ``1-4 7 9 10``: runs of three or more as ranges."""
    out, i = [], 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        if j - i >= 2:
            out.append(f"{numbers[i]}-{numbers[j]}")
            i = j + 1
        else:
            out.append(str(numbers[i]))
            i += 1
    return " ".join(out)


def _clip(text: str, width: int) -> str:
    """Text cut at a word to fit width, with "..." where cut."""
    if len(text) <= width:
        return text
    return text[:width - 3].rsplit(" ", 1)[0].rstrip(" ,;:") + "..."


def _holds(graph: ImportGraph, layer: str) -> str:
    """What a layer holds: its docstring's first sentence; the top: its modules' names."""
    root = graph.root
    if not layer:
        tops = sorted(m.rpartition(".")[2] if m != root.name else "__init__"
                      for m in graph if layer_of(m, root) == "")
        return f"the modules in {root.name}/: " + " ".join(tops)
    if not (root / layer).is_dir():
        return "(no such package)"
    doc = _docstring(root / layer / "__init__.py")
    return first_sentence(doc) if doc else "(no docstring)"


def diagram(root: Path = ROOT) -> str:
    """The layers as text, highest first: number, name, what it holds, layers it imports."""
    root = Path(root)
    graph = import_graph(root)
    edges = layer_edges(graph)
    found = {layer_of(m, root) for m in graph}
    unknown = sorted(found - set(LAYERS))
    number = {la: str(i + 1) for i, la in enumerate(LAYERS)} | {la: "?" for la in unknown}
    rows = []
    for la in unknown + LAYERS[::-1]:
        holds = _holds(graph, la)
        imported = edges.get(la, {})
        known = _numbers(sorted(int(number[lb]) for lb in imported if lb in LAYERS))
        others = sorted(lb for lb in imported if lb not in LAYERS)  # unknown layers, by name
        rows.append((number[la], la or "(top)", holds, " ".join([known, *others]).strip() or "-"))
    name_w = max(len("layer"), *(len(r[1]) for r in rows))
    imports_w = max(len("imports"), *(len(r[3]) for r in rows))
    holds_w = WIDTH - 4 - name_w - 2 - 2 - imports_w
    head = [f"Layers of {root.name}, highest first. A layer may import the layers below it, never",
            "one above; 'imports' gives the numbers of the layers its modules import.",
            ""]
    lines = [(" #", "layer", "holds", "imports")] + rows
    body = [f"{n:>2}  {name:<{name_w}}  {_clip(holds, holds_w):<{holds_w}}  {imp}".rstrip()
            for n, name, holds, imp in lines]
    return "\n".join(head + body) + "\n"


def fenced(root: Path = ROOT) -> str:
    """The diagram as a fenced code block of Markdown."""
    return "```text\n" + diagram(root) + "```\n"


def doc_block(doc: Path = DOC) -> str | None:
    """The text between the marker lines of doc; None if they are absent."""
    text = Path(doc).read_text(encoding="utf-8")
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        return None
    return text[i + len(BEGIN):j].strip("\n") + "\n"


def write_doc(doc: Path = DOC, root: Path = ROOT) -> bool:
    """Put the diagram between the marker lines of doc; False if they are absent."""
    doc = Path(doc)
    text = doc.read_text(encoding="utf-8")
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        return False
    new = text[:i + len(BEGIN)] + "\n" + fenced(root) + text[j:]
    if new != text:
        doc.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str] | None = None, root: Path = ROOT, doc: Path = DOC) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        found = problems(root)
        print("\n".join(found) if found else "no problems")
        return 1 if found else 0
    if args == ["--write"]:
        if write_doc(doc, root):
            print(f"diagram written to {doc}")
            return 0
        print(f"{doc}: no lines {BEGIN} and {END}: add them where the diagram goes")
        return 1
    if args:
        print("usage: python tests/layers.py [--check | --write]", file=sys.stderr)
        return 2
    print(diagram(root), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
