"""``dialectic models``: the models a server offers, and one clear line when it is down."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dialectic.testing.fake_server import MODEL_PATH, FakeLLMServer, closed_port_url


def dialectic(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("dialectic")), *args]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_models_lists_a_llamacpp_servers_model(tmp_path: Path) -> None:
    with FakeLLMServer(strict=True) as server:
        result = dialectic("models", "--provider", "llamacpp", "--base-url", server.openai_base_url, cwd=tmp_path)
        as_json = dialectic("models", "-p", "llamacpp", "--base-url", server.openai_base_url, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [MODEL_PATH]
    assert json.loads(as_json.stdout) == [{"id": MODEL_PATH, "contextWindow": None}]


def test_models_of_a_server_that_is_down_says_so_in_one_line(tmp_path: Path) -> None:
    result = dialectic("models", "--provider", "ollama", "--base-url", closed_port_url(), cwd=tmp_path)
    assert result.returncode == 3
    assert result.stderr.startswith("error: ollama: cannot connect to http://127.0.0.1:")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_models_of_the_embedded_provider_is_its_catalogue(tmp_path: Path) -> None:
    result = dialectic("models", "--provider", "local", cwd=tmp_path)
    assert result.returncode == 0
    assert "qwen2.5-0.5b" in result.stdout.split()


def test_models_of_a_provider_without_a_listing_is_refused(tmp_path: Path) -> None:
    result = dialectic("models", "--provider", "scripted", cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot list its models here" in result.stderr


def test_models_of_an_unknown_provider_is_a_configuration_error(tmp_path: Path) -> None:
    result = dialectic("models", "--provider", "nope", cwd=tmp_path)
    assert result.returncode == 4 and "unknown provider 'nope'" in result.stderr
