"""verify_memory's clause features: what one part of a memory says against a claim.

A memory often states several things ("Unit tests run on the host; integration tests run on
the HIL rack"), and a claim restates one of them. These features split both texts into
clauses, pair each claim clause with the memory clause about the same thing (the one sharing
most of its non-value words), and read that pair alone: the claim clause negates it, says the
other value of one setting (`VERIFY_OPPOSITES`), takes a value or word that the memory gives
another clause (the values in swapped places), or turns an order around ("A before B" / "B
before A", "X over Y" / "Y instead of X", "A does more than B" / "B does more than A").
The verbs among the opposites are read in any inflection but a gerund ("starts" /
"finishes"); a negated word that forbids permits ("*not forbidden*": `says_no`). Also
here: one part of a longer memory restated with another number (`part_difference`). Words
and pairs are data (this module's constants); the texts are read with save's tokens and
stems (memory/dedup.py's `statement`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence, Set
from difflib import SequenceMatcher
from functools import lru_cache, partial
from itertools import combinations, pairwise
from pathlib import Path

from emergent_memory.memory import dedup

# Where a clause ends: a sentence's end, a semicolon, a colon or a dash, and a comma (not a
# thousands separator: "1,000 requests", as dedup._THOUSANDS) or a joining word that opens
# another clause.
_JOINING = r"(?:and|but|while|whereas|although|though|then|so|except)"
_CLAUSE_BREAK = re.compile(
    rf"[.;!?:](?:\s+|$)|\s[\u2014\u2013-]\s|,(?!(?<=\d,)\d{{3}}(?!\d))\s*(?:{_JOINING}\s+)?"
    rf"|\s+{_JOINING}\s+",
    re.IGNORECASE,
)

# Words that name two values of one setting, beyond save's `dedup.OPPOSITES` (verify reads
# them within a clause pair, never across a whole memory): "above" / "below", "first" /
# "last", "at most" / "at least", "amateur" / "professional", ...
_VERIFY_OPPOSITES = """
    above:below exceeds:below over:under first:last earliest:latest most:least
    larger:smaller bigger:smaller big:small long:short longer:shorter older:newer
    higher:lower high:low more:less fewer:more amateur:professional same:different
    shared:dedicated shared:separate single:several single:multiple one:several
    allowed:blocked allow:block allowed:disallowed permitted:forbidden blocked:permitted
    enabled:off static:dynamic statically:dynamically stable:flaky
    stable:drift early:late earlier:later morning:afternoon mornings:afternoons
    start:end beginning:end top:bottom internal:external local:remote inside:outside
    increase:reduce raise:lower grow:shrink add:remove added:removed adds:removes
    deprecated:recommended deprecated:current mandatory:forbidden required:forbidden
    must:mustnt always:rarely often:rarely never:always lowest:highest smallest:largest
    minimum:max min:maximum descending:lowest ascending:highest
    synchronously:asynchronously sync:asynchronous synchronous:async
    automated:manual automatically:manually automatic:manually
    private:public start:finish begin:end begin:finish open:close fine:coarse
    robust:fragile hourly:daily daily:weekly weekly:monthly daily:monthly monthly:yearly
    succeed:fail add:drop introduce:drop introduce:remove join:leave joined:left
    like:dislike prefer:dislike bright:dark singular:plural remote:onsite remotely:onsite
    push:poll pinned:unpinned pinned:floating lock:unlock locked:unlocked grant:revoke
    install:uninstall keep:delete retain:delete expand:collapse up:down
    spike:drop spikes:drops spiked:dropped multiply:divide multiplied:divided multiplies:divides
    free:charged free:paid verbatim:paraphrased verbatim:paraphrase verbatim:summarised
    verbatim:summarized during:outside including:excluding include:exclude
    included:excluded same:separate header:footer headers:footers inbound:outbound
    opt-in:opt-out upload:download uploads:downloads import:export ingress:egress
    encrypt:decrypt encrypted:decrypted input:output horizontally:vertically
    keep:drop keep:remove retain:drop retain:remove stay:drop stay:remove remain:drop
    remain:remove top:end internal:public optional:mandatory optional:required
    optional:always hide:reveal hide:expose conceal:reveal conceal:expose mask:reveal
    mask:expose
"""
# and the direct antonyms of English adjectives and adverbs from WordNet 3.0, with their
# comparatives and superlatives ("large" / "small", "larger" / "smaller"), as data
# (antonyms.txt, written by benchmarks/antonyms.py)
ANTONYMS_PATH = Path(__file__).with_name("antonyms.txt")


def pairs_in(path: Path) -> frozenset[frozenset[str]]:
    """The pairs of a file of one "word word" pair a line ("#" opens a comment)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    pairs = (line.split() for line in lines if line.strip() and not line.startswith("#"))
    return frozenset(frozenset(words) for words in pairs if len(words) == 2)


VERIFY_OPPOSITES = (
    frozenset(frozenset(pair.split(":")) for pair in _VERIFY_OPPOSITES.split())
    | dedup.OPPOSITES
    | pairs_in(ANTONYMS_PATH)
)

# Connectives that order two things, and which side comes first (chosen, or earlier):
# "pnpm over npm", "pnpm instead of npm", "pnpm rather than npm", "pnpm to npm" (after
# "prefer"), "better than", "tests before the fix", "the fix after the tests", "first the
# tests, then the fix", "from BAM to CRAM" (the second is the one now).
_FIRST_SIDE = ("over", "before", "than", "then", "instead of", "rather than")
_ORDER = re.compile(r"\b(over|before|after|then|instead of|rather than|than|to)\b", re.IGNORECASE)
_FROM_OR_PREFER = re.compile(r"\b(from|prefers?|preferred)\b", re.IGNORECASE)
_ORDER_WINDOW = 4  # content words read on each side of the connective
_COMPARED_WINDOW = 8  # on each side of "than"


# A negation, or a word (not a value) moved between clauses, counts in a clause pair sharing
# at least this many non-value words; an opposite or a value moved, in any pair.
_SURE_ALIGNMENT = 2
# (a single quote only where no letter touches it from outside: "the team's CI doesn't run"
# holds no quoted text)
_QUOTED = dedup.QUOTED_TEXT


# A colon between a label and a value of one or two words, which a semicolon or the
# sentence's end follows ("staging branch*:* develop; production branch*:* main"): one
# clause, read as "is" (not a list after the colon: "six labs: Warsaw, Kraków, ...").
_KEY_VALUE = re.compile(r"(?<=\w):\s+(?=[^\s:;,.]+(?:\s+[^\s:;,.]+)?\s*(?:;|\.(?:\s|$)|$))")


def _quoted_value(found: re.Match[str]) -> str:
    """A quoted text kept in its clause when it is a value, a command or a name of a few
    words with no clause break nor negator in it ("run *`make seedcheck`* before pushing",
    "called *'Ms Folkestad'*"); left out otherwise (what someone said, an error message:
    "fails with *'file not found'*" negates nothing of the text)."""
    quoted = found.group(0)
    short = len(quoted.split()) <= _QUOTED_VALUE_WORDS and not _CLAUSE_BREAK.search(quoted[1:-1])
    return quoted if short and not dedup.statement(quoted[1:-1]).negations else " "


_QUOTED_VALUE_WORDS = 3


@lru_cache(maxsize=4096)
def clauses(text: str) -> tuple[str, ...]:
    """The text's clauses (see _CLAUSE_BREAK), quoted text left out but for a short value
    (_quoted_value), a label and its short value one clause (_KEY_VALUE); an opening clause
    of one content word ("In staging, ...") joins the next."""
    text = _KEY_VALUE.sub(" is ", _QUOTED.sub(_quoted_value, text))
    parts = [p.strip() for p in _CLAUSE_BREAK.split(text) if p.strip()]
    parts = [part for part in parts if dedup.content_words(part)]
    if len(parts) > 1 and len(dedup.content_words(parts[0])) < 2:
        parts[:2] = [f"{parts[0]} {parts[1]}"]
    return tuple(parts)


def _slot_words(text: str) -> frozenset[str]:
    """The content words that are no value nor part of one."""
    one = dedup.statement(text)
    # (each value's parts apart, as written and as stems, "june" and "jun" of "4 June 2024":
    # the values joined in a set's order, which changes from one process to the next, were
    # read as words that depended on it)
    written = {part.lower() for part in dedup._written_parts(one.values)}
    return frozenset(one.words - one.values - written - dedup._value_parts(one.values))


def _aligned(claim_clause: str, memory_clauses: tuple[str, ...]) -> tuple[int, int] | None:
    """The memory clause about the same thing as a claim clause: the one sharing the most
    non-value words with it, then the most words; None when none shares one or two tie.
    With it, how many non-value words they share."""
    slots, words = _slot_words(claim_clause), dedup.content_words(claim_clause)
    subject = _first_word(claim_clause)
    negated = dedup.negated_words(claim_clause)
    scored = sorted(
        (
            (
                len(slots & _slot_words(part)),
                len(words & dedup.content_words(part)),
                # then the clause with the word the claim negates ("Twilio should *not* be
                # *mocked*": "*mock* Twilio instead", not "do not run tests against Twilio")
                bool(negated & dedup.content_words(part)),
                # then the clause about the same subject, its first content word
                # ("*Staging* is deployed manually": "*staging* is deployed automatically",
                # not "*production* is deployed manually")
                subject is not None and _first_word(part) == subject,
                index,
            )
            for index, part in enumerate(memory_clauses)
        ),
        reverse=True,
    )
    if not scored or scored[0][0] < 1:
        return None
    if len(scored) > 1 and scored[1][:4] == scored[0][:4]:
        return None
    return scored[0][4], scored[0][0]


def _first_word(text: str) -> str | None:
    """The text's first content word (its subject, most often)."""
    content = dedup.content_words(text)
    return next((t.norm for t in dedup.statement(text).tokens if t.norm in content), None)


