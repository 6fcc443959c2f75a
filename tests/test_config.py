from __future__ import annotations

import re
from pathlib import Path

import pytest

from brainiac.core.errors import ConfigError
from brainiac.store import config
from brainiac.store.vault import template_dir


def test_precedence_defaults_file_environment_flags(tmp_path: Path) -> None:
    (tmp_path / ".brainiac").mkdir()
    (tmp_path / ".brainiac/config.toml").write_text("[context]\nbudget = 1000\nrecent_events = 5\n")
    assert config.load(tmp_path, environ={}).budget == 1000
    env = {"BRAINIAC_CONTEXT_BUDGET": "1500"}
    cfg = config.load(tmp_path, environ=env)
    assert (cfg.budget, cfg.recent_events) == (1500, 5)
    assert config.load(tmp_path, environ=env, overrides={"budget": 700}).budget == 700
    assert config.load(tmp_path / "none", environ={}) == config.Config()


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[context\n", "not valid TOML"),
        ("[context]\nbudget = 'lots'\n", "[context] budget: expected int"),
        ("[context]\nbudget = 0\n", "out of range"),
        ("context = 3\n", "[context] must be a table"),
        ("[vault]\nprivate_folders = 3\n", "[vault] private_folders"),
    ],
)
def test_bad_settings_name_the_file_and_the_key(tmp_path: Path, toml: str, needle: str) -> None:
    (tmp_path / ".brainiac").mkdir()
    (tmp_path / ".brainiac/config.toml").write_text(toml)
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, environ={})
    assert ".brainiac/config.toml" in str(info.value) and needle in str(info.value)


def test_the_template_documents_every_setting_with_its_default() -> None:
    text = (template_dir() / config.CONFIG_RELPATH).read_text()
    sections = dict.fromkeys(s.section for s in config.SETTINGS)
    for section in sections:
        assert f"[{section}]" in text
    defaults = config.Config()
    for s in config.SETTINGS:
        m = re.search(rf"^# {s.key} = (.+)$", text, re.M)
        assert m, f"{s.key} is not documented in the template's config.toml"
        value = m.group(1).strip()
        expected = getattr(defaults, s.attr)
        if isinstance(expected, str):
            assert value == f'"{expected}"', s.key
        elif s.kind is bool:
            assert value == str(expected).lower(), s.key
        elif s.kind is dict:
            assert value == "{}" and expected == (), s.key
        else:
            assert value == ("[]" if expected == () else repr(expected)), s.key
