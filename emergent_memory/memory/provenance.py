"""Where a capture proposal's words come from: the server's own check of the evidence an
extractor cites, so that a proposal counts as the user's word only when what the user typed
supports it.

An extractor, honest or not, names the turns that show a proposal. Citing a user turn is not
enough: a model that read a fetched page saying "the user now edits the schema by hand" can
cite the user's "please read the vendor docs". The check compares the proposal's key terms
with the turns that were shown:

- Key terms: the content words and values of the proposal (memory/dedup.py's reading: names,
  numbers, versions, identifiers, quoted text, and stems of the other words), without the
  words every memory uses ("user", "prefers", "always", "project", ...: MEMORY_WORDS). In
  scripts written without spaces (Chinese, Japanese, Thai), character pairs.
- The user's side: the user turns the proposal cites, and the assistant turn right before a
  cited user turn that only assents to it ("yes, do that", "ok", "ja bitte": ASSENT), whose
  words the user adopted. The other side: every tool and assistant turn shown.
- A term is the user's when the user's side has it (the same stem, or one of at least
  PREFIX_CHARS letters that begins the other); foreign when only the other side has it; a term
  neither side has (the model's paraphrase or translation) counts for neither.
- The proposal is backed by the user unless a value (a name, a number, an identifier) is
  foreign, or more of its terms are foreign than the user's. Otherwise it is backed by where
  its foreign terms are found: a tool result when any of them is in one, else the agent.

What capture does with a proposal that is not backed by the user is memory/extraction.py's
rule. The check reads words, not meaning: it does not catch a model that rewrites what a page
says in the user's own words, nor one that reverses what the user said with the user's words
("never edit it by hand" becoming "edits it by hand"); save's authority and conflict rules
are the next line there. Measured on benchmarks/data/provenance_*.json (benchmarks/README.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from emergent_memory.memory import dedup
from emergent_memory.memory.capture_text import Turn

Backer = Literal["user", "tool", "assistant"]

PREFIX_CHARS = 5
# A user turn of at most this many words that says one of ASSENT adopts the assistant's
# question or proposal right before it.
ASSENT_WORDS = 12

_MEMORY_WORDS = """
    prefer prefers preferred preference preferences like likes want wants wanted always never
    now currently project projects repo repository agent assistant should must use uses used
    using usually every also instead rather please make sure new keep team people person
    someone thing things way ways time times one ones say says said tell told ask asked
    go going get gets got need needs lot really well good don't doesn't didn't isn't aren't
    wasn't weren't won't can't cannot shouldn't wouldn't i'm i'll i've we're we'll you're
    it's that's let's there's
"""
MEMORY_WORDS = frozenset(dedup.content_words(_MEMORY_WORDS)) | frozenset(_MEMORY_WORDS.split())

# How a user turn that accepts what the assistant just asked begins (lower-cased words).
_ASSENT = """
    yes | yeah | yep | yup | sure | ok | okay | alright | agreed | correct | exactly | right |
    please do | do it | do that | go ahead | sounds good | that'd be great | great | perfect |
    absolutely | definitely | let's do | ja | jo | genau | gerne | klar | passt | oui | ouais |
    d'accord | parfait | sí | si | vale | claro | dale | perfecto | sim | isso | pode | tak |
    jasne | да | конечно | давай | ага | хорошо | ок | ooh yes | oh yes
