"""Figures of a fitted BARK strategy: which inputs matter, the response over two inputs, the
run's progress, the Pareto front of two outputs and the chains' traces.

Every function returns a matplotlib ``Axes`` or ``Figure`` and never calls ``plt.show``: the
figures are built on ``matplotlib.figure.Figure`` (no pyplot state, any backend), so a script
saves them with ``fig.savefig`` and a notebook shows the returned figure. Pass ``ax=`` (or
``fig=``) to draw into your own.

matplotlib is optional: ``pip install ".[plots]"`` in a clone of bofire-bark (part of
``[dev]``); it is imported when a function is called, so ``import bofire_bark.plots`` costs
nothing without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from bofire.data_models.features.api import ContinuousInput, DiscreteInput
from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective

PLOTS_EXTRA = 'pip install ".[plots]" in a clone of bofire-bark (or pip install matplotlib)'
TRACE_VARS = ("log_marginal_likelihood", "noise_var", "leaves_per_tree")

if TYPE_CHECKING:  # annotations only: matplotlib stays optional
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from bofire_bark.strategy import BARKStrategy
    from bofire_bark.surrogate import BARKSurrogate


def _figure(**kwargs):
    """A new pyplot-free ``Figure`` (no global state, never shown by us)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(f"bofire_bark.plots needs matplotlib: {PLOTS_EXTRA}") from None
    return Figure(**kwargs)


def _model(source, output: str | None):
    """The ``BARKSurrogate`` of ``output`` in a strategy, or the surrogate itself."""
    if hasattr(source, "model_of"):
        return source.model_of(output)
    if hasattr(source, "feature_relevance") and hasattr(source, "outputs"):
        key = source.outputs.get_keys()[0]
        if output not in (None, key):
            raise ValueError(f"output: this surrogate models {key!r}, not {output!r}")
        return source
    raise TypeError(f"source: expected a BARKStrategy or BARKSurrogate, got "
                    f"{type(source).__name__}")


def _direction(strategy, output: str) -> float:
    """+1 to maximize ``output``, -1 to minimize it."""
    feature = strategy.domain.outputs.get_by_key(output)
    if isinstance(feature.objective, MaximizeObjective):
        return 1.0
    if isinstance(feature.objective, MinimizeObjective):
        return -1.0
    raise ValueError(f"output: {output!r} has no Maximize or Minimize objective "
                     f"({type(feature.objective).__name__}), so it has no 'best'")


def _valid(strategy, output: str) -> pd.DataFrame:
    """The strategy's experiments with a valid measurement of ``output``, in told order."""
    if strategy.experiments is None or not len(strategy.experiments):
        raise RuntimeError("the strategy has no experiments: tell it some first")
    return strategy.domain.outputs.preprocess_experiments_one_valid_output(
        output, strategy.experiments)


