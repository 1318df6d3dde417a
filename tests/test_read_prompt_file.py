"""Prompt files named in a configuration go through the user-file reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.agents.participants import read_prompt_file
from dialectic.core.errors import EXIT_CONFIG_ERROR, ConfigError


def test_a_prompt_file_is_read_relative_to_the_config_directory(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("You are terse.", encoding="utf-8")
    warnings: list[str] = []
    prompt = read_prompt_file("p.md", tmp_path, warnings, "agent 'a' system prompt")
    assert prompt.text == "You are terse." and prompt.source.path == str(tmp_path / "p.md")
    assert warnings == []


@pytest.mark.parametrize(
    ("make", "needle"),
    [("missing", "No such file"), ("empty", "is empty"), ("latin1", "is not UTF-8 text")],
)
def test_missing_empty_or_non_utf8_prompts_are_warnings_and_the_builtin(tmp_path: Path, make: str, needle: str) -> None:
    if make == "empty":
        (tmp_path / "p.md").write_text("  \n", encoding="utf-8")
    elif make == "latin1":
        (tmp_path / "p.md").write_bytes("caf\xe9".encode("latin-1"))
    warnings: list[str] = []
    prompt = read_prompt_file("p.md", tmp_path, warnings, "agent 'a' system prompt")
    assert prompt.text is None
    assert len(warnings) == 1 and needle in warnings[0] and "built-in prompt" in warnings[0]


def test_device_and_oversize_prompts_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="agent 'a' system prompt /dev/zero is a device") as info:
        read_prompt_file("/dev/zero", tmp_path, [], "agent 'a' system prompt")
    assert info.value.exit_code == EXIT_CONFIG_ERROR
    (tmp_path / "big.md").write_bytes(b"x" * (256 * 1024 + 1))
    with pytest.raises(ConfigError, match="larger than 256 KB"):
        read_prompt_file("big.md", tmp_path, [], "agent 'a' system prompt")
