"""A new debate sent over the web API may not name a context directory: the server's files are not the client's."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.core.errors import ConfigError
from dialectic.testing.harness import make_config
from dialectic.web.new_debate import ServerConfig, submitted_config


@pytest.mark.parametrize("context", [{"dir": "/etc"}, {"dir": ".", "judgeTools": True}, "/etc"])
def test_debate_context_is_refused(tmp_path: Path, context: dict[str, object]) -> None:
    server = ServerConfig(make_config(agents=2), tmp_path)
    with pytest.raises(
        ConfigError, match=r"debate\.context(\.dir: not accepted over the API \(a context directory|: )"
    ):
        submitted_config({"debate": {"rounds": 1, "context": context}}, server)


def test_a_debate_section_without_context_is_accepted(tmp_path: Path) -> None:
    server = ServerConfig(make_config(agents=2), tmp_path)
    config = submitted_config({"debate": {"rounds": 2}}, server)
    assert config.debate.rounds == 2 and config.debate.context.dir is None


def test_context_settings_naming_no_directory_are_accepted(tmp_path: Path) -> None:
    """A whole configuration as exported carries the context section's defaults: no directory, nothing to read."""
    server = ServerConfig(make_config(agents=2), tmp_path)
    config = submitted_config({"debate": {"rounds": 1, "context": {"dir": None, "mode": "tools"}}}, server)
    assert config.debate.context.dir is None
