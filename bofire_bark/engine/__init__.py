"""BARK's posterior engine (numba): forests as flat arrays, MCMC, prediction."""

from bofire_bark.engine.model import Posterior, fit_posterior, sample_prior, standardize
from bofire_bark.engine.sampler import Chain, MCMCSettings

__all__ = ["Chain", "MCMCSettings", "Posterior", "fit_posterior", "sample_prior", "standardize"]
