"""Graphs of tapes and traced sweeps (jittape.explain.dot, jittape.explain.trace): the DOT text
parses and shows the
tape, loops collapse, and the traces end where the real sweeps do."""

import re
import sys

import numpy as np
import pytest

import jittape
from jittape.ops import operands

pydot = pytest.importorskip("pydot")


def graph(text):
    (g,) = pydot.graph_from_dot_data(text)
    nodes = {n.get_name(): n for n in g.get_nodes() if n.get_name() not in ("node", "edge",
                                                                          "graph")}
    edges = [(e.get_source(), e.get_destination()) for e in g.get_edges()]
    return nodes, edges


def label(node):
    return node.get_label().strip('"')


def f_readme(x):
    y = np.sin(x[0]) * x[1]
    return np.sum(y + x[1] ** 2)


X2 = np.array([[1.0, 2.0], [0.5, -1.0]])


# --- DOT ----------------------------------------------------------------------------------
def test_dot_has_a_node_per_record_and_an_edge_per_operand():
    tape = jittape.record(lambda x: np.sum(x * x) + np.prod(np.maximum(x, 0.5)), X2)
    t = tape.arrays
    nodes, edges = graph(tape.to_dot())
    assert sorted(nodes) == sorted(f"v{i}" for i in range(t.n_records))
    want = sorted((f"v{j}", f"v{i}") for i in range(t.n_records) for j in operands(t, i))
    assert sorted(edges) == want  # x * x: two edges from x
    for i in range(t.n_records):
        assert label(nodes[f"v{i}"]).startswith(f"v{i} ")


def test_dot_marks_inputs_and_output_and_shows_values():
    tape = jittape.record(f_readme, X2)
    nodes, _ = graph(tape.to_dot())
    assert nodes["v0"].get_shape().strip('"') == "invhouse"
    assert label(nodes["v0"]).startswith("v0 x\\n(2, 2) [1, 2, 0.5, ...]")
    out = nodes[f"v{tape.out_id}"]
    assert out.get("peripheries").strip('"') == "2"
    assert "0.7614" in label(out)  # %.4g of the value
    others = [n for name, n in nodes.items() if name not in ("v0", f"v{tape.out_id}")]
    assert all(n.get("peripheries") is None and n.get_shape() is None for n in others)


def test_dot_of_several_inputs_names_them():
    tape = jittape.record(lambda a, b: a * np.sum(b), 2.0, np.ones(3), argnums=(0, 1))
    nodes, _ = graph(tape.to_dot())
    names = [label(nodes[f"v{i}"]).split("\\n")[0] for i in tape.arrays.inputs]
    assert names == [f"v{tape.arrays.inputs[0]} x0", f"v{tape.arrays.inputs[1]} x1"]


def test_dot_adjoints_are_the_gradient():
    tape = jittape.record(f_readme, X2)
    x = X2 + 0.25
    nodes, _ = graph(tape.to_dot(x, adjoints=True))
    g = tape.gradient(x).ravel()
    assert f"adj [{g[0]:.4g}, {g[1]:.4g}, {g[2]:.4g}, ...]" in label(nodes["v0"])
    assert "adj 1" in label(nodes[f"v{tape.out_id}"])
    assert "adj" not in tape.to_dot()


def test_dot_adjoints_of_a_vector_output_need_a_cotangent():
    tape = jittape.record(lambda x: np.sin(x) * 2.0, np.arange(3.0))
    with pytest.raises(jittape.NonScalarOutputError):
        tape.to_dot(adjoints=True)
    nodes, _ = graph(tape.to_dot(cotangent=np.array([1.0, 0.0, 0.0])))
    assert "adj [2, 0, 0]" in label(nodes["v0"])  # cos(0) * 2


def lj_loops(x):
    e = 0.0
    n = x.shape[0] // 3
    for i in range(n):
        for j in range(i + 1, n):
            r2 = ((x[3 * i] - x[3 * j]) ** 2 + (x[3 * i + 1] - x[3 * j + 1]) ** 2
                  + (x[3 * i + 2] - x[3 * j + 2]) ** 2)
            ir6 = 1.0 / (r2 * r2 * r2)
            e = e + 4.0 * (ir6 * ir6 - ir6)
    return e


def test_a_10000_record_loop_collapses_to_one_node_with_its_count():
    def f(x):
        s = 0.0
        for i in range(2500):
            s = s + np.sin(x[i % 5]) * x[(i + 1) % 5]
        return s
    tape = jittape.record(f, np.linspace(0.1, 0.5, 5))
    assert tape.n_records == 12500
    nodes, edges = graph(tape.to_dot())
    assert len(nodes) <= 12
    loops = [label(n) for name, n in nodes.items() if name.startswith("loop")]
    assert len(loops) == 1
    length, reps = map(int, re.search(r"body of (\d+) records x (\d+) rep", loops[0]).groups())
    assert length * reps + len(nodes) - 1 == tape.n_records  # every record drawn once
    assert reps >= 2490
    assert ("v0", "loop0") in edges
    full = tape.to_dot(max_nodes=20000)  # (too long for pydot's parser: 1 MB)
    assert len(re.findall(r"^  v\d+ \[label=", full, re.M)) == tape.n_records