def plot_relevance(source: BARKStrategy | BARKSurrogate | pd.DataFrame,
                   output: str | None = None, detail: bool = False, top: int | None = None,
                   ax: Axes | None = None) -> Axes:
    """Horizontal bars of input relevance with their 90 % intervals, most relevant on top.

    Args:
        source: A fitted ``BARKStrategy`` or ``BARKSurrogate``, or a frame from
            ``feature_relevance``.
        output: The output's model (strategy only; default: the first goal declared).
        detail: One bar per descriptor or fingerprint bit (labelled with its substructure
            where known) instead of one per input.
        top: Only the ``top`` most relevant rows.
        ax: Axes to draw into; default a new figure's.

    Returns:
        The ``Axes``: one bar per row, split probability under the sparse prior, else the
        share of splits.
    """
    if isinstance(source, pd.DataFrame):
        rel = source
    else:
        rel = _model(source, output).feature_relevance(detail=detail)
    if top is not None:
        if top < 1:
            raise ValueError(f"top: must be at least 1, got {top}")
        rel = rel.head(top)
    measure = "split_prob" if rel["split_prob"].notna().any() else "split_share"
    if ax is None:
        ax = _figure(figsize=(6.0, 1.0 + 0.35 * len(rel))).subplots()
    pos = np.arange(len(rel))[::-1]
    mean = rel[measure].to_numpy(dtype=float)
    err = np.vstack([mean - rel[f"{measure}_q05"], rel[f"{measure}_q95"] - mean])
    ax.barh(pos, mean, xerr=np.clip(err, 0.0, None), color="tab:blue", alpha=0.8,
            error_kw={"ecolor": "black", "capsize": 3})
    labels = [str(i) for i in rel.index]
    if "substructure" in rel:
        labels = [lab if not isinstance(s, str) else f"{lab}  {s.split(' | ')[0]}"
                  for lab, s in zip(labels, rel["substructure"], strict=True)]
    ax.set_yticks(pos, labels)
    ax.set_xlim(0.0, max(1.0, float(np.nanmax(rel[f"{measure}_q95"], initial=0.0))))
    ax.set_xlabel(("split probability" if measure == "split_prob" else "share of splits")
                  + " (posterior mean, 90 % interval)")
    ax.set_title("Which inputs the forest uses")
    ax.figure.tight_layout()
    return ax


def _axis_values(feature, n: int) -> np.ndarray:
    if isinstance(feature, ContinuousInput):
        lo, hi = feature.bounds
        return np.linspace(lo, hi, n)
    if isinstance(feature, DiscreteInput):
        return np.sort(np.asarray(feature.values, dtype=float))
    raise ValueError(f"x, y: input {feature.key!r} is {type(feature).__name__}; the response "
                     "is drawn over continuous or discrete inputs (fix categorical ones with "
                     "fixed=)")


def _reference_point(strategy, output: str) -> pd.Series:
    """The inputs of the best valid experiment of ``output`` (the last one for an output
    without a Maximize/Minimize objective)."""
    data = _valid(strategy, output)
    try:
        sign = _direction(strategy, output)
    except ValueError:
        return data.iloc[-1]
    return data.loc[(sign * data[output]).idxmax()]


