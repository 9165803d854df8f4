"""ragchat: chat with your own documents.

Start-up time: sqlite-utils imports pandas and numpy whenever they are installed (the offline
model's package pulls pandas in) only to map their types to column types, and sqlite-vec imports
numpy for a helper ragchat does not use: 0.3 s of every command, though `config`, `sessions` and
`inspect` never touch an array. They are imported here once with those two hidden; pandas and numpy
stay importable, and ragchat's own modules import numpy when they first use it (see ragchat.lazy).
"""

import sys


def _import_without(hidden: tuple[str, ...], modules: tuple[str, ...]) -> None:
    blocked = [name for name in hidden if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # `import name` now raises ImportError
    try:
        for module in modules:
            __import__(module)
    finally:
        for name in blocked:
            del sys.modules[name]


if "sqlite_utils" not in sys.modules:
    _import_without(("pandas", "numpy"), ("sqlite_utils", "sqlite_utils.db", "sqlite_vec"))