"""  # noqa: RUF001 (Russian words)
ASSENT = tuple(tuple(phrase.split()) for phrase in _ASSENT.split("|"))
# Assents in scripts written without spaces, found anywhere in a short turn.
ASSENT_MARKS = (
    *("好的", "好", "可以", "行", "是的", "对"),
    *("はい", "お願い", "いいよ", "네", "예", "좋아"),
)
QUESTION_MARKS = ("?", "\uff1f", "\u00bf")

_UNSPACED = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f\uac00-\ud7af]+"
)
_HIRAGANA = re.compile(r"^[\u3040-\u309f]+$")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_DIGITS = re.compile(r"\d+")
_TIME = re.compile(r"^t\d+$")  # memory/dedup.py's reading of a clock time


@dataclass(frozen=True, slots=True)
class Backing:
    """Who backs a proposal's words: `by` the user, a tool result or the agent; how many of
    its key terms the user's side has (`own`), how many only the other side (`foreign`), and
    how many of those are values."""

    by: Backer
    own: int
    foreign: int
    foreign_values: int


@dataclass(frozen=True, slots=True)
class _Terms:
    words: frozenset[str]  # stems and values, without MEMORY_WORDS
    values: frozenset[str]


@lru_cache(maxsize=2048)
def _terms(text: str) -> _Terms:
    said = dedup.statement(text)
    values = {
        value
        for value in said.values
        if not value.startswith(("q:", "letter:")) and value not in MEMORY_WORDS
    }
    words = {word for word in said.words if not word.startswith(("q:", "letter:"))}
    # a clock time is compared by its digits below ("9am" is the user's "never before 9")
    values = {value for value in values if not _TIME.match(value)}
    words = {word for word in words if not _TIME.match(word)}
    words -= MEMORY_WORDS
    words.update(_pairs(text))
    # every number as its digits, however the text writes it ("9am", "at 9", "7:00 PM")
    digits = {f"#{int(run)}" for run in _DIGITS.findall(text)}
    return _Terms(frozenset(words | values | digits), frozenset(values | digits))


def _pairs(text: str) -> set[str]:
    """Character pairs of the runs of scripts written without spaces (not those of hiragana
    alone: the particles and endings of Japanese)."""
    pairs: set[str] = set()
    for run in _UNSPACED.findall(unicodedata.normalize("NFKC", text)):
        found = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        pairs.update(pair for pair in found if not _HIRAGANA.match(pair))
    return pairs


def _has(term: str, vocabulary: frozenset[str]) -> bool:
    if term in vocabulary:
        return True
    if len(term) < PREFIX_CHARS or not term.isalpha():
        return False
    head = term[:PREFIX_CHARS]
    return any(
        len(word) >= PREFIX_CHARS
        and word[:PREFIX_CHARS] == head
        and (word.startswith(term) or term.startswith(word))
        for word in vocabulary
    )


def assents(text: str) -> bool:
    """Whether a user turn accepts what was asked before it ("yes, do that", "ok", "ja bitte")."""
    words = [word.lower() for word in _WORD.findall(text)]
    if len(words) > ASSENT_WORDS:
        return False
    if any(mark in text for mark in ASSENT_MARKS) and len(text.strip()) <= 3 * ASSENT_WORDS:
        return True
    return any(tuple(words[: len(phrase)]) == phrase for phrase in ASSENT)


def _adopts(answer: Turn, before: Turn) -> bool:
    """Whether a user turn takes up the assistant's question right before it: it accepts it,
    or answers it with one of its words ("tight budget for sure" to "a tight budget or a
    comfort version?"). Then the question's words are the user's too."""
    if before.role != "assistant" or not any(mark in before.content for mark in QUESTION_MARKS):
        return False
    return assents(answer.content) or bool(
        (_terms(answer.content).words - _terms("").words) & _terms(before.content).words
    )


def backing(content: str, turns: Sequence[Turn], cited: Iterable[int]) -> Backing:
    """Who backs `content` (a proposal citing the turns `cited`), among the `turns` shown to
    the model (the module's docstring states the rule)."""
    by_index = {turn.index: turn for turn in turns}
    ordered = sorted(by_index)
    users: list[str] = []
    adopted: set[int] = set()
    for index in sorted(set(cited)):
        turn = by_index.get(index)
        if turn is None or turn.role != "user":
            continue
        users.append(turn.content)
        position = ordered.index(index)
        if position > 0 and _adopts(turn, before := by_index[ordered[position - 1]]):
            users.append(before.content)
            adopted.add(before.index)
    user_side = frozenset().union(*(_terms(text).words for text in users))
    tool_side = frozenset().union(*(_terms(t.content).words for t in turns if t.role == "tool"))
    agent_side = frozenset().union(
        *(
            _terms(t.content).words
            for t in turns
            if t.role == "assistant" and t.index not in adopted
        )
    )
    proposed = _terms(content)
    own = {term for term in proposed.words if _has(term, user_side)}
    rest = proposed.words - own
    from_tool = {term for term in rest if _has(term, tool_side)}
    # a correction names what the agent had wrong ("Portland, Maine, not Portland, Oregon")
    negated = dedup.statement(content).negated
    from_agent = {
        term
        for term in rest - from_tool
        if _has(term, agent_side) and not set(term.split()) <= negated
    }
    foreign = from_tool | from_agent
    foreign_values = len(foreign & proposed.values)
    by: Backer = "user"
    if foreign_values or len(foreign) >= max(len(own), 1):
        by = "tool" if from_tool else "assistant"
    return Backing(by, len(own), len(foreign), foreign_values)
