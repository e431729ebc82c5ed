"""BARK, a fully Bayesian tree kernel, as a BoFire strategy plugin."""

__version__ = "0.1.0"
