"""BARK's posterior engine (numba): forests as flat arrays, MCMC, prediction."""

from bofire_bark.engine.model import Posterior, fit_posterior, sample_prior, standardize
from bofire_bark.engine.sampler import Chain, MCMCSettings
from bofire_bark.jit import drop_stale_caches

drop_stale_caches()  # kernels load from the cache at their first call, after this

__all__ = ["Chain", "MCMCSettings", "Posterior", "fit_posterior", "sample_prior", "standardize"]
