"""Settings: defaults < user ragchat.toml < project ragchat.toml < RAGCHAT_* environment < flags.

One frozen dataclass. `load_settings` also returns where each value came from, for `ragchat config`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .params import DEFAULT, Params

CONFIG_FILE = "ragchat.toml"
LIBRARY_DIR = ".ragchat"  # a project's library folder, found in the current directory or a parent
DB_FILE = "ragchat.db"


@dataclass(frozen=True)
class Settings:
    db: Path = (
        Path(LIBRARY_DIR) / DB_FILE
    )  # load_settings resolves the real default: see find_library
    embedding_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    model_dir: str = ""  # a local fastembed model directory; "" = resolve automatically
    model_cache: str = ""  # where the offline model is assembled; "" = user cache dir
    chunk_size: int = 1000
    chunk_max: int = 1200
    chunk_overlap: int = 150
    max_file_mb: float = 10.0
    # batches are sorted by length; measured here (int8 MiniLM, 765-char chunks, sorted): batch 1,
    # 2, 4 ~52 chunks/s, 8 ~48, 16-32 slower, and the arena grows with the batch (32: 1.8 GB peak,
    # 8: 0.7 GB)
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
    ollama_timeout: float = 20.0  # between two pieces of a reply, and for the model listing
    ollama_connect_timeout: float = 5.0  # to connect to the server
    # to the first piece of a reply: Ollama sends nothing until the model is loaded (10-60 s on a
    # laptop, minutes on a CPU)
    ollama_load_timeout: float = 300.0
    ollama_reply_timeout: float = 600.0  # a whole reply, however it trickles
    ollama_reply_chars: int = 40_000  # a whole reply's size; past it the reply is cut
    # the model's context window, asked for on every request (Ollama's default, 2,048-4,096
    # tokens, cuts a prompt from the front silently); the prompt is budgeted to fit it
    ollama_num_ctx: int = 8192
    ollama_show_thinking: bool = False  # show a thinking model's reasoning (dimmed)
    # the code's tuning numbers (params.py): no user setting; `ragchat eval --param` changes them
    params: Params = DEFAULT

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


# the user's settings (ragchat.toml, RAGCHAT_*, flags, `ragchat config`): all fields but `params`
FIELD_TYPES = {f.name: f.type for f in fields(Settings) if f.name != "params"}


CHOICES = {"ollama": ("auto", "off", "on")}
# sqlite-vec refuses a KNN query for more than 4096 neighbours; every depth a search can ask for
# (top_k, candidates, eval's --depth) stays within it by construction.
MAX_NEIGHBOURS = 4096
# (lowest, highest, lowest allowed itself): every number is checked where it enters
# (flag, env, file)
RANGES: dict[str, tuple[float, float, bool]] = {
    "chunk_size": (0, 1_000_000, False),
    "chunk_max": (0, 1_000_000, False),
    "chunk_overlap": (0, 1_000_000, True),
    "max_file_mb": (0, 1_000_000, False),
    "embed_batch": (0, 4096, False),
    "top_k": (0, MAX_NEIGHBOURS, False),
    "candidates": (0, MAX_NEIGHBOURS, False),
    "rrf_k": (0, 1_000_000, True),
    "vector_weight": (0, 1_000_000, True),
    "fts_weight": (0, 1_000_000, True),
    "anchor_boost": (0, 1_000_000, True),
    "history_window": (0, 10_000, True),
    "extractive_sentences": (0, 10_000, True),
    "ollama_timeout": (0, 86_400, False),
    "ollama_connect_timeout": (0, 86_400, False),
    "ollama_load_timeout": (0, 86_400, False),
    "ollama_reply_timeout": (0, 86_400, False),
    "ollama_reply_chars": (0, 100_000_000, False),
    "ollama_num_ctx": (511, 10_000_000, False),
}


def _coerce(name: str, value: Any) -> Any:
    """The value as its field's type, refused when out of range (a typo must not pass silently)."""
    result = _coerce_type(name, value)
    if name in CHOICES and result not in CHOICES[name]:
        raise ConfigError(
            f"invalid value for {name}: {value!r} (expected one of {', '.join(CHOICES[name])})"
        )
    if name in RANGES:
        _check_range(name, value, result)
    return result


def _check_range(name: str, value: Any, number: float) -> None:
    low, high, low_included = RANGES[name]
    if (number >= low if low_included else number > low) and number <= high:
        return
    if FIELD_TYPES[name] == "int":
        expected = f"an integer from {_plain(low if low_included else low + 1)} to {_plain(high)}"
    else:
        expected = (
            f"a number {'from' if low_included else 'above'} {_plain(low)} "
            f"{'to' if low_included else 'and at most'} {_plain(high)}"
        )
    raise ConfigError(f"invalid value for {name}: {_shown(value)} (expected {expected})")


def _plain(number: float) -> str:
    return f"{int(number):,}" if number == int(number) else f"{number:g}"


def _shown(value: Any) -> str:
    """The value as entered, cut short: a 5,000-digit number must not fill the screen."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _coerce_type(name: str, value: Any) -> Any:
    kind = FIELD_TYPES[name]
    try:
        if kind in {"Path", "str"}:
            if not isinstance(value, str | Path):  # a TOML list or table is a mistake, not a name
                raise TypeError(value)
            return Path(str(value)).expanduser() if kind == "Path" else str(value)
        if kind == "bool":
            return _as_bool(value)
        if kind == "int":
            return _as_int(value)
        return _as_float(value)
    except (TypeError, ValueError, OverflowError):
        expected = {"int": "an integer", "float": "a finite number", "bool": "true or false"}.get(
            str(kind), "a string"
        )
        if name in CHOICES:
            expected = f"one of {', '.join(CHOICES[name])}"
        raise ConfigError(
            f"invalid value for {name}: {_shown(value)} (expected {expected})"
        ) from None


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(value)


def _as_int(value: Any) -> int:
    """An integer that is one: `true` is not 1 and 3.7 is not 3 (a float is refused, even 3.0)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(value)
    return int(value.strip()) if isinstance(value, str) else value


