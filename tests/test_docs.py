"""The docs are checked like code.

* docs/ops.md is generated from the op table and must match it.
* Every Python example in README.md and on the docs site's pages runs: each page's
  ```` ```python ```` blocks are executed in order in one namespace, in a fresh interpreter
  (so an example that registers an op cannot touch the other tests). A block whose first
  line is ``# requires <module>`` is skipped where that module is not installed. A block
  with a ``title="jittape/<file>.py"`` quotes that file instead: its text (pieces separated
  by ``...`` lines) must occur in the file verbatim, so a quote cannot go stale.
* The site builds with ``mkdocs build --strict``, the documented command: a broken link or
  anchor, an API reference to an object that does not exist, a docstring that does not match its
  function, or any other warning fails it. The build never imports jittape or its heavy
  dependencies (the API pages are read from the source), and the checker itself is tested on
  broken pages.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jittape.numpy.all_handlers import UFUNC_HANDLERS
from jittape.explain.ops_page import _name, ops_markdown
from jittape.numpy.all_handlers import FUNCTIONS
from jittape.ops import OPS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ops.md"
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)
TITLE = re.compile(r'title="([^"]+)"')


def test_ops_page_is_up_to_date():
    assert DOC.read_text() == ops_markdown(), (
        "docs/ops.md is stale: run `python -m jittape ops --markdown > docs/ops.md`")


def test_every_opcode_and_function_is_listed():
    text = ops_markdown()
    for s in OPS:
        assert f'id="op-{s.name}"' in text
    import numpy as np
    for f in [f for f in UFUNC_HANDLERS if getattr(np, f.__name__, None) is f] + \
            list(FUNCTIONS):
        assert f"| `{_name(f)}` |" in text, _name(f)
    assert "<lambda>" not in text


# --- examples ------------------------------------------------------------------------------
def code_blocks(text):
    """``(language, info, first line number, body)`` of each fenced block of Markdown."""
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start(3)) + 1
        yield m.group(1), m.group(2), line, m.group(3)


def examples(page):
    """The runnable examples of a page: ``[(first line, source), ...]``."""
    return [(line, body) for lang, info, line, body in code_blocks(page.read_text())
            if lang == "python" and not TITLE.search(info)]


def quotes(page):
    """The quotes of jittape's files on a page: ``[(file, first line, text), ...]``."""
    return [(TITLE.search(info).group(1), line, body)
            for lang, info, line, body in code_blocks(page.read_text())
            if lang == "python" and TITLE.search(info)]


# runs one page's examples: argv = the JSON list of (line, source), the page's path
_RUNNER = r"""
import importlib.util, json, re, sys
blocks, page = json.load(open(sys.argv[1])), sys.argv[2]
namespace = {"__name__": "__main__"}
for line, source in blocks:
    need = re.match(r"# requires (\w+)", source)
    if need and importlib.util.find_spec(need.group(1)) is None:
        print(f"{page}:{line}: skipped, {need.group(1)} is not installed")
        continue
    # padded so that a traceback gives the page's own line numbers
    exec(compile("\n" * (line - 1) + source, page, "exec"), namespace)
"""

_WITH_EXAMPLES = [p for p in PAGES if examples(p)]


@pytest.mark.parametrize("page", _WITH_EXAMPLES,
                         ids=[str(p.relative_to(ROOT)) for p in _WITH_EXAMPLES])
