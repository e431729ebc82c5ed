"""One place where bofire-bark registers itself with BoFire.

``BARKStrategy`` joins BoFire's strategy unions at once (a data-model module, cheap). The
functional maps live in ``bofire.strategies.mapper`` and ``bofire.surrogates.mapper``, whose
imports load all of BoFire's strategies, torch's and numba (through shap): they get our entries
as soon as they are imported, and an entry is a stand-in that imports our functional class when
BoFire maps a spec. So building, validating or loading a spec loads no numba, and
``bofire.strategies.api.map(spec)`` works whichever of BoFire and bofire-bark comes first.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType


class _OnDemand:
    """Stands for the functional class ``module.name`` in BoFire's maps.

    BoFire 0.5 calls a registered strategy class as ``cls.from_spec(data_model=...)`` and a
    surrogate class as ``cls(data_model=..., **kwargs)``; both go to the real class, so what
    BoFire returns is an instance of it.
    """

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def load(self) -> type:
        return getattr(importlib.import_module(self.module), self.name)

    def from_spec(self, *args, **kwargs):
        return self.load().from_spec(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self.load()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.module}.{self.name}, imported when mapped>"


def _register_strategy(mapper: ModuleType) -> None:
    from bofire_bark.data_models import BARKStrategy

    mapper.register(BARKStrategy, _OnDemand("bofire_bark.strategy", "BARKStrategy"))


def _register_surrogate(mapper: ModuleType) -> None:
    from bofire_bark.data_models import BARKSurrogate

    mapper.register(BARKSurrogate, _OnDemand("bofire_bark.surrogate", "BARKSurrogate"))


_MAPPERS: dict[str, Callable[[ModuleType], None]] = {
    "bofire.strategies.mapper": _register_strategy,
    "bofire.surrogates.mapper": _register_surrogate,
}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Registers with a BoFire mapper module right after it executes (once per module)."""

    def __init__(self) -> None:
        self.pending: dict[str, Callable[[ModuleType], None]] = {}

    def find_spec(self, name, path, target=None):
        action = self.pending.pop(name, None)
        if action is None:
            return None
        # the other finders locate the module (this one no longer answers for it)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        # patched on this spec's own loader, so the module keeps its usual __loader__
        def exec_module(module: ModuleType) -> None:
            execute(module)
            action(module)

        spec.loader.exec_module = exec_module
        return spec


_after_import = _AfterImport()


def register() -> None:
    """Register the data models and functional classes (idempotent)."""
    from bofire.data_models.strategies.api import register_strategy

    from bofire_bark.data_models import BARKStrategy

    register_strategy(BARKStrategy)  # the JSON unions, now: load_spec and BoFire's models
    for name, action in _MAPPERS.items():
        if name in sys.modules:
            action(sys.modules[name])
        else:
            _after_import.pending[name] = action
    if _after_import.pending and _after_import not in sys.meta_path:
        sys.meta_path.insert(0, _after_import)
