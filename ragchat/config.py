"""Settings: defaults < user ragchat.toml < project ragchat.toml < RAGCHAT_* environment < flags.

One frozen dataclass. `load_settings` also returns where each value came from, for `ragchat config`.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .errors import ConfigError

CONFIG_FILE = "ragchat.toml"
LIBRARY_DIR = ".ragchat"  # a project's library folder, found in the current directory or a parent
DB_FILE = "ragchat.db"


@dataclass(frozen=True)
class Settings:
    db: Path = Path(LIBRARY_DIR) / DB_FILE  # load_settings resolves the real default: see find_library
    embedding_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    model_dir: str = ""  # a local fastembed model directory; "" = resolve automatically
    model_cache: str = ""  # where the offline model is assembled; "" = user cache dir
    chunk_size: int = 1000
    chunk_max: int = 1200
    chunk_overlap: int = 150
    max_file_mb: float = 10.0
    # batches are sorted by length; measured here (int8 MiniLM, 765-char chunks, sorted): batch 1, 2, 4
    # ~52 chunks/s, 8 ~48, 16-32 slower, and the arena grows with the batch (32: 1.8 GB peak, 8: 0.7 GB)
    embed_batch: int = 4
    top_k: int = 8
    rrf_k: int = 20
    vector_weight: float = 0.7
    fts_weight: float = 0.3
    candidates: int = 40  # how deep each retriever looks before fusion
    source_anchoring: bool = True
    anchor_boost: float = 0.3
    history_window: int = 5
    extractive_sentences: int = 4
    ollama: str = "auto"  # auto | off | on
    ollama_host: str = "http://127.0.0.1:11434"
    ollama_model: str = "llama3.2"
    ollama_timeout: float = 20.0

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


FIELD_TYPES = {f.name: f.type for f in fields(Settings)}


CHOICES = {"ollama": ("auto", "off", "on")}
POSITIVE = {"chunk_size", "chunk_max", "max_file_mb", "embed_batch", "top_k", "candidates", "ollama_timeout"}
NON_NEGATIVE = {"chunk_overlap", "rrf_k", "vector_weight", "fts_weight", "anchor_boost", "history_window",
                "extractive_sentences"}


def _coerce(name: str, value: Any) -> Any:
    """The value as its field's type, refused when out of range (a typo must not pass silently)."""
    result = _coerce_type(name, value)
    if name in CHOICES and result not in CHOICES[name]:
        raise ConfigError(f"invalid value for {name}: {value!r} (expected one of {', '.join(CHOICES[name])})")
    if name in POSITIVE and not result > 0:
        raise ConfigError(f"invalid value for {name}: {value!r} (expected a number above 0)")
    if name in NON_NEGATIVE and not result >= 0:
        raise ConfigError(f"invalid value for {name}: {value!r} (expected 0 or more)")
    return result


def _coerce_type(name: str, value: Any) -> Any:
    kind = FIELD_TYPES[name]
    try:
        if kind == "Path":
            return Path(str(value)).expanduser()
        if kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off"}:
                return False
            raise ValueError(value)
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"invalid value for {name}: {value!r} (expected {kind})") from None


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ragchat"


def user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragchat"


def user_data_dir() -> Path:
    """The per-user library's folder (platformdirs: ~/.local/share/ragchat on Linux, honouring
    XDG_DATA_HOME; ~/Library/Application Support/ragchat on macOS; %LOCALAPPDATA%\\ragchat on Windows)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("ragchat", appauthor=False))


def find_library(cwd: Path | None = None) -> tuple[Path, str]:
    """The default database and why: the nearest `.ragchat/` folder in `cwd` or its parents (as git
    finds `.git`), else the one per-user library."""
    start = (cwd or Path.cwd()).absolute()
    for folder in (start, *start.parents):
        if (folder / LIBRARY_DIR).is_dir():
            return folder / LIBRARY_DIR / DB_FILE, f"default: nearest {LIBRARY_DIR}/ folder"
    return user_data_dir() / DB_FILE, "default: per-user library"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    unknown = sorted(set(data) - set(FIELD_TYPES))
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s): {', '.join(unknown)}")
    return data


def config_files(cwd: Path | None = None) -> list[Path]:
    """The config files that apply, lowest precedence first."""
    candidates = [user_config_dir() / CONFIG_FILE, (cwd or Path.cwd()) / CONFIG_FILE]
    return [path for path in candidates if path.is_file()]


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Settings, dict[str, str]]:
    """Resolve every setting; returns the settings and, per name, where its value came from."""
    values: dict[str, Any] = {}
    origin = {name: "default" for name in FIELD_TYPES}

    def put(name: str, value: Any, where: str) -> None:
        try:
            values[name], origin[name] = _coerce(name, value), where
        except ConfigError as exc:  # say where the bad value was set
            raise ConfigError(f"{exc} in {where}") from None

    for path in config_files(cwd):
        for name, value in _read_toml(path).items():
            put(name, value, str(path))
    env = os.environ if environ is None else environ
    for name in FIELD_TYPES:
        key = f"RAGCHAT_{name.upper()}"
        if key in env:
            put(name, env[key], f"env {key}")
    for name, value in (overrides or {}).items():
        if value is not None:
            put(name, value, "flag")
    if "db" not in values:
        values["db"], origin["db"] = find_library(cwd)
    return Settings(**values), origin
