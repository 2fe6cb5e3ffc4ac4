"""SciPy's own C special functions, called by name from generated Numba code.

Rules may call ``cs_<name>(...)``: SciPy's float64 kernel of ``scipy.special.<name>``, the
very code the ufunc runs, so a replayed value equals SciPy's bit for bit. SciPy exports these
kernels as C function pointers in ``scipy.special.cython_special.__pyx_capi__`` (PyCapsules
named by their C signature; Cython's ``cpdef`` functions take a trailing ``int``
``skip_dispatch`` argument, passed as 0).

How they reach Numba without breaking its disk cache (measured, Numba 0.68): a ``ctypes``
pointer is lowered as an address constant, a "dynamic global", and a function using one is
never cached ("Cannot cache ... as it uses dynamic globals"). Instead a generated module
registers each kernel's address with LLVM under a fixed symbol name (``jittape_cs_<name>``,
:func:`bind`, called when the module is imported) and declares it as a
``numba.types.ExternalFunction`` of that name: the machine code calls the symbol, which the
cached code is linked against again in every process, so ``cache=True`` works (a second
process loads everything and compiles nothing; tests/test_special.py checks it).

The price: a module that names a ``cs_`` function imports ``scipy.special`` (about 0.15 s)
when it is imported. Generating sources never imports SciPy; importing jittape neither.

Complex kernels (``wofz``, ``loggamma``, ``psi`` of a complex argument: helpers
``cz_<name>(re, im)`` of :data:`COMPLEX`, returning a complex number) are called the same way,
by symbol (``jittape_cz_<name>``), through a Numba intrinsic that declares the C function as
LLVM sees ``double complex f(double complex, int)`` on the 64-bit Unix ABIs (x86-64 System V,
AArch64): the two parts passed as two doubles, the result returned as a ``{double, double}``
pair (what clang emits for it). Numba's ``ExternalFunction`` takes scalar types only. Windows
passes complex numbers by reference: there :func:`bind_complex` refuses (a clear error, no
wrong values).

SciPy's private ufuncs over Boost's distributions (``scipy.special._ufuncs._beta_pdf``, which
``scipy.stats.beta`` calls) have no ``cython_special`` export; ``scipy.special._ufuncs_cxx``
holds their addresses for the ufuncs' loops (:data:`BOOST`, helpers ``cb_<name>``), checked
against the ufunc at a probe point before they are registered (``jittape_cb_<name>``).

LAPACK drivers that Numba's ``np.linalg`` does not expose with every option (``syevd`` on
the upper triangle, for ``np.linalg.eigh(a, UPLO='U')``; ``gesdd`` without vectors; ``qr``'s
complete mode) are called the same way, through the C entry points of Numba's own helper
library (``numba_ez_xxxevd``, ..., registered with LLVM by Numba itself): helpers
``lapack_<name>`` of :data:`LAPACK`, declared by symbol name. Each is called with NumPy's
own choice of driver and options, so a replay reproduces NumPy's values bit for bit.
"""

import numpy as np

#: helper name -> (cython_special name, number of float64 arguments); the result is float64.
EXTERNALS = {f"cs_{name}": (name, nargs) for name, nargs in (
    ("gamma", 1), ("rgamma", 1), ("psi", 1), ("gammaln", 1), ("gammainc", 2),
    ("gammaincc", 2), ("beta", 2), ("betaln", 2), ("betainc", 3), ("betaincc", 3),
    ("erfinv", 1), ("erfcinv", 1), ("erfcx", 1), ("ndtr", 1), ("ndtri", 1), ("logit", 1),
    ("log_expit", 1), ("entr", 1), ("rel_entr", 2), ("xlog1py", 2), ("spence", 1),
    ("i0", 1), ("i1", 1), ("i0e", 1), ("i1e", 1), ("k0", 1), ("k1", 1), ("k0e", 1),
    ("k1e", 1), ("j0", 1), ("j1", 1), ("y0", 1), ("y1", 1), ("iv", 2), ("ive", 2),
    ("jv", 2), ("jve", 2), ("yv", 2), ("yve", 2), ("yn", 2), ("kv", 2), ("kve", 2),
    # (jittape.optable.rules.special_more)
    ("log1p", 1), ("expm1", 1), ("cosm1", 1), ("exprel", 1), ("loggamma", 1),
    ("log_ndtr", 1), ("ndtri_exp", 1), ("erfi", 1), ("dawsn", 1), ("exp1", 1),
    ("expi", 1), ("boxcox", 2), ("boxcox1p", 2), ("inv_boxcox", 2), ("inv_boxcox1p", 2),
    ("powm1", 2), ("kl_div", 2), ("huber", 2), ("pseudo_huber", 2), ("owens_t", 2),
    ("stdtr", 2), ("stdtrit", 2), ("chdtr", 2), ("chdtrc", 2), ("chdtri", 2), ("pdtr", 2),
    ("pdtrc", 2), ("gammaincinv", 2), ("gammainccinv", 2), ("fdtr", 3), ("fdtrc", 3),
    ("betaincinv", 3), ("betainccinv", 3), ("chndtr", 3), ("log_wright_bessel", 3),
    ("wright_bessel", 3), ("tklmbda", 2), ("poch", 2))}