def _lower_words(text: str) -> set[str]:
    """The text's words, lower-cased, adverbs also as their adjective ("synchronously"; not
    a short word that only ends so: "only" is no "on")."""
    words = {token.lower for token in dedup.statement(text).tokens}
    adverbs = {word for word in words if word.endswith("ly") and len(word) > 6}
    return words | {word.removesuffix("ly") for word in adverbs}


def _with_bases(words: set[str]) -> set[str]:
    """The words and, for each verb of one setting inflected ("starts", "finished",
    "disables"), its base (`_INFLECTED_VERBS`); other words as written, since stripping an
    ending can make another listed word ("lasted": "last", "ones": "one")."""
    # (and an irregular past, dedup.ALIASES: "kept" is "keep")
    irregular = {dedup.ALIASES.get(word, word) for word in words}
    return (
        words
        | {base for word in words for base in _bases(word) if base in _INFLECTED_VERBS}
        | (irregular & _INFLECTED_VERBS)
    )


# Verbs of VERIFY_OPPOSITES read in any inflection (not as a gerund: "opening hours" is no
# "open").
_INFLECTED_VERB_WORDS = """
    start finish begin end open close enable disable push poll join leave like dislike
    prefer add drop remove introduce accept reject allow block deny increase decrease reduce
    raise lower grow shrink include exclude lock unlock grant revoke install uninstall keep
    delete retain expand collapse succeed fail pass show hide approve stop stay remain
    reveal expose conceal mask
"""
_INFLECTED_VERBS = frozenset(_INFLECTED_VERB_WORDS.split())


def _progressive(text: str) -> set[str]:
    """The verbs of _INFLECTED_VERBS the text says in a progressive form ("is *adding*",
    "are *dropping*"): a form of "be" before the "-ing" word, which a gerund lacks ("opening
    hours")."""
    tokens = dedup.statement(text).tokens
    found = set()
    for before, token in pairwise(tokens):
        word = token.lower
        if before.lower in _BE_FORMS and word.endswith("ing") and len(word) > 5:
            stem = word[:-3]
            found |= {stem, stem + "e", stem[:-1]} & _INFLECTED_VERBS
    return found


_BE_FORMS = frozenset({"is", "are", "am", "was", "were", "be", "been", "'re", "'s"})


def _bases(word: str) -> set[str]:
    """What an inflected English word may be the form of (a third person or a past):
    every candidate, the listed verbs are looked up among them ("finishes": "finishe",
    "finish"; "closed": "close", "clos")."""
    bases = set()
    if len(word) > 4 and word.endswith("ies"):
        bases.add(word[:-3] + "y")
    if len(word) > 4 and word.endswith("es"):
        bases |= {word[:-2], word[:-1]}
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        bases.add(word[:-1])
    if len(word) > 4 and word.endswith("ed"):
        bases |= {word[:-2], word[:-1]}
        if word[-3] == word[-4]:
            bases.add(word[:-3])  # "dropped", "stopped"
    return bases


def _opposite_in(memory_clause: str, claim_clause: str) -> str | None:
    mine, theirs = _lower_words(memory_clause), _lower_words(claim_clause)
    mine |= {w.removesuffix("n't") + "nt" for w in mine if w.endswith("n't")}
    theirs |= {w.removesuffix("n't") + "nt" for w in theirs if w.endswith("n't")}
    # the words as written first, so that the answer names them so ("enabled / disabled")
    found = one_each(VERIFY_OPPOSITES, (memory_clause, mine), (claim_clause, theirs))
    inflected = (
        _with_bases(mine) | _progressive(memory_clause),
        _with_bases(theirs) | _progressive(claim_clause),
    )
    if found is None and inflected != (mine, theirs):
        found = one_each(
            VERIFY_OPPOSITES, (memory_clause, inflected[0]), (claim_clause, inflected[1])
        )
    return found


def one_each(
    pairs: frozenset[frozenset[str]],
    memory: tuple[str, set[str]],
    claim: tuple[str, set[str]],
) -> str | None:
    """The first pair of values of one setting with one value in each text only (each text
    given with its words), as "a / b", unless their polarity says the same ("never ...
    without" / "always ... with")."""
    (memory_text, mine), (claim_text, theirs) = memory, claim
    for found in dedup.each_in_each(pairs, mine, theirs):
        if not _said_as_values(found, memory_text, claim_text):
            continue
        if dedup.polarity_opposite(frozenset(found), memory_text, claim_text):
            return " / ".join(found)
    return None


# Words that are a setting's value only where they stand so: "on" / "off" after a verb that
# sets ("switched *off*", "defaults to *on*") or with nothing it governs after it ("is *on*
# for 10% of users", "AOF persistence is *off*,"), not a preposition ("disabled *on*
# staging") or a verb's particle ("kicks *off* at 2 a.m."), but a weekday with either ("works
# *on Fridays*" / "takes *Fridays off*"); "before" / "after" of the same thing ("*after*
# 16:00" / "*before* 16:00"), not of two others ("code only *after approving the plan*" /
# "approve a plan *before any code*": one order said both ways).
_SWITCH_WORDS = frozenset({"on", "off"})
_SETS_A_SWITCH = frozenset(
    {"switched", "switch", "turned", "turn", "toggled", "flipped", "set", "to", "default"}
    | {"defaults", "stays", "stay", "remains", "left", "kept"}
)
_AFTER_A_SWITCH = frozenset(
    {"by", "for", "in", "during", "unless", "until", "when", "while", "if", "except", "and"}
    | {"or", "so", "but", "again"}
)
_BEFORE_AFTER = frozenset({"before", "after"})


def _said_as_values(found: tuple[str, str], memory: str, claim: str) -> bool:
    """Whether the two words of an opposite pair are said as the values of one setting
    (always, but for the words of _SWITCH_WORDS and _BEFORE_AFTER: see above)."""
    pair = frozenset(found)
    texts = (dedup.statement(memory).tokens, dedup.statement(claim).tokens)
    if pair == _SWITCH_WORDS:
        days = [{t.norm for t in tokens if t.norm in dedup.CALENDAR} for tokens in texts]
        return all(
            _a_switch(tokens, word, days[0] & days[1])
            for tokens, word in zip(texts, found, strict=True)
        )
    if pair == _BEFORE_AFTER:
        objects = [_governed_by(tokens, word) for tokens, word in zip(texts, found, strict=True)]
        return not (objects[0] and objects[1]) or bool(objects[0] & objects[1])
    return True


def _a_switch(tokens: Sequence[dedup._Token], word: str, days: Set[str]) -> bool:
    """Whether "on" or "off" stands as a switch's value somewhere in the tokens."""
    for i, token in enumerate(tokens):
        if token.lower != word:
            continue
        before = tokens[i - 1] if i else None
        after = None if token.pause or i + 1 >= len(tokens) else tokens[i + 1]
        if before is not None and (before.lower in _SETS_A_SWITCH or before.norm in days):
            return True
        if after is None or after.lower in _AFTER_A_SWITCH or after.norm in days:
            return True
    return False


# a word after "before" or "after" that shows it stands alone ("24 hours *before by* email")
_ALONE_AFTER = frozenset({"by", "via", "with", "in", "on", "at", "for", "from", "to", "and"})


def _governed_by(tokens: Sequence[dedup._Token], word: str) -> set[str]:
    """The content words and values "before" or "after" governs in the tokens (up to three
    tokens, to a mark), each time it is said; none where it stands alone ("24 hours *before*
    by email", "the explanation *after*.")."""
    found: set[str] = set()
    for i, token in enumerate(tokens):
        if token.lower != word or token.pause:
            continue
        if i + 1 < len(tokens) and tokens[i + 1].lower in _ALONE_AFTER:
            continue
        for following in tokens[i + 1 : i + 4]:
            if following.norm not in dedup.STOPWORDS and following.lower not in _BEFORE_AFTER:
                found.add(following.norm)
            if following.pause:
                break
    return found


def restated(memory: str, claim: str) -> bool:
    """One text restates the other as save reads a rewording (dedup.restates_the_values,
    rewords, restates, either way round): the same values and terms, little else exchanged.
    Without it a close pair states the same subject, maybe not the same fact ("Rui mentors
    Joa" / "Joa mentors Rui", "spikes on Mondays" / "drops off on Mondays"). How often said
    in words is read as save reads it ("twice a day" / "every 12 hours":
    dedup.rates_written_out)."""
    memory, claim = dedup.rates_written_out(*dedup.joined_as_the_other(memory, claim))
    return _same_choice(memory, claim) or any(
        rule(one, other)
        for rule in (dedup.restates_the_values, dedup.rewords, dedup.restates)
        for one, other in ((memory, claim), (claim, memory))
    )


# Words that forbid (said alone, a no: "pushing to main is *prohibited*"), negated they
# permit ("*not forbidden*", "isn't *off-limits*"), and words of trouble that permit when
# negated after a copula ("is *not a problem*"; but "has no problem with" reports): a text
# that says no only to them says yes. "No" before them is no permission ("*no* prohibited
# items": none of them).
_FORBIDDING = dedup.content_words("forbidden prohibited banned disallowed") | {"off-limit"}
_TROUBLE = frozenset(dedup.content_words("problem issue"))
_COPULAS = frozenset({"is", "are", "was", "were", "it's", "that's", "its", "thats"})
_COPULA_NEGATED = frozenset(
    {"isn't", "aren't", "wasn't", "weren't", "isnt", "arent", "wasnt", "werent"}
)
_ON = frozenset({"a", "an", "the", "be"})  # words between a negator and the word it negates


def _between(word: str) -> bool:
    """A word between a negator and the word it negates: _ON, or an adverb in "-ly" ("not
    *explicitly* forbidden")."""
    return word in _ON or (word.endswith("ly") and len(word) > 5)


