"""docs/ops.md is generated from the op table and must match it."""

from pathlib import Path

from jittape.functions import UFUNC_HANDLERS
from jittape.docs import _name, ops_markdown
from jittape.functions import FUNCTIONS
from jittape.ops import OPS

DOC = Path(__file__).resolve().parent.parent / "docs" / "ops.md"


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
