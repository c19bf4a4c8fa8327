"""Whether a new memory supersedes its nearest existing one: similarity plus a cheap text rule.

save_memory embeds the new memory and finds the most similar visible memory of the same scope
(store.find_nearest). A cosine similarity alone cannot decide: on the 360 labelled pairs of
benchmarks/data/dedup_pairs.json (all-MiniLM-L6-v2), a related but distinct fact written with
the same sentence shape ("JWT access tokens expire after 15 minutes" / "refresh tokens expire
after 30 days", 0.91) is as similar as a rewording, and a correction ("prefers tabs" / "prefers
spaces", 0.82) can be less similar than a distinct fact. The best single threshold with
precision >= 0.95 (0.87) supersedes only 53% of the rewordings and corrections.

So the decision is in bands (DedupPolicy), with three text features of the pair that cost
40 to 100 microseconds per pair in pure Python (benchmarks/results/dedup.md):

- **A changed subject** (changes_subject): the existing text loses both a value (a number, a
  version, an identifier, a capitalised name) and an ordinary content word, other than words
  the new text replaces with a change marker ("the *public* API
  rate limit is *1000*" / "the *internal* API rate limit is *10000*"). That is a sibling fact,
  not a new version: it never supersedes. It fires on 74 of the 110 related_distinct pairs
  and on 6 of the 90 corrections.
- **A change marker** (says_it_changed): the new text says the fact changed ("now",
  "instead", "no longer", "switched", "moved", "renamed", "upgraded", ...) and the existing
  text does not. 52 of the 90 corrections have one; no related_distinct pair has.
- **Every word kept** (keeps_every_word): the new text repeats every content word of the
  existing one and adds some (the same statement, extended).

From the low threshold (0.70) up, a pair that changes the subject never supersedes; at or
above the high threshold (0.80) any other pair does; between the two, only with a change
marker or every word kept. Cross-validated on the labelled set (5 folds stratified by kind,
thresholds chosen on the training folds), this rule supersedes with precision 0.98 and recall
0.82, against 0.92 and 0.57 for a single threshold chosen the same way (in sample, 0.87
gives 0.95 and 0.53). The features were designed by reading that set, which cross-validation
does not correct for; benchmarks/README.md lists every rule tried and a stress test. The
markers and stopwords are English, and the thresholds belong to all-MiniLM-L6-v2: a model
nobody calibrated keeps a plain threshold (DedupPolicy.plain).

A pair that is similar (at or above the low threshold) but not superseded is reported to the
agent as a possible duplicate, which it can resolve with manage_memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise
from typing import Literal

Verdict = Literal["supersede", "possible_duplicate", "distinct"]

# Words that carry no fact of their own. "user" is here because nearly every memory is about
# the user ("The user prefers ...").
_STOPWORDS = """
    a an the and or but if of in on at to for from by with as is are was were be been
    being it its this that these those there here their they them he she his her we our
    you your i my me do does did done has have had having will would should can could may
    might must shall not no nor so than then too very just also only all any each every
    some such own same other about into over under after before between through during up
    down out off again further once user
"""
STOPWORDS = frozenset(_STOPWORDS.split())

# Words with which a text says that a fact changed. Matched as whole lower-cased words;
# the phrases ("no longer") as consecutive words.
_CHANGE_MARKERS = """
    now instead anymore actually switched moved changed replaced replacing renamed
    upgraded downgraded migrated bumped rewritten"""
CHANGE_MARKERS = frozenset(_CHANGE_MARKERS.split())
CHANGE_PHRASES = (("no", "longer"), ("any", "more"))

# A token: letters and digits, with inner punctuation kept ("orders.created", "eu-west-1",
# "python:3.11-slim", "/v2/webhooks") and a trailing "+" or "#" ("C++", "C#").
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['._:/+#_-][A-Za-z0-9]+)*[+#]*")
_QUOTED = re.compile(r"`[^`]+`|\"[^\"]+\"")
_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def _stem(word: str) -> str:
    """A crude stem of a lower-cased word, so that "deploys" and "deployed" match: strips a
    possessive and one common suffix from words of letters; anything else is kept as is."""
    if word.endswith("'s"):
        word = word[:-2]
    if not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + replacement
    return word


def _looks_like_a_value(token: str, first: bool) -> bool:
    """A number, a version, an identifier ("orders.created", "ci-bot", "new_checkout") or a
    capitalised name that does not merely start the sentence. An all-capital acronym ("API",
    "CI") is more often what a fact is about than its value: it counts as an ordinary word."""
    if any(ch.isdigit() for ch in token) or any(ch in "._:/+#_-" for ch in token):
        return True
    return token[0].isupper() and not first and not (token.isupper() and len(token) > 1)


def content_words(text: str) -> frozenset[str]:
    """The stems of the text's words, lower-cased, without stopwords."""
    stems = (_stem(token.lower()) for token in _TOKEN.findall(text))
    return frozenset(stem for stem in stems if stem not in STOPWORDS)