#: helper name -> cython_special name of a complex kernel ``complex f(complex)``, called as
#: ``cz_<name>(re, im)`` (the argument's parts); the result is a complex number.
COMPLEX = {f"cz_{name}": name for name in ("wofz", "loggamma", "psi")}
#: helper name -> (name, number of float64 arguments) of a kernel of SciPy's private ufuncs
#: ``scipy.special._ufuncs._<name>`` (Boost's distributions, which ``scipy.stats`` calls):
#: ``scipy.special._ufuncs_cxx`` exports each as a variable ``_export_<name>_double`` holding
#: the address of ``double <name>_double(double, ...)``. Not public: :func:`boost_address`
#: checks a probe value against the ufunc before any rule uses one.
BOOST = {f"cb_{name}": (name, nargs) for name, nargs in (("beta_pdf", 3), ("ncx2_pdf", 3),
                                                         ("ncx2_sf", 3))}
#: The names of every SciPy kernel a rule may call: :data:`EXTERNALS`, :data:`COMPLEX` and
#: :data:`BOOST`.
KERNELS = frozenset(EXTERNALS) | frozenset(COMPLEX) | frozenset(BOOST)

#: helper name -> (Numba helper-library symbol, result type, argument types; ``*``: pointer)
LAPACK = {
    # syevd(kind, jobz, uplo, n, a (Fortran order, overwritten by V), lda, w)
    "lapack_syevd": ("numba_ez_xxxevd", "intc",
                     ("char", "char", "char", "intp", "float64*", "intp", "float64*")),
    # gesdd(kind, jobz, m, n, a, lda, s, u, ldu, vt, ldvt): NumPy's svd
    "lapack_gesdd": ("numba_ez_gesdd", "intc", ("char", "char", "intp", "intp", "float64*",
                                                "intp", "float64*", "float64*", "intp",
                                                "float64*", "intp")),
    # geev(kind, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr): NumPy's eig, eigvals
    "lapack_geev": ("numba_ez_rgeev", "intc", ("char", "char", "char", "intp", "float64*",
                                               "intp", "float64*", "float64*", "float64*",
                                               "intp", "float64*", "intp")),
    # geqrf(kind, m, n, a, lda, tau) and orgqr(kind, m, n, k, a, lda, tau): NumPy's qr
    "lapack_geqrf": ("numba_ez_geqrf", "intc", ("char", "intp", "intp", "float64*", "intp",
                                                "float64*")),
    "lapack_orgqr": ("numba_ez_xxgqr", "intc", ("char", "intp", "intp", "intp", "float64*",
                                                "intp", "float64*")),
}