def plot_response(strategy: BARKStrategy, x: str, y: str, output: str | None = None,
                  fixed: Mapping[str, Any] | None = None, n: int = 40,
                  fig: Figure | None = None) -> Figure:
    """The posterior mean and standard deviation of ``output`` over inputs ``x`` and ``y``,
    the other inputs fixed, with the domain's constraints drawn.

    Args:
        strategy: A fitted ``BARKStrategy``.
        x: A continuous or discrete input (a discrete one takes its values), across.
        y: Another, up.
        output: The output (default: the first goal declared).
        fixed: Values of the other inputs; those not given take the values of the best
            valid experiment of ``output``.
        n: Grid points per continuous input.
        fig: Figure to draw into (its two first axes); default a new one.

    Returns:
        The ``Figure``: left the mean, right the standard deviation (``pcolormesh``, one cell
        per grid point: ``(len(y values), len(x values))``); points where the domain's
        constraints fail (BoFire's ``constraints.is_fulfilled`` at the fixed values) are
        hatched with their boundary drawn; the measured points are shown.
    """
    if x == y:
        raise ValueError(f"x, y: need two different inputs, got {x!r} twice")
    if n < 2:
        raise ValueError(f"n: at least 2 grid points per input, got {n}")
    model = _model(strategy, output)
    output = model.outputs.get_keys()[0]
    inputs = strategy.domain.inputs
    keys = inputs.get_keys()
    for name, key in (("x", x), ("y", y)):
        if key not in keys:
            raise ValueError(f"{name}: {key!r} is not an input; inputs: {keys}")
    fixed = dict(fixed or {})
    unknown = sorted(set(fixed) - set(keys))
    if unknown:
        raise ValueError(f"fixed: {unknown} are not inputs; inputs: {keys}")
    xs = _axis_values(inputs.get_by_key(x), n)
    ys = _axis_values(inputs.get_by_key(y), n)
    gx, gy = np.meshgrid(xs, ys)
    ref = _reference_point(strategy, output)
    grid = pd.DataFrame({k: fixed.get(k, ref[k]) for k in keys if k not in (x, y)},
                        index=range(gx.size))
    grid[x], grid[y] = gx.ravel(), gy.ravel()
    grid = grid[keys]
    pred = model.predict(grid)
    mean = pred[f"{output}_pred"].to_numpy().reshape(gx.shape)
    sd = pred[f"{output}_sd"].to_numpy().reshape(gx.shape)
    feasible = np.ones(gx.size, dtype=bool)
    if len(strategy.domain.constraints):
        feasible = strategy.domain.constraints.is_fulfilled(grid).to_numpy(dtype=bool)
    feasible = feasible.reshape(gx.shape)
    if fig is None:
        fig = _figure(figsize=(10.0, 4.2))
        fig.subplots(1, 2)
    data = _valid(strategy, output)
    others = ", ".join(f"{k}={v:.3g}" if isinstance(v, int | float | np.floating) else
                       f"{k}={v}" for k, v in grid.iloc[0].items() if k not in (x, y))
    for ax, values, label in zip(fig.axes[:2], (mean, sd),
                                 (f"{output}: posterior mean", f"{output}: posterior sd"),
                                 strict=True):
        mesh = ax.pcolormesh(gx, gy, values, shading="nearest", cmap="viridis")
        fig.colorbar(mesh, ax=ax)
        if not feasible.all():
            # hatched where a constraint fails; the 0.5 level is the boundary
            ax.contourf(gx, gy, (~feasible).astype(float), levels=[0.5, 1.5], colors="none",
                        hatches=["//"])
            if feasible.any():
                ax.contour(gx, gy, feasible.astype(float), levels=[0.5], colors="red",
                           linewidths=1.5)
        ax.scatter(data[x], data[y], c="white", edgecolors="black", s=18, label="measured")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(label)
    if others:
        fig.suptitle(f"other inputs: {others}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_progress(strategy: BARKStrategy, output: str | None = None,
                  n_initial: int | None = None, ax: Axes | None = None) -> Axes:
    """Every valid measurement of ``output`` in the order told, and the best so far.

    Args:
        strategy: A ``BARKStrategy`` with experiments.
        output: A Maximize or Minimize output (default: the first goal declared).
        n_initial: How many experiments were the initial design: a line after them.
        ax: Axes to draw into; default a new figure's.

    Returns:
        The ``Axes``; its line labelled ``"best so far"`` is the running max (min for a
        Minimize objective) against the experiment number, 1 to N.
    """
    output = _model(strategy, output).outputs.get_keys()[0]
    sign = _direction(strategy, output)
    data = _valid(strategy, output)
    values = data[output].to_numpy(dtype=float)
    best = sign * np.maximum.accumulate(sign * values)
    number = np.arange(1, len(values) + 1)
    if ax is None:
        ax = _figure(figsize=(6.0, 4.0)).subplots()
    ax.scatter(number, values, s=14, color="grey", label="measured")
    ax.step(number, best, where="post", color="tab:blue", label="best so far")
    if n_initial is not None:
        ax.axvline(n_initial + 0.5, color="black", linestyle=":", label="initial design")
    ax.set_xlabel("experiment")
    ax.set_ylabel(f"{output} ({'max' if sign > 0 else 'min'}imize)")
    ax.legend()
    ax.figure.tight_layout()
    return ax


def pareto_mask(values: np.ndarray, signs: Sequence[float]) -> np.ndarray:
    """(n,) bool: the rows of ``values`` (n, k) that no other row dominates, each column
    maximized if its sign is +1 and minimized if -1 (ties: both rows are kept)."""
    v = np.asarray(values, dtype=float) * np.asarray(signs, dtype=float)
    at_least = (v[:, None, :] >= v[None, :, :]).all(axis=2)  # [i, j]: i >= j everywhere
    better = (v[:, None, :] > v[None, :, :]).any(axis=2)
    dominated = (at_least & better).any(axis=0)  # some i dominates j
    return ~dominated


