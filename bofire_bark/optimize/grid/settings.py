"""The grid search's settings (defined at the bottom of the package, ``bofire_bark.settings``,
so a spec can set them)."""

from bofire_bark.settings import GridSettings

__all__ = ["GridSettings"]