#: BLAS through Numba's own binding of SciPy's (the routines Numba's ``np.dot`` calls), so that
#: the products compile without ``np.dot``'s per-layout implementations (the reverse part of
#: ``matmul`` took 3.9 s to compile through four of them) and give the bits ``np.dot`` gave.
#: Same form as :data:`LAPACK`; the interpreted tier runs :func:`py_blas_gemm` and
#: :func:`py_blas_gemv` instead (column-major, as BLAS: Fortran's ``dgemm``, ``dgemv``).
BLAS = {
    # gemm(kind, transa, transb, m, n, k, alpha*, a*, lda, b*, ldb, beta*, c*, ldc)
    "blas_gemm": ("numba_xxgemm", "intc", ("char", "char", "char", "intp", "intp", "intp",
                                           "float64*", "float64*", "intp", "float64*", "intp",
                                           "float64*", "float64*", "intp")),
    # gemv(kind, trans, m, n, alpha*, a*, lda, x*, beta*, y*): unit strides
    "blas_gemv": ("numba_xxgemv", "intc", ("char", "char", "intp", "intp", "float64*",
                                           "float64*", "intp", "float64*", "float64*",
                                           "float64*")),
}
#: Every external called by symbol: LAPACK drivers and BLAS routines.
BY_SYMBOL = {**LAPACK, **BLAS}
#: LAPACK drivers the interpreted tier runs too (``py_<name>``, SciPy's binding of the same
#: routine); a sweep calling another one waits for its compiled form.
INTERPRETED_LAPACK = frozenset({"lapack_geev", "lapack_syevd", "lapack_gesdd",
                                "lapack_geqrf", "lapack_orgqr"})


def _colmajor(ptr, rows, cols, ld):
    """The column-major ``(rows, cols)`` matrix of leading dimension ``ld`` at ``ptr`` (an
    array's ``ctypes`` attribute, as the interpreted tier passes it), as a strided view."""
    import ctypes
    if rows == 0 or cols == 0:
        return np.zeros((rows, cols))
    n = ld * (cols - 1) + rows
    flat = np.ctypeslib.as_array(ctypes.cast(ptr.data, ctypes.POINTER(ctypes.c_double)), (n,))
    return np.lib.stride_tricks.as_strided(flat, (rows, cols), (8, 8 * ld))


def _scalar(ptr):
    return float(_colmajor(ptr, 1, 1, 1)[0, 0])