def test_lj38_written_with_loops_renders_as_a_few_dozen_nodes():
    from jittape.demo import lj_energy_loops  # benchmarks/problems/lj.py's loop form
    tape = jittape.record(lj_energy_loops, np.random.default_rng(0).uniform(0, 3, 3 * 38))
    assert tape.n_records > 10000
    nodes, _ = graph(tape.to_dot(adjoints=True))
    assert len(nodes) < 40
    (loop,) = [label(n) for name, n in nodes.items() if name.startswith("loop")]
    length, reps, start, stop, between = map(int, re.search(
        r"body of (\d+) records x (\d+) rep.*records v(\d+) to v(\d+) \(37 runs, "
        r"(\d+) records between", loop).groups())
    assert reps == 38 * 37 // 2 - 1  # every pair but the first, which adds to 0.0
    assert length * reps + between == stop - start + 1
    assert len(nodes) - 1 + stop - start + 1 == tape.n_records


# --- render -------------------------------------------------------------------------------
def test_render_without_the_graphviz_package_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz raises ImportError
    tape = jittape.record(f_readme, X2)
    with pytest.raises(ImportError, match=r"pip install 'jittape\[graph\]'"):
        tape.render(tmp_path / "t.svg")


def test_render_without_dot_says_so(monkeypatch, tmp_path):
    pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot program there
    tape = jittape.record(f_readme, X2)
    with pytest.raises(RuntimeError, match="dot program"):
        tape.render(tmp_path / "t.svg")


def test_render_writes_svg(tmp_path):
    pytest.importorskip("graphviz")
    import shutil
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed")
    tape = jittape.record(f_readme, X2)
    path = tape.render(tmp_path / "t.svg", adjoints=True)
    assert path.read_text().lstrip().startswith("<?xml") and "sin(v1)" in path.read_text()