def says_no(one: dedup.Statement) -> bool:
    """dedup.says_no, or a word that forbids (_FORBIDDING) not negated; but a text whose every
    negator is followed by a word that forbids (or by _TROUBLE after a copula; an article or
    "be" between) permits: "Running TRUNCATE on production is *not forbidden*" says yes
    where "*Never* run TRUNCATE on production" says no."""
    tokens = one.tokens
    negators = [i for i, t in enumerate(tokens) if t.lower in dedup.NEGATORS or t.norm == "not"]

    def permitted(i: int) -> int | None:
        """The place of the word the negator at i permits, if it does."""
        if tokens[i].lower in ("no", "none", "without"):
            return None
        after = [j for j in range(i + 1, min(i + 4, len(tokens))) if not _between(tokens[j].lower)]
        if not after:
            return None
        word = tokens[after[0]].norm
        copula = tokens[i].lower in _COPULA_NEGATED or (i > 0 and tokens[i - 1].lower in _COPULAS)
        return after[0] if word in _FORBIDDING or (word in _TROUBLE and copula) else None

    places = [permitted(i) for i in negators]
    # a word that forbids, not negated, says no ("pushing to main is *prohibited*")
    forbids = any(t.norm in _FORBIDDING and i not in places for i, t in enumerate(tokens))
    if not dedup.says_no(one):
        return forbids
    if not negators or None in places:
        return True  # a verb that says no ("forbids", "avoids"), or a negation
    # a verb that says no elsewhere still does ("not forbidden, but *avoid* ..."; not a
    # purpose: "... *to avoid* mocks")
    return forbids or any(
        t.norm in dedup.AVERSE and i not in places and not (i and tokens[i - 1].lower == "to")
        for i, t in enumerate(tokens)
    )


# Words that join two clauses, each of which may say yes or no of its own ("Use `uv` ...;
# *don't* use pip", "stored as integer pence, *never* as floats", "Keep diffs minimal *and
# never* reformat untouched lines")
_CLAUSE_WORDS = frozenset({"and", "but", "while", "whereas", "so", "otherwise"})


def negates_the_other(old: dedup.Statement, new: dedup.Statement) -> bool:
    """One text says no (says_no) and the other does not, and the negating text's clauses
    that say no hold the other text's words: one word that no clause saying yes has, or as
    many as any such clause has. A memory's second clause negating something else ("Keg
    deposits are stored as integer pence, *never as floats*") denies nothing a claim of its
    first clause states ("Deposits are kept as integer pence"). Clauses split at marks and
    at joining words (_CLAUSE_WORDS); a text of one clause, or one with no clause that says
    yes, negates the other whenever it says no."""
    if says_no(old) == says_no(new):
        return False
    negating, other = (old, new) if says_no(old) else (new, old)
    clauses: list[list[dedup._Token]] = [[]]
    for token in negating.tokens:
        if token.lower in _CLAUSE_WORDS and clauses[-1]:
            clauses.append([])
            continue
        clauses[-1].append(token)
        if token.pause:
            clauses.append([])
    clauses = [clause for clause in clauses if clause]
    no = [c for c in clauses if any(_says_no_at(t) for t in c)]
    yes = [c for c in clauses if c not in no]
    if not no or not yes:
        return True
    # (what the other text rejects too is no word it states: "inject the `Clock` protocol
    # *rather than* reaching for freezegun" / "*Don't* mock time with `freezegun`")
    stated = (other.words | other.values) - dedup.rejected_words(other)

    def shared(clause: list[dedup._Token]) -> set[str]:
        return {t.norm for t in clause} & stated

    # a word of the other text only a clause that says no holds, or as many there as in
    # any clause that says yes
    only_denied = set().union(*map(shared, no)) - set().union(*map(shared, yes))
    most = max(len(shared(c)) for c in no), max(len(shared(c)) for c in yes)
    return bool(only_denied) or most[0] >= most[1]


def _says_no_at(token: dedup._Token) -> bool:
    """A negator, a word that forbids or a verb that says no ("dislikes", "avoid")."""
    return (
        token.lower in dedup.NEGATORS
        or token.norm == "not"
        or token.norm in _FORBIDDING
        or token.norm in dedup.AVERSE
    )


def says_no_more(claim: str, clause: str) -> bool:
    """Every content word and value of the claim is in the memory's clause (as save reads
    them: stems, short forms, values written otherwise): the claim states one part of the
    memory and nothing of its own ("Crew need 11 hours of rest between shifts" / "... and
    needs 11 hours of rest between shifts"; not "Each test file has to be *at least* 5 MB" /
    "each test file must be under 5 MB")."""
    mine, theirs = dedup.statement(claim), dedup.statement(clause)
    # (a verb that only links a thing to its value may be the claim's own: "... *runs*
    # Postgres 16")
    # (nor the kind of a value both say: "subscribes to the `tanks/+/readings` *topic*")
    own = mine.words - theirs.words - dedup.LINKING_VERBS
    own -= dedup.kind_nouns_beside(mine, theirs.values)
    if not mine.words or own or not mine.values <= theirs.values:
        return False
    # in the clause's order: the same words in other places say another fact ("Kofi's
    # manager is Femke" / "Kofi is Femke's manager", "0.49 EUR plus 2.5%" / "2.5 EUR plus
    # 0.49%")
    at: dict[str, int] = {}
    for i, token in enumerate(theirs.tokens):
        at.setdefault(token.norm, i)
    places = [at[t.norm] for t in mine.tokens if t.norm in at and t.lower not in dedup.STOPWORDS]
    return places == sorted(places)


# Words that say a choice between two things, any of them as good as another ("prefers pnpm
# over npm" / "likes pnpm more than npm" / "would rather use pnpm than npm").
_CHOOSING = frozenset(dedup.content_words("prefer like favor want love enjoy choose pick more"))
_CHOOSING |= frozenset(dedup.content_words("better rather favorite favourite preferred use"))
_NO_CHOICE = frozenset(dedup.content_words("use more"))  # said of anything, chosen or not


def _chosen(text: str) -> set[tuple[str, str]]:
    """The two things nearest an ordering connective of the text, words of choosing passed
    over ("likes *pnpm* more than *npm*")."""
    pairs = {pair: far for pair, far in _ordered_pairs(text).items() if not set(pair) & _CHOOSING}
    nearest = min(pairs.values(), default=0)
    return {pair for pair, far in pairs.items() if far == nearest}


def _same_choice(memory: str, claim: str) -> bool:
    """Both texts put the same two things in the same order beside their connectives
    (_ordered_pairs) and differ in no other word than a word of choosing."""
    if not _chosen(memory) & _chosen(claim):
        return False
    one, other = dedup.content_words(memory), dedup.content_words(claim)
    return not ((one ^ other) - _CHOOSING)


def opposite_in(pairs: frozenset[frozenset[str]], memory: str, claim: str) -> str | None:
    """Two values of one setting of `pairs` anywhere in the two texts, one in each text only
    ("tabs" / "spaces"), as one_each gives them."""
    return one_each(pairs, (memory, _compared(memory)), (claim, _compared(claim)))


def _compared(text: str) -> set[str]:
    """The text's words, lower-cased, a plural also as its singular ("*mornings*" and
    "afternoon" are two values, "mornings" and "morning" one), a listed verb's form also as
    the verb (_with_bases: "*dropped*" is "drop"), and "more" before an adverb as its
    comparative ("*more slowly*" is "slower", as "faster" is its opposite)."""
    words = [token.lower for token in dedup.statement(text).tokens]
    found = _with_bases(set(words))  # "dropped" is "drop" (_INFLECTED_VERBS)
    found.update(w[:-1] for w in words if len(w) > 4 and w[-1] == "s" and w[-2] not in "su")
    for first, second in pairwise(words):
        if first == "more" and second.endswith("ly") and len(second) > 5:
            found.add(second.removesuffix("ly") + "er")
    return found


_COUNTED_IN = re.compile(r"\b(?:not|nor) even\b", re.IGNORECASE)


def clause_difference(memory: str, claim: str) -> str | None:
    """A difference between a claim clause and the memory clause about the same thing: a
    negation one has, the other value of one setting, a value (or word) the memory gives
    another of its clauses, or two things in the other order; in words, None when there is
    none."""
    if _names_another(memory, claim):
        return None  # the claim names something the memory does not: maybe another thing
    parts = clauses(memory)
    claim_parts = clauses(claim)
    rejected = dedup.rejected_words(dedup.statement(memory)) | dedup.rejected_words(
        dedup.statement(claim)
    )
    for claim_clause in claim_parts:
        aligned = _aligned(claim_clause, parts)
        if aligned is None:
            continue
        index, shared = aligned
        own = parts[index]
        old, new = dedup.statement(own), dedup.statement(claim_clause)
        said_no = says_no(old) != says_no(new)
        # (a verb that says no against its opposite is the other value: "likes" / "dislikes")
        by_a_verb = not (old.negations or new.negations)
        # (or one clause negates the very word the other states: "*mock* Twilio instead" /
        # "Twilio should not be *mocked*")
        # (not a word rejected for another, "tabs, *not spaces*", nor one counted in, "*not
        # even* staging")
        negated = dedup.negated_words(own) | dedup.negated_words(claim_clause)
        negated -= rejected
        head = bool(negated & dedup.content_words(own) & dedup.content_words(claim_clause))
        head = head and not _COUNTED_IN.search(f"{own} {claim_clause}")
        if (
            (shared >= _SURE_ALIGNMENT or head)
            and said_no
            and (not by_a_verb or _opposite_in(own, claim_clause) is None)
        ):
            one = "the claim" if says_no(new) else "the memory"
            return f"{one} negates what the other states: {own}"
        opposite = _opposite_in(own, claim_clause)
        said = None if opposite is None else opposite.split(" / ")[-1]
        if opposite is not None and not _said_elsewhere(parts, index, claim, said):
            return f"the other value of one setting: {opposite}"
        sure = shared >= _SURE_ALIGNMENT
        moved = _moved(parts, index, claim_clause, claim_parts, sure=sure) or _moved(
            parts, index, claim_clause, claim_parts, sure=sure, values_only=True
        )
        if moved is not None:
            return moved
    return (
        _order_turned(memory, claim)
        or _joined(parts, claim_parts, memory)
        or _crosswise(parts, claim_parts)
    )


