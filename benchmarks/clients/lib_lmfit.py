"""lmfit: every line shape of ``lmfit.lineshapes`` and the built-in models' ``Model.eval``.

The objective is ``np.sum(shape(x, *params) ** 2)`` (every form of ``step``, ``rectangle``
and ``thermal_distribution``), differentiated with respect to the parameter vector on a
fixed grid, against central differences (lmfit has no analytic derivatives). The models
are evaluated two ways: ``model.eval(x=x, **dict(zip(model.param_names, p)))``, and through
a ``Parameters`` object whose values are set from ``p`` (``params[name].value = p_i``, then
``model.eval(params, x=x)``), as a user of lmfit's fitting API would write it.
"""

import numpy as np

from benchmarks.clients.harness import Case, Problem

LIBRARY = "lmfit"
X = np.linspace(0.1, 5.0, 60)
Y = np.linspace(-1.0, 2.0, 60)
PEAK = dict(amplitude=2.0, center=1.5, sigma=0.8)
#: parameter values of each line shape (the x grid is X)
SHAPES = {
    "gaussian": PEAK, "lorentzian": PEAK, "logistic": PEAK, "students_t": PEAK,
    "gaussian2d": dict(amplitude=2.0, centerx=1.5, centery=0.5, sigmax=0.8, sigmay=0.6),
    "voigt": dict(PEAK, gamma=0.6), "pvoigt": dict(PEAK, fraction=0.3),
    "moffat": dict(PEAK, beta=1.5), "pearson4": dict(PEAK, expon=1.5, skew=0.5),
    "pearson7": dict(PEAK, expon=1.5), "breit_wigner": dict(PEAK, q=1.2),
    "damped_oscillator": dict(amplitude=2.0, center=1.5, sigma=0.3),
    "dho": dict(PEAK, gamma=0.8), "lognormal": dict(amplitude=2.0, center=0.3, sigma=0.6),
    "expgaussian": dict(PEAK, gamma=1.2), "doniach": dict(PEAK, gamma=0.3),
    "skewed_gaussian": dict(PEAK, gamma=0.7), "skewed_voigt": dict(PEAK, gamma=0.6, skew=0.7),
    "thermal_distribution": dict(amplitude=2.0, center=-0.5, kt=0.9),
    "bose": dict(amplitude=2.0, center=-0.5, kt=0.9),
    "fermi": dict(amplitude=2.0, center=1.5, kt=0.4),
    "step": dict(amplitude=2.0, center=1.5, sigma=1.3),
    "rectangle": dict(amplitude=2.0, center1=1.2, sigma1=0.5, center2=3.3, sigma2=0.7),
    "exponential": dict(amplitude=2.0, decay=1.7), "powerlaw": dict(amplitude=2.0, exponent=1.3),
    "linear": dict(slope=0.7, intercept=-0.4), "parabolic": dict(a=0.3, b=-0.6, c=0.8),
    "sine": dict(amplitude=2.0, frequency=1.3, shift=0.4),
    "expsine": dict(amplitude=2.0, frequency=1.3, shift=0.4, decay=0.3),
    "split_lorentzian": dict(PEAK, sigma_r=1.4),
}
FORMS = {"step": ("linear", "atan", "erf", "logistic"),
         "rectangle": ("linear", "atan", "erf", "logistic"),
         "thermal_distribution": ("bose", "maxwell", "fermi")}
#: built-in models: class name -> (constructor keyword arguments, parameter values)
MODELS = {
    "GaussianModel": {}, "LorentzianModel": {}, "VoigtModel": {}, "PseudoVoigtModel": {},
    "MoffatModel": {}, "Pearson4Model": {}, "Pearson7Model": {}, "BreitWignerModel": {},
    "DampedOscillatorModel": {}, "DampedHarmonicOscillatorModel": {}, "LognormalModel": {},
    "StudentsTModel": {}, "ExponentialGaussianModel": {}, "DoniachModel": {},
    "SkewedGaussianModel": {}, "SkewedVoigtModel": {}, "SplitLorentzianModel": {},
    "ThermalDistributionModel": dict(form="bose"), "BoseModel": {}, "FermiModel": {},
    "StepModel": dict(form="erf"), "RectangleModel": dict(form="atan"),
    "ExponentialModel": {}, "PowerLawModel": {}, "LinearModel": {}, "ParabolicModel": {},
    "QuadraticModel": {}, "SineModel": {}, "ConstantModel": {},
    "PolynomialModel": dict(degree=3), "Gaussian2dModel": {},
    "ExpressionModel": dict(expr="amp * exp(-x / tau) + off"),
}
EXTRA_VALUES = dict(c=0.7, c0=0.3, c1=-0.2, c2=0.1, c3=0.05, amp=2.0, tau=1.4, off=0.2)
QUICK = {"gaussian", "lorentzian", "voigt", "step-erf", "exponential", "GaussianModel/kwargs",
         "StepModel/kwargs", "GaussianModel/parameters"}


def _shape_problem(name, form):
    import lmfit.lineshapes as L
    fn = getattr(L, name)
    keys = list(SHAPES[name])
    p0 = np.array([SHAPES[name][k] for k in keys], dtype=float)
    extra = {} if form is None else dict(form=form)
    if name == "gaussian2d":
        extra["y"] = Y

    def f(p):
        return np.sum(fn(X, **dict(zip(keys, p)), **extra) ** 2)
    return Problem(f, p0, p0 * 1.01)


def _model(name):
    import lmfit.models as M
    kw = MODELS[name]
    if name == "ExpressionModel":
        return M.ExpressionModel(kw["expr"])
    return getattr(M, name)(**kw)


def _values(model):
    func = getattr(model.func, "__name__", "")
    table = dict(SHAPES.get(func, {}), **EXTRA_VALUES)
    return [name for name in model.param_names
            if not (model.param_hints.get(name, {}).get("expr"))], table


def _model_problem(name, style):
    model = _model(name)
    names, table = _values(model)
    p0 = np.array([table.get(n, 1.0) for n in names], dtype=float)
    ind = dict(x=X, y=Y) if "y" in model.independent_vars else dict(x=X)
    if style == "kwargs":
        def f(p):
            return np.sum(model.eval(x=ind["x"], **{k: v for k, v in ind.items() if k != "x"},
                                     **dict(zip(names, p))) ** 2)
    else:
        params = model.make_params(**{n: v for n, v in zip(names, p0)})

        def f(p):
            for n, v in zip(names, p):
                params[n].value = v
            return np.sum(model.eval(params, **ind) ** 2)
    return Problem(f, p0, p0 * 1.01)


def cases():
    out = []
    for name in SHAPES:
        for form in FORMS.get(name, (None,)):
            cname = name if form is None else f"{name}-{form}"
            out.append(Case(LIBRARY, f"lmfit/lineshape/{cname}",
                            lambda n=name, f=form: _shape_problem(n, f),
                            quick=cname in QUICK, group="lineshapes", check=cname))
    for name in MODELS:
        for style in ("kwargs", "parameters"):
            out.append(Case(LIBRARY, f"lmfit/model/{name}/{style}",
                            lambda n=name, s=style: _model_problem(n, s),
                            quick=f"{name}/{style}" in QUICK, group="Model.eval",
                            check=f"{name}/{style}"))
    return out