# --- traces -------------------------------------------------------------------------------
CASES = {
    "scalar": (lambda x: np.sin(x) * x + np.exp(x) / x, 0.7),
    "array": (lambda x: np.sum(np.tanh(x) * x ** 2 - x * x), np.linspace(-1, 1, 5)),
    "reductions, broadcasts": (
        lambda x: np.sum((x[:, None] - x[None, :]) ** 2 * np.arange(4.0))
        + np.max(x) * np.mean(x) + np.prod(np.cumsum(x)[1:]) + np.sum(np.mean(x) * x),
        np.array([0.3, -0.2, 0.9, 0.4])),
    "select, maximum": (lambda x: np.sum(np.where(x > 0, x ** 2, -x) + np.maximum(x, 0.1)),
                        np.array([0.5, -0.3, 0.2])),
    "linear algebra": (
        lambda a: np.linalg.slogdet(a)[1] + np.sum(np.linalg.solve(a, np.ones(3)))
        + np.trace(a @ a.T @ np.linalg.inv(a + 3 * np.eye(3))),
        np.array([[2.0, 0.3, 0.1], [0.2, 1.5, -0.4], [0.0, 0.6, 2.5]])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_trace_ends_with_the_gradient(name):
    f, x0 = CASES[name]
    tape = jittape.record(f, x0)
    x = np.asarray(x0) * 1.1
    trace = tape.trace_gradient(x)
    g = tape.gradient(x)
    assert np.array_equal(trace.gradient, g), (trace.gradient, g)  # the same sweep, bit for bit
    assert trace.value == tape.value(x)
    assert len(trace) == len(list(trace)) and trace[0].record == tape.out_id
    assert f"v{tape.out_id}" in str(trace).splitlines()[2]
    # each step's contributions are its adjoint times its rule: the trace's table adds up
    adj = {tape.out_id: np.asarray(trace[0].adjoint)}
    for s in trace:
        assert np.allclose(s.adjoint, adj[s.record], rtol=1e-12, atol=1e-300)
        for j, c in s.contributions:
            adj[j] = adj.get(j, 0.0) + np.asarray(c)
    assert np.allclose(adj[tape.arrays.inputs[0]].reshape(np.shape(g)), g, rtol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_trace_jvp_ends_with_the_jvp(name):
    f, x0 = CASES[name]
    tape = jittape.record(f, x0)
    v = np.cos(np.arange(np.size(x0)) + 1.0).reshape(np.shape(x0))
    v = float(v) if np.ndim(x0) == 0 else v
    trace = tape.trace_jvp(x0, tangents=v)
    assert np.array_equal(trace.tangent, tape.jvp(x0, tangents=v)[1])
    assert trace[-1].record == tape.out_id and trace[-1].tangent == trace.tangent
    assert trace.value == tape.value(x0)


def test_trace_rows_name_the_op_table_rules():
    from jittape.ops import BY_NAME
    tape = jittape.record(f_readme, X2)
    trace = tape.trace_gradient()  # at the recorded point
    by_op = {s.op: s for s in trace}
    assert set(by_op) == {"sum", "add", "square", "slice", "mul", "sin"}
    for name, s in by_op.items():
        assert s.rule == BY_NAME[name].rule
    sin = by_op["sin"]
    assert sin.operation == "sin(v1)" and sin.contributions[0][0] == 1
    assert np.array_equal(sin.contributions[0][1], sin.adjoint * np.cos(X2[0]))
    text = str(trace)
    assert "xbar += zbar * cos(x)" in text and "v0.flat[2:4] += [1, -2]" in text
    assert "\ngradient wrt x (adjoint of v0): [[0.27015, 0.41615],\n" in text
    jvp = tape.trace_jvp(tangents=np.ones((2, 2)))
    assert {s.op: s.rule for s in jvp}["sin"] == "zdot = xdot * cos(x)"
    assert {s.op: s.rule for s in jvp}["mul"] == "zdot = xdot * y + ydot * x"


def test_trace_of_several_inputs_a_cotangent_and_a_repeated_operand():
    tape = jittape.record(lambda a, b: np.sin(a * a) * b, 0.3, np.array([1.0, 2.0]),
                          argnums=(0, 1))
    c = np.array([0.5, -1.0])
    trace = tape.trace_gradient(0.4, np.array([2.0, 3.0]), cotangent=c)
    want = tape.vjp((0.4, np.array([2.0, 3.0])), c)[1]
    assert all(np.array_equal(a, b) for a, b in zip(trace.gradient, want))
    (sq,) = [s for s in trace if s.operation == f"mul(v{tape.arrays.inputs[0]}, "
             f"v{tape.arrays.inputs[0]})"]
    assert len(sq.contributions) == 1  # a * a: one operand, both partials added
    with pytest.raises(jittape.NonScalarOutputError):
        tape.trace_gradient(0.4, np.ones(2))
    with pytest.raises(ValueError, match="cotangent shape"):
        tape.trace_gradient(0.4, np.ones(2), cotangent=np.ones(3))


def test_trace_of_a_constant_output():
    tape = jittape.record(lambda x: 3.0 + 0 * np.sum(jittape.primal(x)), np.ones(2))
    trace = tape.trace_gradient(np.ones(2))
    assert len(trace) == 0 and np.array_equal(trace.gradient, np.zeros(2))
    assert "output (a constant: no record)" in str(trace)
    assert len(tape.trace_jvp(np.ones(2), tangents=np.ones(2))) == 0
    assert len(graph(tape.to_dot(adjoints=True))[0]) == tape.n_records


def test_no_contribution_to_a_select_condition():
    tape = jittape.record(lambda x: np.sum(np.where(x > 0, x, 2 * x)), np.array([1.0, -2.0]))
    (sel,) = [s for s in tape.trace_gradient() if s.op == "where"]
    cond = int(tape.arrays.k[sel.record])
    assert cond not in [j for j, _ in sel.contributions] and len(sel.contributions) == 2
    (sel,) = [s for s in tape.trace_jvp(tangents=np.ones(2)) if s.op == "where"]
    assert cond not in [j for j, _ in sel.tangents]
    nodes, edges = graph(tape.to_dot())
    assert (f"v{cond}", f"v{sel.record}") in edges  # drawn all the same, labelled q


def test_trace_of_a_long_loop_tape():
    tape = jittape.record(lj_loops, np.random.default_rng(1).uniform(0, 3, 3 * 6))
    x = np.random.default_rng(2).uniform(0, 3, 3 * 6)
    tape.compile()  # its fused kernel rounds its own way: close, not bit for bit
    trace = tape.trace_gradient(x)
    assert np.allclose(trace.gradient, tape.gradient(x), rtol=1e-12)


# --- README -------------------------------------------------------------------------------
def test_readme_trace_example_prints_what_the_readme_shows(capsys):
    from pathlib import Path
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("## How a gradient is computed, step by step", 1)[1]
    code, shown = re.search(r"```python\n(.*?)```\s*```text\n(.*?)```", section, re.S).groups()
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out == shown, "README.md's trace is stale: paste the new output"


def test_command_line_dot_and_trace(capsys):
    from jittape.__main__ import main
    assert main(["dot"]) == 0
    nodes, edges = graph(capsys.readouterr().out)
    assert len(nodes) == 8 and ("v0", "v1") in edges
    assert main(["trace"]) == 0
    assert "gradient wrt x (adjoint of v0): [2.6342, 1.0975]" in capsys.readouterr().out


def test_command_line_version(capsys):
    import jittape
    from jittape.__main__ import main
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"jittape {jittape.__version__}"
