"""Every number in every answer is finite (docs/memory.md, "Similarity and finite answers").

An embedding provider may give the zero vector (the bag-of-words embedder of the tests does
for any text without a word character: "!!!", "<->", '\"\"\"'); pgvector's cosine distance
with it is NaN. Here it is checked by construction that no NaN or infinity leaves the server:

- SQL's kb.cosine_similarity (migration 0014) and its Python mirror
  (emergent_memory.embeddings.vectors.cosine_similarity) agree on random vectors, including
  zero vectors and opposite ones, give a finite number (0 when a vector has no direction) and
  null for null; the planner writes the function in place of its calls. Where pgvector's
  single-precision sums overflow or underflow (magnitudes no embedding model gives), the two
  still disagree: an expected failure says so.
- Over the fuzzers' inputs (tests/test_fuzz.py), a small store per example, with texts
  without words (zero vectors), real sentences and repeats, is queried on every result shape:
  the four MCP tools (in process), the REST API, the dashboard's pages, the CLI's --json output
  and /metrics; every number of every answer is finite, no call is an internal error, and
  valid input gets an answer.
- The regression itself: "!!!" and "<->" saved and recalled, '\"\"\"' saved after "!!!".
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import re
import struct
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import partial
from typing import Any
from urllib.parse import quote, quote_plus

import markupsafe
import psycopg
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from click.testing import CliRunner, Result
from fastmcp import Client
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from psycopg_pool import ConnectionPool
from starlette.testclient import TestClient

from emergent_memory.api import api_routes
from emergent_memory.app import UNCALIBRATED_VERIFY_POLICY
from emergent_memory.auth.dashboard import DashboardSessions
from emergent_memory.auth.principal import ADMIN, READ, WRITE, Principal
from emergent_memory.auth.service import TokenService
from emergent_memory.cli import cli
from emergent_memory.dashboard import DashboardServices, dashboard_routes
from emergent_memory.embeddings.vectors import cosine_similarity, has_direction
from emergent_memory.errors import EmergentMemoryError
from emergent_memory.mcp.http import DatabaseTokenVerifier, http_app, token_principal
from emergent_memory.mcp.server import create_server
from emergent_memory.memory import MemoryService
from emergent_memory.memory.models import CATEGORIES, Category
from emergent_memory.memory.verify import VerifyConfig, VerifyService
from tests.embedders import BagOfWordsEmbedder, EmbeddingServer
from tests.helpers import make_token
from tests.test_episodes import episode
from tests.test_fuzz import MASKED, SENTENCES, SPECIAL_TEXTS, TEXTS, ErrorRecords, internal_errors
from tests.test_injection import make_injection
from tests.test_rest_api import api_services

# -- the checker ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NotFinite:
    """What a JSON text held where a number was NaN, Infinity, -Infinity, or too large for a
    float (1e999): kept in place by the parser, so that the checker can say where."""

    literal: str


def _constant(literal: str) -> NotFinite:
    return NotFinite(literal)


def _number(literal: str) -> float | NotFinite:
    value = float(literal)
    return value if math.isfinite(value) else NotFinite(literal)


def parse(text: str) -> Any:
    """JSON as a strict client reads it, except that a number that is not finite is kept as
    NotFinite instead of failing, for `not_finite` to locate."""
    return json.loads(text, parse_constant=_constant, parse_float=_number)


def not_finite(value: Any, path: str = "$") -> str | None:
    """The JSON path of the first number in `value` that is not finite (with the number), or
    None when every number is finite."""
    if isinstance(value, NotFinite):
        return f"{path} = {value.literal}"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} = {value!r}"
    if isinstance(value, dict):
        for key, item in value.items():
            found = not_finite(item, f"{path}.{key}")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = not_finite(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def assert_finite(value: Any, where: str) -> None:
    found = not_finite(value)
    assert found is None, f"{where}: a number that is not finite at {found}"


def finite_json(text: str, where: str) -> Any:
    """The JSON text parsed, once every number in it is known to be finite."""
    value = parse(text)
    assert_finite(value, where)
    return value


def test_the_checker_names_the_path_of_the_first_number_that_is_not_finite() -> None:
    assert not_finite(parse('{"a": [1, 2.5, {"b": null, "c": "NaN"}], "d": 1e308}')) is None
    assert not_finite(parse('{"a": [1, {"b": NaN}]}')) == "$.a[1].b = NaN"
    assert not_finite(parse('{"s": {"similarity": -Infinity}}')) == "$.s.similarity = -Infinity"
    assert not_finite(parse("[0, 1e999, NaN]")) == "$[1] = 1e999"
    assert not_finite({"scores": {"similarity": math.nan}}) == "$.scores.similarity = nan"
    assert not_finite([(1.0, math.inf)]) == "$[0][1] = inf"
    with pytest.raises(AssertionError, match=r"at \$\.memories\[0\]\.score = NaN"):
        finite_json('{"memories": [{"score": NaN}]}', "recall")


# A number a template or an f-string printed from a float that is not finite: nan, inf, -inf,
# NaN, Infinity (Python's and JavaScript's spellings)
PRINTED_NOT_FINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|inf(?:inity)?)(?!\w)", re.IGNORECASE)
# Where the dashboard puts only text a user or agent wrote: <bdi> (every memory, query,
# context, reason, piece of evidence) and <textarea> (edit boxes, a claim)
USER_TEXT = re.compile(r"<bdi\b[^>]*>.*?</bdi>|<textarea\b[^>]*>.*?</textarea>", re.S)
# where a user's text starts and ends elsewhere: a tag (a chart's label), a quote (an input's
# value, a message), the separators of a chart's description ("label: 3; label: 5"), a
# bracket (a version's reason), a URL's query (a link back to a list: "?text=nan&sort=...");
# "…" where a label is clipped
STARTS = (">", "; ", "(", "'", "&#39;", "&#x27;", '"', "&#34;", "&quot;", "“", "‘", "=")
ENDS = ("<", ": ", ";", ")", "'", "&#39;", "&#x27;", '"', "&#34;", "&quot;", "”", "’", "…", "&")


def not_finite_in_html(page: str, written: set[str]) -> str | None:
    """The first NaN or infinity printed as a number on a page (with what surrounds it), or
    None. Text users wrote is left out: where the page holds nothing else (USER_TEXT), and
    elsewhere when the match lies in one of `written`, whole between a start and an end
    (STARTS, ENDS), or clipped ("…")."""
    page = USER_TEXT.sub(" ", page)
    texts = written | {text.strip() for text in written}
    texts |= {unicodedata.normalize("NFC", text) for text in texts}
    texts |= {quote_plus(text.encode("utf-8", "surrogatepass")) for text in texts}  # in a URL
    escaped = {str(markupsafe.escape(text)) for text in texts} | {
        html.escape(text) for text in texts
    }
    for match in PRINTED_NOT_FINITE.finditer(page):
        token = match.group()
        if any(
            _users(page, match.start(), match.end(), text, at)
            for text in escaped
            for at in _occurrences(text, token)
        ):
            continue  # the user's own "nan", not a number
        return page[max(0, match.start() - 80) : match.end() + 40]
    return None


def _users(page: str, start: int, end: int, text: str, at: int) -> bool:
    """Whether the match page[start:end] is the one at `at` in a user's (escaped) `text`,
    shown whole or clipped: the page holds the text from its beginning, right after one of
    STARTS, then the rest of it up to one of ENDS, or a part of the rest up to "…"."""
    begins = start - at
    if begins < 0 or page[begins:start] != text[:at] or not page[:begins].endswith(STARTS):
        return False
    rest, after = text[at + end - start :], page[end:]
    if after.startswith(rest) and after[len(rest) :].startswith(ENDS):
        return True
    clip = after.find("…", 0, len(rest) + 1)
    return clip != -1 and rest.startswith(after[:clip])


def _occurrences(text: str, token: str) -> Iterator[int]:
    at = text.find(token)
    while at != -1:
        yield at
        at = text.find(token, at + 1)


def test_the_page_checker_tells_a_printed_nan_from_a_users_text() -> None:
    mine = {"nan", " the value is -Infinity here", "xxxxxxxxxxxxxx infinity", 'a "nan"'}
    assert not_finite_in_html("<p>similarity 0.500</p><p>score 1.0000</p>", set()) is None
    assert not_finite_in_html("<p>information, infinite, nanny, 1.5e-3</p>", set()) is None
    assert not_finite_in_html("<span>similarity nan</span>", set())
    assert not_finite_in_html("<span>score NaN</span>", mine)
    assert not_finite_in_html('<rect width="inf"/>', set())
    assert not_finite_in_html("<text>x</text><title>-inf</title>", set())
    assert not_finite_in_html('<input value="0.90"><input value="nan">', set())
    # where users' text goes
    assert not_finite_in_html('<bdi dir="auto">nan</bdi><textarea>-inf</textarea>', set()) is None
    assert not_finite_in_html('<input name="q" value="nan">', mine) is None
    assert not_finite_in_html("<q>a &#34;nan&#34;</q>", mine) is None
    back = '<input type="hidden" name="back" value="/ui/memories?text=the+value+is+-Infinity+here">'
    assert not_finite_in_html(back, mine) is None
    assert not_finite_in_html('<a href="/ui/memories?text=nan&amp;sort=recent">', mine) is None
    assert not_finite_in_html('<a href="/ui/memories?text=nan&amp;sort=recent">', set())
    # a chart's label is the user's text, whole or clipped; its value is a number
    assert not_finite_in_html("<title>the value is -Infinity here: 3</title>", mine) is None
    assert not_finite_in_html("<text>xxxxxxxxxxxxxx inf…</text>", mine) is None
    assert not_finite_in_html("<desc>x: 2; nan: 1</desc>", mine) is None
    assert not_finite_in_html("<title>the value is -Infinity here: nan</title>", mine)
    assert not_finite_in_html("<desc>nan: 2; x: nan</desc>", mine)
    # a user's "nan" does not hide a number printed right after a tag
    assert not_finite_in_html('<dd id="memory-confidence">nan stored</dd>', mine)
    assert not_finite_in_html("<span>confidence nan</span>", mine)


# -- 1. SQL and Python compute the same similarity --------------------------------------------


def _float4(x: float) -> float:
    """x rounded to the single precision a vector stores it in (0 when it underflows)."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


