"""Scope and failure category of each autograd test run against jittape.

A test is **out of scope** when it exercises what jittape does not set out to do: complex
numbers, autograd's own machinery (custom primitives, wrapper names, its ``np.where`` wrapper),
or an autograd function with no jittape equivalent. The shim raises ``OutOfScope`` with the
reason when a test reaches such a feature; :data:`STATIC_OUT_OF_SCOPE` names the few tests that
exercise autograd itself without reaching the shim. Everything else is in scope, and a failure
falls in one category of :data:`CATEGORIES`, worst first.
"""

import re

PASS = "pass"
WRONG_VALUE = "wrong value"
WRONG_GRADIENT = "wrong gradient"
NOT_SUPPORTED = "not supported (clear error)"
CONVERSION = "not supported (conversion error that names no function)"
CRASH = "crash/unclear error"
CATEGORIES = [WRONG_VALUE, WRONG_GRADIENT, CRASH, CONVERSION, NOT_SUPPORTED]

ORDER2 = "needs order 2"
COMPLEX = "complex numbers"
AUTOGRAD_ONLY = "autograd-specific feature"
INVALID = "test does not run on plain NumPy/SciPy"

STATIC_OUT_OF_SCOPE = {
    "test_numpy.py::test_numpy_version":
        "autograd.numpy's __version__ (autograd.numpy is NumPy itself here)",
    "test_wrappers.py::test_custom_where_dtypes":
        "autograd's own np.where wrapper: Python scalars where NumPy returns NumPy scalars "
        "(no differentiation)",
    "test_wrappers.py::test_custom_where":
        "autograd's own np.where wrapper: keyword arguments NumPy's where does not take "
        "(no differentiation)",
    "test_wrappers.py::test_wrapped_name_and_docs": "names and docstrings of autograd's wrappers",
}

# autograd's API as the shim maps it (reported with the results)
FEATURES = [
    ("grad, value_and_grad, jacobian",
     "jittape.grad / value_and_grad / jacobian (argnum -> argnums)"),
    ("elementwise_grad, make_vjp", "jittape.record(f, ..., argnums).vjp"),
    ("make_jvp", "jittape.jvp"),
    ("tensor_jacobian_product, vector_jacobian_product",
     "jittape.jacobian of tensordot(V, f(x)) (autograd's definition)"),
    ("test_util.check_grads, combo_check, check_equivalent",
     "the harness's checks (agsuite_checks): value, jittape.value_and_grad, record().vjp, jvp"),
    ("util.quick_grad_check", "the harness's reverse-mode check"),
    ("tracer.isbox, getval", "isinstance(x, jittape's active type), jittape.primal"),
    ("tuple, list, dict (containers)", "Python's tuple, list, dict"),
    ("autograd.numpy, .numpy.random, .numpy.linalg, .numpy.fft", "NumPy's modules"),
    ("numpy.make_diagonal, numpy.linalg.T, numpy.linalg._dot",
     "autograd-only helpers, written in NumPy by the shim"),
    ("autograd.scipy.special / stats / integrate / linalg", "SciPy's modules"),
    ("scipy.signal.convolve", "scipy.signal.convolve; autograd's axes=/dot_axes= have no "
                              "equivalent (out of scope)"),
    ("hessian, hessian_tensor_product, make_hvp, make_ggnvp",
     "autograd's definitions over the mapped grad / jacobian / make_vjp (nested in jittape)"),
    ("grad_and_aux", "none: jittape.grad has no has_aux, out of scope"),
    ("checkpoint", "none (tapes keep every value), out of scope"),
    ("holomorphic_grad, complex inputs", "none: jittape is real-valued, out of scope"),
    ("primitive, defvjp, defjvp, defgrad", "none: no API for user-defined derivative rules, "
                                            "out of scope"),
    ("numpy.numpy_boxes, numpy_vspaces, core.vspace, VSpace",
     "none: autograd internals (not used by these five files except through check_grads)"),
]