def py_blas_gemm(kind, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """:data:`BLAS`'s ``gemm`` in NumPy: ``C = alpha op(A) op(B) + beta C`` (``beta`` 0:
    ``C`` not read). Computed as its row-major transpose ``C^T = op(B)^T op(A)^T``, the
    product of the C-ordered blocks the compiled kernels name, so that NumPy makes the same
    BLAS call on them and both tiers give the same bits."""
    ta, tb = transa in (84, 116), transb in (84, 116)  # 'T', 't'
    opa = _colmajor(a, k, m, lda).T if ta else _colmajor(a, m, k, lda)
    opb = _colmajor(b, n, k, ldb).T if tb else _colmajor(b, k, n, ldb)
    out = _colmajor(c, m, n, ldc)
    bet = _scalar(beta)
    prod = opb.T @ opa.T
    out.T[...] = _scalar(alpha) * prod + (bet * out.T if bet != 0.0 else 0.0)
    return 0


def py_lapack_geev(kind, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr):
    """:data:`LAPACK`'s ``geev`` through SciPy's binding of the same routine (right
    eigenvectors only, ``jobvl`` 'N'), with the optimal workspace as Numba's helper asks
    for it, so the interpreted tier gives the compiled tier's bits without compiling."""
    from scipy.linalg import lapack
    if n == 0:
        return 0
    mat = np.array(_colmajor(a, n, n, lda))
    vectors = jobvr == 86  # 'V'
    lwork = int(lapack.dgeev_lwork(n, compute_vl=0, compute_vr=int(vectors))[0])
    w_re, w_im, _, v, info = lapack.dgeev(mat, compute_vl=0, compute_vr=int(vectors),
                                          lwork=max(lwork, 1))
    _colmajor(wr, n, 1, n)[:, 0] = w_re
    _colmajor(wi, n, 1, n)[:, 0] = w_im
    if vectors:
        _colmajor(vr, n, n, ldvr)[...] = v
    return info


def py_lapack_syevd(kind, jobz, uplo, n, a, lda, w):
    """:data:`LAPACK`'s ``syevd`` (eigenvalues and vectors of the ``uplo`` triangle)
    through SciPy's binding, with the optimal workspaces as Numba's helper asks for them."""
    from scipy.linalg import lapack
    if n == 0:
        return 0
    mat = _colmajor(a, n, n, lda)
    lower = int(uplo == 76)  # 'L'
    lwork, liwork = lapack.dsyevd_lwork(n, compute_v=1, lower=lower)[:2]
    vals, vecs, info = lapack.dsyevd(np.array(mat), compute_v=1, lower=lower,
                                     lwork=int(lwork), liwork=int(liwork))
    _colmajor(w, n, 1, n)[:, 0] = vals
    mat[...] = vecs
    return info


def py_lapack_gesdd(kind, jobz, m, n, a, lda, s, u, ldu, vt, ldvt):
    """:data:`LAPACK`'s ``gesdd`` (NumPy's svd: jobz 'N' values, 'S' reduced, 'A' full)
    through SciPy's binding, with the optimal workspace."""
    from scipy.linalg import lapack
    kk = min(m, n)
    if kk == 0:
        return 0
    uv, full = int(jobz != 78), int(jobz == 65)
    lwork = int(lapack.dgesdd_lwork(m, n, compute_uv=uv, full_matrices=full)[0])
    uu, ss, vv, info = lapack.dgesdd(np.array(_colmajor(a, m, n, lda)), compute_uv=uv,
                                     full_matrices=full, lwork=max(lwork, 1))
    _colmajor(s, kk, 1, kk)[:, 0] = ss
    if uv:
        _colmajor(u, m, uu.shape[1], ldu)[...] = uu
        _colmajor(vt, vv.shape[0], n, ldvt)[...] = vv
    return info


def py_lapack_geqrf(kind, m, n, a, lda, tau):
    """:data:`LAPACK`'s ``geqrf`` (Householder QR, NumPy's qr) through SciPy's binding:
    the reflectors overwrite ``a``, their scalars go to ``tau``."""
    from scipy.linalg import lapack
    kk = min(m, n)
    if kk == 0:
        return 0
    mat = _colmajor(a, m, n, lda)
    lwork = int(lapack.dgeqrf_lwork(m, n)[0])
    qr, t, _, info = lapack.dgeqrf(np.array(mat), lwork=max(lwork, 1))
    mat[...] = qr
    _colmajor(tau, kk, 1, kk)[:, 0] = t
    return info


def py_lapack_orgqr(kind, m, n, k, a, lda, tau):
    """:data:`LAPACK`'s ``orgqr``: the first ``n`` columns of Q from ``k`` reflectors."""
    from scipy.linalg import lapack
    if m == 0 or n == 0:
        return 0
    mat = _colmajor(a, m, n, lda)
    taus = np.array(_colmajor(tau, k, 1, k)[:, 0]) if k else np.zeros(0)
    work = lapack.dorgqr(np.array(mat), taus, lwork=-1)[1]  # the workspace query
    q, _, info = lapack.dorgqr(np.array(mat), taus, lwork=max(int(work[0]), 1))
    mat[...] = q
    return info


def py_blas_gemv(kind, trans, m, n, alpha, a, lda, x, beta, y):
    """:data:`BLAS`'s ``gemv`` in NumPy: ``y = alpha op(A) x + beta y``, as the product of
    the C-ordered block ``A^T`` (the compiled kernels' matrix) and the vector."""
    t = trans in (84, 116)
    rows = _colmajor(a, m, n, lda).T  # (n, m), C-ordered when lda == m
    xv = _colmajor(x, m if t else n, 1, max(m if t else n, 1))[:, 0]
    yv = _colmajor(y, n if t else m, 1, max(n if t else m, 1))[:, 0]
    prod = rows @ xv if t else xv @ rows
    bet = _scalar(beta)
    yv[...] = _scalar(alpha) * prod + (bet * yv if bet != 0.0 else 0.0)
    return 0


def _numba_type(name):
    return f"_nbt.CPointer(_nbt.{name[:-1]})" if name.endswith("*") else f"_nbt.{name}"


_bound = {}


def _capsule(cap):
    """(signature, pointer) of a PyCapsule."""
    import ctypes
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    sig = api.PyCapsule_GetName(cap)
    return sig.decode(), api.PyCapsule_GetPointer(cap, sig)


def address(name, nargs, complex_=False):
    """Address of cython_special's kernel ``double name(double x nargs, int)`` (with
    ``complex_``: ``double complex name(double complex, int)``).

    Fused functions (float, double, complex variants) are exported as ``__pyx_fuse_<i>name``;
    the one with the float64 (complex128) signature is found by its signature, not by its
    index.
    """
    from scipy.special import cython_special
    capi = cython_special.__pyx_capi__
    kind = "__pyx_t_double_complex" if complex_ else "double"
    want = f"{kind} (" + f"{kind}, " * nargs + "int __pyx_skip_dispatch)"
    for key in [name] + [f"__pyx_fuse_{i}{name}" for i in range(4)]:
        if key in capi:
            sig, ptr = _capsule(capi[key])
            if sig == want:
                return ptr
    raise ImportError(f"scipy.special.cython_special has no {want.replace('(', name + '(')} "
                      f"(SciPy changed its exports?); jittape's rules for {name} need it")


def _bind(symbol, find, name, nargs):
    """Register ``find(name, nargs)``, a kernel's address, under ``symbol`` (once)."""
    if symbol not in _bound:
        import llvmlite.binding as llvm
        llvm.add_symbol(symbol, find(name, nargs))
        _bound[symbol] = True
    return symbol


def bind(name, nargs):
    """Register the kernel's address under the symbol ``jittape_cs_<name>``; return it."""
    return _bind(f"jittape_cs_{name}", address, name, nargs)


def boost_address(name, nargs):
    """Address of ``double <name>_double(double x nargs)`` of ``scipy.special._ufuncs_cxx``
    (see :data:`BOOST`), after a call at probe arguments gave the value of SciPy's ufunc
    ``scipy.special._ufuncs._<name>`` there (ImportError if the export is missing or does
    not match)."""
    import ctypes
    from scipy.special import _ufuncs, _ufuncs_cxx
    key = f"_export_{name}_double"
    ufunc = getattr(_ufuncs, f"_{name}", None)
    if key not in getattr(_ufuncs_cxx, "__pyx_capi__", {}) or ufunc is None:
        raise ImportError(f"scipy.special._ufuncs_cxx exports no {key} (SciPy changed its "
                          f"private kernels?); jittape's rules for _{name} need it")
    ptr = ctypes.c_void_p.from_address(_capsule(_ufuncs_cxx.__pyx_capi__[key])[1]).value
    probe = (0.3, 2.5, 1.7, 0.9)[:nargs]
    call = ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_double] * nargs)(ptr)
    if call(*probe) != ufunc(*probe):
        raise ImportError(f"scipy.special._ufuncs_cxx.{key} does not compute "
                          f"scipy.special._ufuncs._{name}; jittape's rules for it need it")
    return ptr


