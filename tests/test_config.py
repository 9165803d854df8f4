"""Settings: defaults < user ragchat.toml < project ragchat.toml < RAGCHAT_* env < flags, with
the origin of every value; invalid values refused; `ragchat config` and RAGCHAT_DB end to end."""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path

import pytest
from helpers import invoke

from ragchat.config import Settings, load_settings, user_config_dir
from ragchat.errors import ConfigError
from ragchat.store import library
from ragchat.store.db import open_db


@pytest.fixture
def user_toml() -> Path:
    path = user_config_dir() / "ragchat.toml"  # under the tmp XDG_CONFIG_HOME of clean_env
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def test_user_config_dir_follows_xdg(tmp_path: Path) -> None:
    assert user_config_dir() == tmp_path / "xdg-config" / "ragchat"


def test_defaults_with_nothing_configured(project: Path, tmp_path: Path) -> None:
    settings, origins = load_settings({}, {}, project)
    per_user = (
        tmp_path / "xdg-data" / "ragchat" / "ragchat.db"
    )  # no .ragchat/ above: the per-user library
    assert settings == Settings(db=per_user)
    # every setting but `params` (the code's tuning, ragchat/params.py: not configurable)
    assert origins == {
        **{f.name: "default" for f in fields(Settings) if f.name != "params"},
        "db": "default: per-user library",
    }


def test_each_layer_overrides_the_one_below(user_toml: Path, project: Path, tmp_path: Path) -> None:
    user_toml.write_text('top_k = 3\nrrf_k = 30\nollama_model = "user-model"\nanchor_boost = 0.1\n')
    (project / "ragchat.toml").write_text('top_k = 4\nrrf_k = 40\nollama_model = "project-model"\n')
    environ = {"RAGCHAT_TOP_K": "5", "RAGCHAT_RRF_K": "50", "UNRELATED": "x"}
    overrides = {"top_k": 6, "db": None}  # None: the flag was not given

    settings, origins = load_settings(overrides, environ, project)
    assert (
        settings.top_k,
        settings.rrf_k,
        settings.ollama_model,
        settings.anchor_boost,
        settings.db,
    ) == (6, 50, "project-model", 0.1, tmp_path / "xdg-data" / "ragchat" / "ragchat.db")
    assert {
        name: origins[name] for name in ("top_k", "rrf_k", "ollama_model", "anchor_boost", "db")
    } == {
        "top_k": "flag",
        "rrf_k": "env RAGCHAT_RRF_K",
        "ollama_model": str(project / "ragchat.toml"),
        "anchor_boost": str(user_toml),
        "db": "default: per-user library",
    }
    # peel the layers off one by one
    assert load_settings({}, environ, project)[0].top_k == 5
    assert load_settings({}, {}, project)[0].top_k == 4
    assert load_settings({}, {}, project.parent)[0].top_k == 3  # no project file there
    user_toml.unlink()
    assert load_settings({}, {}, project.parent)[0] == Settings(
        db=tmp_path / "xdg-data" / "ragchat" / "ragchat.db"
    )


def test_values_are_coerced_to_their_types(project: Path) -> None:
    environ = {
        "RAGCHAT_DB": "~/notes/lib.db",
        "RAGCHAT_SOURCE_ANCHORING": "no",
        "RAGCHAT_VECTOR_WEIGHT": "0.6",
        "RAGCHAT_CANDIDATES": "25",
        "RAGCHAT_OLLAMA": "off",
    }
    settings, origins = load_settings({"chunk_size": "800"}, environ, project)
    assert settings.db == Path.home() / "notes" / "lib.db"
    assert (
        settings.source_anchoring,
        settings.vector_weight,
        settings.candidates,
        settings.chunk_size,
    ) == (False, 0.6, 25, 800)
    assert settings.ollama == "off"
    assert origins["db"] == "env RAGCHAT_DB" and origins["chunk_size"] == "flag"


