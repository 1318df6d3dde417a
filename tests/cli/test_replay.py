"""What ``dialectic replay`` runs (:func:`dialectic.loading.replay.replay_request`) and ``debate --cache``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialectic.core.config import SystemConfig
from dialectic.core.domain import CONFIG_DIR_KEY, DebateState
from dialectic.core.errors import EXIT_INVALID_ARGS, DebateStateError, InvalidArgumentsError
from dialectic.loading.config import with_judge
from dialectic.loading.replay import replay_request
from dialectic.loading.setup import Overrides, prepare_config
from dialectic.testing.harness import make_config


def saved(config: SystemConfig, directory: Path, **fields: object) -> DebateState:
    snapshot = config.to_json_dict()
    snapshot[CONFIG_DIR_KEY] = str(directory)
    return DebateState.model_validate({"id": "deb-1", "problem": "Design it", "config": snapshot, **fields})


def test_a_replay_runs_the_saved_config_reading_the_cache_with_the_originals_seed(tmp_path: Path) -> None:
    original = saved(make_config(), tmp_path, context="pasted files", seed="deb-0")

    request = replay_request(original).request

    assert request.problem == "Design it" and request.config_dir == tmp_path
    assert request.config.debate.cache == "read"
    assert request.config.agents == make_config().agents and request.config.judge == make_config().judge
    assert (request.replay_of, request.seed, request.pasted_files) == ("deb-1", "deb-0", "pasted files")


def test_a_replay_lays_the_judge_flags_over_the_config() -> None:
    original = saved(make_config(), Path("."))

    judge = replay_request(original, judge_model="bigger").request.config.judge

    assert (judge.provider, judge.model) == ("scripted", "bigger")
    assert replay_request(original).request.config.judge.model == "m"


def test_a_replay_with_a_config_file_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps(make_config(rounds=2).to_json_dict()), encoding="utf-8")
    original = saved(make_config(), Path("/elsewhere"), context="pasted files")

    request = replay_request(original, path).request

    assert request.config.debate.rounds == 2 and request.config.debate.cache == "read"
    assert request.config_dir == tmp_path and request.pasted_files is None


def test_a_debate_saved_without_its_config_cannot_be_replayed_without_one() -> None:
    with pytest.raises(DebateStateError, match="no saved configuration to replay; give one with -c") as caught:
        replay_request(DebateState(id="deb-1", problem="p"))
    assert caught.value.exit_code == EXIT_INVALID_ARGS


def test_an_empty_judge_model_is_refused_by_its_flag() -> None:
    with pytest.raises(InvalidArgumentsError, match="--judge must not be empty"):
        with_judge(make_config(), model=" ")


def test_the_cache_flag_sets_debate_cache_to_read(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(make_config().to_json_dict()), encoding="utf-8")

    assert prepare_config(path, Overrides(cache="read"), check=False).config.debate.cache == "read"
    assert prepare_config(path, Overrides(), check=False).config.debate.cache == "off"
    assert SystemConfig.model_validate({**make_config().to_json_dict(), "debate": {"cache": "read"}}).debate.cache