def test_examples_run(page, tmp_path):
    blocks = tmp_path / "blocks.json"
    blocks.write_text(json.dumps(examples(page)))
    env = dict(os.environ, JITTAPE_QUIET="1",
               PYTHONPATH=os.pathsep.join([str(ROOT)] + os.environ.get("PYTHONPATH", "").split(
                   os.pathsep)).rstrip(os.pathsep))
    run = subprocess.run([sys.executable, "-c", _RUNNER, str(blocks), str(page)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"an example failed:\n{run.stdout[-3000:]}{run.stderr[-6000:]}"


def test_pages_have_examples():
    """The examples test does not pass by finding nothing to run."""
    names = {p.relative_to(ROOT).as_posix() for p in _WITH_EXAMPLES}
    assert {"README.md", "docs/index.md", "docs/guides/how-it-works.md",
            "docs/guides/replay-and-guards.md", "docs/guides/second-order-and-sparsity.md",
            "docs/guides/optimization.md", "docs/guides/extending.md",
            "docs/guides/dask.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_quotes_match_the_source(page):
    for name, line, text in quotes(page):
        source = (ROOT / name).read_text()
        for piece in re.split(r"^[ \t]*\.\.\.[ \t]*\n", text, flags=re.M):
            assert piece in source, (f"{page.name}:{line}: the quote of {name} is not in the "
                                     f"file (any more):\n{piece}")


# --- the site ------------------------------------------------------------------------------
# `mkdocs build` with the imports the build must never need refused: mkdocstrings reads the
# API from the source, so neither jittape nor NumPy, Numba, SciPy or the optional extras load
_BUILD = r"""
import sys
for name in ("jittape", "numpy", "numba", "scipy", "cyipopt", "dask"):
    sys.modules[name] = None
from mkdocs.__main__ import cli
cli()
"""


def build(config, site, cwd=ROOT):
    """Run ``mkdocs build --strict`` of ``config`` into ``site``: the completed process."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-c", _BUILD, "build", "--strict", "-f",
                           str(config), "-d", str(site)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _require_mkdocs():
    import importlib.util
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail('mkdocs is not installed: python -m pip install -e ".[test]"')


def test_site_builds_strict(tmp_path):
    _require_mkdocs()
    run = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout}{run.stderr}"
    site = tmp_path / "site"
    ops = (site / "ops" / "index.html").read_text()
    assert 'id="op-sin"' in ops  # the generated op page is part of the site
    api = (site / "api" / "differentiation" / "index.html").read_text()
    assert 'id="jittape.value_and_grad"' in api and "NonScalarOutputError" in api
    for html in site.rglob("*.html"):  # every Sphinx role became a link or code
        assert not re.search(r":(func|class|meth|mod|data):`", html.read_text()), html


# a docstring that documents a parameter its function does not have
_BAD_DOCSTRING = '''
def f(x):
    """One line.

    Parameters
    ----------
    y : float
        Not a parameter of f.
    """
'''


@pytest.mark.parametrize("page, error", [
    ("See [the guide](guides/no-such-page.md).", "no-such-page.md"),
    ("See [sin](ops.md#op-no-such-op).", "op-no-such-op"),
    ("::: jittape.no_such_function", "jittape.no_such_function"),
    ("See [grad][jittape.no_such_function].", "jittape.no_such_function"),
    ("::: brokendoc.f", "does not appear in the function signature"),
], ids=["link", "anchor", "api", "crossref", "docstring"])
def test_a_broken_page_fails_the_build(tmp_path, page, error):
    """The checker is checked: each kind of breakage fails the strict build."""
    _require_mkdocs()
    import yaml  # PyYAML: mkdocs reads its configuration with it
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(f"# Broken\n\n{page}\n")
    (docs / "ops.md").write_text(DOC.read_text())
    plugin = next(p for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    python = plugin["mkdocstrings"]["handlers"]["python"]
    python["paths"] = [str(ROOT), str(tmp_path)]
    (tmp_path / "brokendoc.py").write_text(_BAD_DOCSTRING)
    python["options"]["extensions"] = [str(ROOT / e) for e in python["options"]["extensions"]]
    config.update(docs_dir=str(docs), nav=["index.md", "ops.md"])
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    run = build(tmp_path / "mkdocs.yml", tmp_path / "site", cwd=tmp_path)
    assert run.returncode != 0 and error in run.stdout + run.stderr, run.stdout + run.stderr
