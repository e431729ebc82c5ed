"""Pydantic data models of bofire-bark (no numba or pyomo imports)."""

from bofire_bark.data_models.strategy import SUPPORTED_CONSTRAINTS, BARKStrategy
from bofire_bark.data_models.surrogate import SUPPORTED_INPUTS, BARKSettings, BARKSurrogate

__all__ = [
    "BARKSettings",
    "BARKStrategy",
    "BARKSurrogate",
    "SUPPORTED_CONSTRAINTS",
    "SUPPORTED_INPUTS",
]


def any_surrogate():
    """BoFire's surrogate union plus ``BARKSurrogate`` (BoFire's own union is fixed)."""
    from bofire.data_models.surrogates.api import AnySurrogate
    from bofire.data_models.unions import tagged_union, to_list

    return tagged_union(*to_list(AnySurrogate), BARKSurrogate)


AnySurrogate = any_surrogate()
