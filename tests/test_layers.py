"""The layers of jittape's subpackages (tests/layers.py): on the real tree, no import cycle,
no upward import, every module in a known layer, every subpackage documented and the diagram
of docs/guides/how-it-works.md current; on small synthetic trees, that the checker finds what
it must (function-level and relative imports included) and nothing on a clean tree."""

import textwrap

import pytest

import layers


@pytest.fixture(scope="session")
def _all_sweeps_compiled():
    """Replaces conftest's warm-up of the compiled sweeps: these tests only parse files."""


# -- the real tree ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def graph():
    return layers.import_graph()


def test_no_module_cycles(graph):
    cycles = layers.module_cycles(graph)
    messages = []
    for members in cycles:
        path = layers.cycle_path(graph, members)
        messages.append(", ".join(members) + "; e.g. " + " -> ".join(
            f"{a} ({graph.where(a, b)})" for a, b in zip(path, path[1:])) + f" -> {path[-1]}")
    assert not cycles, "import cycles:\n" + "\n".join(messages)


def test_no_layer_cycles(graph):
    cycles = layers.layer_cycles(graph)
    edges = layers.layer_edges(graph)
    messages = [f"{' <-> '.join(c)}: " + "; ".join(
        f"{a} -> {b} ({graph.where(a, b)})" for la in c for lb in c if lb in edges[la]
        for a, b in edges[la][lb][:1]) for c in cycles]
    assert not cycles, "cycles between layers:\n" + "\n".join(messages)


def test_no_upward_imports(graph):
    upward = layers.upward_imports(graph)
    assert not upward, "imports of a higher layer:\n" + "\n".join(
        f"{a} [{layers.layer_of(a)}] imports {b} [{layers.layer_of(b)}] at {graph.where(a, b)}"
        for a, b in upward)


def test_every_module_in_a_known_layer(graph):
    unknown = layers.unknown_layers(graph)
    assert not unknown, f"modules of layers not in layers.LAYERS {layers.LAYERS}:\n" + "\n".join(
        f"{m} ({graph.files[m]}): layer {layers.layer_of(m)!r}" for m in unknown)


def test_imports_name_existing_modules(graph):
    assert not graph.unresolved, "imports of modules not in the tree:\n" + "\n".join(
        f"{m} imports {name} at {path}:{line}" for m, name, path, line in graph.unresolved)


def test_subpackages_have_docstrings():
    missing = layers.undocumented_packages()
    assert not missing, "subpackages whose __init__.py is missing or has no docstring:\n" + \
        "\n".join(missing)


def test_diagram_in_docs_is_current():
    block = layers.doc_block()
    assert block is not None, (f"{layers.DOC} has no lines {layers.BEGIN} and {layers.END}: "
                               "add them where the diagram goes, then run "
                               "`python tests/layers.py --write`")
    assert block == layers.fenced(), (f"the layer diagram in {layers.DOC} is stale: "
                                      "run `python tests/layers.py --write`")


# -- the checker on synthetic trees ----------------------------------------------------------

def make_tree(tmp_path, files):
    """A fake jittape package under tmp_path: ``{relative path: source}``; every directory
    gets an ``__init__.py`` with a docstring unless given one."""
    root = tmp_path / "jittape"
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    for d in [root, *(d for d in root.rglob("*") if d.is_dir())]:
        if not (d / "__init__.py").exists():
            (d / "__init__.py").write_text(f'"""The {d.name} layer. More text."""\n')
    return root


def test_cycle_closed_by_a_function_level_import(tmp_path):
    files = {"sweeps/run.py": "from ..tape.core import T\n",
             "tape/core.py": "T = 1\n"}
    assert layers.module_cycles(layers.import_graph(make_tree(tmp_path / "a", files))) == []
    files["tape/core.py"] = "T = 1\n\n\ndef f():\n    from ..sweeps.run import g\n"
    root = make_tree(tmp_path / "b", files)
    graph = layers.import_graph(root)
    assert layers.module_cycles(graph) == [["jittape.sweeps.run", "jittape.tape.core"]]
    assert graph.where("jittape.tape.core", "jittape.sweeps.run") == "jittape/tape/core.py:5"
    assert layers.layer_cycles(graph) == [["tape", "sweeps"]]
    assert layers.upward_imports(graph) == [("jittape.tape.core", "jittape.sweeps.run")]
    assert any("jittape/tape/core.py:5" in p for p in layers.problems(root))