def _as_float(value: Any) -> float:
    """A finite number: inf and nan would turn a weight or a threshold into nonsense silently."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(value)
    number = float(value)  # a huge int gives OverflowError, an ArithmeticError: caught below
    if not math.isfinite(number):
        raise ValueError(value)
    return number


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ragchat"


def user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragchat"


def user_data_dir() -> Path:
    """The per-user library's folder (platformdirs: ~/.local/share/ragchat on Linux,
    honouring XDG_DATA_HOME; ~/Library/Application Support/ragchat on macOS;
    %LOCALAPPDATA%\\ragchat on Windows)."""
    # here: only a default path needs it
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


# settings of earlier versions, read and ignored so that an old config still loads:
# weak_match (one cosine threshold) gave way to the calibrated decision in conversation/coverage.py
RETIRED = frozenset({"weak_match"})


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    unknown = sorted(set(data) - set(FIELD_TYPES) - {TRUST_KEY} - RETIRED)
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s): {', '.join(unknown)}")
    return {key: value for key, value in data.items() if key not in RETIRED}


def config_files(cwd: Path | None = None) -> list[Path]:
    """The config files that apply, lowest precedence first."""
    candidates = [user_config_dir() / CONFIG_FILE, (cwd or Path.cwd()) / CONFIG_FILE]
    return [path for path in candidates if path.is_file()]


# --- trust: a ragchat.toml found in the working folder was perhaps not written by the user -----
# It may tune retrieval, but not send questions and passages to another machine (ollama_host) or
# keep them outside the folder (db), unless the user's own config says so (TRUST_KEY) or the user
# confirmed once for that folder (remembered in TRUSTED_FILE).
TRUST_KEY = "trust_project_config"  # in the user's own ragchat.toml only
TRUSTED_FILE = "trusted-folders"  # one absolute folder a line, in the user's config folder


class UntrustedProjectConfig(ConfigError):
    """A project ragchat.toml redirects data and neither the user's config nor a
    confirmation allows it."""

    def __init__(self, file: Path, reasons: list[str]) -> None:
        self.folder, self.reasons = file.parent.absolute(), reasons
        user_file = user_config_dir() / CONFIG_FILE
        super().__init__(
            f"{file} would send your data elsewhere: {'; '.join(reasons)}. Not used: confirm it "
            f"when a terminal asks, or add `{TRUST_KEY} = true` to {user_file}"
        )


def trusted_folders() -> set[str]:
    try:
        lines = (user_config_dir() / TRUSTED_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return set()
    return {line for line in lines if line.strip()}


def trust_folder(folder: Path) -> None:
    """Remember that the user allowed this folder's ragchat.toml to redirect data."""
    directory = user_config_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    handle = os.open(directory / TRUSTED_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(handle, "a", encoding="utf-8") as out:
        out.write(f"{folder.absolute()}\n")


def _user_trusts_projects(user_data: dict[str, Any], user_file: Path) -> bool:
    value = user_data.pop(TRUST_KEY, False)
    if not isinstance(value, bool):
        raise ConfigError(
            f"invalid value for {TRUST_KEY}: {_shown(value)} (expected true or false) in "
            f"{user_file}"
        )
    return value


def _redirects(settings: Settings, origin: dict[str, str], project_file: Path) -> list[str]:
    """What a project file changes about where data goes (values it set that still stand)."""
    from .llm import is_loopback  # here: every command reads settings; few need the network code

    folder, reasons = project_file.parent.absolute(), []
    if (
        origin["ollama_host"] == str(project_file)
        and settings.ollama != "off"
        and not is_loopback(settings.ollama_host)
    ):
        reasons.append(f"ollama_host = {settings.ollama_host!r} (not this machine)")
    if origin["db"] == str(project_file):
        where = Path(os.path.realpath(folder / settings.db))  # `..` and symlinks followed
        if not where.is_relative_to(os.path.realpath(folder)):
            reasons.append(f"db = {str(settings.db)!r} (outside {folder})")
    return reasons


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Settings, dict[str, str]]:
    """Resolve every setting; returns the settings and, per name, where its value came from. A
    project file that redirects data without the user's leave is an UntrustedProjectConfig error."""
    values: dict[str, Any] = {}
    origin = {name: "default" for name in FIELD_TYPES}

    def put(name: str, value: Any, where: str) -> None:
        try:
            values[name], origin[name] = _coerce(name, value), where
        except ConfigError as exc:  # say where the bad value was set
            raise ConfigError(f"{exc} in {where}") from None

    user_file, trust_all, project_file = user_config_dir() / CONFIG_FILE, False, None
    for path in config_files(cwd):
        data = _read_toml(path)
        if path == user_file:
            trust_all = _user_trusts_projects(data, path)
        elif TRUST_KEY in data:
            raise ConfigError(f"{path}: {TRUST_KEY} can only be set in your own {user_file}")
        else:
            project_file = path
        for name, value in data.items():
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
    settings = Settings(**values)
    if (
        project_file is not None
        and not trust_all
        and str(project_file.parent.absolute()) not in trusted_folders()
    ):
        reasons = _redirects(settings, origin, project_file)
        if reasons:
            raise UntrustedProjectConfig(project_file, reasons)
    return settings, origin