# Single-precision values (what a vector stores), so that both sides start from the same
# numbers. pgvector sums the products and squares in single precision: MODERATE values (with
# room for a factor of 1e3 either way, 384 of them) keep those sums within its normal range,
# so that the two sides agree; EXTREME ones are the tiniest and largest that still do;
# FLOAT4 is every value a vector accepts, subnormal to the largest.
MODERATE = st.floats(min_value=-(2.0**40), max_value=2.0**40, width=32).map(
    lambda x: 0.0 if abs(x) < 2.0**-40 else x
)
EXTREME = st.sampled_from([1e-18, -1e-18, 2.5e17, -2.5e17, 3.5e-15, 1e15]).map(_float4)
FLOAT4 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@st.composite
def vectors(draw: st.DrawFn, element: st.SearchStrategy[float], dimensions: int) -> list[float]:
    """A vector of that many dimensions: up to 16 drawn values repeated, a few of them
    replaced (cheap to draw at 384 dimensions, and as hard for the sums)."""
    base = draw(st.lists(element, min_size=1, max_size=16))
    vector = [base[i % len(base)] for i in range(dimensions)]
    for index, value in draw(
        st.lists(st.tuples(st.integers(0, dimensions - 1), element), max_size=4)
    ):
        vector[index] = value
    return vector


