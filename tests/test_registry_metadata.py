"""server.json, the MCP registry's entry for the PyPI package, is valid and agrees with the package.

The official registry (docs/operations.md, "Publishing a release") takes `server.json` as the
schema in tests/data/mcp_registry/ defines it, runs the package with `uvx emergent-memory serve`
from its `runtimeHint`, `identifier` and `packageArguments`, and accepts the PyPI package only
when its description (this README) carries `mcp-name: <the server's name>`. Each variable it
offers a user is a real setting, described, with the setting's own choices, default and
secrecy.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
import typing
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator
from pydantic import SecretStr

import emergent_memory
from emergent_memory.settings import ENV_PREFIX, Settings

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_PATH = ROOT / "tests" / "data" / "mcp_registry" / "server.schema.json"
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
# The registry's rule: the token, the name, then a boundary (whitespace, a tag, `-->`, the end)
MCP_NAME = re.compile(r"mcp-name:\s*(?P<name>[^\s<]+?)(?=\s|<|-->|$)")


def server() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    return data


def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_bytes())
    return data


def mcp_names(text: str) -> list[str]:
    return [match["name"] for match in MCP_NAME.finditer(text)]


def test_the_vendored_schema_is_the_published_release() -> None:
    assert hashlib.sha256(SCHEMA_PATH.read_bytes()).hexdigest() == SCHEMA_SHA256
    assert schema()["$id"] == SCHEMA_URL
    Draft7Validator.check_schema(schema())


def test_server_json_is_valid_against_the_registry_schema() -> None:
    validator = Draft7Validator(schema())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(server())]
    assert errors == []
    assert server()["$schema"] == SCHEMA_URL
    # the schema does reject a broken entry (a name without its namespace)
    assert not validator.is_valid({**server(), "name": "emergent-memory"})


def test_the_name_is_a_github_namespace_and_the_readme_proves_it() -> None:
    name = server()["name"]
    assert re.fullmatch(r"io\.github\.[A-Za-z0-9-]+/emergent-memory", name)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert mcp_names(readme) == [name]


def test_the_versions_are_the_package_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    entry = server()
    (package,) = entry["packages"]
    assert entry["version"] == package["version"] == project["version"]
    assert entry["version"] == emergent_memory.__version__


def test_the_package_runs_as_uvx_emergent_memory_serve_over_stdio() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (package,) = server()["packages"]
    assert package["registryType"] == "pypi"
    assert package["identifier"] == project["name"] == "emergent-memory"
    assert "emergent-memory" in project["scripts"]
    assert package["runtimeHint"] == "uvx"
    assert package["transport"] == {"type": "stdio"}
    assert [argument["value"] for argument in package["packageArguments"]] == ["serve"]


def test_each_variable_is_a_described_setting_with_its_choices_default_and_secrecy() -> None:
    (package,) = server()["packages"]
    variables = package["environmentVariables"]
    names = [variable["name"] for variable in variables]
    assert len(names) == len(set(names))
    for variable in variables:
        name = variable["name"]
        field_name = name.removeprefix(ENV_PREFIX).lower()
        assert name.startswith(ENV_PREFIX), name
        assert field_name in Settings.model_fields, name
        field = Settings.model_fields[field_name]
        assert variable["description"].strip(), name
        arguments = typing.get_args(field.annotation)
        secret = field.repr is False or field.annotation is SecretStr or SecretStr in arguments
        assert variable.get("isSecret", False) is secret, name
        if "choices" in variable:
            allowed = set(typing.get_args(field.annotation))
            assert allowed, name
            assert set(variable["choices"]) == allowed, name
        if "default" in variable:
            assert variable["default"] == str(field.default), name