def classify(row):
    """``(in_scope, category, detail)`` of one test's JSON row from the plugin."""
    base = row["nodeid"].split("[")[0]
    if base in STATIC_OUT_OF_SCOPE:
        return False, AUTOGRAD_ONLY, STATIC_OUT_OF_SCOPE[base]
    st, mro, msg = row["state"], row.get("exc_mro", []), row.get("message", "")
    real_work = st["checks"] > 0 or st["jittape_calls"] > 0
    if row["outcome"] == "passed":
        if not real_work and st["complex_skipped"]:
            return False, COMPLEX, "every check has complex inputs or outputs"
        return True, PASS, _pass_notes(st)
    if "OutOfScope" in mro:
        if msg.startswith("complex") and real_work:
            return True, PASS, "real-valued parts pass; the rest is complex (not run)"
        if "second derivatives" in msg:
            return False, ORDER2, msg
        return False, COMPLEX if msg.startswith("complex") else AUTOGRAD_ONLY, msg
    if "ReferenceFailure" in mro:
        return False, INVALID, msg
    if "WrongValue" in mro:
        return True, WRONG_VALUE, msg
    if "AssertionError" in mro:
        return True, WRONG_GRADIENT, msg
    if "ActiveConversionError" in mro:
        return True, CONVERSION, msg
    if "JittapeError" in mro:
        return True, NOT_SUPPORTED, msg
    return True, CRASH, msg


def _pass_notes(st):
    notes = []
    if st["order2"]:
        notes.append("order 2 requested, checked at order 1")
    if st.get("order2_checked"):
        notes.append("order 2 checked")
    if st["complex_skipped"]:
        notes.append(f"{st['complex_skipped']} complex check(s) not run")
    if st["structured"]:
        notes.append(f"{st['structured']} tuple/list output(s) checked concatenated")
    if not st["checks"] and not st["jittape_calls"]:
        notes.append("no differentiation")
    return "; ".join(notes)


_PATTERNS = [
    (r"^third derivatives through nested", lambda m: "third derivatives (order 3 of nesting)"),
    (r"^second derivatives through (\w+)", lambda m: f"second derivatives of {m.group(1)}"),
    (r"^ufunc (\w+) \(not NumPy's", lambda m: f"scipy.special.{m.group(1)}"),
    (r"^(?:np|numpy)\.linalg\.(\w+) of a stack of matrices", lambda m: f"np.linalg.{m.group(1)} "
                                                                       "of stacked matrices"),
    (r"^np\.linalg\.norm with ord='nuc'", lambda m: "np.linalg.norm(ord='nuc') (singular values)"),
    (r"^([\w.]+) has no derivative rule", lambda m: m.group(1)),
]


def feature(row):
    """What a failing in-scope test needs, as a short name (for grouping)."""
    msg = row.get("message", "")
    for pattern, name in _PATTERNS:
        m = re.match(pattern, msg)
        if m:
            return name(m)
    conversion = "ActiveConversionError" in row.get("exc_mro", [])
    m = re.search(r"site-packages/((?:numpy|scipy)/[\w/]+)\.py:\d+ \((\w+)\)",
                  row.get("entry", ""))
    if m:
        name = _public(m.group(1).replace("/", "."), m.group(2))
        return f"conversion to ndarray in {name}" if conversion else \
            f"{row.get('exc_type')} in {name}"
    check = row["state"].get("last_check", "")
    what = check.split("(")[0] if check else ""
    if what in ("", "fun", "<lambda>") and row.get("caller_line"):
        what = f"`{row['caller_line']}`"
    what = what or row["nodeid"].split("::")[-1]
    return f"conversion to ndarray in {what}" if conversion else \
        f"{row.get('exc_type')} in {what}"


def _public(module, func):
    """A library function by its public name: np.mean, scipy.stats.cdf, np.r_/np.c_."""
    if "index_tricks" in module:
        return "np.r_ / np.c_ (numpy.lib.index_tricks)"
    parts = [p for p in module.split(".") if not p.startswith("_")]
    if parts[0] == "numpy":
        sub = [p for p in parts[1:] if p in ("linalg", "fft", "random")]
        return ".".join(["np"] + sub + [func])
    return ".".join(parts[:2] + [func])