@st.composite
def vector_pairs(
    draw: st.DrawFn, element: st.SearchStrategy[float], *, factors: tuple[float, ...]
) -> tuple[list[float], list[float]]:
    """Two vectors of 3 to 384 dimensions: random, the same, opposite, scaled by one of
    `factors`, one or both zero, or one with a single non-zero component."""
    dimensions = draw(st.one_of(st.integers(3, 384), st.sampled_from([3, 384])))
    a = draw(vectors(element, dimensions))
    zero = [0.0] * dimensions
    kind = draw(
        st.sampled_from(["random", "same", "opposite", "scaled", "zero", "both zero", "axis"])
    )
    if kind == "random":
        b = draw(vectors(element, dimensions))
    elif kind == "same":
        b = list(a)
    elif kind == "opposite":
        b = [-x for x in a]
    elif kind == "scaled":
        factor = draw(st.sampled_from(factors))
        b = [_float4(x * factor) for x in a]
    elif kind == "zero":
        b = zero
    elif kind == "both zero":
        a, b = zero, list(zero)
    else:
        b = list(zero)
        b[draw(st.integers(0, dimensions - 1))] = draw(element)
    return (b, a) if draw(st.booleans()) else (a, b)


def literal(vector: list[float]) -> str:
    """The vector as pgvector's text input (repr keeps each single-precision value exact)."""
    return "[" + ",".join(repr(x) for x in vector) + "]"


SIMILARITY = "SELECT kb.cosine_similarity(%s::vector, %s::vector)"


@pytest.fixture
def vectors_conn(connect: Callable[[], psycopg.Connection[Any]]) -> psycopg.Connection[Any]:
    return connect()


def sql_similarity(conn: psycopg.Connection[Any], a: list[float], b: list[float]) -> Any:
    row = conn.execute(SIMILARITY, (literal(a), literal(b))).fetchone()
    assert row is not None
    return row[0]


def test_sql_and_python_agree_on_the_similarity_of_any_two_vectors(
    vectors_conn: psycopg.Connection[Any],
) -> None:
    """Within 1e-5 (pgvector sums in single precision), finite, from -1 to 1, and 0 when
    either vector has no direction."""

    @settings(max_examples=100, deadline=None, database=None)
    @given(
        pair=st.one_of(
            vector_pairs(MODERATE, factors=(1e-3, 0.5, 3.0, 1e3)),
            vector_pairs(EXTREME, factors=(0.5, 2.0)),
        )
    )
    def check(pair: tuple[list[float], list[float]]) -> None:
        a, b = pair
        in_sql = sql_similarity(vectors_conn, a, b)
        in_python = cosine_similarity(a, b)
        assert isinstance(in_sql, float)
        assert math.isfinite(in_sql), f"kb.cosine_similarity answered {in_sql}"
        assert math.isfinite(in_python)
        assert -1.0 <= in_sql <= 1.0
        if not (has_direction(a) and has_direction(b)):
            assert in_sql == 0.0
            assert in_python == 0.0
        assert in_sql == pytest.approx(in_python, abs=1e-5)

    check()