def test_cycle_through_from_dot_import_and_absolute_import(tmp_path):
    graph = layers.import_graph(make_tree(tmp_path, {
        "tape/a.py": "from . import b\n",
        "tape/b.py": "import jittape.tape.c as c\n",
        "tape/c.py": "try:\n    from jittape.tape.a import x\nexcept ImportError:\n    pass\n",
        "tape/d.py": "from . import helper\n"}))  # a name of the package, not a module
    assert graph["jittape.tape.a"] == {"jittape.tape.b"}
    assert graph["jittape.tape.b"] == {"jittape.tape.c"}
    assert graph["jittape.tape.d"] == {"jittape.tape"}
    assert layers.module_cycles(graph) == [["jittape.tape.a", "jittape.tape.b", "jittape.tape.c"]]
    path = layers.cycle_path(graph, ["jittape.tape.a", "jittape.tape.b", "jittape.tape.c"])
    assert path == ["jittape.tape.a", "jittape.tape.b", "jittape.tape.c", "jittape.tape.a"]
    assert layers.layer_cycles(graph) == []  # all in one layer
    assert layers.upward_imports(graph) == []


def test_upward_import_reported(tmp_path):
    root = make_tree(tmp_path, {
        "numpy/ufuncs.py": "from ..optable.table import TABLE\nadd = 1\n",
        "optable/table.py": "TABLE = {}\n",
        "optable/entry.py": """\
            class Entry:
                def rule(self):
                    if True:
                        from jittape.numpy import ufuncs
                    return ufuncs.add
            """,
        "optable/other.py": "from ..numpy.ufuncs import add\n"})
    graph = layers.import_graph(root)
    assert layers.upward_imports(graph) == [("jittape.optable.entry", "jittape.numpy.ufuncs"),
                                            ("jittape.optable.other", "jittape.numpy.ufuncs")]
    assert graph.where("jittape.optable.entry", "jittape.numpy.ufuncs") == \
        "jittape/optable/entry.py:4"
    assert layers.layer_cycles(graph) == [["optable", "numpy"]]
    assert layers.module_cycles(graph) == []
    found = layers.problems(root)
    assert any("upward import: jittape.optable.entry" in p and "entry.py:4" in p for p in found)


def test_relative_import_of_level_two_from_a_nested_package(tmp_path):
    graph = layers.import_graph(make_tree(tmp_path, {
        "_base/errors.py": "class E(Exception):\n    pass\n",
        "optable/table.py": "TABLE = {}\n",
        "optable/rules/__init__.py": '"""Rules."""\nfrom .. import table\n',
        "optable/rules/arrays.py": """\
            from .. import table
            from ..table import TABLE
            from . import special
            from ...tape import Tape
            from ..._base.errors import E
            """,
        "optable/rules/special.py": "from ..rules import arrays\n",
        "tape/__init__.py": '"""Tape."""\nTape = object\n'}))
    assert graph["jittape.optable.rules"] == {"jittape.optable.table"}
    assert graph["jittape.optable.rules.arrays"] == {
        "jittape.optable.table", "jittape.optable.rules.special", "jittape.tape",
        "jittape._base.errors"}
    assert graph["jittape.optable.rules.special"] == {"jittape.optable.rules.arrays"}
    assert layers.layer_of("jittape.optable.rules.arrays", graph.root) == "optable"
    assert layers.upward_imports(graph) == [("jittape.optable.rules.arrays", "jittape.tape")]
    assert graph.unresolved == []


def test_unknown_layers_missing_modules_and_docstrings_reported(tmp_path):
    root = make_tree(tmp_path, {
        "extras/thing.py": "from ..tape import gone\nfrom ...beyond import x\n",
        "tape/__init__.py": "x = 1\n"})
    graph = layers.import_graph(root)
    assert layers.unknown_layers(graph) == ["jittape.extras", "jittape.extras.thing"]
    assert [(m, name) for m, name, _, _ in graph.unresolved] == [
        ("jittape.extras.thing", "...beyond")]  # `gone` could be a name of jittape.tape
    assert layers.undocumented_packages(root) == ["jittape/tape/__init__.py"]
    assert layers.main(["--check"], root=root) == 1


def test_layer_cycle_without_a_module_cycle(tmp_path):
    graph = layers.import_graph(make_tree(tmp_path, {
        "tape/a.py": "from ..sweeps import b\n",
        "sweeps/b.py": "",
        "sweeps/c.py": "from ..tape import d\n",
        "tape/d.py": ""}))
    assert layers.module_cycles(graph) == []
    assert layers.layer_cycles(graph) == [["tape", "sweeps"]]


