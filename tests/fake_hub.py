"""A local HTTP server standing in for the model hub: enough of its file-resolve protocol for
huggingface_hub's hf_hub_download (HEAD and GET /{repository}/resolve/{revision}/{path}, with
the X-Repo-Commit, ETag and Content-Length headers it reads)."""

from __future__ import annotations

import hashlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import unquote, urlsplit

from emergent_memory.embeddings.local import HUB_REPOSITORY, HUB_REVISION
from tests.serving import serving_thread


class FakeHub:
    """Serves `files` (path in the repository -> content) of one repository at one revision;
    `status`, when set, is the answer to every request instead. `requests` lists (method,
    path) of every request received."""

    def __init__(
        self,
        files: dict[str, bytes],
        repository: str = HUB_REPOSITORY,
        revision: str = HUB_REVISION,
    ) -> None:
        self.files = files
        self.repository = repository
        self.revision = revision
        self.status: int | None = None
        self.requests: list[tuple[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = serving_thread(self._server)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

            def _answer(self, body: bool) -> None:
                path = unquote(urlsplit(self.path).path)
                hub.requests.append((self.command, path))
                prefix = f"/{hub.repository}/resolve/"
                revision, _, name = path.removeprefix(prefix).partition("/")
                if hub.status is not None:
                    self._error(hub.status, "")
                elif not path.startswith(prefix):
                    self._error(404, "RepoNotFound")
                elif revision != hub.revision:
                    self._error(404, "RevisionNotFound")
                elif name not in hub.files:
                    self._error(404, "EntryNotFound")
                else:
                    content = hub.files[name]
                    self.send_response(200)
                    self.send_header("X-Repo-Commit", hub.revision)
                    self.send_header("ETag", f'"{hashlib.sha256(content).hexdigest()}"')
                    self.send_header("Content-Length", str(len(content)))
                    self.send_header("Content-Type", "application/octet-stream")
                    self.end_headers()
                    if body:
                        self.wfile.write(content)

            def _error(self, status: int, code: str) -> None:
                message = f"{status} {code}".encode()
                self.send_response(status)
                if code:
                    self.send_header("X-Error-Code", code)
                self.send_header("Content-Length", str(len(message)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(message)

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        return Handler
