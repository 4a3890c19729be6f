"""Configuration: defaults, the example file, and clear errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from hill.config import Settings, load_settings, parse_settings
from hill.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[1] / "config.example.toml"


def test_no_file_means_the_defaults() -> None:
    settings = load_settings(None)
    assert settings == Settings()
    assert (settings.hill.size, settings.hill.ranking) == (47, "markov")
    assert settings.irc.command == "!bfjoust"
    assert settings.web.url == "http://127.0.0.1:8080/"


def test_the_example_is_the_defaults_and_shows_every_key() -> None:
    settings = load_settings(EXAMPLE)
    defaults = Settings()
    # data_dir is resolved against the example's folder
    assert settings.hill.data_dir == EXAMPLE.parent / "var"
    assert dataclasses.replace(settings, hill=defaults.hill) == defaults
    text = EXAMPLE.read_text()
    for section in (defaults.hill, defaults.irc, defaults.web, defaults.ladder, defaults.cluster):
        for field in dataclasses.fields(section):
            assert f"\n{field.name} = " in text, field.name


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[irc]\nnikc = "x"\n', '[irc] nikc: unknown key (did you mean "nick"?)'),
        ("[foo]\n", "unknown section [foo]"),
        ('[hill]\nsize = "big"\n', "[hill] size: must be an integer, got 'big'"),
        ("[hill]\nsize = true\n", "[hill] size: must be an integer, got True"),
        ("[hill]\nsize = 1\n", "[hill] size: must be an integer from 2 to 1000, got 1"),
        ('[hill]\nranking = "elo"\n', "[hill] ranking: must be one of markov"),
        ('[irc]\nchannels = ["bfjoust"]\n', "[irc] channels: must be channel names"),
        ("[irc]\nchannels = [1]\n", "[irc] channels: must be a list of strings"),
        ('[irc]\nsasl_username = "bot"\n', "sasl_username and sasl_password go together"),
        ("[irc]\nport = 70000\n", "[irc] port: must be a port from 1 to 65535"),
        ('[irc]\ncommand = "! bf"\n', "[irc] command: must be a prefix without spaces"),
        ("[web]\nport = 0\n", "[web] port: must be a port"),
        ('[cluster]\nscheduler = "host:8786"\n', "[cluster] scheduler: must be empty (local"),
        ("[hill\nsize = 3\n", "config.toml: "),
    ],
)
def test_errors_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_values_are_typed(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[hill]\nsize = 5\ndata_dir = "data"\n[irc]\nfetch_timeout_seconds = 3\n'
        'channels = ["#a", "&b"]\n[web]\npublic_url = "https://hill.example.org"\n',
    )
    settings = load_settings(path)
    assert settings.hill.size == 5
    assert settings.hill.data_dir == tmp_path / "data"
    assert settings.irc.fetch_timeout_seconds == 3.0
    assert settings.irc.channels == ("#a", "&b")
    assert settings.web.url == "https://hill.example.org/"


def test_parse_settings_without_a_file() -> None:
    settings = parse_settings({"hill": {"size": 3}})
    assert settings.hill.size == 3 and settings.irc == Settings().irc