CLEAN = {
    "__init__.py": '"""Top."""\nfrom .api.grad import grad\nfrom . import ops\n',
    "ops.py": "from .optable import table\n",
    "_base/errors.py": "class E(Exception):\n    pass\n",
    "optable/table.py": "from .._base.errors import E\n",
    "optable/rules/arrays.py": "from .. import table\nfrom ..._base import errors\n",
    "tape/core.py": "import jittape.optable.table\n",
    "api/grad.py": """\
        from ..tape.core import *
        from . import helpers


        def grad(f):
            from ..optable.rules import arrays
            return f
        """,
    "api/helpers.py": "def h():\n    import jittape.tape.core\n",
}


def test_clean_tree_reports_nothing(tmp_path, capsys):
    root = make_tree(tmp_path, CLEAN)
    graph = layers.import_graph(root)
    assert len(graph) == 13
    assert graph["jittape"] == {"jittape.api.grad", "jittape.ops"}
    assert graph["jittape.api.grad"] == {"jittape.tape.core", "jittape.api.helpers",
                                         "jittape.optable.rules.arrays"}
    assert layers.module_cycles(graph) == []
    assert layers.layer_cycles(graph) == []
    assert layers.upward_imports(graph) == []
    assert layers.unknown_layers(graph) == []
    assert graph.unresolved == []
    assert layers.problems(root) == []
    assert layers.main(["--check"], root=root) == 0
    assert capsys.readouterr().out == "no problems\n"


def test_diagram_of_a_synthetic_tree(tmp_path):
    root = make_tree(tmp_path, dict(CLEAN, **{"tape/late.py": "from ..api import grad\n"}))
    text = layers.diagram(root)
    assert text == layers.diagram(root)
    assert max(map(len, text.splitlines())) < 100
    rows = {line.split()[1]: line for line in text.splitlines()[3:]}
    assert rows["(top)"].endswith("  2 11") and ": __init__ ops" in rows["(top)"]
    assert "The api layer." in rows["api"] and rows["api"].endswith("  2 3")
    assert rows["tape"].endswith("  2 11")  # the upward import shows: 11 above 3
    assert rows["_base"].endswith("  -")
    assert "(no such package)" in rows["dask"]


def test_write_replaces_the_text_between_the_markers(tmp_path, capsys):
    root = make_tree(tmp_path, CLEAN)
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nNo markers.\n")
    assert layers.main(["--write"], root=root, doc=doc) == 1
    assert doc.read_text() == "# Doc\n\nNo markers.\n"
    assert layers.doc_block(doc) is None
    doc.write_text(f"# Doc\n\n{layers.BEGIN}\nold\n{layers.END}\n\nAfter.\n")
    assert layers.main(["--write"], root=root, doc=doc) == 0
    assert layers.doc_block(doc) == layers.fenced(root)
    assert doc.read_text().startswith(f"# Doc\n\n{layers.BEGIN}\n```text\nLayers of jittape")
    assert doc.read_text().endswith(f"```\n{layers.END}\n\nAfter.\n")


# -- the closers of main's import cycles, put back into a copy of the real tree --------------
#: (module file, import written inside a function there): each closed a cycle on main
#: (5d672a6) or imports upward; the checker must refuse every one of them again.
CLOSERS = [
    ("optable/callpool.py", "from .table import OPS"),  # callpool.kind_of importing the table
    ("optable/rules/checkpoint.py", "from ...custom.checkpoint import checkpoint_loop"),
    ("optable/rules/custom.py", "from ...custom.custom_rules import custom_vjp"),  # specs
    ("sweeps/opsets.py", "from . import warmup"),  # sweeps <-> warmjobs
    ("tape/arrays.py", "from ..sweeps.regions import reverse"),  # TapeArrays.reverse
    ("derivatives/second_order.py", "from ..api.tape import record"),  # vs Tape.hvp
    ("numpy/ufuncs.py", "from ..scipy.special import install"),  # ufuncs -> scipy_special
]


@pytest.mark.parametrize("module, statement", CLOSERS, ids=[c[0] for c in CLOSERS])
def test_each_closer_of_mains_cycles_is_refused(tmp_path, module, statement):
    import shutil
    root = tmp_path / "jittape"
    shutil.copytree(layers.ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    assert not layers.problems(root), "the copy of the real tree must be clean to start with"
    path = root / module
    path.write_text(path.read_text() + f"\n\ndef _closer():\n    {statement}\n")
    graph = layers.import_graph(root)
    found = layers.module_cycles(graph) or layers.upward_imports(graph)
    assert found, f"{statement} in {module} was not reported"