def exchange(memory: str, claim: str) -> str | None:
    """Of clause_difference's readings, those that say two texts put the same things in each
    other's places: a value moved to another clause, two things in the other order, two
    parallel clauses joined crosswise, numbers said of each other's things (the save rule's
    guard on a supersession: "Maria reviews backend PRs and Tom frontend" / "Tom reviews
    backend PRs and Maria frontend")."""
    if _names_another(memory, claim):
        return None
    parts, claim_parts = clauses(memory), clauses(claim)
    for claim_clause in claim_parts:
        aligned = _aligned(claim_clause, parts)
        if aligned is not None:
            index, shared = aligned
            sure = shared >= _SURE_ALIGNMENT
            moved = _moved(parts, index, claim_clause, claim_parts, sure=sure, values_only=True)
            if moved is not None:
                return moved
    turned = (
        _order_turned(memory, claim)
        or _joined(parts, claim_parts, memory)
        or _crosswise(parts, claim_parts)
    )
    if turned is not None:
        return turned
    dated = any(
        value.startswith("month:")
        for text in (memory, claim)
        for value in dedup.statement(text).values
    )
    return None if dated else numbers_exchanged(memory, claim)  # "September 15, 2025"


def _crosswise(parts: tuple[str, ...], claim_parts: tuple[str, ...]) -> str | None:
    """Two claim clauses, each about another memory clause (of two or more), and a word of
    each of those memory clauses said in the other one's claim clause instead ("The
    *frontend* is on Vercel; the *backend* runs on Fargate" / "The *frontend* runs on Fargate
    and the *backend* is on Vercel")."""
    if len(parts) < 2 or len(claim_parts) != 2:
        return None  # (a memory of more clauses: the two the claim's clauses are about)
    first, second = (_aligned(clause, parts) for clause in claim_parts)
    if first is not None and second is not None and first[0] == second[0]:
        # the words said crosswise drew both claim clauses to one memory clause ("Primary DB
        # sits in the *Ashby Road server room*, the replica at the town hall" / "Primary DB
        # sits at the town hall, the replica in the *Ashby Road server room*"): each to the
        # one memory clause about its subject, its first content word, if they differ
        subjects = [_about_subject(clause, parts) for clause in claim_parts]
        if subjects[0] is not None and subjects[1] is not None and subjects[0] != subjects[1]:
            first, second = (subjects[0], 0), (subjects[1], 0)
    if first is None or second is None or first[0] == second[0]:
        return None
    mine = [dedup.content_words(parts[found[0]]) for found in (first, second)]  # claim order
    theirs = [dedup.content_words(clause) for clause in claim_parts]
    for a in sorted(theirs[0] - mine[0]):
        if a not in mine[1] or a in theirs[1]:
            continue
        for b in sorted(mine[0] - theirs[0]):
            if b in theirs[1] and b not in mine[1]:
                own, said = dedup.statement(parts[first[0]]), dedup.statement(claim_parts[0])
                return f"the same values in swapped places: {_shown(own, b)} / {_shown(said, a)}"
    return None


def _about_subject(claim_clause: str, memory_clauses: tuple[str, ...]) -> int | None:
    """The one memory clause whose first content word is the claim clause's; None when no
    clause's is, or several are."""
    subject = _first_word(claim_clause)
    found = [i for i, part in enumerate(memory_clauses) if _first_word(part) == subject]
    return found[0] if subject is not None and len(found) == 1 else None


def _joined(parts: tuple[str, ...], claim_parts: tuple[str, ...], memory: str) -> str | None:
    """A claim clause that joins two parallel memory clauses crosswise: the memory says "A
    does X" and "B does Y" (two clauses whose content words line up around the same words),
    the claim "B does X" ("Alice owns billing and Bob owns search" / "Bob owns billing";
    "Staging deploys from main; production deploys from v* tags" / "Production deploys from
    main"). Each place where the two clauses differ is taken from one clause alone, at least
    one from each (see _sides_taken). Not when the claim states a value the memory does not,
    has more than one content word it does not, or is all in one of its clauses."""
    if len(parts) < 2:
        return None
    whole = dedup.statement(memory)
    said = [dedup.statement(part) for part in parts]
    for claim_clause in claim_parts:
        new = dedup.statement(claim_clause)
        if new.values - whole.values - whole.words or len(new.words - whole.words) > 1:
            continue
        if any(new.words <= one.words for one in said):
            continue
        for i, j in combinations(range(len(parts)), 2):
            elsewhere = frozenset().union(*(o.words for k, o in enumerate(said) if k not in (i, j)))
            sides = _sides_taken(said[i], said[j], new.words - elsewhere)
            if sides is not None:
                return f"joins what the memory says of two things: {sides[0]} / {sides[1]}"
    return None


def _sides_taken(
    a: dedup.Statement, b: dedup.Statement, claim: frozenset[str]
) -> tuple[str, str] | None:
    """Where two clauses' content words differ around words they share (difflib's
    replacements, numbers for numbers and other words for other words), the claim's words
    from one side at one place and from the other side at another, never from both sides at
    one: the words taken, one of each side, as written."""
    first = [t.norm for t in a.tokens if t.norm in a.words]
    second = [t.norm for t in b.tokens if t.norm in b.words]
    opcodes = SequenceMatcher(None, first, second, autojunk=False).get_opcodes()
    if not any(op == "equal" for op, *_ in opcodes):
        return None  # nothing in common: not two clauses of one shape
    taken: dict[str, str] = {}
    for op, i1, i2, j1, j2 in opcodes:
        if op != "replace":
            continue
        left = set(first[i1:i2]) - b.words
        right = set(second[j1:j2]) - a.words
        mine, theirs = left & claim, right & claim
        if mine and theirs:
            return None  # both sides at one place: something else
        for words, other, side in ((mine, right, "a"), (theirs, left, "b")):
            # a number in place of a number, a word in place of a word (not the verb a
            # second clause leaves out: "backups are *kept* 30 days and monthly ones 12
            # months")
            if any(_digits(w) == any(map(_digits, other)) for w in words):
                one = a if side == "a" else b
                taken.setdefault(side, _shown(one, sorted(words)[0]))
    if "a" in taken and "b" in taken:
        return taken["a"], taken["b"]
    return None


def as_written(text: str, norms: Sequence[str], other: str | None = None) -> tuple[str, ...]:
    """Words of the text by their norms, as the text (else `other`) writes them, lower-cased
    ("stag": "staging", "choo": "chose", "letter:r": "r"), for a reason a person reads; a norm
    neither text has is said as dedup.bare_value says a value."""
    texts = [dedup.statement(text)] + ([] if other is None else [dedup.statement(other)])

    def shown(norm: str) -> str:
        found = next(filter(None, (_written(one, norm) for one in texts)), None)
        return (found or dedup.bare_value(norm)).lower()

    return tuple(dict.fromkeys(shown(norm) for norm in norms))


def _shown(one: dedup.Statement, norm: str) -> str:
    """A word of the text as written (_written), else as dedup.bare_value says it."""
    return _written(one, norm) or dedup.bare_value(norm)


def _written(one: dedup.Statement, norm: str) -> str | None:
    """A word of the text as written, from its norm ("stag": "Staging"), or from a stem
    shorter than the word's own ("choo": "chose", whose norm is "choos"), or from a word that
    reads as it; None if none is."""
    exact = next((token.text for token in one.tokens if token.norm == norm), None)
    if exact is not None:
        return exact
    if " " in norm:
        return _spelled(one, norm)
    if not norm.isalpha():  # a number or a value's key: as written or not at all
        return None
    # a word the rules read as it ("decisions" has the stem of "decided"), else one it begins
    return next(
        (token.text for token in one.tokens if norm in dedup.content_words(token.text)), None
    ) or next(
        (token.text for token in one.tokens if len(norm) > 2 and token.norm.startswith(norm)),
        None,
    )


def _spelled(one: dedup.Statement, value: str) -> str | None:
    """A value of several words as the text writes it, if it does."""
    written = dedup.bare_value(value, one)
    return None if written == dedup.bare_value(value) else written


def _names_another(memory: str, claim: str) -> bool:
    """The claim states a value, or names someone or something (a capitalised word inside
    the sentence, or one with 's), that the memory does not ("Acme's team picked ...")."""
    words = dedup.content_words(memory) | dedup.value_words(memory)
    # a number read from a word ("first": 1) is no name
    named = {v for v in dedup.value_words(claim) if not (v.isdigit() and v not in claim)}
    for token in dedup.statement(claim).tokens:
        if token.text[:1].isupper() and (not token.first or token.text.endswith("'s")):
            named.add(token.norm.removesuffix("'s"))
    return bool(named - words - dedup.STOPWORDS)


def _said_elsewhere(parts: tuple[str, ...], index: int, claim: str, said: str | None) -> bool:
    """Another clause of the memory whose own words the claim all has, and which says the
    claim's value `said`: what the claim says may be that clause's ("New flags are off in
    production and on in staging" / "In staging, new flags are on"); not a clause the two
    merely share ("*Lesson from the March outage*: the pool was too small" / "*Lesson from
    the March outage*: the pool was too large")."""
    words = dedup.content_words(claim)
    own = dedup.content_words(parts[index])
    return any(
        (dedup.content_words(part) - own) <= words
        and (said is None or said.lower() in _with_bases(_lower_words(part)))
        for i, part in enumerate(parts)
        if i != index and dedup.content_words(part) - own
    )


