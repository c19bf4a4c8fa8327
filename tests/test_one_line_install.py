"""`uvx emergent-memory ...` works from the wheel alone: built from this tree, installed by uvx
into an isolated environment with the wheel's declared dependencies (offline, from uv's cache:
tests/uvx_install.py), its console script runs and says the package's version, and the wheel
carries what the MCP registry checks (the `mcp-name` line in its description)."""

from __future__ import annotations

import email
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import emergent_memory
from tests import uvx_install
from tests.test_registry_metadata import mcp_names, server


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    built = uvx_install.build_wheel(tmp_path_factory.mktemp("dist"))
    uvx_install.fill_cache(built)  # `make test` did it already: then this is one offline run
    yield built
    uvx_install.prune_cache()


def test_uvx_runs_the_wheels_console_script_offline(wheel: Path) -> None:
    done = uvx_install.run_uvx(wheel, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"emergent-memory, version {emergent_memory.__version__}"


def test_the_package_it_runs_is_the_wheels_own_installed_copy(wheel: Path) -> None:
    done = uvx_install.run_uvx(
        wheel,
        "-c",
        "import emergent_memory, sys; print(emergent_memory.__file__); print(sys.prefix)",
        command="python",
    )
    assert done.returncode == 0, done.stderr
    module_file, prefix = done.stdout.split()
    # inside the environment uvx made in uv's cache, not this checkout or its editable install
    assert Path(prefix).is_relative_to(uvx_install.CACHE.resolve())
    assert Path(module_file).is_relative_to(Path(prefix))


def test_the_wheels_description_carries_the_registry_name(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        [metadata_name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(metadata_name))
    assert metadata["Name"] == "emergent-memory"
    assert metadata["Version"] == server()["version"]
    assert mcp_names(str(metadata.get_payload())) == [server()["name"]]
