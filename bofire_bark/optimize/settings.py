"""The acquisition's settings (defined at the bottom of the package, ``bofire_bark.settings``,
so the data models use the same objects)."""

from bofire_bark.settings import AcquisitionSettings, SearchSettings, settings_with

__all__ = ["AcquisitionSettings", "SearchSettings", "settings_with"]
