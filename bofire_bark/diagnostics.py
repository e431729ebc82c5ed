"""What a fitted BARK posterior says about its inputs and its chains.

- ``feature_relevance``: per input, the posterior of its split probability (sparse prior) and
  of its share of the forest's splits (either prior), from every sweep after burn-in.
- ``to_inference_data``: the chains' traces as an ArviZ ``InferenceData`` (chain, draw), so
  ``az.rhat``, ``az.ess``, ``az.summary`` and ``az.plot_trace`` work on them.
- ``convergence``: R-hat and bulk ESS of the log marginal likelihood and the noise variance,
  the quantities every sweep moves (the forest itself has no fixed-dimensional summary).

ArviZ is optional (``pip install bofire-bark[diagnostics]``): without it ``feature_relevance``
still works and ``convergence`` returns None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bofire_bark.engine import Posterior
from bofire_bark.engine.forest import split_variable_of
from bofire_bark.engine.sampler import TRACE_SCALARS

RHAT_WARN = 1.1  # the usual threshold (Gelman et al.); Vehtari et al. 2021 suggest 1.01
CONVERGENCE_VARS = ("log_marginal_likelihood", "noise_var")


def _arviz():
    """ArviZ, or None if it is not installed (its import-time notice about a coming refactor
    is not the user's concern, so it is silenced)."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            import arviz
    except ImportError:
        return None
    return arviz


def _trace_parts(posterior: Posterior) -> dict[str, np.ndarray]:
    """The traces split by quantity, (chains, draws[, inputs]), in the user's units."""
    tr = posterior.traces
    d = len(posterior.space.var_col)
    k = len(TRACE_SCALARS)
    n = len(posterior.y)
    loglik = tr[..., TRACE_SCALARS.index("log_likelihood")]
    # log N(y_std; 0, K) of the standardized outputs, with the 2 pi term the engine drops
    parts = {
        "log_marginal_likelihood": loglik - 0.5 * n * math.log(2.0 * math.pi),
        "noise_var": tr[..., TRACE_SCALARS.index("sigma2")] * posterior.y_std**2,
        "leaves_per_tree": tr[..., TRACE_SCALARS.index("leaves_per_tree")],
        "split_share": tr[..., k + d:],
    }
    if "split_prob" in posterior.samples:
        parts["split_concentration"] = tr[..., TRACE_SCALARS.index("split_concentration")]
        parts["split_prob"] = tr[..., k:k + d]
    return parts


def _sample_shares(posterior: Posterior) -> np.ndarray:
    """(S, V) share of each sample's splits on each split variable (NaN for a forest of
    stumps)."""
    var = split_variable_of(posterior.space, posterior.samples["feat"],
                            posterior.samples["thr"]).reshape(posterior.n_samples, -1)
    d = len(posterior.space.var_col)
    counts = np.stack([(var == v).sum(axis=1) for v in range(d)], axis=1).astype(float)
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / total, np.nan)


