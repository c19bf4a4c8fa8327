"""server.json, the MCP registry's entry for the PyPI package, is valid and agrees with the package.

The official registry (docs/operations.md, "Publishing a release") takes `server.json` as its
published schema (release 2025-12-11) defines it; REGISTRY_RULES below restates, in our own
words, what that schema requires of the fields this entry uses (read from the schema on
2026-11-29; `mcp-publisher validate` checks the whole schema before a release). The registry
runs the package with `uvx emergent-memory serve` from its `runtimeHint`, `identifier` and
`packageArguments`, and accepts the PyPI package only when its description (this README)
carries `mcp-name: <the server's name>`. Each variable it offers a user is a real setting,
described, with the setting's own choices, default and secrecy.
"""

from __future__ import annotations

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
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
_TEXT = {"type": "string"}
_INPUT = {  # an environment variable or an argument, as the user is asked for it
    "type": "object",
    "properties": {
        "name": _TEXT,
        "description": _TEXT,
        "value": _TEXT,
        "default": _TEXT,
        "isSecret": {"type": "boolean"},
        "isRequired": {"type": "boolean"},
        "format": {"enum": ["string", "number", "boolean", "filepath"]},
        "choices": {"type": "array", "items": _TEXT},
    },
}
REGISTRY_RULES = {
    "type": "object",
    "required": ["name", "description", "version"],
    "properties": {
        "$schema": _TEXT,
        "name": {
            "type": "string",
            "minLength": 3,
            "maxLength": 200,
            "pattern": r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$",
        },
        "title": {"type": "string", "minLength": 1, "maxLength": 100},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": {"type": "string", "maxLength": 255},
        "packages": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["registryType", "identifier", "transport"],
                "properties": {
                    "registryType": _TEXT,
                    "identifier": _TEXT,
                    "version": {"type": "string", "minLength": 1},
                    "runtimeHint": _TEXT,
                    "transport": {
                        "type": "object",
                        "required": ["type"],
                        "properties": {"type": {"enum": ["stdio", "streamable-http", "sse"]}},
                    },
                    "packageArguments": {
                        "type": "array",
                        "items": {
                            **_INPUT,
                            "required": ["type"],
                            "properties": {
                                **_INPUT["properties"],
                                "type": {"enum": ["positional", "named"]},
                            },
                        },
                    },
                    "environmentVariables": {
                        "type": "array",
                        "items": {**_INPUT, "required": ["name"]},
                    },
                },
            },
        },
    },
}
# The registry's rule: the token, the name, then a boundary (whitespace, a tag, `-->`, the end)
MCP_NAME = re.compile(r"mcp-name:\s*(?P<name>[^\s<]+?)(?=\s|<|-->|$)")


def server() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    return data


def mcp_names(text: str) -> list[str]:
    return [match["name"] for match in MCP_NAME.finditer(text)]


def test_server_json_keeps_the_registry_rules() -> None:
    Draft7Validator.check_schema(REGISTRY_RULES)
    validator = Draft7Validator(REGISTRY_RULES)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(server())]
    assert errors == []
    assert server()["$schema"] == SCHEMA_URL
    # the rules do reject broken entries: a name without its namespace, a long description
    assert not validator.is_valid({**server(), "name": "emergent-memory"})
    assert not validator.is_valid({**server(), "description": "x" * 101})


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
