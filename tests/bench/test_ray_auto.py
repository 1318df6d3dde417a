"""``dialectic bench --ray auto``: joins the Ray cluster running here, else starts a local one for the command.

Skipped where Ray is not installed (the ``[ray]`` extra), failed instead when ``DIALECTIC_REQUIRE_RAY`` is set."""

from __future__ import annotations

import json
from pathlib import Path

from dialectic.testing.fake_server import FakeLLMServer
from tests.batch.ray_support import Place, require_ray
from tests.bench.conftest import parity

require_ray()


def test_auto_runs_the_bench_on_a_local_cluster(tmp_path: Path) -> None:
    place = Place(tmp_path)
    with FakeLLMServer(parity) as server:
        agent = {"provider": "openai", "model": "fake-1", "baseUrl": server.openai_base_url}
        config = tmp_path / "config.json"
        judge = {"id": "j", "name": "J", "role": "generalist", **agent}
        agents = [{"id": "a", "name": "A", "role": "architect", **agent}]
        config.write_text(json.dumps({"agents": agents, "judge": judge}))
        out = tmp_path / "r.json"
        args = ["arithmetic", "-n", "4", "--arms", "single", "-c", str(config), "-o", str(out)]
        result = place.run("bench", *args, "--ray", "auto")
        asked = server.call_count
    assert result.returncode == 0, result.stderr
    assert "ray: joined the cluster at" in result.stderr and "workers (pid" in result.stderr
    document = json.loads(out.read_text(encoding="utf-8"))
    assert len(document["items"]) == 4 and all(set(item["arms"]) == {"single"} for item in document["items"])
    assert asked == 4
