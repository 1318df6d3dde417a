"""Joining and verifying local model files, on a fake catalogue entry made of small fake parts."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import struct
import sys
from pathlib import Path

import pytest

from dialectic.core.errors import ConfigError
from dialectic.llm import local_models
from dialectic.llm.local_models import (
    CATALOGUE,
    ModelSpec,
    PartMissing,
    default_cache_dir,
    gguf_context_length,
    prepare_model,
    resolve_model,
)

PART_SIZES = (1000, 1000, 337)


def _payload() -> bytes:
    return bytes((i * 7 + 3) % 256 for i in range(sum(PART_SIZES)))


@pytest.fixture
def parts(tmp_path: Path) -> dict[str, Path]:
    """Three fake part packages' data files, by package name."""
    data = _payload()
    files: dict[str, Path] = {}
    offset = 0
    for index, size in enumerate(PART_SIZES, start=1):
        path = tmp_path / "site" / f"fake_part{index}" / "data" / f"part{index:02d}.bin"
        path.parent.mkdir(parents=True)
        path.write_bytes(data[offset : offset + size])
        files[f"fake-part{index}"] = path
        offset += size
    return files


@pytest.fixture
def spec(parts: dict[str, Path]) -> ModelSpec:
    data = _payload()
    return ModelSpec(
        name="fake-model",
        packages=tuple(parts),
        version="1.0.0",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        upstream="nowhere",
        licence="MIT",
    )


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def _locator(parts: dict[str, Path]) -> local_models.Locator:
    def locate(package: str) -> Path:
        if package not in parts:
            raise PartMissing(package)
        return parts[package]

    return locate


def _leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in (cache / "models").iterdir() if not p.name.endswith(".lock"))


def test_good_join_makes_the_verified_file_and_a_stamp(parts: dict[str, Path], spec: ModelSpec, cache: Path) -> None:
    messages: list[str] = []
    path = prepare_model(spec, cache, messages.append, locate=_locator(parts))
    assert path == cache / "models" / "fake-model.gguf"
    assert path.read_bytes() == _payload()
    stamp = json.loads((cache / "models" / "fake-model.gguf.stamp.json").read_text())
    assert stamp["sha256"] == spec.sha256 and stamp["size"] == spec.size
    assert any("part 3/3" in m for m in messages)
    assert _leftovers(cache) == ["fake-model.gguf", "fake-model.gguf.stamp.json"]


def test_missing_part_names_the_pip_install_that_fixes_it(parts: dict[str, Path], spec: ModelSpec, cache: Path) -> None:
    del parts["fake-part2"]
    with pytest.raises(ConfigError) as caught:
        prepare_model(spec, cache, locate=_locator(parts))
    assert caught.value.exit_code == 4
    message = str(caught.value)
    assert "missing fake-part2." in message
    assert f"{sys.executable} -m pip install fake-part2==1.0.0 (" in message
    assert not (cache / "models" / "fake-model.gguf").exists()


def test_corrupted_part_is_an_error_and_leaves_nothing_behind(
    parts: dict[str, Path], spec: ModelSpec, cache: Path
) -> None:
    corrupt = bytearray(parts["fake-part2"].read_bytes())
    corrupt[10] ^= 0xFF
    parts["fake-part2"].write_bytes(bytes(corrupt))
    with pytest.raises(ConfigError, match="corrupt"):
        prepare_model(spec, cache, locate=_locator(parts))
    assert _leftovers(cache) == []


def test_part_of_the_wrong_size_is_refused_before_joining(parts: dict[str, Path], spec: ModelSpec, cache: Path) -> None:
    parts["fake-part3"].write_bytes(b"short")
    with pytest.raises(ConfigError, match="expected 2337"):
        prepare_model(spec, cache, locate=_locator(parts))
    assert _leftovers(cache) == []


def test_leftover_temp_file_from_an_interrupted_join_is_cleaned_up(
    parts: dict[str, Path], spec: ModelSpec, cache: Path
) -> None:
    models = cache / "models"
    models.mkdir(parents=True)
    (models / ".fake-model.gguf.abc123.partial").write_bytes(b"half a model")
    path = prepare_model(spec, cache, locate=_locator(parts))
    assert path.read_bytes() == _payload()
    assert _leftovers(cache) == ["fake-model.gguf", "fake-model.gguf.stamp.json"]


def test_truncated_final_file_with_a_stale_stamp_is_rebuilt(
    parts: dict[str, Path], spec: ModelSpec, cache: Path
) -> None:
    path = prepare_model(spec, cache, locate=_locator(parts))
    with path.open("r+b") as handle:
        handle.truncate(500)
    assert prepare_model(spec, cache, locate=_locator(parts)).read_bytes() == _payload()