def _moved(
    parts: tuple[str, ...],
    index: int,
    claim_clause: str,
    claim_parts: tuple[str, ...],
    *,
    sure: bool,
    values_only: bool = False,
) -> str | None:
    """A word of the claim clause that the memory says in another clause only, where the
    memory's clause has a word the claim clause lacks of the same sort (both values, or the
    claim says it in another clause): the two exchanged places. `values_only`: two values,
    each in a clause that says something of it ("*Maria* reviews backend PRs and *Tom*
    frontend PRs"; not the items of one list, "iOS and Android")."""
    own = dedup.statement(parts[index])
    new = dedup.statement(claim_clause)
    others = [dedup.statement(p) for i, p in enumerate(parts) if i != index]
    # (not a part of a path there: "served from `/srv/*larkspur*/web`")
    elsewhere = frozenset().union(*(o.words - _path_words(o) for o in others))
    claim_rest = frozenset().union(
        *(dedup.content_words(p) for p in claim_parts if p != claim_clause)
    )
    came = sorted((new.words - own.words) & elsewhere)
    gone = sorted(own.words - new.words - elsewhere)
    values = frozenset().union(*(o.values for o in others))
    named = values | own.values | new.values
    # (a value's parts as words too: "compost-calc" is also "compost" and "calc")
    bare = named | dedup._value_parts(named)
    if values_only and any(not (o.words - bare) for o in [own, *others]):
        return None  # a clause that only names a value: an item of a list ("iOS and Android")
    # (with `values_only`, a name that opens the claim, a word there, is a value of the
    # memory's: "*Luis* is the primary ...")
    said = new.values | values if values_only else new.values
    for a in came:
        for b in gone:
            both_values = a in said and b in own.values and _digits(a) == _digits(b)
            # (amounts only: a name is read by its clause's words, "Gus as primary",
            # "AES-128-GCM the signatures")
            both_values = both_values and not (
                _PLAIN_AMOUNT.fullmatch(b) is not None and _stays(b, own, a, others, claim_parts)
            )
            if both_values or (
                not values_only and sure and b in claim_rest and a not in claim_rest
            ):
                return f"the same values in swapped places: {_shown(own, b)} / {_shown(new, a)}"
    return None


def _path_words(one: dedup.Statement) -> set[str]:
    """The words of the text that are only parts of a path written with slashes
    ("/srv/larkspur/web"; not a host name, "staging.example.app", nor a number, "3.5")."""
    parts = {
        dedup._stem(part)
        for token in one.tokens
        if "/" in token.norm[1:]
        for part in re.split(r"[-./:@_]+", token.norm)
        if part
    }
    said = {t.norm for t in one.tokens if "/" not in t.norm}
    return parts - said


# A number, or a duration read as one ("45", "2.0", "45s"), not a name with digits ("Ed25519")
_PLAIN_AMOUNT = re.compile(r"\d+(?:\.\d+)?[a-z]{0,3}")


def _stays(
    value: str,
    own: dedup.Statement,
    other: str,
    others: Sequence[dedup.Statement],
    claim_parts: tuple[str, ...],
) -> bool:
    """The claim says `value` in a clause closer to the memory's own clause of it than to the
    memory's clause of the `other` value (more words in common, values aside): the value kept
    its place, the claim's clauses only aligned crosswise ("GPS pings arrive every 5 seconds
    (Mosquitto 2.0) ... older than 45 seconds" / "report their GPS position to Mosquitto 2.0
    every five seconds, and any ping more than 45 seconds old ...")."""
    holding = [dedup.statement(p) for p in claim_parts if value in dedup.statement(p).values]
    theirs = next((o for o in others if other in o.words | o.values), None)
    if len(holding) != 1 or theirs is None:
        return False
    words = holding[0].words - holding[0].values
    return len(words & (own.words - own.values)) > len(words & (theirs.words - theirs.values))


def _digits(value: str) -> bool:
    return any(ch.isdigit() for ch in value)


def _ordered_pairs(text: str) -> dict[tuple[str, str], int]:
    """(first, second) for content words around each ordering connective of the text, each
    with how far its words stand from the connective (0 for the two words beside it)."""
    pairs: dict[tuple[str, str], int] = {}
    for part in re.split(r"[.;!?]\s+", text):
        for match in _ORDER.finditer(part):
            word = match.group(1).lower()
            head = part[: match.start()]
            if word == "to" and not _FROM_OR_PREFER.search(head):
                continue
            # (a comparison's things often stand beyond the words it compares by: "*mocks*
            # catch far more bugs than *integration tests*")
            window = _COMPARED_WINDOW if word == "than" else _ORDER_WINDOW
            if word == "than" and _a_number_next(part[match.end() :]):
                continue  # a bound, no two things: "more than 200 items", "than five"
            left = _near(head, last=True, window=window)
            right = _near(part[match.end() :], last=False, window=window)
            if not left or not right:
                continue
            first_side = word in _FIRST_SIDE
            if word == "to":  # "from A to B": B is the one now; "prefer A to B": A
                first_side = not re.search(r"\bfrom\b", head, re.IGNORECASE)
            for i, a in enumerate(w for w in left if w not in right):
                for j, b in enumerate(w for w in right if w not in left):
                    pair = (a, b) if first_side else (b, a)
                    pairs[pair] = min(pairs.get(pair, i + j), i + j)
    return pairs


def _a_number_next(text: str) -> bool:
    """The text starts with a number, in digits, in words or after "~" or a currency sign."""
    first = text.split(maxsplit=1)[0].lower() if text.strip() else ""
    first = first.lstrip("~≈$€£")
    return first[:1].isdigit() or first in dedup.NUMBERS or first in ("hundred", "thousand")


def _near(text: str, *, last: bool, window: int = _ORDER_WINDOW) -> list[str]:
    """The content words nearest the connective on one side, up to a clause's end, the
    nearest first."""
    pieces = [p for p in _CLAUSE_BREAK.split(text) if p.strip()]
    if not pieces:
        return []
    piece = pieces[-1] if last else pieces[0]
    content = dedup.content_words(piece)
    tokens = [t.norm for t in dedup.statement(piece).tokens if t.norm in content]
    chosen = tokens[::-1] if last else tokens
    return list(dict.fromkeys(chosen[:window]))


def _order_turned(memory: str, claim: str) -> str | None:
    """The texts put two things in the other order (see _ordered_pairs), each side keeping
    a word the other side does not; named by the words nearest the claim's connective."""
    mine, theirs = _ordered_pairs(memory), _ordered_pairs(claim)
    turned = [
        (distance, pair)
        for pair, distance in theirs.items()
        if pair[::-1] in mine and pair not in mine
    ]
    if not turned:
        return None
    _, (a, b) = min(turned)
    said = dedup.statement(claim)
    return f"the same things in the other order: {_shown(said, b)} before {_shown(said, a)}"


# -- one part of a longer memory restated with another number ----------------------------


def _slots(text: dedup.Statement) -> set[tuple[str, str]]:
    """(word, value): each value of the text with the content word right before it (skipping
    stopwords: "PostgreSQL 16", "port of 5432") and the one right after it ("30 days")."""
    tokens = text.tokens
    slots: set[tuple[str, str]] = set()
    for i, token in enumerate(tokens):
        if token.norm not in text.values:
            continue
        # (not across a mark or a joining word: "16 GB of RAM *and a* 1 TB disk")
        start = max(0, i - 3)
        for j in range(i - 1, start - 1, -1):
            if tokens[j].pause or tokens[j].lower in ("and", "or", "but"):
                start = j + 1
                break
        before = [t.norm for t in tokens[start:i] if t.lower not in dedup.STOPWORDS]
        if before and not _NUMBER.fullmatch(before[-1]):  # a name is a word to stand beside
            slots.add((before[-1], token.norm))
        # (through an "of": "16 GB *of RAM*"; not past a mark: "Postgres 16, *Redis* 7")
        at = i + 2 if tokens[i + 1 : i + 2] and tokens[i + 1].lower == "of" else i + 1
        if at < len(tokens) and not token.pause:
            after = tokens[at]
            if after.lower not in dedup.STOPWORDS and not _NUMBER.fullmatch(after.norm):
                slots.add((after.norm, token.norm))
    return {(word, value) for word, value in slots if word not in GENERIC_WORDS}


def part_difference(memory: dedup.Statement, claim: dedup.Statement) -> str | None:
    """Another number beside the same word in the memory as in the claim, where the memory
    does not also state the claim's number there and the claim says nothing the memory does
    not (but its values): one part of a longer memory restated with another value ("The
    dashboard is a Django 4.2 app served by gunicorn" / "The dashboard runs Django 5.0")."""
    mine, theirs = _slots(memory), _slots(claim)
    said = claim.words - memory.words - claim.values - GENERIC_WORDS
    if any(not word.isdigit() for word in said):  # (the digits of a value's parts aside)
        return None  # the claim says something the memory does not: maybe another thing
    for word, value in sorted(theirs):
        unit = _amount_unit(value)
        if (word, value) in mine or unit is None:
            continue
        # (an amount the memory states elsewhere may be the claim's thing's: "logs kept for
        # 30 days; metrics with *15-day* retention" / "metrics are kept for fifteen days")
        if unit and value in memory.values:
            continue
        # the claim's other values are the memory's: the same thing ("RabbitMQ on port 5673"
        # is not about the memory's "Postgres on port 5433")
        if claim.values - {value} - memory.values:
            continue
        # (an amount against one of the same unit: "kept for *35 days*" / "*90 days*")
        others = sorted(
            v for w, v in mine if w == word and (word, v) not in theirs and _amount_unit(v) == unit
        )
        if others:  # (the word and numbers as written: "nodes", "5.0"; not "nod", "5")
            was, now = dedup.bare_value(others[0], memory), dedup.bare_value(value, claim)
            return f"{_shown(claim, word).lower()} {was} / {now}"
    return _sole_amount_changed(memory, claim)