def test_the_similarity_is_finite_for_every_vector_pgvector_accepts(
    vectors_conn: psycopg.Connection[Any],
) -> None:
    """Any single-precision values, subnormal to the largest: whatever pgvector's sums do,
    the similarity is a number from -1 to 1, and 0 when a vector is zero."""

    @settings(max_examples=50, deadline=None, database=None)
    @given(pair=vector_pairs(FLOAT4, factors=(0.5, -1.0)))
    def check(pair: tuple[list[float], list[float]]) -> None:
        a, b = pair
        in_sql = sql_similarity(vectors_conn, a, b)
        assert isinstance(in_sql, float)
        assert math.isfinite(in_sql), f"kb.cosine_similarity answered {in_sql}"
        assert -1.0 <= in_sql <= 1.0
        if not (any(a) and any(b)):  # a zero vector is similar to nothing
            assert in_sql == 0.0
        assert math.isfinite(cosine_similarity(a, b))

    check()


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1e20, 0.0, 0.0], [1e20, 0.0, 0.0], 0.0),  # squares overflow: NaN distance
        ([3e38, 0.0, 0.0], [1.0, 0.0, 0.0], 0.0),  # a.a overflows, a.b does not: distance 1
        ([1e-30, 0.0, 0.0], [1e-30, 0.0, 0.0], 0.0),  # squares underflow: NaN distance
        ([1e-23, 0.0, 0.0], [1e19, 0.0, 0.0], 1.0),  # a.a is 0, a.b is not: a.b / 0, kept to 1
        ([1e-20, 0.0, 0.0], [1e-20, 0.0, 0.0], 1.0),  # still within range
    ],
)
def test_sql_and_python_agree_at_the_extremes_of_single_precision(
    vectors_conn: psycopg.Connection[Any], a: list[float], b: list[float], expected: float
) -> None:
    """pgvector sums the products and squares in single precision; a vector whose sum of
    squares leaves that range has no usable length there, and the mirror computes the same."""
    a, b = [_float4(x) for x in a], [_float4(x) for x in b]
    assert sql_similarity(vectors_conn, a, b) == pytest.approx(expected, abs=1e-5)
    assert cosine_similarity(a, b) == pytest.approx(expected, abs=1e-5)


def test_a_null_vector_gives_a_null_similarity(vectors_conn: psycopg.Connection[Any]) -> None:
    row = vectors_conn.execute(
        "SELECT kb.cosine_similarity(NULL, '[1,2,3]'), kb.cosine_similarity('[1,2,3]', NULL), "
        "kb.cosine_similarity(NULL, NULL), kb.cosine_similarity('[0,0,0]', NULL)"
    ).fetchone()
    assert row == (None, None, None, None)


def test_the_planner_inlines_the_similarity(vectors_conn: psycopg.Connection[Any]) -> None:
    """What keeps a search on the HNSW index and costs no function call per row: the planner
    writes the expression in place of the call."""
    row = vectors_conn.execute(
        "EXPLAIN (FORMAT JSON, VERBOSE) "
        "SELECT o.id, kb.cosine_similarity(o.embedding, %(q)s::vector) AS similarity "
        "FROM kb.graph_objects o "
        "WHERE kb.cosine_similarity(o.embedding, %(q)s::vector) > 0.5 "
        "ORDER BY o.embedding <=> %(q)s::vector LIMIT 5",
        {"q": literal([0.5] * 384)},
    ).fetchone()
    assert row is not None
    explained = json.dumps(row[0])
    assert "cosine_similarity" not in explained
    assert "<=>" in explained
    assert "NaN" in explained  # the CASE of the function's body, written out
    volatility = vectors_conn.execute(
        "SELECT provolatile, proparallel FROM pg_proc "
        "WHERE oid = 'kb.cosine_similarity(vector, vector)'::regprocedure"
    ).fetchone()
    assert volatility == ("i", "s")


# -- 2. every answer over the fuzzers' inputs ------------------------------------------------

# texts without a word character: the bag-of-words vector is zero
WORDLESS = st.sampled_from(
    ["!!!", "&|!():*", "<->", "-", '"""', "?!", "…", "(:)", "\U0001f600\U0001f600", "— · —"]
)
# a fuzz text may itself be "nan": the page checker must not take it for a number
NUMBERISH = st.sampled_from(["nan", "NaN", "-Infinity", "inf", "The limit is inf"])
SENTENCE = "The user prefers tabs over spaces"
FRIDAYS = "Deploys to production happen on Fridays"
THURSDAYS = "Deploys to production happen on Thursdays"  # a possible duplicate of FRIDAYS
STORE_TEXTS = st.one_of(TEXTS, WORDLESS, SPECIAL_TEXTS, NUMBERISH)


@dataclass(repr=False)
class Store:
    sure: tuple[str, ...]  # texts every save takes (without words, a sentence, a close pair)
    texts: list[str]
    categories: list[Category]
    contexts: list[str | None]
    queries: list[str]
    update: str
    evidence: str

    def __repr__(self) -> str:
        """Long texts shortened ("z" * 100_000 is one of the fuzzers'): hypothesis prints
        the failing example, and warns (an error here) about a repr over 30 kB."""
        fields = ", ".join(f"{name}={_shown(value)}" for name, value in vars(self).items())
        return f"Store({fields})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


