"""One place where bofire-bark registers itself with BoFire."""

from __future__ import annotations


def register() -> None:
    """Register the data models and functional classes (idempotent)."""
    import bofire.strategies.api as strategies
    import bofire.surrogates.api as surrogates

    from bofire_bark.data_models import BARKStrategy, BARKSurrogate
    from bofire_bark.strategy import BARKStrategy as Strategy
    from bofire_bark.surrogate import BARKSurrogate as Surrogate

    surrogates.register(BARKSurrogate, Surrogate)
    strategies.register(BARKStrategy, Strategy)
