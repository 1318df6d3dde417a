"""``dialectic batch --ray auto``: joins the Ray cluster running here, else starts a local one for the command.

Skipped where Ray is not installed (the ``[ray]`` extra)."""

from __future__ import annotations

from pathlib import Path

from dialectic.testing.fake_server import FakeLLMServer
from tests.batch.ray_support import Place, require_ray, result_lines

require_ray()


def test_auto_runs_the_batch_on_a_local_cluster(tmp_path: Path) -> None:
    place = Place(tmp_path)
    with FakeLLMServer(latency_s=0.01) as server:
        config = place.write_config(server)
        problems = place.write_problems(4)
        out = tmp_path / "results.jsonl"
        result = place.run("batch", str(problems), "-c", str(config), "-o", str(out), "-k", "4", "--ray", "auto")
    assert result.returncode == 0, result.stderr
    assert "ray: joined the cluster at" in result.stderr and "workers (pid" in result.stderr
    lines = result_lines(out)
    assert sorted(line["id"] for line in lines) == [f"p{i:03d}" for i in range(4)]
    assert {line["status"] for line in lines} == {"completed"}
    assert "4/4 debates finished (4 completed)" in result.stdout