def _sole_amount_changed(memory: dedup.Statement, claim: dedup.Statement) -> str | None:
    """The one amount of a unit the memory states (a duration, a size, a mass, ...) and
    another amount of that unit, the claim's only one, in a claim that says nothing the
    memory does not (part_difference's test, made before): "syncs with the wholesaler
    Covetrus through an SFTP file drop *every 4 hours*" / "syncs with Covetrus *every 12
    hours*", whatever word stands beside the two."""
    for value in sorted(claim.values - memory.values):
        unit = _amount_unit(value)
        if not unit or claim.values - {value} - memory.values:
            continue
        mine = [v for v in memory.values if _amount_unit(v) == unit]
        theirs = [v for v in claim.values if _amount_unit(v) == unit]
        if len(mine) == 1 and len(theirs) == 1:
            was, now = dedup.bare_value(mine[0], memory), dedup.bare_value(value, claim)
            return f"{was} / {now}"
    return None


# A number, version or time written in digits ("16", "4.2", "2x250", "03:00", "v3").
_NUMBER = re.compile(r"v?\d[\d.,:x/-]*")
# An amount as save normalises it: a number and its unit ("3024000s", "17179869184bytes")
_AMOUNT = re.compile(r"\d+(?:\.\d+)?([a-z]+)")


def _amount_unit(value: str) -> str | None:
    """ "" for a number (_NUMBER), the unit of an amount (_AMOUNT: "s", "bytes"), else None."""
    if _NUMBER.fullmatch(value):
        return ""
    found = _AMOUNT.fullmatch(value)
    return found.group(1) if found else None


# Content words too common in memories to say that two are about one subject.
GENERIC_WORDS = dedup.content_words(
    "prefer prefers like likes want wants use uses used run runs team project data per "
    "second this also thing things way work works"
)
# A word shared with the claim is evidence of its subject only when no other memory recalled
# for the claim has it: one that several have is the store's common vocabulary (the user's
# name, the project's, "service", "test"), fitted on the development sets
# (benchmarks/README.md section 10: "no other" was chosen in every fold).
COMMON_FROM = 2


def common_words(contents: Sequence[str]) -> frozenset[str]:
    """The content words at least COMMON_FROM of the memories have."""
    counts = Counter(word for content in contents for word in dedup.content_words(content))
    return frozenset(word for word, count in counts.items() if count >= COMMON_FROM)


# Words after which a memory says less than its words ("*If* the cache is full, requests are
# rejected", "new hires *used to* get admin access", "Alice *thinks* Bob leads QA"): a claim
# of those words is not stated word for word by it.
_HEDGES = """
    if unless whether might may could would maybe perhaps possibly probably think thinks
    thought believe believes believed consider considers considered considering plan plans
    planned planning propose proposes proposed proposal used formerly previously asked asks
    wondered until hope hopes hoped want wants wanted"""
_NOT_STATED = frozenset(_HEDGES.split())
# Words that order or compare two things ("prefers coffee *to* tea", "*over*", "*than*"): a
# clause with one the claim lacks states more than the claim's words.
_ORDERING_WORDS = "to over than instead rather versus vs before after then"
_ORDERING = frozenset(_ORDERING_WORDS.split())
_IN_TIME = frozenset({"before", "after", "then"})
# Opposites of a claim's word the clause may not have instead: verify's and save's, as written
# and as stems.
_WORD_FOR_WORD_OPPOSITES = frozenset(
    pair for pair in VERIFY_OPPOSITES | dedup.REWORDING_OPPOSITES if len(pair) == 2
)
# At most this many of the clause's content words stand between the claim's first and last.
_WORD_FOR_WORD_GAP = 1


def stated_word_for_word(memory: str, claim: str) -> bool:
    """One clause of the memory (clauses: split at sentence ends, semicolons, colons, commas,
    dashes and joining words) states the claim word for word: every content word and value
    of the claim, at least two, in the claim's order, with at most _WORD_FOR_WORD_GAP other
    content words among them (each word at its first place in the clause, or at its next
    place after the word before: "formatted with ruff format"); the same polarity (a negated
    claim negates what the clause negates; a plain one negates nothing the clause negates);
    no word of the claim whose opposite the clause has instead ("scales *down*" / "scaling
    *up*", VERIFY_OPPOSITES and save's); no change word or ordering word ("to", "over",
    "than", ...) the claim lacks, and not the past against a claim in the present; no word
    in the clause's sentence that says less than it states (_NOT_STATED: a condition, a
    hedge, a past state, what someone thinks or asked) unless the claim says it too; both
    read as English. "Jonas is the hardware lead" is not stated by "Jonas Weber is the
    product owner and Aiko Tanaka is the hardware lead"."""
    if not (dedup.reads_english(claim) and dedup.reads_english(memory)):
        return False
    # a hedge the claim says as well holds back nothing ("Idris *wants* ..." / "Idris *wants*
    # ..."), and one holds back only its own sentence ("...; a move to SSD is *planned*")
    hedges = _NOT_STATED - {t.lower for t in dedup.statement(claim).tokens}
    return any(
        not ({t.lower for t in dedup.statement(sentence).tokens} & hedges)
        and any(
            _word_for_word(clause, claim) for clause in (*clauses(sentence), *_bridged(sentence))
        )
        for sentence in _SENTENCE_BREAK.split(memory)
        if sentence.strip()
    )


# "and" between two parts of one clause, with the part after it up to the next break.
_AND_PART = re.compile(r",?\s+and\s+([^,;:.!?]+)", re.IGNORECASE)


def _bridged(sentence: str) -> list[str]:
    """A part joined by "and" said with what it shares with the part before it: a verb with
    no subject of its own takes the sentence's ("The service cratewatch is written in Go
    and *listens on port 8081*": "The service cratewatch listens on port 8081"), and an item
    that opens with a number takes the words before the item it follows ("The VM has 8
    vCPUs and *16 GB of RAM*": "The VM has 16 GB of RAM"). Another subject is never taken
    ("Jonas is the product owner and *Aiko is the hardware lead*": no part is bridged)."""
    found: list[str] = []
    for match in _AND_PART.finditer(sentence):
        before = sentence[: match.start()].split()
        after = match.group(1).split()
        if not before or not after:
            continue
        first = after[0]
        # (not a noun with a verb of its own: "and *backups are* kept for 35 days")
        subject = len(after) > 1 and after[1].lower() in _FINITE
        if _a_verb(first) and not subject:
            verb_at = next((i for i, w in enumerate(before) if i and _a_verb(w)), None)
            if verb_at is not None:
                found.append(" ".join(before[:verb_at] + after))
        elif first[:1].isdigit():
            item_at = next(
                (i for i in range(len(before) - 1, 0, -1) if before[i][:1].isdigit()), None
            )
            if item_at is not None:
                found.append(" ".join(before[:item_at] + after))
    return found


# Verbs and auxiliaries that follow a subject: a word before them is no verb of its own.
_FINITE_WORDS = "is are was were has have had can will would must should may might does do did"
_FINITE = frozenset(_FINITE_WORDS.split())


def _a_verb(word: str) -> bool:
    """A word written as a verb of the present or the past with no subject before it:
    lower case, a form of "be" or "have", or ending in "s" or "ed" (not "ss")."""
    if not word.isalpha() or not word.islower():
        return False
    if word in ("is", "are", "was", "were", "has", "have", "had"):
        return True
    return len(word) > 3 and (
        word.endswith("ed") or (word.endswith("s") and not word.endswith("ss"))
    )


# Where a memory's sentences end: ".", ";", "!" or "?" before a space or the end.
_SENTENCE_BREAK = re.compile(r"[.;!?](?:\s+|$)")


def _word_for_word(clause: str, claim: str) -> bool:
    said, asked = dedup.statement(clause), dedup.statement(claim)
    words = {w for w in asked.words if w[:2] != "q:"}
    if len(words) < 2 or not words <= said.words or not asked.values <= said.values | said.words:
        return False
    if asked.negations and not asked.negated & said.negated:
        return False
    if not asked.negations and said.negated & words:
        return False
    if dedup.negates(clause, claim):
        return False
    # (a time after every word of the claim adds to it: "Idris joined the team in September
    # 2021 *after* 3 years on the archive")
    last = max((i for i, t in enumerate(said.tokens) if t.norm in words), default=-1)
    within = {t.lower for t in said.tokens[: last + 1]}
    ordering = {w for w in _ORDERING & _lower_words(clause) if w in within or w not in _IN_TIME}
    if said.markers - asked.markers or ordering - _lower_words(claim):
        return False  # "moved from Friday to Monday", "prefers coffee to tea": not the claim's
    if dedup._tells_the_past(clause) and not dedup._tells_the_past(claim):
        return False  # "the old staging cluster ran on GKE" / "... runs on GKE"
    content = [t.norm for t in said.tokens if t.norm in said.words]
    claimed = [t.norm for t in asked.tokens if t.norm in words]
    if not any(
        order and order[-1] - order[0] + 1 - len(set(order)) <= _WORD_FOR_WORD_GAP
        for order in (_first_places(content, claimed), _next_places(content, claimed))
    ):
        return False
    mine = _lower_words(claim) | {t.norm for t in asked.tokens}
    theirs = _lower_words(clause) | {t.norm for t in said.tokens}
    return dedup.one_in_each(_WORD_FOR_WORD_OPPOSITES, mine, theirs) is None


def _first_places(content: list[str], claimed: list[str]) -> list[int]:
    """Where each claimed word is first said in the clause, if in the claim's order."""
    first = {word: i for i, word in reversed(list(enumerate(content)))}
    order = [first[word] for word in claimed if word in first]
    return order if order == sorted(order) else []


