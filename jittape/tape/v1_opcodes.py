"""The opcode table of tape format version 1, frozen: version-1 files store raw opcodes
(positions in the op table when they were written) and no op names, so a version-1 file is
read through this list (:func:`jittape.tape.file.read`). Never edit it: version 2 files carry
their own op names."""

#: ``V1_NAMES[code]``: the op a version-1 file means by opcode ``code``.
V1_NAMES = (
    "input", "const", "neg", "abs", "exp", "log", "sqrt", "square", "sin", "cos", "tan", "tanh",
    "sinh", "cosh", "arcsin", "arccos", "arctan", "log1p", "expm1", "stopgrad", "addc", "mulc",
    "divc", "rsubc", "rdivc", "powc", "rpowc", "add", "sub", "mul", "div", "pow", "arctan2",
    "maximum", "minimum", "lt", "le", "gt", "ge", "eq", "ne", "where", "slice", "gather", "concat",
    "sum", "prod", "max", "min", "matmul", "guard", "argmax", "argmin", "exp2", "log2", "log10",
    "cbrt", "arcsinh", "arccosh", "arctanh", "expit", "erf", "erfc", "gammaln", "digamma",
    "log_ndtr", "sign", "floor", "ceil", "rint", "trunc", "logaddexp", "logaddexp2", "hypot",
    "fmax", "fmin", "xlogy", "cumsum", "cumprod", "sort", "inv", "solve", "slogdet", "cholesky",
    "eigh", "fmod", "remainder", "copysign", "floordiv", "interp", "correlate", "gamma", "rgamma",
    "polygamma", "multigammaln", "beta", "betaln", "gammainc", "gammaincc", "betainc", "betaincc",
    "erfinv", "erfcinv", "erfcx", "ndtr", "ndtri", "logit", "log_expit", "entr", "rel_entr",
    "xlog1py", "spence", "j0", "j1", "y0", "y1", "i0", "i1", "i0e", "i1e", "k0", "k1", "k0e",
    "k1e", "jv", "yv", "yn", "iv", "ive", "kv", "kve", "svd", "qr", "pinv", "expm", "strided",
    "custom_arg", "custom_begin", "custom_slot", "custom_vjp", "custom_jvp", "checkpoint_loop",
    "checkpoint",
)
