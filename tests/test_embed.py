"""Embeddings: the offline model assembled from the two PyPI packages, model resolution, and the
real all-MiniLM-L6-v2 giving unit-norm float32 vectors with sensible similarities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import MODEL_CACHE

from ragchat.config import Settings
from ragchat.embed import (
    MINILM,
    OFFLINE_DIR_NAME,
    TOKENIZER_FILES,
    FastEmbedder,
    ModelLocation,
    OnnxEmbedder,
    assemble_offline_model,
    load_embedder,
    locate_model,
)
from ragchat.errors import EmbeddingError


@pytest.fixture(scope="module")
def assembled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("model-cache")
    target = assemble_offline_model(cache)
    assert target is not None, "the offline-model packages are installed in the test venv"
    return target


def test_assembles_model_and_tokenizer_once(assembled: Path) -> None:
    cache = assembled.parent
    assert assembled == cache / OFFLINE_DIR_NAME
    assert (assembled / "model.onnx").stat().st_size > 1_000_000
    assert (assembled / "tokenizer.json").is_file()
    present = {name for name in TOKENIZER_FILES if (assembled / name).is_file()}
    assert {
        "tokenizer.json",
        "config.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
    } <= present
    assert [p.name for p in cache.iterdir()] == [OFFLINE_DIR_NAME]  # no staging folder left behind

    stamps = {p.name: p.stat().st_mtime_ns for p in assembled.rglob("*") if p.is_file()}
    again = assemble_offline_model(cache)
    assert again == assembled
    assert {p.name: p.stat().st_mtime_ns for p in assembled.rglob("*") if p.is_file()} == stamps
    assert [p.name for p in cache.iterdir()] == [OFFLINE_DIR_NAME]


def test_a_foreign_half_filled_model_folder_is_reported_not_overwritten(tmp_path: Path) -> None:
    # ragchat's own assembly is atomic (staged, then renamed), so only a hand-made folder looks
    # like this; it is left alone and the user is told which folder is in the way
    cache = tmp_path / "cache"
    broken = cache / OFFLINE_DIR_NAME
    broken.mkdir(parents=True)
    (broken / "tokenizer.json").write_text("{}")
    with pytest.raises(EmbeddingError, match=f"cannot assemble the offline model in {cache}"):
        locate_model(Settings(model_cache=str(cache)))
    assert [p.name for p in broken.iterdir()] == ["tokenizer.json"]
    assert [p.name for p in cache.iterdir()] == [
        OFFLINE_DIR_NAME
    ]  # the staging folder is cleaned up


def test_locate_model_prefers_model_dir(tmp_path: Path, assembled: Path) -> None:
    location = locate_model(
        Settings(model_dir=str(assembled), model_cache=str(tmp_path / "unused"))
    )
    assert location == ModelLocation(MINILM, assembled, f"local directory {assembled}")
    assert not (tmp_path / "unused").exists()


@pytest.mark.parametrize("contents", [[], ["tokenizer.json"]])
def test_locate_model_rejects_a_model_dir_without_model_onnx(
    tmp_path: Path, contents: list[str]
) -> None:
    folder = tmp_path / "my-model"
    folder.mkdir()
    for name in contents:
        (folder / name).write_text("{}")
    with pytest.raises(EmbeddingError, match=f"model_dir {folder} has no model.onnx"):
        locate_model(Settings(model_dir=str(folder)))
    with pytest.raises(EmbeddingError, match="has no model.onnx"):
        locate_model(Settings(model_dir=str(tmp_path / "does-not-exist")))


def test_locate_model_assembles_into_the_configured_cache(tmp_path: Path, assembled: Path) -> None:
    location = locate_model(Settings(model_cache=str(tmp_path / "cache")))
    assert location.model_id == MINILM
    assert location.path == tmp_path / "cache" / OFFLINE_DIR_NAME
    assert location.how == f"offline model {location.path}"
    assert (location.path / "model.onnx").read_bytes() == (assembled / "model.onnx").read_bytes()


def test_another_model_name_is_left_to_fastembed(tmp_path: Path) -> None:
    location = locate_model(
        Settings(embedding_model="BAAI/bge-small-en-v1.5", model_cache=str(tmp_path))
    )
    assert location == ModelLocation("BAAI/bge-small-en-v1.5", None, "fastembed download")
    assert list(tmp_path.iterdir()) == []  # nothing assembled for a model it is not


def test_a_model_dir_that_cannot_load_is_an_embedding_error(tmp_path: Path) -> None:
    folder = tmp_path / "fake"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not an onnx file")
    with pytest.raises(EmbeddingError, match="cannot load embedding model"):
        FastEmbedder(ModelLocation(MINILM, folder, "test"))


def test_vectors_are_unit_norm_float32_of_dim_384(embedder) -> None:
    assert (embedder.model_id, embedder.dim) == (MINILM, 384)
    vectors = embedder.embed(
        ["A will needs two witnesses.", "Sourdough needs a starter.", "ünïcödé 日本語"]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)
    query = embedder.embed_query("A will needs two witnesses.")
    assert query.dtype == np.float32 and query.shape == (384,)
    assert np.allclose(query, vectors[0], atol=1e-6)
    assert not query.flags.writeable  # cached: callers must not change it in place


def test_similarities_are_semantically_sensible(embedder) -> None:
    will, testament, bread, car, automobile = embedder.embed(
        [
            "A will needs two witnesses",
            "witnesses to a testament",
            "bread recipe",
            "my car needs new tyres",
            "replacing the tires of an automobile",
        ]
    )
    assert float(will @ testament) > float(will @ bread) + 0.2
    assert float(car @ automobile) > float(car @ bread) + 0.2
    assert float(will @ will) == pytest.approx(1.0, abs=1e-5)


def test_the_assembled_model_gives_the_same_vectors(
    tmp_path: Path, assembled: Path, embedder
) -> None:
    fresh = load_embedder(Settings(model_dir=str(assembled), embed_batch=2))
    assert fresh is not embedder and fresh.source == f"local directory {assembled}"
    texts = ["A will needs two witnesses", "bread recipe", "heat pumps move heat"]
    assert np.allclose(fresh.embed(texts), embedder.embed(texts), atol=1e-5)
    assert load_embedder(Settings(model_dir=str(assembled))) is fresh  # loaded once per process


def test_the_direct_onnx_embedder_gives_fastembeds_vectors(embedder) -> None:
    """The offline model runs on onnxruntime directly (no fastembed import at start-up); its
    vectors are fastembed's, for short, long (truncated) and unusual texts, whatever the batch."""
    assert isinstance(embedder, OnnxEmbedder)
    plain = FastEmbedder(locate_model(Settings(model_cache=MODEL_CACHE)), batch_size=3)
    texts = [
        "a",
        "",
        "A will needs two witnesses.",
        "ünïcödé 日本語 " * 3,
        "heat pumps " * 400,
        "Sourdough needs a starter fed daily with flour and water.",
        "x" * 50,
    ]
    assert np.abs(embedder.embed(texts) - plain.embed(texts)).max() < 1e-5


def test_vectors_come_back_in_the_order_of_the_texts(embedder) -> None:
    texts = [
        f"{word} " * length
        for word, length in [
            ("will", 40),
            ("bread", 2),
            ("tyres", 90),
            ("compost", 7),
            ("witness", 1),
            ("solar", 25),
        ]
    ]
    one_by_one = np.vstack([embedder.embed([text]) for text in texts])
    assert np.allclose(embedder.embed(texts), one_by_one, atol=1e-5)


def test_a_broken_offline_model_dir_is_an_embedding_error(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not an onnx file")
    with pytest.raises(EmbeddingError, match="cannot load embedding model"):
        load_embedder(Settings(model_dir=str(folder)))
