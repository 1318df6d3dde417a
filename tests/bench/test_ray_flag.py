"""``dialectic bench --ray`` where no cluster is needed: without Ray installed, an empty address, and the
address a cluster is probed at. These run whether or not Ray is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectic.cluster.connection import RAY_MISSING, host_and_port
from tests.batch.ray_support import Place


def test_ray_not_installed_is_a_one_line_usage_error_before_anything_is_created(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker" / "ray"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("no ray here")\n')
    place = Place(tmp_path)
    env = place.env()
    env["PYTHONPATH"] = ":".join([str(blocker.parent), *filter(None, [env.get("PYTHONPATH")])])
    for flags in (["--ray", "auto"], ["--ray", "127.0.0.1:6379"]):
        result = place.run("bench", "arithmetic", "-n", "2", "--provider", "scripted", "--model", "m", *flags, env=env)
        assert result.returncode == 2, result.stderr
        assert result.stderr == f"error: {RAY_MISSING}\n"
    assert not (place.home / "bench.sqlite3").exists()


@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_address_is_a_usage_error(tmp_path: Path, value: str) -> None:
    place = Place(tmp_path)
    result = place.run("bench", "arithmetic", "-n", "2", "--provider", "scripted", "--model", "m", "--ray", value)
    assert result.returncode == 2 and "--ray: give a cluster address" in result.stderr, result.stderr
    assert not (place.home / "bench.sqlite3").exists()


@pytest.mark.parametrize(
    ("address", "target"),
    [
        ("127.0.0.1:6379", ("127.0.0.1", 6379)),
        ("ray://head:10001", ("head", 10001)),
        ("[::1]:6379", ("::1", 6379)),
        ("auto", None),
        ("head", None),
    ],
)
def test_the_probed_host_and_port(address: str, target: tuple[str, int] | None) -> None:
    assert host_and_port(address) == target