def _next_places(content: list[str], claimed: list[str]) -> list[int]:
    """Each claimed word at its next place in the clause after the one before, so a word said
    twice ("*formatted* with ruff *format*") is matched twice in order; [] when one is not."""
    order: list[int] = []
    for word in claimed:
        try:
            order.append(content.index(word, order[-1] + 1 if order else 0))
        except ValueError:
            return []
    return order


# Words after which a memory names what is NOT chosen: "pnpm *over* npm", "pnpm *instead of*
# npm", "pnpm *rather than* npm", "pnpm, *not* npm".
_REJECTING = frozenset({"over", "not"})


def rejected(memory: str, claim: str) -> str | None:
    """How one text rejects what the other states, said for the answer: a value the memory
    names as not chosen ("prefers pnpm over npm"), stated by the claim without the one chosen
    ("prefers npm"); or a value the claim rejects for another ("docker-compose v1*, not
    docker compose v2*", "the web app *rather than* a separate app") that the memory states
    plainly (dedup.rejects_the_other)."""
    named = _named_as_not_chosen(memory, claim)
    if named is not None:
        return f"the memory prefers another value to {named}"
    old, new = dedup.statement(memory), dedup.statement(claim)
    words = dedup.rejected_words(new) & dedup.stated_plainly(old) - not_chosen(memory)
    if not words:
        return None
    phrase = " ".join(dict.fromkeys(t.text for t in new.tokens if t.norm in words))
    return f"the claim rejects {phrase}, which the memory states"


def rejected_by_memory(memory: str, claim: str) -> str | None:
    """The other way round from `rejected`, said for the answer: the claim states plainly what
    the memory rejects for another thing ("stored in a reference table*, not as free text*" /
    "stored as free text"); only in a claim that chooses nothing itself, as it may reject the
    thing in words the rules do not read ("prefers sqlc *to* an ORM", "rather than split into
    separate *functions*")."""
    old, new = dedup.statement(memory), dedup.statement(claim)
    if new.words & _CHOOSING - _NO_CHOICE or dedup.rejected_words(new):
        return None
    words = dedup.rejected_words(old) & dedup.stated_plainly(new) - not_chosen(claim)
    if not words:
        return None
    phrase = " ".join(dict.fromkeys(t.text for t in old.tokens if t.norm in words))
    return f"the memory rejects {phrase}, which the claim states"


def _named_as_not_chosen(memory: str, claim: str) -> str | None:
    """A value the memory names as not chosen, stated by the claim without the one chosen."""
    tokens = dedup.statement(memory).tokens
    lower = [t.lower for t in tokens]
    chosen_words: set[str] = set()
    rejected_words: dict[str, str] = {}  # its stem: as written
    for i, word in enumerate(lower):
        after = None
        if word in _REJECTING or (i and (lower[i - 1], word) in dedup.REJECTING_PHRASES):
            after = i + 1
        if after is not None and after < len(tokens) and tokens[after].norm not in dedup.STOPWORDS:
            rejected_words[tokens[after].norm] = tokens[after].text
            if i and tokens[i - 1].norm not in dedup.STOPWORDS and word == "over":
                chosen_words.add(tokens[i - 1].norm)
            if i > 1 and word == "of" and tokens[i - 2].norm not in dedup.STOPWORDS:
                chosen_words.add(tokens[i - 2].norm)
    claim_words = dedup.statement(claim).words - not_chosen(claim)
    for word, written in sorted(rejected_words.items()):
        if word in claim_words and not (chosen_words & claim_words):
            return written
    return None


# Words that say the thing of their clause is not chosen ("Dependabot is *disabled*",
# "*avoid* another crunch", "*dislikes* unittest-style classes").
_NOT_CHOSEN = (
    _FORBIDDING | dedup.AVERSE | dedup.content_words("disabled deprecated removed dropped stop")
)


def not_chosen(text: str) -> frozenset[str]:
    """The words a text does not choose: those it negates or rejects for another thing
    (dedup.stated_plainly), and every content word of a clause that negates or holds a word
    of _NOT_CHOSEN ("*Never* run the pipeline against production from a *laptop*"). A value
    one text rejects and the other does not choose is no conflict between them ("prefers
    squash merges *over* rebase merges" / "would rather squash *than* rebase")."""
    one = dedup.statement(text)
    words = set(one.words - dedup.stated_plainly(one))
    for clause in clauses(text):
        part = dedup.statement(clause)
        if part.negations or part.words & _NOT_CHOSEN:
            words |= part.words
    return frozenset(words)


# Where a text's parts about different things begin: a mark, or a word that joins two of them
# ("3 shards *with* 2 replicas each", "iOS 15 *and* Android 9").
_PARTS = re.compile(r"[,:.()]\s|;\s?|\s(?:and|or|with|while|but|whereas|because|so)\s")
_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# a duration read as one token ("5 seconds", norm "5s"): its number as written
_DURATION_NUMBER = re.compile(r"(\d+(?:\.\d+)?) \S+")


def setting_exchanged(memory: str, claim: str) -> str | None:
    """The other value of one setting (`dedup.OPPOSITES`, opposite_in), all against only
    (every_or_only), or the same number as a bound the other way (bound_turned), in words;
    None when none is."""
    found = opposite_in(dedup.OPPOSITES, memory, claim) or every_or_only(memory, claim)
    return found or bound_turned(memory, claim)


def bound_turned(memory: str, claim: str) -> str | None:
    """A number both texts state as a bound, upper in one and lower in the other ("PRs
    *under* 400 lines" / "PRs of *more than* 400 lines"), as "upper bound / lower bound"
    (the memory's first); None when there is none."""
    mine, theirs = (dedup.bound_directions(text) for text in (memory, claim))
    for value, way in mine.items():
        if theirs.get(value, way) != way:
            return f"{way} bound / {theirs[value]} bound"
    return None


_EVERY = frozenset({"every", "all", "each", "any"})
_EVERY_REACH = 4  # tokens read after "every" or "only" for the thing it counts


def every_or_only(memory: str, claim: str) -> str | None:
    """One text says a thing holds for every one of something ("type hints on *every* new
    Python function") and the other only for some of them ("type hints *only* on public
    Python functions"): the same thing counted after both, as "every / only"."""

    def counted(text: str, words: frozenset[str]) -> set[str]:
        tokens = dedup.statement(text).tokens
        found: set[str] = set()
        for i, token in enumerate(tokens):
            if token.lower in words and not token.pause:
                found |= {
                    t.norm
                    for t in tokens[i + 1 : i + 1 + _EVERY_REACH]
                    if t.lower not in dedup.STOPWORDS
                }
        return found

    for one, other in ((memory, claim), (claim, memory)):
        every, only = counted(one, _EVERY), counted(other, frozenset({"only"}))
        if every & only and not counted(one, frozenset({"only"})) and not counted(other, _EVERY):
            return "every / only"
    return None


def exchanged_in_place(memory: str, claim: str) -> str | None:
    """Two things said in each other's places: numbers (numbers_exchanged) or what comes
    first (first_exchanged), in words; None when neither is."""
    return (
        numbers_exchanged(memory, claim)
        or first_exchanged(memory, claim)
        or steps_exchanged(memory, claim)
    )


def _steps(text: str) -> tuple[set[str], set[str]] | None:
    """The content words of the step a text says comes first ("*run `make test-billing`
    locally* first") and of the one it says comes then ("then *open the PR*"): the clause
    up to "first" and the words after a "then" that follows it, each to a mark; None unless
    the text says each once."""
    one = dedup.statement(text)
    lower = [t.lower for t in one.tokens]
    if lower.count("first") != 1 or lower.count("then") != 1:
        return None
    first, then = lower.index("first"), lower.index("then")
    if then < first:
        return None
    start = first
    while start and not one.tokens[start - 1].pause and lower[start - 1] not in _CLAUSE_WORDS:
        start -= 1
    after: set[str] = set()
    for token in one.tokens[then + 1 :]:
        after.add(token.norm)
        if token.pause:
            break
    before = {t.norm for t in one.tokens[start:first]} & one.words
    return before, after & one.words


def steps_exchanged(memory: str, claim: str) -> str | None:
    """Two steps in the other order ("run `make test-billing` locally first and only then
    open the PR" / "Open the billing PR first, then run `make test-billing`"): what one text
    does first the other does then, and the reverse, the two firsts sharing no word."""
    mine, theirs = _steps(memory), _steps(claim)
    if mine is None or theirs is None:
        return None
    if mine[0] & theirs[0] or not (mine[0] & theirs[1] and mine[1] & theirs[0]):
        return None
    tokens = dedup.statement(memory).tokens

    def written(norms: set[str]) -> str:
        return " ".join(dict.fromkeys(t.text for t in tokens if t.norm in norms))

    return f"{written(mine[0] & theirs[1])} / {written(mine[1] & theirs[0])}"


_FIRST_REACH = 3  # words read back from "first"


def first_exchanged(memory: str, claim: str) -> str | None:
    """What each text says comes first ("code *first*, with the explanation after" /
    "the explanation *first*, with the code after it"): read back from "first", the first
    word in which the two differ, each a word the other text says elsewhere ("the
    *Majorstua* branch first" / "all *other* branches first"), as "code / explanation";
    None when both put the same thing first."""

    def before_first(text: str) -> list[tuple[str, str]] | None:
        tokens = dedup.statement(text).tokens
        at = [i for i, t in enumerate(tokens) if t.lower == "first" and i]
        if len(at) != 1:
            return None
        words: list[tuple[str, str]] = []
        for token in reversed(tokens[max(at[0] - _FIRST_REACH, 0) : at[0]]):
            if token.pause:
                break
            words.append((token.norm, token.lower))
        return words

    mine, theirs = before_first(memory), before_first(claim)
    if not mine or not theirs:
        return None
    norms = [{t.norm for t in dedup.statement(text).tokens} for text in (memory, claim)]
    for (a, written_a), (b, written_b) in zip(mine, theirs, strict=False):
        if a != b:
            words = {a, b}.isdisjoint(dedup.STOPWORDS - {"other"})
            if words and _derived_in(a, norms[1]) and _derived_in(b, norms[0]):
                return f"{written_a} / {written_b}"
            return None
    return None