def plot_pareto(strategy: BARKStrategy, outputs: Sequence[str] | None = None,
                ax: Axes | None = None) -> Axes:
    """The measured points of two outputs with their Pareto front.

    Args:
        strategy: A ``BARKStrategy`` with experiments.
        outputs: Two Maximize/Minimize outputs (default: the first two goals declared).
        ax: Axes to draw into; default a new figure's.

    Returns:
        The ``Axes``; the scatter labelled ``"Pareto front"`` holds the non-dominated rows
        among those valid in both outputs, joined by a step line.
    """
    if outputs is None:
        outputs = [f.key for f in strategy.domain.outputs.features
                   if isinstance(f.objective, MaximizeObjective | MinimizeObjective)][:2]
    outputs = list(outputs)
    if len(outputs) != 2:
        raise ValueError(f"outputs: need two outputs with Maximize/Minimize objectives, got "
                         f"{outputs}")
    a, b = outputs
    signs = [_direction(strategy, a), _direction(strategy, b)]
    data = _valid(strategy, a)
    data = data[data.index.isin(_valid(strategy, b).index)]
    values = data[[a, b]].to_numpy(dtype=float)
    front = pareto_mask(values, signs)
    if ax is None:
        ax = _figure(figsize=(5.5, 4.5)).subplots()
    ax.scatter(values[~front, 0], values[~front, 1], s=14, color="grey", label="measured")
    ax.scatter(values[front, 0], values[front, 1], s=30, color="tab:red", label="Pareto front")
    f = values[front][np.argsort(values[front, 0])]
    # the edge of the dominated region: between two front points it is at the level of the
    # one that is better in the first output (the right one when it is maximized)
    ax.step(f[:, 0], f[:, 1], where="pre" if signs[0] > 0 else "post", color="tab:red",
            alpha=0.6)
    ax.set_xlabel(f"{a} ({'max' if signs[0] > 0 else 'min'}imize)")
    ax.set_ylabel(f"{b} ({'max' if signs[1] > 0 else 'min'}imize)")
    ax.legend()
    ax.figure.tight_layout()
    return ax


def plot_traces(source: BARKStrategy | BARKSurrogate, output: str | None = None,
                var_names: Sequence[str] = TRACE_VARS, fig: Figure | None = None) -> Figure:
    """ArviZ's trace plot of an output's chains: per quantity its density by chain (left)
    and its trace over the sweeps after burn-in (right).

    Args:
        source: A fitted ``BARKStrategy`` or ``BARKSurrogate``.
        output: The output's model (strategy only; default: the first goal declared).
        var_names: Quantities of ``BARKSurrogate.to_inference_data`` (``split_prob`` and
            ``split_share`` are per input).
        fig: Figure to draw into; default a new one.

    Returns:
        The ``Figure``, with ``len(var_names)`` rows of two axes.
    """
    model = _model(source, output)
    idata = model.to_inference_data()
    var_names = list(var_names)
    missing = [v for v in var_names if v not in idata.posterior]
    if missing:
        raise ValueError(f"var_names: {missing} not in the traces; available: "
                         f"{list(idata.posterior.data_vars)}")
    from bofire_bark.diagnostics import _arviz

    az = _arviz()
    if fig is None:
        fig = _figure(figsize=(9.0, 2.2 * len(var_names)))
    axes = fig.subplots(len(var_names), 2, squeeze=False)
    az.plot_trace(idata, var_names=var_names, axes=axes, show=False)
    fig.suptitle(f"BARK '{model.outputs.get_keys()[0]}': chains after burn-in")
    fig.tight_layout()
    return fig


__all__ = ["pareto_mask", "plot_pareto", "plot_progress", "plot_relevance", "plot_response",
           "plot_traces"]