def bind_boost(name, nargs):
    """Register :func:`boost_address` under the symbol ``jittape_cb_<name>``; return it."""
    return _bind(f"jittape_cb_{name}", boost_address, name, nargs)


#: Platforms whose C ABI passes a ``double complex`` as two doubles in registers and returns
#: it as a pair (x86-64 System V, AArch64), as :func:`complex_kernel` declares it.
COMPLEX_ABI = ("x86_64", "amd64", "arm64", "aarch64")


def bind_complex(name):
    """Register cython_special's complex kernel ``name`` under ``jittape_cz_<name>``; return
    the symbol. Refuses a platform whose C ABI :func:`complex_kernel` does not match."""
    import platform
    import sys
    if sys.platform == "win32" or platform.machine().lower() not in COMPLEX_ABI:
        raise NotImplementedError(
            f"jittape's compiled rules call scipy.special.{name} of a complex argument "
            f"through the C ABI of 64-bit Linux and macOS; on {sys.platform} "
            f"{platform.machine()} they are not available")
    return _bind(f"jittape_cz_{name}", lambda n, k: address(n, k, complex_=True), name, 1)


def complex_kernel(symbol):
    """A Numba intrinsic ``(re, im) -> complex`` calling the C function ``symbol`` of
    signature ``double complex (double complex, int)``, its argument passed as two doubles
    and its result taken as a ``{double, double}`` pair (the ABI of :data:`COMPLEX_ABI`)."""
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    def kernel(typingctx, re, im):
        def codegen(context, builder, signature, args):
            d = ir.DoubleType()
            fnty = ir.FunctionType(ir.LiteralStructType([d, d]), [d, d, ir.IntType(32)])
            fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
            res = builder.call(fn, [args[0], args[1], ir.Constant(ir.IntType(32), 0)])
            out = context.make_complex(builder, types.complex128)
            out.real = builder.extract_value(res, 0)
            out.imag = builder.extract_value(res, 1)
            return out._getvalue()
        return types.complex128(types.float64, types.float64), codegen
    kernel.__name__ = kernel.__qualname__ = symbol
    return intrinsic(kernel)