def test_same_size_corruption_is_caught_once_the_mtime_changes(
    parts: dict[str, Path], spec: ModelSpec, cache: Path
) -> None:
    path = prepare_model(spec, cache, locate=_locator(parts))
    before = path.stat().st_mtime_ns
    path.write_bytes(b"\0" * spec.size)
    os.utime(path, ns=(before + 10**9, before + 10**9))
    messages: list[str] = []
    prepare_model(spec, cache, messages.append, locate=_locator(parts))
    assert path.read_bytes() == _payload()
    assert any("does not match its SHA-256" in m for m in messages)


def test_second_call_reuses_the_file_without_rehashing(
    parts: dict[str, Path], spec: ModelSpec, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = prepare_model(spec, cache, locate=_locator(parts))

    def no_hashing(path: Path) -> str:
        raise AssertionError(f"{path} was hashed again")

    def no_parts(package: str) -> Path:
        raise AssertionError("parts were looked up again")

    monkeypatch.setattr(local_models, "sha256_file", no_hashing)
    assert prepare_model(spec, cache, locate=no_parts) == first


def test_file_without_a_stamp_is_hashed_once_then_stamped(
    parts: dict[str, Path], spec: ModelSpec, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = prepare_model(spec, cache, locate=_locator(parts))
    (cache / "models" / "fake-model.gguf.stamp.json").unlink()
    hashed: list[Path] = []
    real = local_models.sha256_file

    def counting(target: Path) -> str:
        hashed.append(target)
        return real(target)

    monkeypatch.setattr(local_models, "sha256_file", counting)
    assert prepare_model(spec, cache, locate=_locator(parts)) == path
    assert prepare_model(spec, cache, locate=_locator(parts)) == path
    assert hashed == [path]


def test_default_locator_finds_a_part_package_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site" / "dialectic_fake_part_pkg"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('part packages must never be imported')\n")
    (package / "data" / "part01.bin").write_bytes(b"x")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert local_models.find_part("dialectic-fake-part-pkg") == package / "data" / "part01.bin"
    with pytest.raises(PartMissing):
        local_models.find_part("dialectic-no-such-part-pkg")


def test_resolve_model_names_aliases_and_paths(tmp_path: Path) -> None:
    assert resolve_model("qwen2.5-0.5b") is CATALOGUE["qwen2.5-0.5b"]
    assert resolve_model("Qwen2.5-Coder-0.5B-Instruct") is CATALOGUE["qwen2.5-0.5b"]
    assert resolve_model("qwen2.5-1.5b") is CATALOGUE["qwen2.5-1.5b"]
    assert resolve_model(str(tmp_path / "my.GGUF")) == tmp_path / "my.GGUF"
    assert resolve_model("~/models/x.gguf") == Path.home() / "models" / "x.gguf"
    with pytest.raises(ConfigError, match="unknown local model 'gpt-4o'"):
        resolve_model("gpt-4o")


def test_default_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALECTIC_CACHE", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("DIALECTIC_CACHE")
    assert default_cache_dir() == tmp_path / "xdg" / "dialectic"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "dialectic"


def _gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def test_gguf_context_length_is_read_from_the_header(tmp_path: Path) -> None:
    kvs = [
        _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string("qwen2"),
        _gguf_string("qwen2.block_count") + struct.pack("<II", 4, 24),
        _gguf_string("tokenizer.scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 0.0, 1.0, 2.0),
        _gguf_string("tokenizer.tokens") + struct.pack("<IIQ", 9, 8, 2) + _gguf_string("a") + _gguf_string("b"),
        _gguf_string("qwen2.context_length") + struct.pack("<II", 4, 32768),
    ]
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    assert gguf_context_length(model) == 32768
    not_gguf = tmp_path / "other.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ConfigError, match="not a GGUF model file"):
        gguf_context_length(not_gguf)


def test_the_extras_install_what_the_catalogue_and_provider_expect() -> None:
    requirements = importlib.metadata.requires("dialectic-debate") or []
    by_extra: dict[str, set[str]] = {}
    for requirement in requirements:
        spec, _, marker = requirement.partition(";")
        if "extra ==" in marker:
            extra = marker.split("extra ==")[1].strip().strip("'\"")
            by_extra.setdefault(extra, set()).add(spec.strip().replace(" ", ""))
    for model in CATALOGUE.values():
        assert set(model.requirements()) | {local_models.LLAMA_CPP_REQUIREMENT} <= by_extra[model.extra]