_ROOT = 5  # letters a word and its derivation share ("*expla*in" / "*expla*nation")


def _derived_in(norm: str, norms: set[str]) -> bool:
    """The word, or a word of the same root, is among `norms` ("explain" in "the
    *explanation* after it", "deploy" in "the *deployment*")."""
    return norm in norms or (
        len(norm) >= _ROOT and any(other[:_ROOT] == norm[:_ROOT] for other in norms)
    )


def numbers_exchanged(memory: str, claim: str) -> str | None:
    """Two numbers of both texts said of each other's things: a word only the claim's part
    with one number has is only in the memory's part with the other ("The warehouse runs on
    *3 shards* with 2 replicas each" / "... runs on *2 shards* with 3 replicas each"), as the
    memory's number and the claim's beside that word, "3 shards / 2 shards"; None when there
    is no such pair. Only numbers written in digits alone count (not "v2", "2025-06-30")."""
    mine, theirs = _numbered_parts(memory), _numbered_parts(claim)
    in_order = [t.text for t in dedup.statement(claim).tokens]  # the claim's order
    common = sorted(
        set().union(*mine) & set().union(*theirs),
        key=lambda n: (in_order.index(n) if n in in_order else len(in_order), n),
    )
    for a in common:
        said = _only_beside(theirs, a)
        if not said or said & _only_beside(mine, a):
            continue
        for b in common:
            # (a part that rejects one number for the other tells no word of either: "port
            # 5433 rather than 5432", "on port 5433, not 5432")
            together = _rejected_for(memory, a, b) or _rejected_for(claim, a, b)
            shared = said & _only_beside(mine, b) if b != a and not together else set()
            if shared:
                word = _nearest(claim, a, shared)
                return f"{b} {word} / {a} {word}"
    return None


_REJECTING_BETWEEN = re.compile(r"\b(?:rather than|instead of|not|over|vs\.?|versus)\s", re.I)


def _rejected_for(text: str, a: str, b: str) -> bool:
    """One of two numbers rejected for the other in one part of the text ("5433 *rather
    than* 5432", "on port 5433, *not* 5432": the comma joins them here)."""
    for part in re.split(r"[;.()]\s|\s(?:and|or|while|but|whereas|because|so)\s", text + " "):
        for first, second in ((a, b), (b, a)):
            found = re.search(
                rf"(?<![\d.]){re.escape(first)}(?![\d.])(.*?)(?<![\d.])"
                rf"{re.escape(second)}(?![\d.])",
                part,
            )
            if found and _REJECTING_BETWEEN.search(found.group(1)):
                return True
    return False


def _nearest(text: str, number: str, words: set[str]) -> str:
    """Of `words`, the one written nearest after `number` in the text, else nearest before it
    ("10 *times*", "above 8 °C for *cheese*", not "*retry* 10")."""
    lower = [t.lower for t in dedup.statement(text).tokens]
    at = [i for i, w in enumerate(lower) if w.split(" ")[0] == number]  # "8 °C" too
    if not at:
        return min(words)

    def distance(word: str) -> tuple[int, int, str]:
        return min(
            (int(j < i), abs(i - j), word) for i in at for j, x in enumerate(lower) if x == word
        )

    return min(words, key=distance)


def _numbered_parts(text: str) -> dict[frozenset[str], set[str]]:
    """Each part of the text (_PARTS) as its plain numbers and its content words."""
    parts: dict[frozenset[str], set[str]] = {}
    for part in _PARTS.split(text + " "):
        read = dedup.statement(part)
        found = (_plain_number(t.text, t.norm) for t in read.tokens)
        numbers = frozenset(n for n in found if n is not None)
        # (an amount with its unit is its number, no word: "8 °C")
        words = {
            t.lower
            for t in read.tokens
            if t.norm in read.words and _plain_number(t.text, t.norm) is None
        }
        words = {w for w in words if not _PLAIN_NUMBER.fullmatch(w)}
        parts.setdefault(numbers, set()).update(words)
    return parts


def _plain_number(text: str, norm: str) -> str | None:
    """The number a token (as written, as normalised) is, in digits alone or as a duration
    or another amount with its unit ("5 seconds", "5s", "8 °C", "2,300 m"); None for
    anything else (a version, a date, a number word)."""
    if _PLAIN_NUMBER.fullmatch(text):
        return text
    amount = _DURATION_NUMBER.fullmatch(text.lower())
    return amount.group(1) if amount and (norm.endswith("s") or dedup.measured(norm)) else None


def _only_beside(parts: dict[frozenset[str], set[str]], number: str) -> set[str]:
    """The words of the parts with `number` that no part without it has."""
    beside = set().union(*(words for numbers, words in parts.items() if number in numbers))
    rest = set().union(*(words for numbers, words in parts.items() if number not in numbers))
    return beside - rest


# Words that say a thing ended, naming it after them ("*dropped* the GraphQL API", "*stopped*
# using Copilot", "*replaced* Celery with Dramatiq", "*no more* Mac") or, after a form of
# "be", before them ("local passwords *were removed*", "the Styleguidist pages *are gone*").
_ENDING_WORDS = """
    drop drops dropped dropping remove removes removed removing stop stops stopped stopping
    abandon abandons abandoned discontinue discontinues discontinued decommission
    decommissions decommissioned retire retires retired delete deletes deleted scrap scraps
    scrapped ditch ditches ditched gone replace replaces replaced replacing"""
_ENDING = frozenset(_ENDING_WORDS.split())
# ... and phrases that do ("*moved out of* lendex", "*switched from* Jenkins", "*got rid of*")
_ENDING_PHRASES = (
    ("no", "longer"),
    ("no", "more"),
    ("moved", "out", "of"),
    ("moved", "from"),
    ("switched", "from"),
    ("migrated", "from"),
    ("migrated", "off"),
    ("moved", "off"),
    ("got", "rid", "of"),
    ("phased", "out"),
    ("shut", "down"),
    ("instead", "of"),
)
# Words after which the ended thing's name stops: the new one ("with Dramatiq", "to GATK"),
# a place, a time, a reason ("in March", "because ...") or another clause.
_ENDED_UNTIL_WORDS = """
    with to into for in on at since by because after before during from as so than and but
    while whereas otherwise"""
_ENDED_UNTIL = frozenset(_ENDED_UNTIL_WORDS.split())
# A passive's auxiliary before the ending word ("were removed", "has been dropped", "got
# scrapped")
_PASSIVE = dedup._BE | {"has", "have", "had"}


def _ending(lower: Sequence[str], i: int) -> int:
    """How many words from i say that a thing ended (_ENDING_PHRASES, _ENDING); 0 if none."""
    for phrase in _ENDING_PHRASES:
        if tuple(lower[i : i + len(phrase)]) == phrase:
            return len(phrase)
    return 1 if lower[i] in _ENDING else 0


def _ended_tokens(one: dedup.Statement) -> set[str]:
    """The words of what the text says ended (_ENDING, _ENDING_PHRASES): after the ending
    word up to _ENDED_UNTIL or a mark, or, after a passive's auxiliary, its clause before
    it."""
    tokens = one.tokens
    lower = [t.lower for t in tokens]
    ended: set[str] = set()
    for i in range(len(lower)):
        size = _ending(lower, i)
        if not size:
            continue
        if size == 1 and i and lower[i - 1] in _PASSIVE:
            start = i - 1
            while start and not tokens[start - 1].pause and lower[start - 1] not in _ENDED_UNTIL:
                start -= 1
            ended.update(t.norm for t in tokens[start : i - 1] if t.norm in one.words)
            continue
        j = i + size
        if tokens[j - 1].pause:
            continue
        if j < len(tokens) and lower[j] in ("using", "use", "supporting"):
            j += 1  # "stopped *using* Copilot"
        while j < len(tokens) and lower[j] not in _ENDED_UNTIL:
            if tokens[j].norm in one.words:
                ended.add(tokens[j].norm)
            if tokens[j].pause:
                break
            j += 1
    return ended - GENERIC_WORDS


def ended_in_memory(memory: str, claim: str) -> str | None:
    """The claim says a thing still holds ("*still*", "remains") that the memory says ended
    (_ended_tokens: dropped, removed, replaced, moved out of, no longer, ...) and the memory
    does not say still holds of its own: "The GraphQL API is *still* available" / "In June
    2024 the team *dropped the GraphQL API*"; "Background jobs *still* run on Celery" / "...
    *replaced Celery* with Dramatiq" (not "... still run on Dramatiq"). The ended words in
    the claim, in words; English only."""
    said, asked = dedup.statement(memory), dedup.statement(claim)
    if not {t.lower for t in asked.tokens} & dedup._STILL or asked.negations:
        return None
    if {t.lower for t in said.tokens} & dedup._STILL:
        return None
    if not (dedup.reads_english(memory) and dedup.reads_english(claim)):
        return None
    ended = _ended_tokens(said) & asked.words
    if not ended:
        return None
    # (a clause of the memory with no ending word that says the ended thing with the claim's
    # other words says what is left of it: "replaced the greedy allocator with CP-SAT; the
    # greedy allocator is *kept* only *as a fallback*" / "The greedy allocator is still kept
    # as a fallback")
    own = asked.words - ended - GENERIC_WORDS
    for part in dedup._token_clauses(said.tokens):
        words = {t.norm for t in part}
        lower = [t.lower for t in part]
        if (
            words & ended
            and words & own
            and not any(map(partial(_ending, lower), range(len(lower))))
        ):
            return None
    return f"the memory says it ended: {', '.join(as_written(memory, sorted(ended)))}"
