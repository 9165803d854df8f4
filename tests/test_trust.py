"""Issue 22, trust: a ragchat.toml in the working folder may tune ragchat but not send data to
another machine or keep it outside the folder, unless the user's own config or a one-time
confirmation (remembered per folder) allows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import invoke

from ragchat import cli
from ragchat.config import (
    TRUSTED_FILE,
    UntrustedProjectConfig,
    load_settings,
    trust_folder,
    user_config_dir,
)
from ragchat.errors import ConfigError

REMOTE = "http://ollama.attacker.example:11434"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("RAGCHAT_OLLAMA_HOST")  # clean_env's own host would outrank the project file
    folder = tmp_path / "handed-over"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def user_toml(text: str) -> Path:
    path = user_config_dir() / "ragchat.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "content, reason",
    [
        (f'ollama_host = "{REMOTE}"\n', f"ollama_host = '{REMOTE}' (not this machine)"),
        ('ollama_host = "10.0.0.5:11434"\n', "ollama_host = '10.0.0.5:11434' (not this machine)"),
        ('db = "../elsewhere.db"\n', "db = '../elsewhere.db' (outside"),
        ('db = "/tmp/collect/lib.db"\n', "db = '/tmp/collect/lib.db' (outside"),
        ('db = "~/lib.db"\n', "(outside"),
    ],
)
def test_a_project_file_may_not_redirect_data(project: Path, content: str, reason: str) -> None:
    (project / "ragchat.toml").write_text(content + "top_k = 5\n")
    with pytest.raises(UntrustedProjectConfig) as caught:
        load_settings(environ={}, cwd=project)
    message = str(caught.value)
    assert reason in message and str(project / "ragchat.toml") in message
    assert "trust_project_config = true" in message and "\n" not in message


def test_a_db_reached_through_a_symlink_out_of_the_folder_is_outside(
    project: Path, tmp_path: Path
) -> None:
    (tmp_path / "far").mkdir()
    (project / "data").symlink_to(tmp_path / "far")
    (project / "ragchat.toml").write_text('db = "data/lib.db"\n')
    with pytest.raises(UntrustedProjectConfig, match="outside"):
        load_settings(environ={}, cwd=project)


@pytest.mark.parametrize(
    "content",
    [
        'db = "lib.db"\n',
        'db = "sub/../lib.db"\n',
        'ollama_host = "http://127.0.0.1:11500"\n',
        'ollama_host = "localhost:11434"\n',
        f'ollama_host = "{REMOTE}"\nollama = "off"\n',  # off: nothing is sent
        "top_k = 3\nvector_weight = 0.5\n",
    ],
)
def test_what_keeps_data_here_is_allowed(project: Path, content: str) -> None:
    (project / "ragchat.toml").write_text(content)
    load_settings(environ={}, cwd=project)


def test_the_users_own_settings_and_flags_may_send_data_anywhere(project: Path) -> None:
    user_toml(f'ollama_host = "{REMOTE}"\ndb = "/tmp/x/lib.db"\n')
    settings, _ = load_settings(environ={}, cwd=project)
    assert settings.ollama_host == REMOTE
    settings, _ = load_settings({"db": "/tmp/y.db"}, {"RAGCHAT_OLLAMA_HOST": REMOTE}, project)
    assert (settings.ollama_host, str(settings.db)) == (REMOTE, "/tmp/y.db")
    # and a value the user overrides no longer counts against the project file
    (project / "ragchat.toml").write_text(f'ollama_host = "{REMOTE}"\n')
    load_settings(environ={"RAGCHAT_OLLAMA_HOST": "http://127.0.0.1:1"}, cwd=project)


def test_the_users_config_may_trust_every_project_file(project: Path) -> None:
    (project / "ragchat.toml").write_text(f'ollama_host = "{REMOTE}"\n')
    user_toml("trust_project_config = true\n")
    assert load_settings(environ={}, cwd=project)[0].ollama_host == REMOTE
    user_toml('trust_project_config = "yes please"\n')
    with pytest.raises(ConfigError, match="invalid value for trust_project_config"):
        load_settings(environ={}, cwd=project)


def test_a_project_file_cannot_trust_itself(project: Path) -> None:
    (project / "ragchat.toml").write_text(
        f'trust_project_config = true\nollama_host = "{REMOTE}"\n'
    )
    with pytest.raises(ConfigError, match="trust_project_config can only be set in your own"):
        load_settings(environ={}, cwd=project)


def test_a_trusted_folder_is_remembered_for_that_folder_only(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    for folder in (project, other):
        (folder / "ragchat.toml").write_text(f'ollama_host = "{REMOTE}"\n')
    trust_folder(project)
    assert load_settings(environ={}, cwd=project)[0].ollama_host == REMOTE
    with pytest.raises(UntrustedProjectConfig):
        load_settings(environ={}, cwd=other)
    remembered = user_config_dir() / TRUSTED_FILE
    assert remembered.read_text() == f"{project}\n" and remembered.stat().st_mode & 0o777 == 0o600


# --- through the CLI ---------------------------------------------------------------------------


def test_without_a_terminal_the_command_is_refused_in_one_line(project: Path, runner) -> None:
    (project / "ragchat.toml").write_text(f'ollama_host = "{REMOTE}"\n')
    result = invoke(runner, "config")
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert "trust_project_config = true" in result.output
    assert not (user_config_dir() / TRUSTED_FILE).exists()


@pytest.mark.parametrize("answer", ["y", "n"])
def test_in_a_terminal_the_user_confirms_once_per_folder(
    project: Path, runner, monkeypatch, answer: str
) -> None:
    (project / "ragchat.toml").write_text(f'ollama_host = "{REMOTE}"\n')
    monkeypatch.setattr(cli, "_interactive", lambda: True)
    result = invoke(runner, "config", input=f"{answer}\n")
    assert "asks to send your data elsewhere" in result.output and "(remembered)?" in result.output
    if answer == "n":
        assert result.exit_code == 1 and "Error: " in result.output
        assert not (user_config_dir() / TRUSTED_FILE).exists()
        return
    assert result.exit_code == 0, result.output
    assert REMOTE in result.output
    monkeypatch.setattr(
        cli, "_interactive", lambda: False
    )  # remembered: not asked again, even in a script
    again = invoke(runner, "config")
    assert again.exit_code == 0 and "asks to send" not in again.output
