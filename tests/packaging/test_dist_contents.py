"""The wheel and the sdist carry every data file, the license and the metadata a package index shows."""

from __future__ import annotations

import email.parser
import tarfile
import zipfile
from pathlib import Path

import pytest
from dist_files import ROOT, build_dists, required_data_files


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_dists(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def wheel(dists: tuple[Path, Path]) -> zipfile.ZipFile:
    return zipfile.ZipFile(dists[1])


def test_wheel_carries_every_data_file_and_the_license(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    missing = [f for f in required_data_files() if f not in names]
    assert not missing, missing
    assert any(n.endswith(".jinja") for n in names) and "prompter/formats/chat_templates/index.json" in names
    licenses = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert licenses and "Apache License" in wheel.read(licenses[0]).decode()


def test_wheel_metadata_names_the_distribution_license_and_extras(wheel: zipfile.ZipFile) -> None:
    (meta_name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    meta = email.parser.Parser().parsestr(wheel.read(meta_name).decode())
    import prompter

    assert meta["Name"] == "prompter-kit" and meta["Version"] == prompter.__version__
    assert meta["License-Expression"] == "Apache-2.0" and meta.get("License") is None
    assert meta["Requires-Python"] == ">=3.10"
    assert {"Programming Language :: Python :: 3.10", "Typing :: Typed"} <= set(meta.get_all("Classifier") or [])
    assert len(meta.get_all("Project-URL") or []) >= 2
    assert set(meta.get_all("Provides-Extra") or []) >= {"online", "local", "server", "all"}
    requires = meta.get_all("Requires-Dist") or []
    torch = [r for r in requires if r.startswith("torch")]
    assert torch and all("==" not in r.split(";")[0] for r in torch), torch  # the CPU/GPU build is the user's choice
    entry = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    assert "prompter = prompter.modules:cli.main" in wheel.read(entry[0]).decode()  # works beside an app's `modules`


def test_sdist_carries_every_data_file_and_the_license(dists: tuple[Path, Path]) -> None:
    with tarfile.open(dists[0]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    missing = [f for f in [*required_data_files(), "LICENSE", "pyproject.toml", "README.md"] if f not in names]
    assert not missing, missing


def test_the_license_file_is_apache_2() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_sdist_carries_no_partial_test_suite(dists: tuple[Path, Path]) -> None:
    # setuptools adds tests/test*.py by default: files that need the rest of the checkout and cannot run
    with tarfile.open(dists[0]) as sdist:
        names = [name.split("/", 1)[1] for name in sdist.getnames() if "/" in name]
    assert not [n for n in names if n == "tests" or n.startswith("tests/")], names