def feature_relevance(posterior: Posterior, names: list[str],
                      inputs: list[str] | None = None, detail: bool = False) -> pd.DataFrame:
    """How much the forest uses each input, most relevant first.

    Args:
        posterior: A fitted posterior.
        names: One name per split variable (``SplitSpace.split_variable_names``): the input's
            key, or ``key_descriptor`` for each descriptor (or fingerprint bit) of an input
            split by its descriptors.
        inputs: The input key of each split variable (``SplitSpace.split_variable_inputs``);
            None: every split variable is an input of its own.
        detail: One row per split variable (index ``split_variable``, with the ``input`` it
            belongs to) instead of one row per input (index ``input``), where an input's
            descriptors are summed draw by draw, so its interval is that of the sum.

    Returns:
        Columns ``split_prob`` (posterior mean of the probability that a split picks the
        row's variables, under the sparse prior) with its 90 % interval ``split_prob_q05`` /
        ``split_prob_q95``, NaN under the uniform prior (whose probabilities are fixed and
        equal); ``split_share`` (posterior mean share of the forest's splits on them) with
        ``split_share_q05`` / ``split_share_q95``; ``variables``, how many split variables
        the row covers. Draws: every sweep after burn-in of every chain (the kept samples
        for a prior-only fit). Sorted by ``split_prob`` under the sparse prior, else by
        ``split_share``.
    """
    d = len(posterior.space.var_col)
    names = list(names)
    if len(names) != d or (inputs is not None and len(inputs) != d):
        raise ValueError(f"names (and inputs) need one entry per split variable ({d}), got "
                         f"{len(names)}" + ("" if inputs is None else f" and {len(inputs)}"))
    inputs = names if inputs is None else list(inputs)
    if posterior.traces is not None:
        parts = _trace_parts(posterior)
        share = parts["split_share"].reshape(-1, d)
        prob = parts["split_prob"].reshape(-1, d) if "split_prob" in parts else None
    else:
        share = _sample_shares(posterior)
        prob = posterior.samples.get("split_prob")
    if detail:
        index = pd.Index(names, name="split_variable")
        groups = [[v] for v in range(d)]
    else:
        keys = list(dict.fromkeys(inputs))  # the inputs in column order
        index = pd.Index(keys, name="input")
        groups = [[v for v in range(d) if inputs[v] == key] for key in keys]
    rows = {}
    for label, draws in (("split_prob", prob), ("split_share", share)):
        if draws is None or np.isnan(draws).all():
            rows[label] = rows[f"{label}_q05"] = rows[f"{label}_q95"] = np.full(len(groups),
                                                                                  np.nan)
            continue
        # the sum per draw, so an input's interval is the interval of its total, not a sum
        # of its descriptors' intervals
        summed = np.stack([draws[:, g].sum(axis=1) for g in groups], axis=1)
        rows[label] = np.nanmean(summed, axis=0)
        rows[f"{label}_q05"], rows[f"{label}_q95"] = np.nanquantile(summed, [0.05, 0.95],
                                                                    axis=0)
    rows["variables"] = np.array([len(g) for g in groups])
    frame = pd.DataFrame(rows, index=index)
    if detail:
        frame.insert(0, "input", inputs)
    key = "split_prob" if prob is not None else "split_share"
    return frame.sort_values(key, ascending=False, kind="stable")


def to_inference_data(posterior: Posterior, names: list[str]):
    """The traces of ``posterior`` as an ArviZ ``InferenceData`` (needs arviz).

    Posterior group: ``log_marginal_likelihood`` (of the standardized outputs), ``noise_var``
    (the user's units), ``leaves_per_tree``, ``split_share`` (dim ``input``) and, under the
    sparse prior, ``split_concentration`` and ``split_prob`` (dim ``input``); one draw per
    sweep after burn-in.
    """
    az = _arviz()
    if az is None:
        raise ImportError("MCMC diagnostics need ArviZ: pip install 'bofire-bark[diagnostics]'")
    if posterior.traces is None:
        raise ValueError("this posterior has no chains (prior_only): nothing to diagnose")
    parts = _trace_parts(posterior)
    dims = {k: ["input"] for k in ("split_prob", "split_share") if k in parts}
    return az.from_dict(posterior=parts, coords={"input": list(names)}, dims=dims)


@dataclass(frozen=True)
class FitDiagnostics:
    """What one fit did and how well its chains agree, for a pipeline to log.

    ``sweeps``: sweeps each chain ran in this fit (burn-in and sampling); ``seconds``: wall
    time of the fit; ``rhat`` / ``ess_bulk``: per ``CONVERGENCE_VARS`` quantity (empty without
    ArviZ or for a prior-only fit); ``warned``: an R-hat above ``RHAT_WARN``.
    """

    n_points: int
    n_chains: int
    sweeps: int
    seconds: float
    rhat: dict = field(default_factory=dict)
    ess_bulk: dict = field(default_factory=dict)

    @property
    def warned(self) -> bool:
        return any(r > RHAT_WARN for r in self.rhat.values())


def convergence(posterior: Posterior) -> pd.DataFrame | None:
    """R-hat and bulk ESS of ``CONVERGENCE_VARS`` (rows), or None without ArviZ or chains."""
    az = _arviz()
    if posterior.traces is None or az is None:
        return None
    parts = _trace_parts(posterior)
    rows = {}
    for var in CONVERGENCE_VARS:
        draws = parts[var]
        rows[var] = {"rhat": float(az.rhat(draws)), "ess_bulk": float(az.ess(draws))}
    return pd.DataFrame(rows).T


__all__ = ["RHAT_WARN", "FitDiagnostics", "convergence", "feature_relevance",
           "to_inference_data"]
