"""BARK, a fully Bayesian tree kernel, as a BoFire strategy plugin.

Importing the package registers ``BARKSurrogate`` and ``BARKStrategy`` with BoFire, so
``bofire.strategies.api.map(spec)`` and BoFire's JSON unions accept them.
"""

from bofire_bark._register import register

__version__ = "0.1.0"

register()