def test_the_real_environment_is_used_when_none_is_given(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("RAGCHAT_TOP_K", "11")
    settings, origins = load_settings(cwd=project)
    assert (settings.top_k, origins["top_k"]) == (11, "env RAGCHAT_TOP_K")


def test_the_project_file_is_found_in_the_working_directory(tmp_path: Path) -> None:
    # clean_env made tmp_path the working directory
    assert Path.cwd() == tmp_path
    (tmp_path / "ragchat.toml").write_text("history_window = 2\n")
    settings, origins = load_settings(environ={})
    assert (settings.history_window, origins["history_window"]) == (
        2,
        str(tmp_path / "ragchat.toml"),
    )


@pytest.mark.parametrize(
    "source, content, message",
    [
        (
            "env",
            {"RAGCHAT_TOP_K": "many"},
            "invalid value for top_k: 'many' (expected an integer) in env RAGCHAT_TOP_K",
        ),
        ("env", {"RAGCHAT_VECTOR_WEIGHT": "heavy"}, "invalid value for vector_weight"),
        ("env", {"RAGCHAT_SOURCE_ANCHORING": "maybe"}, "invalid value for source_anchoring"),
        ("env", {"RAGCHAT_OLLAMA": "of"}, "invalid value for ollama: 'of'"),
        ("env", {"RAGCHAT_TOP_K": "0"}, "invalid value for top_k"),
        ("env", {"RAGCHAT_CHUNK_OVERLAP": "-5"}, "invalid value for chunk_overlap"),
        (
            "flag",
            {"candidates": -1},
            "invalid value for candidates: -1 (expected an integer from 1 to 4,096) in flag",
        ),
        # issue 22: numbers that are not what they look like, or too big to be meant
        ("toml", "top_k = 3.7\n", "invalid value for top_k: 3.7 (expected an integer)"),
        ("toml", "top_k = true\n", "invalid value for top_k: True (expected an integer)"),
        ("toml", "chunk_size = 1e400\n", "invalid value for chunk_size: inf (expected an integer)"),
        (
            "toml",
            "fts_weight = nan\n",
            "invalid value for fts_weight: nan (expected a finite number)",
        ),
        (
            "toml",
            'ollama_model = ["a"]\n',
            "invalid value for ollama_model: ['a'] (expected a string)",
        ),
        (
            "toml",
            "vector_weight = inf\n",
            "invalid value for vector_weight: inf (expected a finite number)",
        ),
        (
            "env",
            {"RAGCHAT_FTS_WEIGHT": "-inf"},
            "invalid value for fts_weight: '-inf' (expected a finite number)",
        ),
        (
            "env",
            {"RAGCHAT_ANCHOR_BOOST": "NaN"},
            "invalid value for anchor_boost: 'NaN' (expected a finite number)",
        ),
        (
            "env",
            {"RAGCHAT_ANCHOR_BOOST": "-1.5"},
            "invalid value for anchor_boost: '-1.5' (expected a number from 0 to",
        ),
        (
            "env",
            {"RAGCHAT_CANDIDATES": "1e9"},
            "invalid value for candidates: '1e9' (expected an integer) in env",
        ),
        (
            "env",
            {"RAGCHAT_TOP_K": "5000"},
            "invalid value for top_k: '5000' (expected an integer from 1 to 4,096)",
        ),
        (
            "env",
            {"RAGCHAT_TOP_K": "9" * 5000},
            "invalid value for top_k: '" + "9" * 36 + "... (expected an integer)",
        ),
        (
            "env",
            {"RAGCHAT_CHUNK_SIZE": "99999999999999999999999"},
            "invalid value for chunk_size: '99999999999999999999999' (expected an integer from 1 "
            "to 1,000,000)",
        ),
        (
            "env",
            {"RAGCHAT_OLLAMA_TIMEOUT": "1e400"},
            "invalid value for ollama_timeout: '1e400' (expected a finite",
        ),
        (
            "flag",
            {"top_k": 99999999999999999999999},
            "(expected an integer from 1 to 4,096) in flag",
        ),
        ("toml", 'top_k = "eight"\n', "invalid value for top_k"),
        (
            "toml",
            "ollama = true\n",
            "invalid value for ollama: True (expected one of auto, off, on)",
        ),
        ("toml", "topk = 5\n", "unknown setting(s): topk"),
        ("toml", "zeta = 1\nalpha = 2\ntop_k = 3\n", "unknown setting(s): alpha, zeta"),
        ("toml", "top_k = \n", "cannot read"),
        ("toml", "[section]\nkey = 1\n", "unknown setting(s): section"),
    ],
)
def test_invalid_configuration_is_a_config_error(
    project: Path, source: str, content, message: str
) -> None:
    environ, overrides = {}, {}
    if source == "env":
        environ = content
    elif source == "flag":
        overrides = content
    else:
        (project / "ragchat.toml").write_text(content)
    with pytest.raises(ConfigError) as caught:
        load_settings(overrides, environ, project)
    assert message in str(caught.value)
    if source == "toml":
        assert str(project / "ragchat.toml") in str(caught.value)


def test_a_broken_user_file_is_named_in_the_error(user_toml: Path, project: Path) -> None:
    user_toml.write_bytes(b"top_k = \xff\xfe\n")
    with pytest.raises(ConfigError, match="cannot read .*ragchat.toml"):
        load_settings({}, {}, project)


# --- through the CLI -------------------------------------------------------------------------


def config_rows(output: str) -> dict[str, tuple[str, str]]:
    """setting -> (value, from) from rich's table, long cells unfolded (they wrap,
    never get cut)."""
    rows: dict[str, list[str]] = {}
    last: list[str] | None = None
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        assert len(cells) == 3, line
        if cells[0]:
            last = rows.setdefault(cells[0], cells)
        elif last is not None:  # a folded continuation of the row above
            last[1], last[2] = last[1] + cells[1], last[2] + cells[2]
    return {name: (cells[1], cells[2]) for name, cells in rows.items()}


def test_cli_config_shows_values_and_origins(tmp_path: Path, runner, monkeypatch) -> None:
    (tmp_path / "ragchat.toml").write_text("top_k = 5\n")
    monkeypatch.setenv("RAGCHAT_RRF_K", "33")
    result = invoke(runner, "config", "--db", "lib.db")
    assert result.exit_code == 0, result.output
    rows = config_rows(result.output)
    assert set(rows) == {f.name for f in fields(Settings)} - {
        "params"
    }  # the code's tuning is no setting
    assert rows["db"] == ("lib.db", "flag")
    assert rows["rrf_k"] == ("33", "env RAGCHAT_RRF_K")
    assert rows["top_k"] == ("5", str(tmp_path / "ragchat.toml"))
    assert rows["embedding_model"] == ("sentence-transformers/all-MiniLM-L6-v2", "default")
    assert rows["chunk_size"] == ("1000", "default")
    assert not (tmp_path / "lib.db").exists()  # showing the settings does not create a database


def test_cli_config_db_from_the_environment(tmp_path: Path, runner, monkeypatch) -> None:
    monkeypatch.setenv("RAGCHAT_DB", "elsewhere.db")
    rows = config_rows(invoke(runner, "config").output)
    assert rows["db"] == ("elsewhere.db", "env RAGCHAT_DB")


def test_cli_config_reports_a_bad_file_as_one_error_line(tmp_path: Path, runner) -> None:
    (tmp_path / "ragchat.toml").write_text("top_kk = 5\n")
    result = invoke(runner, "config")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("Error:")
        and "unknown setting(s): top_kk" in lines[0]
    )


