"""The language a prompt is written in, and the memories that say how to answer in it.

A developer who writes to the agent in several languages often leaves one standing rule about
it: "Wenn ich auf Deutsch schreibe, antworte mir bitte auf Deutsch", "Czasem piszę po polsku,
ale odpowiadaj po angielsku", "Quand je t'écris en français, réponds en français". Such a
rule applies to every prompt written in that language, whatever the prompt is about, and
shares no word or meaning with it that relevance could read (memory/relevance.py). Injection
offers it with every prompt in the language of its condition (`answers_in`), looked for among
the prompt's candidates and by the language's names (`names_query`: a full-text recall).

- `written_in(text)`: the language of a prompt that is not English, or None (English, or not
  told). Kana, Hangul, Han and Cyrillic letters name theirs; text in Latin letters is read by
  its common words (function words and a developer's usual requests: "füge", "dodaj",
  "adiciona") and letters of one language (ą, ß, ã, ñ, ğ...), against English's; fewer than
  two signs of one language, or no more than of English, is not told. A memory naming another
  language is never offered by it.
- `answers_in(language, content, category)`: a standing rule (preference, instruction,
  convention, correction) that says how to answer ("antworte", "odpowiadaj", "reply",
  "返事"...) and whose condition is writing in the language: the language named nearest a
  word for writing or asking ("wenn ich auf *Deutsch schreibe*", "even when he *writes in
  Japanese*"), in the same sentence as the word for answering. "영어로 물어봐도 답변은
  항상 한국어로" (answer in Korean even when I ask in English) is a condition on English,
  not a rule for prompts in Korean; a memory that only
  names the language ("the app ships Polish strings", "comments stay in English even when I
  write German": no word for answering) is not one either: which prompts it affects depends
  on what they ask.

Measured on blind prompt sets, benchmarks/README.md section 6.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# The word lists (languages.json): each language's words, few of them English words too, and
# English's own, so that an English prompt with a word of another language ("plot it as a
# scatter") stays English; letters of one language (each counts half a word); how a memory
# names each language (in English, in itself, as its speakers say "in it"); stems of words that
# say how to answer ("antwort" is antworte, antworten, Antwort) and of words for the user's
# writing or asking in a language ("schreib", "pisz", "물어").
_DATA = json.loads(Path(__file__).with_name("languages.json").read_text(encoding="utf-8"))
WORDS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in _DATA["words"].items()}
LETTERS: dict[str, str] = _DATA["letters"]
NAMES: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _DATA["names"].items()}
REPLY: tuple[str, ...] = tuple(_DATA["reply"])
WRITES: tuple[str, ...] = tuple(_DATA["writes"])
# how far (in characters) a language's name may be from the word for writing in it
CONDITION_REACH = 30
# the categories of a standing rule
RULES = frozenset({"preference", "instruction", "convention", "correction"})

_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_UKRAINIAN = re.compile(r"[іїєґІЇЄҐ]")
_GREEK = re.compile(r"[\u0370-\u03ff]")
# a word of letters alone: not the letters of "e2e" or "utf8"
_WORD = re.compile(r"(?<![\w])[^\W\d_]+(?:-[^\W\d_]+)?(?![\w])")
# a word for writing or asking in a language, anywhere in a sentence (the longest stem first)
_WRITES = re.compile("|".join(re.escape(stem) for stem in sorted(WRITES, key=len, reverse=True)))
# a sentence ends at . ! ? (and their CJK forms) before a space or the end, or at a line break
_SENTENCE = re.compile(r"(?<=[.!?])\s+|[\u3002\uff01\uff1f\n]+")
_NAME = {
    language: re.compile(
        "|".join(rf"\b{re.escape(name)}" if name.isascii() else re.escape(name) for name in names)
    )
    for language, names in NAMES.items()
}


def written_in(text: str) -> str | None:
    """The language of `text` (ISO 639-1) when it is not English; None for English or when
    too little tells."""
    if _KANA.search(text):
        return "ja"
    if _HANGUL.search(text):
        return "ko"
    if len(_HAN.findall(text)) >= 2:  # one is a sign ("1,234円")
        return "zh"
    if len(_CYRILLIC.findall(text)) >= 3:
        return "uk" if _UKRAINIAN.search(text) else "ru"
    if len(_GREEK.findall(text)) >= 3:
        return "el"
    words = [word.lower() for word in _WORD.findall(text)]
    signs = {language: float(sum(w in known for w in words)) for language, known in WORDS.items()}
    lowered = text.lower()
    for language, letters in LETTERS.items():
        signs[language] += 0.5 * sum(lowered.count(letter) for letter in letters)
    english = signs.pop("en")
    best = max(signs, key=lambda language: signs[language])
    return best if signs[best] >= 1.5 and signs[best] > english else None


def names_query(language: str) -> str:
    """A full-text query for the memories that name `language` (recall's websearch syntax)."""
    return " or ".join(f'"{name}"' for name in NAMES.get(language, ()))


def answers_in(language: str, content: str, category: str) -> bool:
    """Whether a memory is a standing rule on how to answer prompts written in `language`:
    a rule that says how to answer, whose condition is writing in `language` (the language
    named nearest a word for writing or asking: "when I *write in German*", "ook als ik in
    het *Nederlands typ*"; "*영어로 물어봐도* 답변은 항상 한국어로" is a condition on English,
    no rule for prompts in Korean)."""
    if category not in RULES or language not in _NAME or language == "en":
        return False
    return any(_conditioned(language, sentence) for sentence in _SENTENCE.split(content.lower()))


def _conditioned(language: str, sentence: str) -> bool:
    """One sentence says how to answer and names `language` nearest a word for writing or
    asking (the condition and the answer are one rule: "Maile ... piszemy po polsku. Na maile
    po angielsku nie odpisuje" is a note on emails and who answers them, not a rule)."""
    if not _NAME[language].search(sentence) or not any(stem in sentence for stem in REPLY):
        return False
    named = [
        (match.start(), name)
        for name, pattern in _NAME.items()
        for match in pattern.finditer(sentence)
    ]
    for found in _WRITES.finditer(sentence):
        distance, nearest = min((abs(start - found.start()), n) for start, n in named)
        if nearest == language and distance <= CONDITION_REACH:
            return True
    return False