@st.composite
def stores(draw: st.DrawFn) -> Store:
    """Memories to save (at least one without words, a sentence and a close pair, then fuzz
    texts and some repeats) and queries (fuzz texts, texts without words, texts of the
    store)."""
    wordless, sentence = draw(WORDLESS), draw(SENTENCES)
    sure = (wordless, sentence, FRIDAYS, THURSDAYS)  # the last two: a close pair
    texts = [*sure, *draw(st.lists(STORE_TEXTS, max_size=3))]
    texts += draw(st.lists(st.sampled_from(texts), max_size=2))  # repeats
    texts = draw(st.permutations(texts))
    count = len(texts)
    own = st.sampled_from(texts)
    return Store(
        sure=sure,
        texts=texts,
        categories=draw(st.lists(st.sampled_from(CATEGORIES), min_size=count, max_size=count)),
        contexts=draw(
            st.lists(
                st.sampled_from([None, None, "frontend", "!!!"]), min_size=count, max_size=count
            )
        ),
        # the first one a query any search takes: without words, or a sentence
        queries=[
            draw(st.one_of(WORDLESS, SENTENCES)),
            *draw(st.lists(st.one_of(TEXTS, WORDLESS, own, NUMBERISH), min_size=1, max_size=2)),
        ],
        update=draw(st.one_of(TEXTS, WORDLESS, own)),
        evidence=draw(st.one_of(TEXTS, WORDLESS)),
    )


PREFERENCES: list[Category] = ["preference"] * 3
FACTS: list[Category] = ["fact"] * 7
# always tried: the fuzzers' worst texts at once
NASTY = Store(
    sure=("!!!", "<->", SENTENCE, FRIDAYS, THURSDAYS, '"""', "nan", "x" * 2000),
    texts=["!!!", "<->", SENTENCE, FRIDAYS, THURSDAYS, '"""', "nan", "x" * 2000, "tabs\x00", "!!!"],
    categories=[*PREFERENCES, *FACTS],
    contexts=[None, "frontend", "!!!"] + [None] * 7,
    queries=["!!!", "tabs", "z" * 100_000, "\ud800", "-Infinity", '"""'],
    update="&|!():*",
    evidence="!!!",
)


@dataclass
class Caller:
    """The principal the MCP tools act for: a new one each example."""

    principal: Principal


class Mcp:
    """The four tools over the in-memory client, as tests/test_fuzz.py drives them."""

    def __init__(self, portal: BlockingPortal, client: Client[Any], logged: ErrorRecords) -> None:
        self.portal = portal
        self.client = client
        self.logged = logged

    def call(self, tool: str, *, valid: bool = False, **args: Any) -> dict[str, Any] | None:
        """The tool's structured answer once every number in it is known to be finite, or None
        for a tool error: a clear one, never a masked internal error nor FastMCP's refusal of
        an answer holding NaN, and none at all when the arguments are `valid`."""
        self.logged.records.clear()
        asked = {**args, "detail": True}  # the full answer, every number in it
        result = self.portal.call(partial(self.client.call_tool, tool, asked, raise_on_error=False))
        where = f"{tool}({_shown(args)})"
        assert not self.logged.records, f"{where}: {self.logged.records[0].getMessage()}"
        texts = [getattr(block, "text", None) for block in result.content]
        if result.is_error:
            message = " ".join(text or "" for text in texts)
            assert message.strip(), f"{where}: an error without a message"
            assert MASKED not in message, f"{where}: an internal error: {message}"
            assert not any(sign in message for sign in UNDELIVERABLE), f"{where}: {message}"
            assert not valid, f"{where}: an error for valid arguments: {message}"
            return None
        assert isinstance(result.structured_content, dict), where
        assert_finite(result.structured_content, where)
        assert texts == [result.structured_content["text"]], where  # the same answer, in words
        return result.structured_content


# What FastMCP answers when a tool's result holds NaN or infinity (a ToolError: unmasked, but
# no fault of the caller's): "Tool result contains a non-finite float (nan) at $...; JSON
# cannot represent NaN or Infinity" (fastmcp/tools/base.py, _reject_nonfinite)
UNDELIVERABLE = ("non-finite", "cannot represent NaN")


def _shown(value: Any) -> str:
    """A repr for a message, its long texts shortened."""
    if isinstance(value, str) and len(value) > 60:
        return f"{value[:20]!r}…({len(value)} characters)"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_shown(item)}" for key, item in value.items()) + "}"
    return repr(value)


def _query(params: dict[str, str]) -> str:
    """A query string of any text, lone surrogates included (as a client that does not
    check them would send them)."""
    return "&".join(
        f"{name}={quote(value.encode('utf-8', 'surrogatepass'), safe='')}"
        for name, value in params.items()
    )


