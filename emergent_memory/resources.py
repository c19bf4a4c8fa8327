"""Where the migrations and the published packs are, in a source tree or an installed wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _resource(name: str) -> Path:
    # A wheel carries them in emergent_memory/_bundled/ (pyproject.toml, force-include); a
    # source checkout or an editable install has them at the top of the repository.
    for candidate in (_PACKAGE_DIR / "_bundled" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"emergent-memory's {name}/ folder is missing from the installation")


def migrations_dir() -> Path:
    """The Alembic script folder (env.py and versions/)."""
    return _resource("alembic")


def packs_dir() -> Path:
    """The folder of published template packs (one JSON file each)."""
    return _resource("packs")