def source(names, decorator):
    """The lines of a generated module that declare the externals ``names`` (helper names
    from :data:`EXTERNALS`, each behind a jitted ``cs_<name>``, ``decorator`` its line, and
    from :data:`LAPACK`, each an external function of that name)."""
    if not names:
        return ""
    out = ["from numba import types as _nbt\nfrom jittape.optable.externals import bind as _bind"]
    for helper in sorted(n for n in names if n in BY_SYMBOL):
        symbol, result, args = BY_SYMBOL[helper]
        sig = f"{_numba_type(result)}({', '.join(map(_numba_type, args))})"
        out.append(f"{helper} = _nbt.ExternalFunction({symbol!r}, {sig})\n")
    if any(n in COMPLEX for n in names):
        out.append("from jittape.optable.externals import bind_complex as _bind_complex\n"
                   "from jittape.optable.externals import complex_kernel as _complex_kernel")
    for helper in sorted(n for n in names if n in COMPLEX):
        out.append(f"_{helper} = _complex_kernel(_bind_complex({COMPLEX[helper]!r}))\n\n\n"
                   f"{decorator}\ndef {helper}(x0, x1):\n    return _{helper}(x0, x1)\n")
    if any(n in BOOST for n in names):
        out.append("from jittape.optable.externals import bind_boost as _bind_boost")
    for helper in sorted(n for n in names if n in BOOST):
        name, nargs = BOOST[helper]
        params = ", ".join(f"x{i}" for i in range(nargs))
        sig = "_nbt.float64(" + ", ".join(["_nbt.float64"] * nargs) + ")"
        out.append(f"_{helper} = _nbt.ExternalFunction(_bind_boost({name!r}, {nargs}), {sig})"
                   f"\n\n\n{decorator}\ndef {helper}({params}):\n    return _{helper}({params})\n")
    for helper in sorted(n for n in names if n in EXTERNALS):
        name, nargs = EXTERNALS[helper]
        params = ", ".join(f"x{i}" for i in range(nargs))
        sig = "_nbt.float64(" + "_nbt.float64, " * nargs + "_nbt.intc)"
        out.append(f"_{helper} = _nbt.ExternalFunction(_bind({name!r}, {nargs}), {sig})\n\n\n"
                   f"{decorator}\ndef {helper}({params}):\n    return _{helper}({params}, 0)\n")
    return "\n\n".join(out)


def python_source(names):
    """The same names for the interpreted tier (:mod:`jittape.sweeps.tiers`): SciPy's ufuncs, which
    run the same C kernels on a float, so both tiers give the same bits."""
    blas = [n for n in sorted(names) if n in BLAS or n in INTERPRETED_LAPACK]
    cz = [n for n in sorted(names) if n in COMPLEX]
    cb = [n for n in sorted(names) if n in BOOST]
    names = [n for n in sorted(names) if n in EXTERNALS]  # other LAPACK drivers: compiled only
    out = "".join(f"from jittape.optable.externals import py_{n} as {n}\n" for n in blas)
    if names or cz:
        out += "import scipy.special as _sp\n" + "".join(
            f"{helper} = _sp.{EXTERNALS[helper][0]}\n" for helper in names)
        out += "".join(f"\n\ndef {helper}(x0, x1):\n    return complex(_sp.{COMPLEX[helper]}"
                       f"(complex(x0, x1)))\n" for helper in cz)
    if cb:
        out += "from scipy.special import _ufuncs as _spu\n" + "".join(
            f"{helper} = _spu._{BOOST[helper][0]}\n" for helper in cb)
    return out
