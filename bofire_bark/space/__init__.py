"""Mapping between BoFire input features and the BARK engine's split space."""

from bofire_bark.space.split_space import (
    CATEGORICAL,
    CONTINUOUS,
    DISCRETE,
    SUPPORTED_INPUTS,
    SplitSpace,
    UnsupportedFeatureError,
)

__all__ = [
    "CATEGORICAL",
    "CONTINUOUS",
    "DISCRETE",
    "SUPPORTED_INPUTS",
    "SplitSpace",
    "UnsupportedFeatureError",
]