def _body(value: Any) -> bytes:
    return json.dumps(value).encode()  # ASCII: a lone surrogate escaped


API = "/api/v1"
BASE = "http://testserver"
# about the longest URL httpx sends (65,536 characters, the scheme and host included): a query
# of "z" * 100_000 is not a GET any client makes
URL_LIMIT = 65_000


class Http:
    """The REST API, the dashboard and /metrics of one app (as serve builds it), in process."""

    def __init__(self, client: TestClient, logged: ErrorRecords) -> None:
        self.client = client
        self.logged = logged

    def _request(self, where: str, method: str, url: str, **options: Any) -> Any:
        """The response, once it is known that the request logged no internal error."""
        self.logged.records.clear()
        response = self.client.request(method, url, **options)
        assert not self.logged.records, f"{where}: {self.logged.records[0].getMessage()}"
        return response

    def api(
        self,
        token: str,
        method: str,
        path: str,
        body: Any = None,
        *,
        valid: bool = False,
        **params: str,
    ) -> tuple[int, Any] | None:
        """The status and body (None for a URL no client sends), every number finite: a
        success, or an error of the caller's (4xx), and a success for `valid` input."""
        where = f"{method} {API}{path} {_shown(params or body)}"
        url = API + path + (f"?{_query(params)}" if params else "")
        if len(url) > URL_LIMIT:
            return None
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        content = None if body is None else _body(body)
        response = self._request(where, method, url, content=content, headers=headers)
        assert response.status_code < 500, f"{where}: {response.status_code} {response.text}"
        assert response.status_code == 200 or not valid, f"{where}: {response.text}"
        return response.status_code, finite_json(response.text, where)

    def sign_in(self, token: str) -> None:
        response = self.client.post(
            "/ui/signin", data={"token": token}, headers={"Origin": BASE}, follow_redirects=False
        )
        assert response.status_code == 303, response.text

    def page(
        self, path: str, written: set[str], *, valid: bool = False, **params: str
    ) -> int | None:
        """The page's status (None for a URL no client sends), no NaN printed on it: 200, or
        400 for input that is not `valid`."""
        url = path + (f"?{_query(params)}" if params else "")
        if len(url) > URL_LIMIT:
            return None
        where = f"GET {path} {_shown(params)}"
        response = self._request(where, "GET", url, follow_redirects=False)
        assert response.status_code in ((200,) if valid else (200, 400)), (
            f"{where}: {response.status_code}"
        )
        found = not_finite_in_html(response.text, written)
        assert found is None, f"{where}: a number that is not finite in {found!r}"
        return int(response.status_code)

    def metrics(self, token: str) -> None:
        response = self.client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.text
        samples = 0
        for family in text_string_to_metric_families(response.text):
            for sample in family.samples:
                samples += 1
                assert math.isfinite(sample.value), (
                    f"/metrics: {sample.name}{sample.labels} = {sample.value}"
                )
        assert samples > 0
        # and no value spelled NaN or Inf on a line (a label value le="+Inf" is fine)
        for line in response.text.splitlines():
            if line and not line.startswith("#"):
                value = line.rsplit("}", 1)[-1].split()[0] if "}" in line else line.split()[1]
                assert math.isfinite(float(value)), f"/metrics: {line}"


def build_app(service: MemoryService) -> Any:
    """MCP, the REST API (injection with a one-word minimum, so that short prompts are
    embedded too), the dashboard and /metrics, as serve builds them."""
    server = create_server(
        lambda: nullcontext(service),
        token_principal,
        auth=DatabaseTokenVerifier(TokenService(service.pool).verify),
    )
    services = replace(api_services(service), injection=make_injection(service, min_words=1))
    dashboard = DashboardServices(
        memory=service,
        sessions=DashboardSessions(service.pool, 3600),
        browse=services.browse,
        duplicates=services.duplicates,
        verify=services.verify,
    )
    return http_app(
        server,
        max_request_bytes=65_536,
        max_sessions=10,
        session_idle_timeout=60,
        routes=[*api_routes(services), *dashboard_routes(dashboard)],
    )


@pytest.fixture
def close_service(make_service: Callable[..., MemoryService]) -> MemoryService:
    """The band where a close memory that does not say it changed is a possible duplicate
    (FRIDAYS / THURSDAYS), so that the duplicates' lists and pages have pairs to show."""
    return make_service(dedup_threshold=0.9, dedup_text_rule_from=0.6)


