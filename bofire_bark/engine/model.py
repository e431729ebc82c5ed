"""The engine's entry points: fit BARK's posterior, draw from its prior, predict.

Outputs are standardized inside (mean 0, variance 1, sigma_0^2 = 1 as in the paper) and all
predictions are returned in the user's units: the noise variance is scaled like the latent
variance, by the output's variance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bofire_bark.engine.checks import check_space, check_X, check_y
from bofire_bark.engine.forest import Space, split_variables
from bofire_bark.engine.predict import SampleSystems, predict_samples
from bofire_bark.engine.priors import (
    draw_noise_prior,
    draw_prior_forest,
    draw_split_prior,
    noise_prior,
    tree_prior,
)
from bofire_bark.engine.rng import seed_states
from bofire_bark.engine.sampler import Chain, MCMCSettings, run_chains, stack_samples
from bofire_bark.engine.smooth import SmoothKernel


@dataclass
class Posterior:
    """Posterior samples of BARK and the data they were fitted to.

    Attributes:
        samples: forest arrays with a leading sample axis (S, m, C[, W]) and ``sigma2`` (S,),
            the noise variance in standardized units.
        kinds, lower, upper, n_values: the split space, (D,) each.
        space: the split ``Space`` (those four and the split variables: descriptors).
        X: (N, D) encoded training inputs. y: (N,) standardized outputs.
        y_mean, y_std: the standardization (y_user = y_mean + y_std * y).
        traces: (n_chains, sweeps, 4 + 2 V) per-sweep record of the sampling phase (columns
            ``TRACE_SCALARS``, then split probabilities, then shares of splits per split
            variable; see ``sampler.trace_width``), None for prior draws.
        smooth: the ``engine.smooth.SmoothKernel`` when the kernel has a smooth share (then
            ``samples["smooth_share"]`` (S,) holds each sample's share), else None.
    """

    samples: dict[str, np.ndarray]
    kinds: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n_values: np.ndarray
    X: np.ndarray
    y: np.ndarray
    y_mean: float
    y_std: float
    chains: list[Chain] = field(default_factory=list, repr=False)
    traces: np.ndarray | None = field(default=None, repr=False)
    space: Space | None = field(default=None, repr=False)
    smooth: SmoothKernel | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.space is None:
            self.space = split_variables(self.kinds, self.lower, self.upper, self.n_values)

    @property
    def n_samples(self) -> int:
        return len(self.samples["sigma2"])

    def predict_each(self, Xnew: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-sample mean and latent variance (S, n), standardized units."""
        Xnew = check_X(Xnew, (self.kinds, self.lower, self.upper, self.n_values), "Xnew",
                       allow_empty=True)
        return predict_samples(self.samples, self.kinds, self.X, self.y, Xnew, self.smooth)

    def systems(self, X_pending: np.ndarray | None = None) -> SampleSystems:
        """Per-sample leaf systems, optionally conditioned on pending points (believer)."""
        if X_pending is not None:
            X_pending = check_X(X_pending, (self.kinds, self.lower, self.upper, self.n_values),
                                "X_pending", allow_empty=True)
        return SampleSystems(self.samples, self.kinds, self.X, self.y, X_pending, self.smooth)

    def predict(self, Xnew: np.ndarray) -> dict[str, np.ndarray]:
        """Mixture prediction over samples in the user's units.

        Returns a dict of (n,) arrays: ``mean``, ``var_latent`` (of f) and ``var`` (of a new
        observation, noise included), plus (S, n) ``sample_mean`` and ``sample_var``.
        """
        means, lat = self.predict_each(Xnew)
        noise = self.samples["sigma2"][:, None]
        mean = means.mean(axis=0)
        spread = (means**2).mean(axis=0) - mean**2
        scale2 = self.y_std**2
        return {
            "mean": self.y_mean + self.y_std * mean,
            "var_latent": scale2 * (lat.mean(axis=0) + spread),
            "var": scale2 * ((lat + noise).mean(axis=0) + spread),
            "sample_mean": self.y_mean + self.y_std * means,
            "sample_var": scale2 * lat,
        }


def standardize(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(y - mean) / std with std 1 when y has fewer than two distinct values."""
    y = np.asarray(y, dtype=np.float64)
    mean = float(y.mean()) if len(y) else 0.0
    std = float(y.std()) if len(y) > 1 else 0.0
    if not std > 0.0:
        std = 1.0
    return (y - mean) / std, mean, std


def fit_posterior(
    X: np.ndarray,
    y: np.ndarray,
    space,
    settings: MCMCSettings | None = None,
    n_chains: int = 4,
    n_samples: int = 4,
    thinning: int = 100,
    burn_in: int = 1000,
    seed: int | None = None,
    chains: list[Chain] | None = None,
    n_jobs: int | None = None,
    progress=None,
    smooth: SmoothKernel | None = None,
) -> Posterior:
    """Sample BARK's posterior given encoded inputs ``X`` (N, D) and outputs ``y`` (N,) on
    the split ``space`` (a ``Space`` or its four arrays kinds, lower, upper, n_values).

    Pass ``chains`` from an earlier posterior to continue them with the new data (warm start,
    as BO does between iterations); ``burn_in`` then applies to the continued chains.
    ``progress`` is called with 1 after each chain's burn-in and after each kept sample.
    ``smooth`` (an ``engine.smooth.SmoothKernel``) adds a smooth share to the kernel, sampled
    with the trees (continued chains take its lengths, and keep their share).
    """
    settings = settings or MCMCSettings()
    space = check_space(space)
    X = check_X(X, space)
    ys, y_mean, y_std = standardize(check_y(y, len(X)))
    if chains is None:
        chains = [Chain(space, settings, st) for st in seed_states(seed, n_chains)]
    for chain in chains:
        if smooth is not None:
            chain.set_smooth(smooth)
        elif chain.smooth is not None:
            raise ValueError("fit_posterior: these chains sample a smooth share; pass its "
                             "SmoothKernel as smooth=")
        chain.set_data(X, ys)  # before the threads start: set_data limits BLAS itself
    samples = run_chains(chains, burn_in, n_samples, thinning, n_jobs=n_jobs, progress=progress)
    traces = np.stack([c.trace for c in chains])
    return Posterior(samples, *space[:4], X, ys, y_mean, y_std, chains, traces, space, smooth)


def sample_prior(
    X: np.ndarray,
    y: np.ndarray,
    space,
    settings: MCMCSettings | None = None,
    n_samples: int = 16,
    seed: int | None = None,
) -> Posterior:
    """Forests and noise drawn from the prior, no MCMC (the paper's BARKPrior ablation)."""
    settings = settings or MCMCSettings()
    space = check_space(space)
    X = check_X(X, space)
    y = check_y(y, len(X))
    state = seed_states(seed, 1)[0]
    noise = noise_prior(settings.noise_prior, settings.noise_nu, settings.noise_q,
                        settings.noise_loc, settings.noise_scale)
    gen = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])
    prior = tree_prior(settings.alpha, settings.beta, space, settings.split_prior == "dirichlet")
    shapes = np.empty(len(space.var_col))
    drawn = []
    for _ in range(n_samples):
        extra = {}
        if prior.dirichlet:
            draw_split_prior(state, prior, shapes)
            extra = {"split_prob": np.exp(prior.log_w),
                     "split_concentration": float(prior.conc[0])}
        f = draw_prior_forest(state, space, settings.n_trees, settings.alpha, settings.beta,
                              prior=prior)
        sigma2 = draw_noise_prior(gen, noise)
        drawn.append((f, sigma2, extra))
    ys, y_mean, y_std = standardize(y)
    return Posterior(stack_samples(drawn), *space[:4], np.ascontiguousarray(X, dtype=np.float64),
                     ys, y_mean, y_std, space=space)


__all__ = ["Posterior", "fit_posterior", "sample_prior", "standardize"]
