"""``dialectic eval`` end to end through Typer: inputs, outputs, exit codes and stderr reports."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dialectic.core.changes import DebateCreated
from dialectic.core.domain import DebateState
from dialectic.core.errors import ProviderAuthError
from dialectic.eval.output import CSV_COLUMNS
from dialectic.eval.scores import CRITERION_KEYS
from dialectic.llm.base import CompletionRequest
from dialectic.llm.scripted import Script, ScriptedProvider, ScriptedReply
from dialectic.store import open_store

Cli = Callable[..., Any]


@pytest.fixture(autouse=True)
def _no_api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys from the developer's shell must not leak in; set-then-delete so teardown restores them."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.setenv(name, "x")
        monkeypatch.delenv(name)


def test_a_debate_exported_as_json_is_scored_into_a_table(
    cli: Cli, write_config: Callable[..., Path], debate_file: Path
) -> None:
    result = cli("-c", write_config(["alpha", "beta"]), "-d", debate_file)
    assert result.exit_code == 0, result.stderr
    assert "Evaluation of debate deb-20240501-090000-ABCD" in result.stdout
    overall = next(line for line in result.stdout.splitlines() if "Overall" in line)
    assert [c.strip() for c in overall.strip("│ ").split("│")] == [
        "Overall",
        "8.00",
        "0.00",
        "8",
        "8",
        "2",
        "8.00",
        "8.00",
    ]
    assert "Evaluating debate deb-20240501-090000-ABCD with 2 evaluator(s), 1 sample(s) each" in result.stderr


def test_a_stored_debate_is_found_by_its_id(
    cli: Cli, tmp_path: Path, write_config: Callable[..., Path], solved_state: DebateState
) -> None:
    location = tmp_path / "store"
    with open_store(location) as store:
        store.append(solved_state.id, DebateCreated(state=solved_state))
    out = tmp_path / "result.json"
    result = cli("-c", write_config(["alpha"]), "-d", solved_state.id, "--store", location, "-o", out)
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["debateId"] == solved_state.id
    assert data["source"].startswith("store:") and "debates.sqlite3" in data["source"]
    assert f"Wrote the evaluation of {solved_state.id} to {out}" in result.stderr
    assert result.stdout == ""


def test_an_unknown_debate_id_is_exit_2(cli: Cli, tmp_path: Path, write_config: Callable[..., Path]) -> None:
    result = cli("-c", write_config(["alpha"]), "-d", "deb-nope", "--store", tmp_path / "store")
    assert result.exit_code == 2
    assert "no debate with id 'deb-nope'" in result.stderr


def test_a_debate_without_a_final_solution_is_exit_2(
    cli: Cli, tmp_path: Path, write_config: Callable[..., Path], solved_state: DebateState
) -> None:
    unsolved = solved_state.model_copy(update={"final_solution": None, "status": "suspended"})
    path = tmp_path / "unsolved.json"
    path.write_text(json.dumps(unsolved.to_json_dict()), encoding="utf-8")
    result = cli("-c", write_config(["alpha"]), "-d", path)
    assert result.exit_code == 2
    assert "has no final solution (status: suspended)" in result.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "debate file not found"),
        ("{not json", "invalid JSON in debate file"),
        ('{"id": "deb-1"}', "is not an exported debate: problem: Field required"),
    ],
)
def test_an_unusable_debate_file_is_exit_2(
    cli: Cli, tmp_path: Path, write_config: Callable[..., Path], content: str | None, expected: str
) -> None:
    path = tmp_path / "debate-in.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = cli("-c", write_config(["alpha"]), "-d", path)
    assert result.exit_code == 2
    assert expected in result.stderr


def test_a_bad_config_is_exit_4_naming_the_field(
    cli: Cli, write_config: Callable[..., Path], debate_file: Path
) -> None:
    beta = {"id": "beta", "name": "Beta", "model": "m", "provider": "scripted", "timeout": -5}
    config = write_config(["alpha", beta])
    result = cli("-c", config, "-d", debate_file)
    assert result.exit_code == 4
    assert "agents[1].timeout" in result.stderr


def test_a_missing_api_key_is_exit_4_before_any_call(
    cli: Cli, write_config: Callable[..., Path], debate_file: Path
) -> None:
    config = write_config([{"id": "alpha", "name": "Alpha", "model": "gpt-4o-mini", "provider": "openai"}])
    result = cli("-c", config, "-d", debate_file)
    assert result.exit_code == 4
    assert "OPENAI_API_KEY" in result.stderr


@pytest.mark.parametrize(("args", "expected"), [(["--samples", "0"], "--samples"), (["-o", "x.txt"], ".json, .csv")])
def test_bad_flags_are_exit_2(
    cli: Cli, write_config: Callable[..., Path], debate_file: Path, args: list[str], expected: str
) -> None:
    result = cli("-c", write_config(["alpha"]), "-d", debate_file, *args)
    assert result.exit_code == 2
    assert expected in result.stderr


def _failing(model: str, scripted_reply: Callable[..., ScriptedReply], score: float = 7) -> ScriptedProvider:
    def respond(request: CompletionRequest) -> Script:
        return ProviderAuthError(f"no access to {model}") if request.model == model else scripted_reply(score)

    return ScriptedProvider(respond)


def test_a_failing_evaluator_is_reported_on_stderr_and_the_rest_averaged(
    cli: Cli,
    tmp_path: Path,
    write_config: Callable[..., Path],
    debate_file: Path,
    use_provider: Callable[[ScriptedProvider], ScriptedProvider],
    scripted_reply: Callable[..., ScriptedReply],
) -> None:
    use_provider(_failing("model-beta", scripted_reply))
    out = tmp_path / "eval.md"
    result = cli("-c", write_config(["alpha", "beta"]), "-d", debate_file, "-o", out, "--samples", "2")
    assert result.exit_code == 0, result.stderr
    assert "evaluator 'beta' (Beta) failed (sample 1 of 2): no access to model-beta" in result.stderr
    assert "(sample 2 of 2)" in result.stderr
    text = out.read_text(encoding="utf-8")
    assert "| Overall | 7.00 | 0.00 | 7 | 7 | 2 |" in text
    assert "- Evaluators: 1 of 2 succeeded; samples per evaluator: 2" in text


def test_when_every_evaluator_fails_the_exit_code_is_3(
    cli: Cli,
    write_config: Callable[..., Path],
    debate_file: Path,
    use_provider: Callable[[ScriptedProvider], ScriptedProvider],
) -> None:
    use_provider(ScriptedProvider(lambda request: ProviderAuthError(f"no access to {request.model}")))
    result = cli("-c", write_config(["alpha", "beta"]), "-d", debate_file)
    assert result.exit_code == 3
    assert "evaluator 'alpha' (Alpha) failed: no access to model-alpha" in result.stderr
    assert "evaluator 'beta' (Beta) failed: no access to model-beta" in result.stderr
    assert "all 2 evaluation(s) failed" in result.stderr
    assert "Evaluation of debate" not in result.stdout


def test_csv_output_accumulates_one_row_per_run(
    cli: Cli,
    tmp_path: Path,
    write_config: Callable[..., Path],
    debate_file: Path,
    use_provider: Callable[[ScriptedProvider], ScriptedProvider],
    scripted_reply: Callable[..., ScriptedReply],
) -> None:
    out = tmp_path / "runs.csv"
    config = write_config(["alpha"])
    for score in (6, 9):
        use_provider(ScriptedProvider(lambda request, s=score: scripted_reply(s)))
        result = cli("-c", config, "-d", debate_file, "-o", out)
        assert result.exit_code == 0, result.stderr
        assert "Appended the evaluation" in result.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert out.read_text(encoding="utf-8").count("evaluatedAt") == 1
    assert [r["overall"] for r in rows] == ["6.00", "9.00"]
    assert list(rows[0]) == list(CSV_COLUMNS)


def test_verbose_shows_prompt_sources_and_each_evaluation(
    cli: Cli, tmp_path: Path, write_config: Callable[..., Path], debate_file: Path
) -> None:
    (tmp_path / "sys.md").write_text("Be strict.", encoding="utf-8")
    config = write_config(
        [
            {
                "id": "alpha",
                "name": "Alpha",
                "model": "m1",
                "provider": "scripted",
                "systemPromptPath": "sys.md",
                "userPromptPath": "missing.md.j2",
            }
        ]
    )
    result = cli("-c", config, "-d", debate_file, "-v")
    assert result.exit_code == 0, result.stderr
    assert "warning: evaluator 'alpha' user prompt: cannot read" in result.stderr
    assert f"system prompt: {(tmp_path / 'sys.md').resolve()}, user prompt: built-in default" in result.stderr
    assert "evaluator 'alpha' sample 1: overall 8," in result.stderr


def test_a_missing_env_file_is_exit_2(
    cli: Cli, tmp_path: Path, write_config: Callable[..., Path], debate_file: Path
) -> None:
    result = cli("-c", write_config(["alpha"]), "-d", debate_file, "--env-file", tmp_path / "absent.env")
    assert result.exit_code == 2 and "env file not found" in result.stderr


def test_scores_that_follow_a_pattern_down_the_list_are_warned_about(
    cli: Cli,
    tmp_path: Path,
    write_config: Callable[..., Path],
    debate_file: Path,
    use_provider: Callable[[ScriptedProvider], ScriptedProvider],
    scripted_reply: Callable[..., ScriptedReply],
) -> None:
    varied = dict(zip(CRITERION_KEYS, [7, 5, 8, 6, 9, 4, 7, 7], strict=True))
    replies = {"model-alpha": scripted_reply(10), "model-beta": scripted_reply(varied)}
    use_provider(ScriptedProvider(lambda request: replies[request.model]))
    out = tmp_path / "eval.json"
    result = cli("-c", write_config(["alpha", "beta"]), "-d", debate_file, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert (
        "warning: evaluator 'alpha' (Alpha): the criterion scores follow a pattern down the list (every "
        "criterion scored 10), not the solution;" in " ".join(result.stderr.split())
    )
    assert "'beta'" not in result.stderr
    alpha, beta = json.loads(out.read_text(encoding="utf-8"))["evaluators"]
    assert alpha["samples"][0]["scorePattern"] == "every criterion scored 10"
    assert beta["samples"][0]["scorePattern"] is None
