"""The wheel a user installs works on its own: built with `python -m build`, installed into a clean
virtual environment (its dependencies from the package index, not from this checkout's
environment), then `gitmem --help` and a recall on the sample workspace from that environment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# conftest's hermetic_env points HOME and XDG_CACHE_HOME at a temporary folder for each test; pip
# and build keep their own cache at the real one (read here, at collection, before that happens),
# or every run would download every dependency again.
PIP_CACHE_DIR = os.environ.get("PIP_CACHE_DIR") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"
)
# What the build reads: the package and the project's metadata (a copy, so that setuptools writes
# its build/ and *.egg-info folders there, not into the checkout).
BUILD_INPUTS = ("pyproject.toml", "README.md")


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, (argv, proc.stdout[-2000:], proc.stderr[-4000:])
    return proc.stdout


def _package_files(root: Path) -> set[str]:
    return {
        path.relative_to(root).as_posix()
        for path in (root / "gitmem").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_wheel_installs_and_runs_in_a_clean_environment(tmp_path: Path) -> None:
    # The environment of a user's shell: nothing from this checkout on the import path.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_CACHE_DIR"] = PIP_CACHE_DIR

    source = tmp_path / "source"
    shutil.copytree(ROOT / "gitmem", source / "gitmem", ignore=shutil.ignore_patterns("__pycache__"))
    for name in BUILD_INPUTS:
        shutil.copy2(ROOT / name, source / name)
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(source)], env, tmp_path)
    (wheel,) = dist.glob("gitmem_cli-*-py3-none-any.whl")

    # Every file of the package, subpackages included, and nothing from outside it.
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    packaged = {n for n in names if not n.startswith("gitmem_cli-")}
    assert packaged == _package_files(ROOT)
    assert any(n.endswith(".dist-info/entry_points.txt") for n in names)

    # A clean environment: no system site-packages, and not even pip (this environment's pip
    # installs into it, which saves seeding one: about 3 of the test's seconds).
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env, tmp_path)
    bindir = venv / "bin"
    config = (venv / "pyvenv.cfg").read_text(encoding="utf-8")
    assert "include-system-site-packages = false" in config
    install = ["install", "--quiet", "--no-compile", str(wheel)]
    _run([sys.executable, "-m", "pip", "--python", str(bindir / "python"), *install], env, tmp_path)

    # Run from outside the checkout, so that the current folder cannot supply `gitmem` either.
    where = _run([str(bindir / "python"), "-c", "import gitmem; print(gitmem.__file__)"], env, tmp_path)
    module = Path(where.strip()).resolve()
    assert module.is_relative_to(venv.resolve()) and "site-packages" in module.parts, module
    assert not module.is_relative_to(ROOT)

    assert "recall" in _run([str(bindir / "gitmem"), "--help"], env, tmp_path)
    # The converter's dependencies are the `convert` extra: without them it says how to get them.
    convert = subprocess.run(
        [str(bindir / "python"), "-m", "gitmem.embed.convert", "--help"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )
    assert convert.returncode != 0
    # the packages by name, into this Python: gitmem-cli is not on PyPI (issue 37)
    assert "python -m pip install 'gguf>=0.17' 'safetensors>=0.4' 'numpy>=1.26'" in \
        convert.stderr, convert.stderr

    workspace = tmp_path / "ws"
    _run([sys.executable, str(ROOT / "fixtures" / "build_fixture.py"), str(workspace)], env, tmp_path)
    out = _run(
        [str(bindir / "gitmem"), "-C", str(workspace), "recall", "gateway host", "--json"], env, tmp_path
    )
    sources = [result["source"] for result in json.loads(out)["results"]]
    assert "memory/2025-11-27.md#L14" in sources, sources


def test_install_hints_name_the_extras_packages() -> None:
    """The hints that say how to add an optional part name its packages (gitmem-cli is not on
    PyPI yet): the same as pyproject.toml's extras."""
    import tomllib

    from gitmem.errors import EXTRAS, install_hint

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    assert {name: tuple(extras[name]) for name in EXTRAS} == EXTRAS
    assert install_hint("mcp") == f"{sys.executable} -m pip install 'mcp>=2.3'"
