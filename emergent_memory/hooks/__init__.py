"""The Claude Code hooks (`emergent-memory hook EVENT`): a small client of the HTTP server.

Standard library only, so that a hook starts in a few tens of milliseconds: nothing here may
import pydantic, click, psycopg, numpy or `emergent_memory.settings`, and a UserPromptSubmit
run loads none of the standard library's slow imports either: no http.client (http:// is
spoken over a socket), dataclasses (plain classes with __slots__ instead of the package's
frozen dataclasses), typing (under TYPE_CHECKING only), uuid or hashlib (tests/test_hooks.py
checks both lists; benchmarks/README.md section 8 has what each cost). `run.main` is the
entry point; `config` finds the server and the token, `transcript` turns Claude Code's JSONL
transcript into messages, `state` remembers how far a session was sent and which sessions
wait to be sent, `capture` sends them, `client` speaks HTTP, `autostart` starts a server that
is not running.
"""
