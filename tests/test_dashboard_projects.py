"""Projects on the dashboard: the names an actor gives its projects (kb.project_names) on the
Projects page and the ones `emergent-memory ui` records from the repository's folder, shown
in the header, the selector and wherever a memory says where it was saved; through the HTTP
app on the real database."""

# ruff: noqa: F811  (the fixtures of test_dashboard.py, imported, are redefined as arguments)

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from emergent_memory.auth.local_ids import derived_project_id, project_root
from emergent_memory.auth.principal import ANY_PROJECT, READ, WRITE, Principal
from emergent_memory.cli import cli
from emergent_memory.dashboard.web import CSRF_FIELD
from emergent_memory.memory import MemoryService
from tests.test_dashboard import (  # noqa: F401  (its fixtures)
    SAME_ORIGIN,
    client,
    csrf_of,
    sessions,
    sign_in,
    signed_in,
    token_for,
)


def name_project(client: TestClient, name: str, **form: str) -> Any:
    token = csrf_of(client.get("/ui/projects").text)
    return client.post(
        "/ui/projects/name",
        data={CSRF_FIELD: token, "name": name, **form},
        headers=SAME_ORIGIN,
        follow_redirects=False,
    )


def test_name_the_project_shown_and_see_the_name_in_the_header(
    signed_in: TestClient, principal: Principal
) -> None:
    page = signed_in.get("/ui/projects")
    assert page.status_code == 200
    assert 'id="name-form"' in page.text
    named = name_project(signed_in, "  Billing   <img src=x onerror=alert(1)>  ")
    assert named.status_code == 303
    assert named.headers["location"] == "/ui/projects?done=project_named"
    header = signed_in.get("/ui/memories").text
    shown = "Billing &lt;img src=x onerror=alert(1)&gt;"
    assert f'Project <bdi dir="auto">{shown}</bdi> <code>' in header
    assert "<img src=x" not in header
    # cleared: not named again
    assert name_project(signed_in, "").status_code == 303
    assert "Billing" not in signed_in.get("/ui/memories").text


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("x" * 81, "the limit is 80"),
        ("billing\nservice", "one line"),
        ("token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "never a credential"),
    ],
)
def test_a_name_that_cannot_be_one_is_refused_and_nothing_is_written(
    signed_in: TestClient, name: str, message: str
) -> None:
    refused = name_project(signed_in, name)
    assert refused.status_code == 400
    assert 'id="name-error"' in refused.text
    assert message in refused.text
    assert "ghp_" not in refused.text
    assert 'id="project-shown"' in refused.text
    assert "Not named" not in refused.text  # a writer's page: the form again
    assert name[:20] not in signed_in.get("/ui/memories").text


def test_names_are_each_actors_own_and_a_reader_cannot_give_one(
    client: TestClient, principal: Principal, token_for: Callable[..., str]
) -> None:
    other = Principal(uuid.uuid4(), principal.project_id)  # another user, same project
    assert sign_in(client, token_for(other)).status_code == 303
    assert name_project(client, "Somebody else's name").status_code == 303
    client.cookies.clear()
    assert sign_in(client, token_for(principal, READ)).status_code == 303
    page = client.get("/ui/projects").text
    assert "Somebody else" not in page
    assert "Not named." in page
    assert 'id="name-form"' not in page
    forged = client.post(
        "/ui/projects/name",
        data={CSRF_FIELD: csrf_of(page), "name": "A reader's name"},
        headers=SAME_ORIGIN,
    )
    assert forged.status_code == 403
    assert "A reader" not in client.get("/ui/projects").text


def test_the_selector_lists_projects_by_name_and_a_form_of_another_project_is_refused(
    client: TestClient, service: MemoryService, principal: Principal, token_for: Callable[..., str]
) -> None:
    there = Principal(principal.actor_id, uuid.uuid4())
    service.save(there, "A fact of the project named zeta", "fact", scope="project")
    assert sign_in(client, token_for(principal, READ, WRITE, ANY_PROJECT)).status_code == 303
    assert name_project(client, "alpha").status_code == 303
    assert client.get(f"/ui/memories?project={there.project_id}").status_code == 200
    assert name_project(client, "zeta").status_code == 303
    page = client.get("/ui/projects").text
    assert page.index(">alpha<") < page.index(">zeta<")  # by name
    assert f'<option value="{there.project_id}" selected>zeta · {str(there.project_id)[:8]}' in page
    every = client.get("/ui/memories?project=all").text
    assert 'project <bdi dir="auto">zeta</bdi>' in every  # where each memory was saved
    # a form opened for one project and sent after another tab switched is refused
    form = client.get("/ui/projects").text
    client.get(f"/ui/memories?project={principal.project_id}")
    stale = client.post(
        "/ui/projects/name",
        data={CSRF_FIELD: csrf_of(form), "name": "renamed", "project": str(there.project_id)},
        headers=SAME_ORIGIN,
    )
    assert stale.status_code == 409
    assert "switched in another tab" in stale.text
    assert "renamed" not in client.get("/ui/projects").text.replace('value="renamed"', "")


def test_the_ui_command_names_the_project_after_its_folder_unless_the_user_named_it(
    client: TestClient, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "billing-service"
    folder.mkdir()
    monkeypatch.chdir(folder)
    actor = uuid.uuid4()
    env = {"EMERGENT_MEMORY_DATABASE_URL": database_url, "EMERGENT_MEMORY_ACTOR_ID": str(actor)}
    project = derived_project_id(project_root(folder))

    def open_ui() -> str:
        result = CliRunner().invoke(cli, ["ui", "--no-open"], env=env)
        assert result.exit_code == 0, result.output
        secret = result.stdout.strip().rsplit("/", 1)[1]
        assert client.get(f"/ui/link/{secret}", follow_redirects=False).status_code == 303
        return client.get("/ui/projects").text

    def header(name: str) -> str:  # the local user's only project: named, not a selector
        return f'title="project {project}">Project <bdi dir="auto">{name}</bdi> <code>'

    assert header("billing-service") in open_ui()
    assert name_project(client, "Billing API").status_code == 303
    assert header("Billing API") in open_ui()  # the user's name stays
    assert name_project(client, "").status_code == 303  # cleared: the folder's comes back
    assert header("billing-service") in open_ui()
