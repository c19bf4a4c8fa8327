"""The local identity: configured ids, or stable ones derived from the user and repository."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

from emergent_memory.auth.identity import local_identity


def test_configured_ids_are_used_as_given(tmp_path: Path) -> None:
    actor, project = uuid.uuid4(), uuid.uuid4()
    identity = local_identity(actor, project, cwd=tmp_path)
    assert (identity.principal.actor_id, identity.principal.project_id) == (actor, project)
    assert "configured" in identity.describe()
    assert not identity.principal.is_admin


def test_derived_ids_are_stable_and_follow_the_git_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    other = tmp_path / "elsewhere"
    other.mkdir()

    at_root = local_identity(None, None, cwd=repo)
    in_subdir = local_identity(None, None, cwd=repo / "src" / "deep")
    outside = local_identity(None, None, cwd=other)

    assert at_root.principal == in_subdir.principal  # the whole repository is one project
    assert outside.principal.project_id != at_root.principal.project_id
    assert outside.principal.actor_id == at_root.principal.actor_id  # same user everywhere
    assert f"from {repo.resolve()}" in at_root.describe()
    assert local_identity(None, None, cwd=repo).principal == at_root.principal