def value_words(text: str) -> frozenset[str]:
    """The content words that look like values: numbers, versions, identifiers, capitalised
    names, and the words of quoted or backticked spans."""
    values = {
        _stem(token.lower())
        for position, token in enumerate(_TOKEN.findall(text))
        if _looks_like_a_value(token, first=position == 0)
    }
    for match in _QUOTED.finditer(text):
        values.update(_stem(token.lower()) for token in _TOKEN.findall(match.group(0)))
    return frozenset(values - STOPWORDS)


def _lower_tokens(text: str) -> list[str]:
    return [token.lower() for token in _TOKEN.findall(text)]


def _change_markers(words: list[str]) -> set[str]:
    found = {word for word in words if word in CHANGE_MARKERS}
    found.update(" ".join(pair) for pair in pairwise(words) if pair in CHANGE_PHRASES)
    return found


def says_it_changed(existing: str, new: str) -> bool:
    """The new text has a change marker ("now", "no longer", "switched", ...) that the
    existing one does not."""
    return bool(_change_markers(_lower_tokens(new)) - _change_markers(_lower_tokens(existing)))


def keeps_every_word(existing: str, new: str) -> bool:
    """Every content word of the existing text is in the new one (the same statement,
    extended or qualified)."""
    return content_words(existing) <= content_words(new)


def changes_subject(existing: str, new: str) -> bool:
    """The existing text loses a value and an ordinary content word: the same sentence about
    something else ("the *public* API rate limit is *1000*" / "the *internal* API rate limit
    is *10000*"), not a new version of the same fact.

    Words that the new text replaces with a change marker do not count ("the API server
    *runs on* port 8080" / "the API server *moved to* port 9090" keeps its subject), but a
    marker elsewhere does not excuse a changed subject ("the *staging* database uses Postgres
    15" / "the *production* database uses Postgres 16 now").
    """
    lost = content_words(existing) - content_words(new)
    lost_values = lost & value_words(existing)
    if not lost_values:
        return False
    old, new_ = _lower_tokens(existing), _lower_tokens(new)
    replaced_by_a_change: set[str] = set()
    matcher = SequenceMatcher(None, old, new_, autojunk=False)
    for operation, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if operation == "replace" and _change_markers(new_[new_start:new_end]):
            replaced_by_a_change.update(_stem(word) for word in old[old_start:old_end])
    return bool(lost - lost_values - replaced_by_a_change)


@dataclass(frozen=True, slots=True)
class DedupPolicy:
    """When a new memory supersedes its nearest existing one.

    `threshold`: at or above this cosine similarity the pair supersedes. `text_rule_from`:
    None is that plain threshold alone (no text rule, no possible duplicates). Otherwise the
    text rule applies from there up: a pair that changes the subject (changes_subject) never
    supersedes, and below the threshold a pair supersedes only when the new text says it
    changed (says_it_changed) or keeps every word of the existing one (keeps_every_word). A
    pair in that range that does not supersede is a possible duplicate, for the agent to judge.
    """

    threshold: float
    text_rule_from: float | None = None

    def __post_init__(self) -> None:
        if self.text_rule_from is not None and self.text_rule_from > self.threshold:
            raise ValueError("text_rule_from must not exceed threshold")

    @classmethod
    def plain(cls, threshold: float) -> DedupPolicy:
        """Similarity alone: for models whose similarities nobody calibrated the text rule on."""
        return cls(threshold=threshold)

    def decide(self, similarity: float, existing: str, new: str) -> Verdict:
        """What to do with the nearest existing memory, given its similarity to the new one."""
        if self.text_rule_from is None:
            return "supersede" if similarity >= self.threshold else "distinct"
        if similarity < self.text_rule_from:
            return "distinct"
        if changes_subject(existing, new):
            return "possible_duplicate"
        if similarity >= self.threshold:
            return "supersede"
        if says_it_changed(existing, new) or keeps_every_word(existing, new):
            return "supersede"
        return "possible_duplicate"