def test_ragchat_db_env_is_where_ingest_writes(tmp_path: Path, runner, monkeypatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text("# Beekeeping\n\nA hive needs a laying queen and dry frames.\n")
    target = tmp_path / "somewhere" / "else" / "lib.db"
    monkeypatch.setenv("RAGCHAT_DB", str(target))

    result = invoke(runner, "ingest", docs)
    assert result.exit_code == 0, result.output
    assert target.is_file()
    assert not (tmp_path / ".ragchat").exists()  # not the default location
    db = open_db(target)
    assert [doc["path"] for doc in library.documents(db)] == ["note.md"]
    db.close()

    # a --db flag still beats the environment
    flagged = tmp_path / "flag.db"
    assert invoke(runner, "ingest", docs, "--db", flagged).exit_code == 0
    assert flagged.is_file()
    assert sorted(os.listdir(target.parent)) == sorted(
        name for name in os.listdir(target.parent) if name.startswith("lib.db")
    )


def test_a_retired_setting_in_an_old_config_is_ignored(tmp_path, monkeypatch) -> None:
    """weak_match gave way to the calibrated not-covered decision; a config that still
    sets it loads."""
    from ragchat.config import load_settings

    (tmp_path / "ragchat.toml").write_text("weak_match = 0.3\ntop_k = 5\n", encoding="utf-8")
    settings, sources = load_settings(cwd=tmp_path)
    assert settings.top_k == 5 and "weak_match" not in sources