def test_no_answer_holds_a_number_that_is_not_finite(
    close_service: MemoryService, pool: ConnectionPool, database_url: str
) -> None:
    service = close_service
    caller = Caller(Principal(uuid.uuid4(), uuid.uuid4()))
    mcp_server = create_server(
        lambda: nullcontext(service),
        lambda: caller.principal,
        open_verifier=lambda memory: nullcontext(
            VerifyService(memory, None, VerifyConfig(UNCALIBRATED_VERIFY_POLICY))
        ),
    )
    embedder = BagOfWordsEmbedder()
    admin = Principal(uuid.uuid4(), uuid.uuid4())
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(mcp_server)) as mcp_client,
        internal_errors() as logged,
        TestClient(build_app(service), base_url=BASE) as http_client,
    ):
        mcp = Mcp(portal, mcp_client, logged)
        http = Http(http_client, logged)

        @settings(
            max_examples=6,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(store=stores())
        @example(store=NASTY)
        def check(store: Store) -> None:
            caller.principal = principal = Principal(uuid.uuid4(), uuid.uuid4())
            written = {*store.texts, *store.queries, store.update, store.evidence}
            written |= {c for c in store.contexts if c}
            sure = store.queries[0]  # a query every search takes

            # the store, through save_memory
            ids: list[str] = []
            for text, category, context in zip(
                store.texts, store.categories, store.contexts, strict=True
            ):
                saved = mcp.call(
                    "save_memory",
                    valid=text in store.sure,
                    content=text,
                    category=category,
                    options={"context": context},
                )
                if saved is not None:
                    ids.append(saved["memory"]["id"])
                    written.add(saved["memory"]["content"])
            ids = list(dict.fromkeys(ids))
            # two captured conversations: one whose summary has no words
            for summary in (store.sure[0], FRIDAYS):
                episode(pool, principal, f"user: {summary}", summary=summary, embedder=embedder)

            # the tools
            for query in store.queries:
                mcp.call("recall_memories", valid=query == sure, query=query)
                mcp.call(
                    "recall_memories",
                    valid=query == sure,
                    query=query,
                    options={"include_episodes": True},
                )
                mcp.call("verify_memory", valid=query == sure, claim=query)
            mcp.call("manage_memory", valid=True, action="list")
            first, last = ids[0], ids[-1]
            updated = mcp.call(
                "manage_memory", action="update", memory_id=first, updates={"content": store.update}
            )
            if updated is not None:
                written.add(updated["memory"]["content"])
            mcp.call("manage_memory", action="reinforce", memory_id=last, evidence=store.evidence)
            mcp.call("manage_memory", valid=True, action="archive", memory_id=last, reason="fuzz")
            for query in store.queries:
                mcp.call(
                    "recall_memories",
                    valid=query == sure,
                    query=query,
                    options={"include_archived": True},
                )
            mcp.call("manage_memory", valid=True, action="list", status="archived")
            mcp.call("manage_memory", valid=True, action="restore", memory_id=last)
            mcp.call("manage_memory", valid=True, action="list", status="superseded")

            # the REST API
            token = make_token(database_url, principal.actor_id, principal.project_id)[0]
            api = partial(http.api, token)
            for query in store.queries:
                valid = query == sure
                api("GET", "/memories/search", valid=valid, query=query)
                api("GET", "/memories/search", valid=valid, query=query, include_archived="true")
                api("GET", "/memories", text=query, status="all")  # no words: refused
                api("POST", "/verify", {"claim": query}, valid=valid)
                session = {"session_id": str(uuid.uuid4())}
                api("POST", "/context", session | {"event": "session_start"}, valid=True)
                api("POST", "/context", session | {"event": "prompt", "prompt": query}, valid=valid)
            api("GET", "/memories", valid=True, status="all")
            for memory_id in ids:
                api("GET", f"/memories/{memory_id}", valid=True)
            for path in ("/stats", "/injections"):
                api("GET", path, valid=True)
            duplicates = api("GET", "/duplicates", valid=True)
            contexts = api("GET", "/contexts", valid=True)
            assert duplicates is not None
            assert contexts is not None

            # the dashboard
            http.sign_in(token)
            for query in store.queries:
                valid = query == sure
                http.page("/ui/search", written, valid=valid, q=query)
                http.page("/ui/search/results", written, valid=valid, q=query, archived="1")
                http.page("/ui/memories", written, text=query, status="all")
                http.page("/ui/verify", written, valid=valid, claim=query)
            http.page("/ui/memories", written, valid=True, status="all")
            for memory_id in ids:
                http.page(f"/ui/memories/{memory_id}", written, valid=True)
            for path in ("/ui/stats", "/ui/duplicates", "/ui/contexts", "/ui/injections"):
                http.page(path, written, valid=True)

            # changes whose answers hold numbers: a context's priority, a pair's decision
            for context in contexts[1]["contexts"]:
                api("PATCH", f"/contexts/{context['id']}", {"priority": 80}, valid=True)
            for pair in duplicates[1]["pairs"][:1]:  # THURSDAYS, possibly FRIDAYS
                merge = {"decision": "merge", "keep": pair["memory"]["id"], "content": store.update}
                api("POST", f"/duplicates/{pair['id']}/decision", merge)

        check()

        # what the calls above were measured as
        http.metrics(
            make_token(database_url, admin.actor_id, admin.project_id, READ, WRITE, ADMIN)[0]
        )


# -- the CLI's --json ---------------------------------------------------------------------------


Run = Callable[..., Result]


@pytest.fixture
def cli_env(embedding_server: EmbeddingServer, database_url: str) -> dict[str, str]:
    """The CLI on the test database, embedding with bag-of-words vectors over HTTP (the
    OpenAI-compatible fake: zero vectors for texts without words too)."""
    return {
        "EMERGENT_MEMORY_DATABASE_URL": database_url,
        "EMERGENT_MEMORY_EMBEDDING_PROVIDER": "openai",
        "EMERGENT_MEMORY_EMBEDDING_MODEL": "test-remote",
        "EMERGENT_MEMORY_EMBEDDING_DIMENSIONS": "384",
        "EMERGENT_MEMORY_EMBEDDING_BASE_URL": embedding_server.base_url,
    }


def test_the_clis_json_holds_only_finite_numbers(
    cli_env: dict[str, str], make_service: Callable[..., MemoryService]
) -> None:
    """The commands' --json, in process (a few examples: each command opens the database).
    Most of the store is saved through the service, with the CLI's model name, so that the
    CLI compares vectors with them."""
    runner = CliRunner()
    service = make_service(
        BagOfWordsEmbedder(model_name=cli_env["EMERGENT_MEMORY_EMBEDDING_MODEL"])
    )

    def run(principal: Principal, *args: str, valid: bool = False) -> Any:
        env = cli_env | {
            "EMERGENT_MEMORY_ACTOR_ID": str(principal.actor_id),
            "EMERGENT_MEMORY_PROJECT_ID": str(principal.project_id),
        }
        result = runner.invoke(cli, [*args], env=env)
        where = f"emergent-memory {_shown(args)}"
        assert "internal error" not in result.output, f"{where}: {result.output}"
        if result.exit_code != 0:
            assert result.exit_code == 1, f"{where}: {result.exit_code} {result.output}"
            assert result.stderr.startswith("error: "), f"{where}: {result.output}"
            assert not valid, f"{where}: {result.output}"
            return None
        return finite_json(result.stdout, where)

    @settings(
        max_examples=2,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(store=stores())
    def check(store: Store) -> None:
        principal = Principal(uuid.uuid4(), uuid.uuid4())
        *others, last = store.texts
        for text, category in zip(others, store.categories, strict=False):
            with contextlib.suppress(EmergentMemoryError):  # a fuzz text may be refused
                service.save(principal, text, category)
        # then through the CLI: a text without words (a repeat, or new), and a fuzz text
        saved = run(principal, "save", "-c", "fact", "--json", "--", store.sure[0], valid=True)
        run(principal, "save", "-c", "fact", "--json", "--", last, valid=last in store.sure)
        memory = saved["memory"]["id"]
        run(principal, "archive", memory, "--json", valid=True)
        for query in store.queries:
            valid = query == store.queries[0]
            run(
                principal,
                "recall",
                "--include-episodes",
                "--include-archived",
                "--json",
                "--",
                query,
                valid=valid,
            )
            run(principal, "verify", "--json", "--", query, valid=valid)
        run(principal, "list", "--status", "archived", "--json", valid=True)
        run(principal, "restore", memory, "--json", valid=True)
        run(principal, "reinforce", memory, "--evidence", store.evidence, "--json")
        run(principal, "list", "--json", valid=True)
        run(principal, "stats", "--json", valid=True)

    check()


# -- 3. the regression -------------------------------------------------------------------------


def test_texts_without_words_are_saved_and_recalled_with_finite_similarities(
    service: MemoryService, principal: Principal
) -> None:
    server = create_server(lambda: nullcontext(service), lambda: principal)
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(server)) as client,
        internal_errors() as logged,
    ):
        mcp = Mcp(portal, client, logged)
        saved = {}
        for text in ("!!!", "<->", "The user prefers tabs"):
            answer = mcp.call("save_memory", content=text, category="preference")
            assert answer is not None, text
            assert answer["status"] == "created"
            assert answer["degraded"] is False
            saved[text] = answer["memory"]["id"]
        found = {}
        for query in ("!!!", "tabs"):
            recalled = mcp.call("recall_memories", query=query)
            assert recalled is not None, query
            assert recalled["degraded"] is False, query
            for memory in recalled["memories"]:
                similarity = memory["scores"]["similarity"]
                assert similarity is None or math.isfinite(similarity), (query, memory)
            found[query] = [memory["id"] for memory in recalled["memories"]]
        assert found["tabs"] == [saved["The user prefers tabs"]]
        # a vector without length is similar to nothing: a new memory, not a rewording
        quotes = mcp.call("save_memory", content='"""', category="preference")
        assert quotes is not None
        assert quotes["status"] == "created"
        assert quotes["superseded_ids"] == []
        assert quotes["similarity"] in (0, None)
        assert quotes["possible_duplicates"] == []
        listed = mcp.call("manage_memory", action="list")
        assert listed is not None
        assert {m["id"] for m in listed["memories"]} == {*saved.values(), quotes["memory"]["id"]}
