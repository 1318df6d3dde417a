"""The package people install: the wheel and the sdist ``python -m build`` makes hold every file of
``src/dialectic`` (the prompt templates and the web page's files, not only the modules), and the
wheel, installed into a fresh virtualenv, gives a ``dialectic`` command that runs a debate.

The artifacts are those in ``dist/`` when they are newer than every source file (as ``make test``
leaves them: ``make dist`` runs first), else they are built here. The fresh virtualenv gets the
wheel's dependencies from the package index, through pip's cache; the debate runs on the built-in
scripted model, which needs no key and no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "dialectic"
DIST = ROOT / "dist"
DISTRIBUTION = "dialectic-debate"
PROJECT_FILES = ("pyproject.toml", "README.md")


def version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as file:
        found: str = tomllib.load(file)["project"]["version"]
    return found


def package_files() -> list[str]:
    """The files of ``src/dialectic`` a build takes, relative to ``src``: git's view (tracked and
    untracked files, less those .gitignore leaves out, as hatchling reads it) when this is a checkout,
    else every file but the bytecode caches."""
    git = shutil.which("git")
    listed = None
    if git and (ROOT / ".git").exists():
        result = subprocess.run(
            [git, "ls-files", "--cached", "--others", "--exclude-standard", "-z", "src/dialectic"],
            cwd=ROOT,
            capture_output=True,
            check=False,
        )
        if result.returncode == 0:
            listed = [ROOT / name for name in result.stdout.decode().split("\0") if name]
    if listed is None:
        listed = [p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted(p.relative_to(ROOT / "src").as_posix() for p in listed if p.is_file())


def newest_source() -> float:
    sources = [ROOT / "src" / name for name in package_files()] + [ROOT / name for name in PROJECT_FILES]
    return max(path.stat().st_mtime for path in sources)


@dataclass(frozen=True)
class Artifacts:
    wheel: Path
    sdist: Path


def build(out: Path) -> Artifacts:
    """``python -m build``: the sdist, then the wheel built from it."""
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return Artifacts(*(out / name for name in names()))


def names() -> tuple[str, str]:
    stem = f"{DISTRIBUTION.replace('-', '_')}-{version()}"
    return f"{stem}-py3-none-any.whl", f"{stem}.tar.gz"


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Artifacts:
    made = Artifacts(*(DIST / name for name in names()))
    fresh = (
        all(path.is_file() for path in (made.wheel, made.sdist))
        and min(made.wheel.stat().st_mtime, made.sdist.stat().st_mtime) >= newest_source()
    )
    return made if fresh else build(tmp_path_factory.mktemp("dist"))


def test_the_wheel_holds_every_file_of_the_package(artifacts: Artifacts) -> None:
    with zipfile.ZipFile(artifacts.wheel) as wheel:
        held = set(wheel.namelist())
        info = f"{DISTRIBUTION.replace('-', '_')}-{version()}.dist-info"
        metadata = wheel.read(f"{info}/METADATA").decode()
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    expected = package_files()
    assert any(name.endswith(".md.j2") for name in expected) and "dialectic/web/static/index.html" in expected
    missing = [name for name in expected if name not in held]
    assert missing == [], f"files of src/dialectic missing from {artifacts.wheel.name}: {missing}"
    assert not [name for name in held if "__pycache__" in name or name.endswith(".pyc")]
    assert f"Name: {DISTRIBUTION}\n" in metadata and f"Version: {version()}\n" in metadata
    assert "dialectic = dialectic.cli.app:main" in entry_points


def test_the_sdist_holds_the_package_and_the_project_files(artifacts: Artifacts) -> None:
    with tarfile.open(artifacts.sdist) as sdist:
        top = f"{DISTRIBUTION.replace('-', '_')}-{version()}"
        held = {name.removeprefix(f"{top}/") for name in sdist.getnames()}
    missing = [name for name in [*(f"src/{n}" for n in package_files()), *PROJECT_FILES] if name not in held]
    assert missing == [], f"files missing from {artifacts.sdist.name}: {missing}"
    assert not [name for name in held if name.startswith((".venv/", "dist/", "site/", ".hypothesis/"))]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment less what would point Python or dialectic at this checkout, its
    virtualenv or a real provider."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in dropped and not k.endswith("_API_KEY") and not k.startswith(("OTEL_", "LANGFUSE_"))
    }
    return {**env, **extra}


@pytest.fixture(scope="module")
def venv(artifacts: Artifacts, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtualenv (not this one, no system site-packages) with the wheel installed."""
    root = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    python = root / "bin" / "python"
    result = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(artifacts.wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        env=clean_env(),
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    yield root


def run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A proxy that is not there: a debate that tried to reach a network would fail, not hang.
    env = clean_env(
        DIALECTIC_HOME=str(cwd / "home"),
        XDG_DATA_HOME=str(cwd / "xdg-data"),
        XDG_CACHE_HOME=str(cwd / "xdg-cache"),
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        ALL_PROXY="http://127.0.0.1:9",
        NO_PROXY="",
    )
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False
    )


def test_the_installed_command_reports_the_distributions_version(venv: Path, tmp_path: Path) -> None:
    result = run(venv, tmp_path, str(venv / "bin" / "dialectic"), "--version")
    assert (result.returncode, result.stdout, result.stderr) == (0, f"dialectic {version()}\n", "")


def test_the_installed_package_is_the_wheels_with_its_data_files(venv: Path, tmp_path: Path) -> None:
    script = (
        "import importlib.metadata as m, importlib.resources as r, dialectic\n"
        "print(dialectic.__file__)\n"
        "print(m.version('dialectic-debate'), dialectic.__version__)\n"
        "print(r.files('dialectic.web').joinpath('static/index.html').is_file(),"
        " r.files('dialectic.agents').joinpath('prompts/propose.md.j2').is_file())\n"
    )
    result = run(venv, tmp_path, str(venv / "bin" / "python"), "-c", script)
    assert result.returncode == 0, result.stderr
    location, versions, data = result.stdout.splitlines()
    assert Path(location).is_relative_to(venv) and not Path(location).is_relative_to(ROOT / "src")
    assert versions == f"{version()} {version()}"
    assert data == "True True"


def test_the_installed_command_runs_a_scripted_debate(venv: Path, tmp_path: Path) -> None:
    dialectic = str(venv / "bin" / "dialectic")
    result = run(venv, tmp_path, dialectic, "debate", "Design a cache", "--provider", "scripted", "--rounds", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), result.stderr
    assert "Debate completed" in result.stderr and " saved to " in result.stderr
    listed = run(venv, tmp_path, dialectic, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert '"completed"' in listed.stdout
