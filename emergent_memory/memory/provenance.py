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
  cited user turn that takes it up (`_adopts`): it answers the assistant's question ("yes, do
  that", "tight budget for sure") without saying no, or corrects what the assistant said ("no,
  it got moved to friday"). A turn that only acknowledges ("haha ok thanks", "go on") takes
  up nothing. The other side: every tool and assistant turn shown, but the one taken up.
- A term is the user's when the user's side has it (the same stem, or one of at least
  PREFIX_CHARS letters that begins the other; numbers by their digits, so "2k" is "2,000" and
  "9am" is "9"); foreign when only the other side has it (but a word the proposal negates may
  come from the agent: a correction names what the agent had wrong); a term neither side has
  (the model's paraphrase or translation) counts for neither.
- The proposal is backed by the user unless a value (a name, a number, an identifier) is
  foreign, or at least as many of its terms are foreign as are the user's (and one is).
  Otherwise it is backed by where its foreign terms are found: a tool result when any of them
  is in one, else the agent.

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
# A user turn of at most this many words answers the assistant's question right before it.
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
    jasne | да | конечно | давай | ага | хорошо | ок | ooh yes | oh yes | evet | tamam |
    نعم | أجل | حسنا | हाँ | हां | ठीक | sì | certo | ja graag | prima
"""  # noqa: RUF001 (Russian words)
ASSENT = tuple(tuple(phrase.split()) for phrase in _ASSENT.split("|"))
# Assents in scripts written without spaces, found anywhere in a short turn.
ASSENT_MARKS = (
    *("好的", "好", "可以", "行", "是的", "对"),
    *("はい", "お願い", "いいよ", "네", "예", "좋아"),
)
# Words of a user turn that says no, or that the assistant got something wrong, among its first
# REFUSAL_WORDS words; and how such a turn begins in scripts written without spaces.
_REFUSING = """
    no nope nah not never don't wrong incorrect actually nein nicht falsch eigentlich non pas
    jamais faux nunca não nao nie нет не неправильно
"""
REFUSING = frozenset(_REFUSING.split())
REFUSING_MARKS = ("不", "别", "没", "いいえ", "いや", "違", "아니", "안 ")
REFUSAL_WORDS = 3
# Words of a user turn that only acknowledges, or lets the assistant go on: it takes up
# nothing of what the assistant said, unless it answers with the assistant's own words.
_GOING_ON = """
    go on | continue | carry on | keep going | thanks | thank you | thx | ty | cheers | next |
    weiter | mach weiter | danke | merci | vas-y | sigue | gracias | continua | obrigado |
    dalej | dzięki | продолжай | дальше | спасибо
"""
GOING_ON = tuple(tuple(phrase.split()) for phrase in _GOING_ON.split("|"))
GOING_ON_MARKS = ("谢谢", "继续", "ありがとう", "続けて", "고마워", "감사", "계속")
QUESTION_MARKS = ("?", "\uff1f", "\u00bf", "\u061f")  # also full-width, Spanish, Arabic

_UNSPACED = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f\uac00-\ud7af]+"
)
_HIRAGANA = re.compile(r"^[\u3040-\u309f]+$")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
_THOUSANDS = re.compile(r"(?<=\d)[,.\u00a0' ](?=\d{3}(?!\d))")
_KILO = re.compile(r"(\d+(?:\.\d+)?)\s?[kK](?![a-zA-Z])")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_RUN = re.compile(r"\d+")
_REPEATS = re.compile(r"(\w)\1{2,}")
# memory/dedup.py's reading of a number or a clock time
_NUMERIC = re.compile(r"^(?:t\d+|\d+(?:\.\d+)?)$")


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
    # numbers and clock times are compared by their digits below ("9am" is the user's "never
    # before 9", "2k" is "2,000")
    values = {value for value in values if not _NUMERIC.match(value)}
    words = {word for word in words if not _NUMERIC.match(word)}
    words -= MEMORY_WORDS
    words.update(_pairs(text))
    # every number as its digits, however the text writes it ("9am", "at 9", "7:00 PM")
    digits = _numbers(text)
    return _Terms(frozenset(words | values | digits), frozenset(values | digits))


def _numbers(text: str) -> set[str]:
    """The text's numbers as digits, marked "#": each number ("2,000" and "2k" are 2000,
    "18.19.0" is 18.19) and each run of digits in it (18, 19 and 0)."""
    plain = _KILO.sub(lambda m: f"{float(m[1]) * 1000:g}", _THOUSANDS.sub("", text))
    found = {f"#{float(number):g}" for number in _NUMBER.findall(plain)}
    return found | {f"#{int(run)}" for run in _RUN.findall(plain)}


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


def _words(text: str) -> list[str]:
    """Lower-cased words, a letter repeated three times or more said once ("yesss")."""
    return [_REPEATS.sub(r"\1", word.lower()) for word in _WORD.findall(text)]


def _begins(words: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> bool:
    return any(tuple(words[: len(phrase)]) == phrase for phrase in phrases)


def assents(text: str) -> bool:
    """Whether a user turn accepts what was asked before it ("yes, do that", "ok", "ja bitte")."""
    words = _words(text)
    if len(words) > ASSENT_WORDS:
        return False
    if any(mark in text for mark in ASSENT_MARKS) and len(text.strip()) <= 3 * ASSENT_WORDS:
        return True
    return _begins(words, ASSENT)


def _refuses(text: str, words: Sequence[str]) -> bool:
    """Whether a user turn says no or says the assistant is wrong, at its start."""
    head = text.lstrip()
    return any(word in REFUSING for word in words[:REFUSAL_WORDS]) or head.startswith(
        REFUSING_MARKS
    )


def _adopts(answer: Turn, before: Turn) -> bool:
    """Whether a user turn takes up the assistant's turn right before it, whose words are then
    the user's too:

    - a statement, which the user corrects ("no, it got moved to friday 3pm") or answers in a
      few words with one of its words;
    - a question, which the user answers in a few words or with one of its words ("tight
      budget for sure" to "a tight budget or a comfort version?"), unless the answer says no
      ("god no, find something after 10": what was asked is not what the user wants) or only
      acknowledges ("haha ok thanks")."""
    if before.role != "assistant":
        return False
    words = _words(answer.content)
    if not words and not answer.content.strip():
        return False
    shares = bool(_terms(answer.content).words & _terms(before.content).words)
    short = len(words) <= ASSENT_WORDS
    if not any(mark in before.content for mark in QUESTION_MARKS):
        return _refuses(answer.content, words) or (short and shares)
    if _refuses(answer.content, words):
        return False
    if assents(answer.content):
        return True
    acknowledges = any(
        tuple(words[i : i + len(phrase)]) == phrase
        for phrase in GOING_ON
        for i in range(len(words))
    ) or any(mark in answer.content for mark in GOING_ON_MARKS)
    if acknowledges and not shares:
        return False
    return short or shares


def backing(content: str, turns: Sequence[Turn], cited: Iterable[int]) -> Backer:
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
    if foreign & proposed.values or len(foreign) >= max(len(own), 1):
        return "tool" if from_tool else "assistant"
    return "user"
