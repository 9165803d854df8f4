"""A module imported on first attribute access: `np = lazy_module("numpy")` costs nothing
until `np.something` is used (numpy takes ~0.1 s to import; listing sessions or showing
config needs none)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule(ModuleType):
    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attribute)


def lazy_module(name: str) -> ModuleType:
    return _LazyModule(name)
