"""Whether a new memory supersedes its nearest existing one, or states a different fact.

save_memory embeds the new memory and finds the most similar visible memories of the same
scope (store.find_near): the nearest one is decided by the rules below; each of the next few
(service.NEARBY) may only be linked as a conflict, never superseded, and only when the new text
states a change of its subject (DedupPolicy.beside), as when the nearest memory is another
thing's ("search moved to port 9539" / "*recommendations* moved to port 9539") and the old
value is the second nearest. Superseding hides the old memory from recall and list (it stays as
history, and `manage_memory restore` brings it back), so a wrong supersession hides a fact
the user gave: far worse than a duplicate. The rule therefore only supersedes on positive
evidence, and reports a close memory it leaves alone as a possible duplicate.

A cosine similarity alone cannot decide. All-MiniLM-L6-v2 gives "Service A listens on port
9001" / "Service B listens on port 9002" 0.81, "Ticket PROJ-123 ..." / "Ticket PROJ-456 ..."
0.94, "The user lives in Paris" / "The user's mother lives in Paris" 0.83, while a real
correction ("prefers tabs" / "prefers spaces") can be 0.82 and a correction that names both
values ("migrated from Elasticsearch 7.17 to OpenSearch 2.11") 0.64. So the decision looks at
what the two texts state (`Statement`):

- **Values**: numbers (digits or words, ordinals, with units, thousands separators and
  orders of magnitude normalised: "4.2k" = "4,200", "40M" = "40 million"), times ("02:00" =
  "2 am" = "two o'clock", "half past six" = "6:30"), durations in seconds and sizes in bytes
  ("30s" = "30 seconds", "4 GB" = "4096 MB"), dates ("2025-03-14" = "March 14, 2025"),
  versions (without trailing zeros: "16.0" = "16"), identifiers (anything with
  inner `.`, `_`, `:`, `/`, `@`, `#`, `+`, or a hyphen), names after the first word (several
  capitalised words are one name), a lone capital letter
  ("service A"), quoted and backticked words.
- **Relations**: a relation noun after a possessive ("the user's *mother*", "my *sister*",
  "the client's *former* lawyer"): who the statement is about.
- **A change marker**: words the new text has and the old does not, saying the old value
  changed ("now", "instead", "no longer", "switched", "moved", "renamed", "went from",
  "used to", "as of", "since" beside a changed value, ...), or a word of the old text
  negated in the new one ("..., not 429", "instead of Shantanu").

Then, from `named_change_from` (else `text_rule_from`, else `threshold`) up (below it,
rule 5 alone):

1. What the model cannot see is no evidence (`latin_only_model`): when most of either text
   is not in the Latin script (emoji, symbols, full-width or circled letters, other
   scripts), or the two differ only in such characters, nothing is superseded; nor when
   either reads as another language in Latin script (reads_foreign).
2. Different holders never supersede (relations_differ): "the user" / "the user's mother",
   "the tenant" / "the tenant's guarantor", whatever else the texts say; nor another
   statement (other_statement): another speaker or subject label ("Audrey: ..." / "Andrew:
   ..."), the same said of something else ("... too"), a fact joined to the old text whole
   (adds_a_fact) or three words of its own put before or after it (elaborates), another
   kind of statement (speech: a question, asked or reported, against a statement; a request
   against the deed), a lesson against the instruction it led to (lesson_and_rule), a
   plan against what happened (plan_and_event), the other direction of one exchange
   ("returns" / "accepts", "reads" / "writes": changes_direction), or what is said of all of
   a kind against one of them ("all services" / "the payments service": one_or_all).
   Without a change word, another occasion (another_occasion: other time anchors, "again", a
   plan against an event, a present state against a past event with its time or a text only
   in the past tense; with a change word too when it only tells how things were,
   tells_history) and the other
   value of a setting or a plain negation (negates) never supersede either. A negation is
   read as polarity, not as words (negating_side): "not", "never", "no", "without", "don't",
   "isn't" (a curly apostrophe too), "dont", ... (NEGATORS) counted per clause, two in one
   clause and "not only" cancelling, the negator and its auxiliary ("does not want" /
   "wants") no new words; one negator in place of another ("never" / "don't") keeps the
   polarity, a rewording; a word of emphasis added ("I'm *def* not a morning person",
   _EMPHASIS) is no value said instead.
3. Changes are counted (changed_values): a value lost while another of its kind is gained
   (PROJ-123 / PROJ-456, port 9001 / 9002, 30 days / 60 days compared in seconds, a word in
   capitals for another: CET / PST), a name in place of a name (Marco / Marta), another role
   (tech lead / hiring manager), a modifier swapped before the same noun ("the *blue*
   pool"), or, all else equal, one place of the sentence refilled ("skips *breakfast*" /
   "skips *dinner*"), or several with 70% of the words in place (_refilled_template); two
   values of one setting (tabs / spaces, enabled / disabled) are not a change; a weekday or
   a month (in any case, "May" and "March" beside a number) for another is a change, but
   one "when" with a time changed beside it ("Fridays 14:00" / "Wednesdays 10:00"). Two
   persons exchanged are swapped values, the speaker however written ("*I'm* older than *my
   sister*" / "*my sister* is older than *me*", "dave is *my* boss" / "*I'm* dave's boss");
   so are the same words in another order around a word that orders them ("tag, build,
   publish" / "build, tag, publish" after "order": reorders).
   Without a change marker any change is another fact (one value said of the same subject,
   late in the sentence or after the same subject words, is a conflict: CONFLICT_REASONS,
   same_subject_words); with one, one change is a
   correction and two are another fact ("service A on 9001" / "service B now on 9002"), up to
   three with a word that only says a value changed (STRONG_MARKERS); a change said of
   another thing of the same kind is another fact too, one modifier swapped before the same
   noun ("The *production* API moved to Node 22" / "The *staging* API was upgraded to Node
   22"). A closing phrase
   replaced by other words without a marker is another fact too (replaces_a_phrase).
4. Otherwise the similarity: at or above `threshold` the pair supersedes on the similarity
   alone (0.95 for all-MiniLM-L6-v2: below it the model scores different facts as high as
   rewordings), when both texts read as English and the new one drops no value or content
   word of the old one and negates as often (Comparison.english, says_less); from
   `text_rule_from` when it says it changed, or keeps every content word of the old text
   and adds no value and no negation (restates); from `reworded_from` (0.85) when it
   exchanges one plain word for another and keeps the rest (rewords); from
   `named_change_from` when it says it changed
   and names the old value next to a new one ("switched from unittest to pytest", "Dr
   Okafor instead of Dr Halvorsen"). For two turns of one speaker
   the band's text rules start at `labelled_from`; below it only a named change supersedes.
5. From `change_from` (0.40 for all-MiniLM-L6-v2) up, anywhere a pair does not supersede
   otherwise: a text that says it changed, replaces one value (up to three with a word that
   only says a change; a name that opens the old text counts, replaces_an_opening_name) or
   names the old one, and shares at least half of each text's subject
   words under the same label (keeps_the_subject) is kept beside the old memory as a
   conflict (CONFLICT_REASONS: linked, the newer first, reported), with the guards of rules
   1 and 2. The rule does not supersede on it (the LLM judge, when configured, may decide
   the pair, as any it reports): a correction in other words is often that far from the
   old text ("The user's manager is Elena" / "... is now Kwame after the reorg", 0.52), but
   so is another fact now and then ("The user's onboarding buddy was Hiroshi" / "The user
   is now the onboarding buddy for Ines"). So is, there, a text with the same subject words
   and one value after them in place of another, nothing else changed ("The app is deployed
   to *Heroku*" / "*Fly.io*", 0.57: Comparison.value_after_the_subject), and a text whose
   change word comes before one word of its own in place of one or two of the old text's,
   sharing no value ("The user formats gateway code with *prettier*" / "For gateway, the
   user switched to *yapf* for formatting", 0.58: replaces_the_object; the nearest memory
   only, up to `text_rule_from`). Below `named_change_from` nothing else is read.

Anything at or above `text_rule_from` (or `threshold` for a plain policy) that does not
supersede is a possible duplicate for the agent to judge. The thresholds belong to the model
they were calibrated on (benchmarks/dedup.py, 5-fold cross-validated on
benchmarks/data/dedup_pairs.json, and checked on held-out sets: benchmarks/README.md section
3); the markers, relation nouns and number words are English. A plain policy (a model nobody
calibrated) keeps rules 2 and 3, which read the text and not the model.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence, Set
from dataclasses import dataclass, field, replace
from decimal import Decimal, localcontext
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import accumulate, groupby, pairwise
from typing import Literal, Protocol

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

# Words with which a text says that a fact changed, matched as whole lower-cased words; the
# phrases as consecutive words.
_CHANGE_MARKERS = """
    now instead anymore actually switched moved changed replaced replacing replaces renamed
    upgraded downgraded migrated bumped rewritten relocated retired dropped deprecated
    reassigned transferred resized revoked handed correction corrected formerly previously
    starting updated stopped since rescheduled postponed raised lowered increased decreased
    reduced extended shortened wrong mistake typo misspoke revised amended reversed slipped
    tightened loosened"""
CHANGE_MARKERS = frozenset(_CHANGE_MARKERS.split())
# Words that open a condition: a change word right before one says what happens, not what
# changed.
_CONDITIONS = frozenset({"if", "when", "whenever", "unless"})
# Words that open a clause of when something happens: a change word done to a thing in it
# ("sends an email when an appointment *is rescheduled*") is the event the text is about.
_OPENS_WHEN = _CONDITIONS | frozenset({"once", "after", "before", "until"})
_WHEN_REACH = 5  # tokens back from the change word


# Verbs of what someone else thinks (the third person: "I think" may hedge a correction).
_OPINION_WORDS = "thinks believes feels argues reckons worries fears suspects"
_OPINION = frozenset(_OPINION_WORDS.split())


def _in_an_opinion(tokens: Sequence[_Token], lower: list[str], i: int) -> bool:
    """Whether the word at i is in a clause that a verb of _OPINION opens before it, no mark
    between."""
    return _opened_before(tokens, lower, i, i, _OPINION)


def _in_a_condition(tokens: Sequence[_Token], lower: list[str], i: int) -> bool:
    """Whether the change word at i is done to a thing in a clause of when, no pause
    between: a form of "be" before it and a word of _OPENS_WHEN opening the clause ("a
    confirmation email when an appointment *is rescheduled*", "once the order *gets*
    updated"), or the word ending a clause that a word of _CONDITIONS opens, a subject
    between ("runs the tests only when the `bidding/` module *changed*", "if the lockfile
    *changed*, ...")."""
    passive = i >= 2 and lower[i - 1] in _BE
    if not passive and not (i + 1 == len(lower) or tokens[i].pause):
        return False
    openers = _OPENS_WHEN if passive else _CONDITIONS
    return _opened_before(tokens, lower, i - 1, _WHEN_REACH, openers)


def _opened_before(
    tokens: Sequence[_Token],
    lower: list[str],
    end: int,
    reach: int,
    openers: Set[str],
    phrases: Set[tuple[str, str]] = frozenset(),
) -> bool:
    """Whether a word of `openers` (or the second word of a pair of `phrases`) stands among
    the `reach` tokens before `end`, no mark between it and `end`: the clause it opens holds
    the word at `end`."""
    for k in range(end - 1, max(-1, end - 1 - reach), -1):
        if tokens[k].pause:
            return False
        if lower[k] in openers or (k and (lower[k - 1], lower[k]) in phrases):
            return True
    return False


# Markers that also say something else: "since" gives a reason ("since it is less loaded") or
# how long a state has held ("has been at Nordwind since 2019"): it says a change only beside
# a value that changed ("is Snowflake since the Q2 migration").
WEAK_MARKERS = frozenset({"since"})
# ... and "since" after "has been" says how long a state has held, never a change ("the old
# schema *has been* read-only *since* the June migration")
_HELD = frozenset({("has", "been"), ("have", "been"), ("had", "been"), ("it's", "been")})
# The change words that say a value changed and nothing else: with one of them a correction
# may change several values at once ("code freeze *moved* to Wednesdays at 15:00").
_STRONG_WORDS = """
    switched moved changed replaced renamed migrated relocated reassigned transferred
    rescheduled postponed correction corrected updated revised amended"""
STRONG_MARKERS = frozenset(_STRONG_WORDS.split()) | {
    "no longer",
    "went from",
    "scratch that",
    "strike that",
}
CHANGE_PHRASES = (
    ("no", "longer"),
    ("any", "more"),
    ("used", "to"),
    ("went", "from"),
    ("as", "of"),
    ("these", "days"),
    ("from", "now"),
    ("in", "favour"),
    ("in", "favor"),
    ("took", "over"),
    ("scratch", "that"),
    ("strike", "that"),
    ("going", "forward"),
    ("scaled", "up"),
    ("scaled", "down"),
    ("cut", "to"),
    ("pushed", "back"),
    ("pushed", "to"),
    ("down", "to"),
    # what a chat says as it corrects itself ("*my bad*, chair isn't Margaret, it's Noreen",
    # "*no wait*, pottery is on Tuesdays")
    ("my", "bad"),
    ("no", "wait"),
    ("wait", "no"),
)

# Who a statement is about, when one of these follows a possessive.
_RELATIONS = """
    mother father parent parents mom mum dad wife husband spouse partner girlfriend boyfriend
    fiance fiancee fiancé fiancée son daughter child children kid kids baby brother sister
    sibling siblings grandmother grandfather grandma grandpa grandparent grandparents grandson
    granddaughter grandchild grandchildren aunt uncle cousin niece nephew stepmother
    stepfather stepson stepdaughter mother-in-law father-in-law sister-in-law brother-in-law
    son-in-law daughter-in-law in-laws friend friends roommate flatmate housemate neighbour
    neighbor colleague colleagues coworker co-worker cofounder co-founder boss manager
    assistant landlord landlady tenant lawyer attorney accountant doctor dentist therapist
    teacher tutor coach mentor mentee teammate teammates employer employee employees client
    clients customer customers subsidiary vendor supplier contractor intern lead team group
    company department family household owner founder director designer reseller agency
    counsel advisor adviser representative agent secretary deputy officer guardian caregiver
    nanny babysitter housekeeper cleaner driver chef trainer physio physiotherapist nurse
    surgeon specialist consultant auditor investor investors shareholder board executor
    solicitor barrister notary realtor co-parent coparent godparent godmother godfather godson
    goddaughter godchild stepparent stepbrother stepsister half-brother half-sister
    ex-wife ex-husband ex-partner widow widower twin
    bf gf bff bestie hubby wifey bro sis sibs mil fil inlaws grandparents gran nan granny
    dba cto ceo cfo coo vp sre recruiter supervisor approver reviewer reviewers buddy
    maintainer maintainers assignee assignees successor predecessor sponsor sponsors
    stakeholder stakeholders buddies
    """
RELATIONS = frozenset(_RELATIONS.split())
_POSSESSIVE_WORDS = "my our your his her their its whose"
_POSSESSIVES = frozenset(_POSSESSIVE_WORDS.split())
# What negates a clause, as lower-cased words (a typographic apostrophe read as a plain one):
# these, and every contraction in "n't" ("don't", "doesn't", "isn't", "won't", "can't", ...).
# "without" is the negation of "with", "no X" of "X"; "nor" only continues a negation
# ("neither ... nor", "don't smoke, nor drink") and is not one of its own. English only: a
# negation in another language is not read (Latin-script text in another language is no
# evidence anyway, see reads_foreign).
_NEGATOR_WORDS = """
    not never no none nobody nothing nowhere neither cannot without
    dont doesnt didnt isnt arent wasnt werent wont cant couldnt shouldnt wouldnt mustnt
    havent hasnt hadnt neednt aint"""
NEGATORS = frozenset(_NEGATOR_WORDS.split())
# Negators that say "not" and nothing else: one in place of another keeps the polarity ("never
# deploy on Fridays" / "don't deploy on Fridays"), so they read as "not" (a stopword). The
# others ("no", "nobody", "without", ...) keep their own word.
_LIKE_NOT = NEGATORS - frozenset(
    {"no", "none", "nobody", "nothing", "nowhere", "neither", "without"}
)
# A negator followed by one of these words does not negate: "*not only* X but also Y", "*no
# doubt*", "*never mind*".
_NOT_NEGATING = frozenset(
    {
        ("not", "only"),
        ("not", "just"),
        ("not", "merely"),
        ("no", "doubt"),
        ("no", "matter"),
        ("never", "mind"),
        ("nothing", "but"),  # "does nothing but rotate logs": only that
    }
)
# ... and after a word: "rebuilt from nothing" is from scratch
_NOT_NEGATING_AFTER = frozenset({("from", "nothing")})
# Words that open another clause: a negation counts in its own clause ("I don't smoke *and*
# never drink" negates two), and two in one clause cancel ("never apply without the plan").
_CLAUSE_WORDS = "and but or so because while whereas although though if when"
_CLAUSE_STARTS = frozenset(_CLAUSE_WORDS.split())
# What names an old value as no longer so: "..., *not* 429", "*instead of* Fridays" (and the
# words right after any negator: NEGATORS).
_NEGATION_PHRASES = frozenset({("instead", "of"), ("rather", "than"), ("no", "longer")})
# Those of them that reject one thing for another (not "no longer"); verify reads them too
REJECTING_PHRASES = frozenset({("instead", "of"), ("rather", "than")})
# Words that make a relation another one: "the user's *former* employer".
_QUALIFIER_WORDS = "former previous ex late old new future current step backup interim acting"
_RELATION_QUALIFIERS = frozenset(_QUALIFIER_WORDS.split())

# Pairs of words that name two values of one setting: a swap between them is a correction of
# the same thing ("double quotes" / "single quotes"), not a different thing.
# (not words that pick one thing of a kind, as a modifier before a noun: "the *left* knee" /
# "the *right* knee", "*inbound* / *outbound* queue", "*high* / *low* priority" are two things)
_OPPOSITES = """
    enabled:disabled enable:disable on:off always:never single:double tabs:spaces tab:space
    light:dark add:omit allow:deny allowed:forbidden true:false yes:no before:after min:max
    minimum:maximum upper:lower uppercase:lowercase sync:async synchronous:asynchronous
    public:private inclusive:exclusive ascending:descending open:closed include:exclude
    included:excluded accept:reject accepted:rejected online:offline mutable:immutable
    optional:required mandatory:optional manual:automatic manually:automatically
    increase:decrease increased:decreased fast:slow faster:slower start:stop
    started:stopped pass:fail passed:failed show:hide shown:hidden visible:hidden
    cheap:expensive temporary:permanent stateless:stateful lazy:eager lazily:eagerly
    secure:insecure valid:invalid safe:unsafe allowlist:denylist whitelist:blacklist
    approve:reject approved:rejected serial:parallel sequential:parallel sequentially:parallel
    nullable:non-nullable strict:lenient verbose:quiet compressed:uncompressed
    encrypted:unencrypted signed:unsigned blocking:non-blocking monolith:microservices
    centralized:decentralized terse:verbose concise:verbose brief:detailed
    weekdays:weekends weekday:weekend weeknights:weekends"""
# Two directions of one exchange: what a text says in one is another statement than the same
# said in the other ("the API *returns* timestamps in UTC" / "the API *accepts* timestamps
# with any offset", "the worker *reads* jobs from the queue" / "*writes* results to it").
_DIRECTION_PAIRS = """
    return:accept read:write send:receive request:response import:export upload:download
    push:pull produce:consume producer:consumer publish:subscribe publisher:subscriber
    encode:decode encrypt:decrypt serialize:deserialize input:output incoming:outgoing
    ingress:egress inbound:outbound upstream:downstream publish:consume publisher:consumer
    learn:teach buy:sell lend:borrow"""


def _adverb_of(word: str) -> str | None:
    """The adverb English makes of an adjective of _OPPOSITES ("synchronous" /
    "synchronously", "automatic" / "automatically", "temporary" / "temporarily",
    "mutable" / "mutably"), or None for a word that makes none this way."""
    if word in ("enable", "disable"):
        return None  # verbs
    if word == "public":
        return "publicly"
    if word.endswith("ic"):
        return word + "ally"
    if word.endswith("ary"):
        return word[:-1] + "ily"
    if word.endswith(("able", "ible")):
        return word[:-1] + "y"
    if word.endswith(("ous", "al", "ent", "ant", "ive", "ate", "ure", "ict", "ial", "ient")):
        return word + "ly"
    return None


_SETTING_PAIRS = [pair.split(":") for pair in _OPPOSITES.split()]
# (and the two adverbs of a pair of adjectives: "sends invoices *synchronously*" /
# "... *asynchronously*")
_SETTING_ADVERBS = [
    (first, second)
    for first, second in (map(_adverb_of, pair) for pair in _SETTING_PAIRS)
    if first is not None and second is not None and first != second
]
OPPOSITES = frozenset(frozenset(pair) for pair in [*_SETTING_PAIRS, *_SETTING_ADVERBS])

# Words that name the other value of a feeling or habit, compared as stems ("hates" / "loves").
_ANTONYMS = "love:hate like:dislike enjoy:hate prefer:avoid want:refuse"

# A short label before a colon that opens a text names who says it or what it is about
# ("Caroline: ...", "Staging: ..."), unless it is one of these words ("Correction: ...").
_NOT_LABELS = """
    correction corrected update updated edit note nb fyi ps reminder important warning todo
    tip rule lesson decision caveat context btw aside summary example reason rationale status
    why because heads gotcha fix fixed change changed new old actually also revised amended
    risk risks convention preference fact instruction pattern constraint assumption
    requirement goal incident"""
NOT_LABELS = frozenset(_NOT_LABELS.split())
# (the colon may be a full-width one, U+FF1A; a title with its dot may open the name:
# "Mrs. Okafor: ...", "Dr. Lee: ...")
_LABEL = re.compile(
    r"\s*((?:(?i:mr|mrs|ms|mx|dr|prof|st)\.\s*)?[^\W\d_][^:\uff1a\n.!?,;]{0,38}?)"
    r"\s*[:\uff1a]\s+\S"
)

# When something happens: two texts anchored at different times tell of different occasions
# ("last Friday" / "next Friday", "in 2019" / "in April", "in March" / "yesterday").
_MONTHS = """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec"""
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday"
_WEEKDAY_NAMES = frozenset(_WEEKDAYS.split())
CALENDAR = frozenset(_MONTHS.split()) | _WEEKDAY_NAMES
_SEASONS = """
    spring summer autumn fall winter weekend week month year semester night morning season
    quarter sprint"""
_ANCHOR_HEADS = frozenset(["last", "next", "this", "past", "coming", "previous"])
_ANCHOR_WORDS = frozenset(["yesterday", "today", "tonight", "tomorrow", "ago"])
_PERIODS = frozenset(_SEASONS.split())
# A word that says the event happened once more: another occasion, not the same one.
_ANOTHER_TIME = frozenset({"again"})
# Words that say the same is true of something or someone else as well ("Emma is allergic to
# shellfish *too*", "never log card numbers in analytics events *either*").
_ADDITIVE = frozenset({"too", "also", "either"})

# Names that developers write two ways.
ALIASES = {
    "postgresql": "postgres",
    "pg": "postgres",
    "py": "python",
    "kubernetes": "k8s",
    "javascript": "js",
    "typescript": "ts",
    "golang": "go",
    "node.js": "node",
    "nodejs": "node",
    "elasticsearch": "es",
    "production": "prod",
    "database": "db",
    "databases": "db",
    "repository": "repo",
    "repositories": "repo",
    "configuration": "config",
    "environment": "env",
    "environments": "env",
    "documentation": "docs",
    "application": "app",
    "applications": "app",
    "development": "dev",
    "developer": "dev",
    "developers": "devs",
    "vaccination": "vax",
    "vaccinations": "vax",
    "dependencies": "deps",
    "dependency": "deps",
    "authentication": "auth",
    "megabyte": "mb",
    "megabytes": "mb",
    "gigabyte": "gb",
    "gigabytes": "gb",
    "kilobyte": "kb",
    "kilobytes": "kb",
    "terabyte": "tb",
    "terabytes": "tb",
    "maximum": "max",
    "minimum": "min",
    "directory": "dir",
    "directories": "dir",
    # chat's short names of relations ("my sis" is "my sister")
    "sis": "sister",
    "bro": "brother",
    "mom": "mother",
    "mum": "mother",
    "dad": "father",
    "grandma": "grandmother",
    "grandpa": "grandfather",
    "hubby": "husband",
    "wifey": "wife",
    "bf": "boyfriend",
    "gf": "girlfriend",
    "sibs": "sibling",
    # short forms notes and chat write for a whole word ("wifi pw", "billing svc", "100
    # req/min", "my bday")
    "svc": "service",
    "stg": "staging",
    "prd": "prod",
    "cfg": "config",
    "mgmt": "management",
    "perf": "performance",
    "gw": "gateway",
    "gh": "github",
    "kn": "knots",
    "kts": "knots",
    "wk": "week",
    "svcs": "services",
    "req": "request",
    "reqs": "requests",
    "mgr": "manager",
    "msg": "message",
    "msgs": "messages",
    "pw": "password",
    "appt": "appointment",
    "bday": "birthday",
    "thru": "through",
    "ppl": "people",
    "tz": "timezone",
    "approx": "approximately",
    "dept": "department",
    "tix": "tickets",
    "ram": "memory",
    "mcu": "microcontroller",
    "ctrl": "controller",
    "img": "image",
    "imgs": "images",
    "alloc": "allocation",
    "avail": "availability",
    "automatically": "auto",
    "automatic": "auto",
    "decision": "decide",
    "retention": "retain",
    "lengthy": "long",
    "concise": "short",
    "brief": "short",
    "reply": "answer",
    "replies": "answers",
    "replied": "answered",
    "deployment": "deploy",
    "deployments": "deploys",
    "locally": "local",
    "namespace": "ns",
    "namespaces": "ns",
    "variable": "var",
    "variables": "vars",
    "preference": "pref",
    "preferences": "prefs",
    "library": "lib",
    "libraries": "libs",
    "package": "pkg",
    "packages": "pkgs",
    "permission": "perm",
    "permissions": "perms",
    "implementation": "impl",
    "information": "info",
    "administrator": "admin",
    "expiry": "expire",
    "expiration": "expire",
    "certificate": "cert",
    "certificates": "certs",
    "specification": "spec",
    "specifications": "specs",
    "credentials": "creds",
    "statistics": "stats",
    "acknowledge": "ack",
    "acknowledged": "ack",
    "acknowledges": "ack",
    "acknowledging": "ack",
    "acknowledgement": "ack",
    "acknowledgements": "ack",
    "acknowledgment": "ack",
    "acknowledgments": "ack",
    # the cloud's vendor by its name and its cloud's ("*Amazon* S3" / "*AWS* S3")
    "amazon": "aws",
}
# The past forms of irregular verbs, and of verbs too short for the suffix rule ("used"), as
# the verb: "built" matches "builds", "kept" matches "keeps" ("The CI pipeline builds the
# image" / "the image is built by the CI pipeline").
_IRREGULAR_VERBS = """
    build:built,builded keep:kept run:ran write:wrote,written make:made hold:held send:sent
    spend:spent take:took,taken give:gave,given go:went,gone choose:chose,chosen
    break:broke,broken begin:began,begun know:knew,known show:shown grow:grew,grown
    find:found get:got,gotten leave:left lead:led lose:lost meet:met pay:paid say:said
    sell:sold tell:told think:thought buy:bought bring:brought teach:taught catch:caught
    fight:fought win:won drive:drove,driven ride:rode,ridden rise:rose,risen speak:spoke,spoken
    steal:stole,stolen wake:woke,woken freeze:froze,frozen forget:forgot,forgotten
    hide:hid,hidden bite:bit,bitten eat:ate,eaten fall:fell,fallen draw:drew,drawn
    fly:flew,flown throw:threw,thrown wear:wore,worn tear:tore,torn swear:swore,sworn
    sing:sang,sung drink:drank,drunk swim:swam,swum ring:rang,rung come:came
    become:became feel:felt sleep:slept sweep:swept bend:bent lend:lent
    lay:laid understand:understood stand:stood sit:sat bind:bound seek:sought
    use:used age:aged owe:owed tie:tied die:died lie:lied"""
ALIASES.update(
    {
        past: verb
        for entry in _IRREGULAR_VERBS.split()
        for verb, forms in [entry.split(":")]
        for past in forms.split(",")
    }
)

_NUMBER_WORDS = """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty"""
_ORDINAL_WORDS = """
    zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth
    thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"""
NUMBERS = {word: str(n) for n, word in enumerate(_NUMBER_WORDS.split())}
NUMBERS.update({word: str(n) for n, word in enumerate(_ORDINAL_WORDS.split()) if n})
# the tens above twenty (twenty is a number word above)
_TENS = "thirty forty fifty sixty seventy eighty ninety"
NUMBERS.update({word: str(10 * n) for n, word in enumerate(_TENS.split(), 3)})
NUMBERS.update(
    {
        "hundred": "100",
        "thousand": "1000",
        "dozen": "12",
        "twice": "2",
    }
)
del NUMBERS["second"]  # more often the unit ("a 30 second timeout") than the ordinal

# A token: letters and digits, with inner punctuation kept ("orders.created", "eu-west-1",
# "python:3.11-slim", "/v2/webhooks", "ops@example.com") and a trailing "+" or "#" ("C++").
_TOKEN = re.compile(r"[^\W_]+(?:(?:['\u2019._:/+#@-]|_+)[^\W_]+)*[+#]*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# a decimal comma before a unit ("5,5 m", "2,25 kg", "0,5 %"; not "1,250 m", "rooms 1,2 and 3")
_DECIMAL_COMMA = re.compile(
    r"(?<![\d.,])(\d+),(\d{1,2})(?![\d,])"
    r"(?=\s?(?:%|°|(?!(?:and|or|to|in|on|at|of|is|by|as|if|so|the|for|an?)\b)[^\W\d_]{1,3}\b))"
)
# a lower-case "m" after a currency sign is a million ("$40m"), as "M" is (_with_magnitudes);
# elsewhere "40m" is metres or minutes
_CURRENCY_MILLIONS = re.compile(r"(?<=[$€£¥])(\d+(?:\.\d+)?)m\b")
# the country before a dollar sign ("*NZ*$25", "*US*$ 40", "*A*$9"): the sign, as the code
# after an amount is (_CURRENCY_WORDS: "25 NZD")
_DOLLAR_COUNTRY = re.compile(r"(?<![\w$])(?:US|NZ|AU|CA|HK|NT|MX|SG|[ACRS])(?=\$)")
_QUOTED = re.compile(r"`[^`]+`|\"[^\"]+\"|“[^”]+”")
# A quoted text in back, double or single quotes, no apostrophe of a word ("Rafferty's")
# opening or closing it: a part of a pattern (_pattern_parts), and verify's quoted text
# (verify_features.clauses).
QUOTED_TEXT = re.compile(r"`[^`]*`|\"[^\"]*\"|(?<!\w)'[^']*'(?!\w)|“[^”]*”")
_UNIT = re.compile(r"(\d+(?:\.\d+)?)(?:ms|sec|secs|min|mins|hr|hrs|kb|mb|gb|tb|kib|mib|gib|px)")
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_VERSION = re.compile(r"\d+(?:\.\d+)*")
_DECIMAL = re.compile(r"\d+(?:\.\d+)+")  # a version or a decimal number
# a version's trailing zeros ("16.0", "2.0.0", "apache-2.0"; not "1.0.5")
_ZERO_VERSION = re.compile(r"(\d+)(?:\.0+)+(?!\.?\d)")
_CLOCK = re.compile(r"(\d{1,2})(?::(\d{2}))?(am|pm|a\.m|p\.m)?")
# A time written with a dot ("the 7.15 train", "at 7.30", "7.30pm"): a time only beside a word
# that says so (_DOTTED_BEFORE, _DOTTED_AFTER, am/pm), since "3.12" is as often a version.
_DOTTED = re.compile(r"(\d{1,2})\.(\d{2})(am|pm|a\.m|p\.m)?")
# (and the words of other languages that say "at" or "o'clock" so: "*um* 7.15 *Uhr*", "*kl.*
# 7.15", "*alle* 7.15", "*às* 7.15")
_DOTTED_BEFORE = frozenset(
    {"at", "by", "until", "till", "from", "before", "after", "around"}
    | {"um", "kl", "klo", "alle", "às"}
)
_DOTTED_AFTER = frozenset(
    {"train", "bus", "tram", "ferry", "flight", "boat", "coach", "show", "meeting", "call"}
    | {"uhr"}
)
_MERIDIEM = frozenset({"am", "pm", "a.m", "p.m"})
_SENTENCE_END = frozenset(".!?:;")
_PAUSES = _SENTENCE_END | frozenset(",\u2014\u2013()")
_SPACED_HYPHEN = re.compile(r"\s-{1,2}\s")
_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


# A consonant doubled before "-ing" or "-ed" (not l, s, z, f: "calling", "passed", "buzzed",
# "staffed" keep theirs), after at least two letters.
_DOUBLED = re.compile(r"(?<=[a-z]{2})([bcdgkmnprt])\1$")


@lru_cache(maxsize=65536)
def _folded(word: str) -> str:
    """The word without the accents of its Latin letters ("ń" is "n", "é" is "e"); other
    scripts as they are."""
    if word.isascii():
        return word
    out = []
    for ch in word:
        base = unicodedata.normalize("NFD", ch)
        if base[0].isascii() and base[0].isalpha():
            out.append(base[0])
        else:
            out.append(ch)
    return "".join(out)


def _stem(word: str) -> str:
    """A crude stem of a lower-cased word, so that "deploys", "deployed", "Makefiles" and
    "Makefile" match: strips a possessive, one common suffix (and a consonant it doubled:
    "formatting" is "format") and a final "e" from words of letters; anything else is kept
    as is (but "A100s" is "a100"). Accents on Latin letters are dropped ("Zieliński" is
    "Zielinski", as people write it on a keyboard without them)."""
    word = _folded(word.replace("\u2019", "'"))
    if word.endswith("'s"):
        word = word[:-2]
    elif word.endswith("s'"):
        word = word[:-1]
    word = ALIASES.get(word, word)
    if not word.isalpha():
        if word.endswith("s") and word[-2:-1].isdigit():
            return word[:-1]
        return word
    stem = _stem_letters(word)
    if stem in STOPWORDS and word in (f"{stem}e", f"{stem}es"):
        # a word of meaning whose final "e" makes it a function word: "notes" and "note" are
        # no "not", "themes" no "them"
        return f"{stem}e"
    return stem


def _stem_letters(word: str) -> str:
    """_stem of a word of letters: one common suffix and a final "e"."""
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            if suffix in ("ing", "ed") and _DOUBLED.search(word):
                return word[:-1]  # "formatting", "shipped", "planned": format, ship, plan
            break
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word


# Stopwords whose stem is another string ("were" is "wer"), dropped as stems too; not "same",
# "before", "during", "once", whose stems the rules have always read as words of meaning.
_FUNCTION_WORDS = frozenset(word for word in STOPWORDS if _stem(word) != word) - {
    "same",
    "before",
    "during",
    "once",
}


# Verbs with which memories say the same thing of a preference: one in place of another is a
# rewording ("the user prefers X" / "the user likes X").
_SAME_MEANING_WORDS = "prefer like favor favour want love enjoy use pick choose"
_SAME_MEANING = frozenset(_stem(word) for word in _SAME_MEANING_WORDS.split())
# Verbs of each group that say the same of a thing, one in place of another ("Backups are
# *kept* for 7 days" / "... *retained* for 7 days", "runs on port 8080" / "listens on port
# 8080"); a word of one group in place of another group's is still a refill.
_SAME_VERBS_GROUPS = (
    "keep retain",
    "hold store",
    "start begin kick",
    "run listen fire schedule cron",
    "require need",
    "allow permit",
    "cap limit",
    "delete purge",
    "big large",
    "small little",
)
_SAME_VERBS = tuple(frozenset(_stem(w) for w in group.split()) for group in _SAME_VERBS_GROUPS)
# Verbs that say no as a negation does ("*dislikes* emojis" says "doesn't like emojis").
_AVERSE_WORDS = "dislike hate avoid refuse detest forbid forbids forbidden ban bans banned"
AVERSE = frozenset(_stem(word) for word in _AVERSE_WORDS.split())


def says_no(one: Statement) -> bool:
    """Whether the text negates a clause or says no with a verb ("dislikes", "avoids",
    "forbidden"; "doesn't like" and "can't stand" are read as "dislikes"), as verify reads a
    negation one side has."""
    if one.negations > 0:
        return True
    # (not a purpose: "chunks of 500 rows *to avoid* long locks")
    lower = [token.lower for token in one.tokens]
    return any(
        token.norm in AVERSE and not (i and lower[i - 1] == "to")
        for i, token in enumerate(one.tokens)
    )


def _number(token: str) -> str | None:
    """The number a lower-cased token states ("7", "seven", "7th", "50mb", "v2.3" -> "2.3",
    ":8080" -> "8080"), or None."""
    token = token.lstrip(":€$£¥")
    if token[:1] == "v" and token[1:2].isdigit():
        token = token[1:]
    if token in NUMBERS:
        return NUMBERS[token]
    for pattern in (_UNIT, _ORDINAL):
        match = pattern.fullmatch(token)
        if match:
            return match.group(1)
    if _VERSION.fullmatch(token):
        # "16.0" is 16, "2.0.0" is 2 (not "10.0.0.0", an address)
        return _ZERO_VERSION.sub(r"\1", token) if token.count(".") <= 2 else token
    return None


@dataclass(frozen=True, slots=True)
class _Token:
    text: str  # as written
    norm: str  # lower-cased, stemmed, numbers normalised
    first: bool  # starts a sentence
    pause: bool = False  # a mark follows it: a comma, a dash, the end of a sentence
    # lower-cased, with a typographic apostrophe as a plain one (kept: the rules read it
    # millions of times over a benchmark)
    lower: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lower", self.text.lower().replace("\u2019", "'"))


# Contractions written without their apostrophe, as chat writes them ("im", "ive", "youre");
# not "its", "id", "well", "were", "hell", "shell": words of their own.
_APOSTROPHE_LESS = {
    "im": "i'm",
    "ive": "i've",
    "youre": "you're",
    "youve": "you've",
    "theyre": "they're",
    "theyve": "they've",
    "weve": "we've",
    "thats": "that's",
    "whats": "what's",
    "theres": "there's",
    "hes": "he's",
    "shes": "she's",
}


# A date written year first ("2025-03-14"), read as the same date in words.
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
# A date written day or month first with the year last ("30/06/2025", "30.06.2025",
# "06/30/2025"), read so when which is the day is plain (see _year_first).
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})[/.](\d{1,2})[/.](\d{4})")


def _year_first(raw: str) -> re.Match[str] | None:
    """The date of `raw` as year, month, day (the groups of an _ISO_DATE match): written so,
    or day or month first where only one of the two can be a month ("30/06/2025" and
    "06/30/2025" are both 2025-06-30; "03/04/2025" says neither, and is read as written)."""
    iso = _ISO_DATE.fullmatch(raw)
    if iso is not None:
        return iso
    found = _DAY_MONTH_YEAR.fullmatch(raw)
    if found is None:
        return None
    one, two = int(found.group(1)), int(found.group(2))
    if one > 12 >= two or one == two:
        day, month = one, two
    elif two > 12 >= one:
        day, month = two, one
    else:
        return None
    return _ISO_DATE.fullmatch(f"{found.group(3)}-{month:02d}-{day:02d}")


# Words after which "first" is the ordinal ("the first", "its first", "every first").
_BEFORE_AN_ORDINAL = frozenset({"the", "a", "an", "every", "each", "this", "next"}) | _POSSESSIVES


# Words that make "first" a place in a sequence ("the cache is warmed first, then ...").
_SEQUENCE_WORDS = frozenset({"then", "last", "next", "second", "finally", "after", "afterwards"})


def _adverb(tokens: list[_Token], matches: list[re.Match[str]], index: int, pause: bool) -> bool:
    """The word at `index` ("first") closes a clause (a mark, the end or "and" after it),
    follows no determiner or possessive, and the text tells no sequence (_SEQUENCE_WORDS):
    "ask the user first" says when, "first, then" which place."""
    following = matches[index + 1].group().lower() if index + 1 < len(matches) else None
    before = tokens[-1].lower if tokens else ""
    if any(match.group().lower() in _SEQUENCE_WORDS for match in matches):
        return False
    closes = pause or following in (None, "and")
    return closes and before not in _BEFORE_AN_ORDINAL and not before.endswith(("'s", "s'"))


# A compound of words of letters ("squash-merge", "force-pushing").
_COMPOUND = re.compile(r"[a-z]+(?:-[a-z]+)+")


# A weekday's short name is the weekday ("Mon", "Thurs", "fri"): in capitals any of them but
# "Sun" (a name as often, but before a time: _SUNDAY); in lower case only those no
# English or French word is ("mon", "sat", "wed" are words).
_DAY_ABBREVIATIONS = {
    short: day
    for day, shorts in (
        ("monday", "mon"),
        ("tuesday", "tue tues"),
        ("wednesday", "wed"),
        ("thursday", "thu thur thurs"),
        ("friday", "fri"),
        ("saturday", "sat"),
    )
    for short in shorts.split()
}
_LOWER_CASE_DAYS = frozenset({"tue", "tues", "thu", "thur", "thurs", "fri"})


def _day_abbreviation(raw: str) -> str | None:
    """The weekday a short name written so stands for (see _DAY_ABBREVIATIONS), else None."""
    lower = raw.lower().rstrip(".")
    if lower not in _DAY_ABBREVIATIONS or not (raw[:1].isupper() or lower in _LOWER_CASE_DAYS):
        return None
    return _DAY_ABBREVIATIONS[lower]


def _day_list(raw: str) -> list[tuple[str, str]] | None:
    """The weekdays of "Tue/Wed" or "Mon-Thu" (each part a short name _day_abbreviation
    reads), as (part, weekday); else None."""
    parts = re.split(r"[/-]", raw)
    if len(parts) < 2:
        return None
    days = [_day_abbreviation(part) for part in parts]
    if any(day is None for day in days):
        return None
    return [(part, day) for part, day in zip(parts, days, strict=True) if day is not None]


# A runtime, database or OS written with its version on it ("pg15", "node@20.11",
# "python3.12", "java17"), read as the name and the version ("PG 15", "Node 20.11").
_VERSIONED_NAMES = """
    python py node nodejs java jdk openjdk golang go ruby php perl postgres postgresql pg
    mysql mariadb redis mongo mongodb kotlin scala swift dotnet gcc clang llvm ubuntu debian
    alpine centos rhel fedora ios android macos django rails react vue angular spring laravel
    elixir erlang dart flutter terraform helm"""
_VERSIONED_NAME = re.compile(
    rf"({'|'.join(sorted(_VERSIONED_NAMES.split(), key=len, reverse=True))})@?(\d+(?:\.\d+)*)"
)


# Ways to say "dislikes" with a negation ("doesn't like", "isn't a fan of", "can't stand"),
# read as it: "The user dislikes long meetings" / "... isn't a fan of lengthy meetings" is
# one fact, "doesn't like" / "likes" the opposite as "dislikes" / "likes" is.
_DISLIKES = re.compile(
    r"\b(?:(?:does|do|did)(?:\s+not|n['\u2019]t)\s+(?:like|enjoy)"
    r"|(?:is|are|am|'s|'re|'m)(?:\s+not|n['\u2019]t)\s+(?:really\s+)?(?:a\s+|much\s+of\s+a\s+)?"
    r"(?:big\s+|huge\s+)?fans?\s+of"
    r"|(?:can['\u2019]t|cannot|can\s+not)\s+stand)\b",
    re.IGNORECASE,
)


# A host and its port written together ("kafka-01:9092", "localhost:5432"): a name of two
# letters or more, then a port.
_HOST_PORT = re.compile(r"((?=[\w.-]*[A-Za-z][\w.-]*[A-Za-z])[A-Za-z][\w.-]*\w):(\d{2,5})")


# A bare hour that opens a range of times whose end says am or pm ("10-11 PM", "9 to 10:30
# am"): the hour takes the end's half of the day (_hour_range).
_HOUR_RANGE = re.compile(
    r"(?<![\w.:])(\d{1,2})(\s*(?:[-\u2013\u2014]|to|until|till)\s*)(\d{1,2})(:\d{2})?"
    r"(\s*)([ap]\.?m\.?)(?![a-z])",
    re.IGNORECASE,
)


def _hour_range(match: re.Match[str]) -> str:
    """ "10-11 PM" as "10PM - 11 PM", "11 to 1 pm" as "11am to 1 pm" (the morning when the hour
    would come after the end)."""
    start, joiner, end, minutes, space, meridiem = match.groups()
    if not (1 <= int(start) <= 12 and 1 <= int(end) <= 12):
        return match.group()
    own = meridiem
    if int(start) % 12 > int(end) % 12:
        own = ("p" if meridiem[0].lower() == "a" else "a") + meridiem[1:]
    joiner = " - " if joiner == "-" else joiner  # (not one token: "10pm-11pm")
    return f"{start}{own}{joiner}{end}{minutes or ''}{space}{meridiem}"


# "Sun" in capitals right before a time or a number is Sunday ("Sun 10-11 PM", "Sun
# 02:00"); alone it is a name as often (_DAY_ABBREVIATIONS).
_SUNDAY = re.compile(r"\bSun\.?(?=\s+\d)")


# A bound said with a negator ("*no more than* 3 retries", "*not less than* 2 weeks", "*no
# longer than* 72 characters", "*no later than* 17:00"), read as the bound it is: the negator
# negates nothing and "no longer" says no change.
_NEGATED_BOUND = re.compile(
    r"\b(?:no|not)\s+(?:(more|longer|later|larger|bigger|higher|greater|heavier)"
    r"|(?:less|fewer|shorter|earlier|sooner|smaller|lower|lighter))\s+than\b",
    re.IGNORECASE,
)


def _negated_bound(found: re.Match[str]) -> str:
    return "at most" if found.group(1) else "at least"


# A bound written with a sign or after its number, as "at least" / "at most" says it before
# ("Python *>=* 3.11", "*≥* 3.11", "Node 20*+*", "3.11 *or newer*", "16 *and later*", "5 *or
# more*"; "*<=* 2", "14 *or older*"): one bound written several ways.
_BOUND_UNIT = r"(?:\s?(?:%|[A-Za-z]{1,5}\b))?"
_AT_LEAST = re.compile(
    r"(?:>=|\u2265|=>)\s*(\d+(?:\.\d+)*)"
    rf"|(?<![\w.])(\d+(?:\.\d+)*{_BOUND_UNIT})(?:\+(?![\w+])|\s+(?:or|and)\s+"
    r"(?:newer|later|above|higher|greater|more|up)\b)",
    re.IGNORECASE,
)
_AT_MOST = re.compile(
    r"(?:<=|\u2264|=<)\s*(\d+(?:\.\d+)*)"
    rf"|(?<![\w.])(\d+(?:\.\d+)*{_BOUND_UNIT})\s+(?:or|and)\s+"
    r"(?:older|earlier|below|lower|less|fewer)\b",
    re.IGNORECASE,
)


# ... and "at or above N" / "at or below N" ("keep it *at or below* 150 rps")
_AT_OR = re.compile(r"\bat\s+or\s+(?:(above|over)|below|under)(?=\s+\d)", re.IGNORECASE)


def _bounds_written_before(text: str) -> str:
    """The text with each bound written with a sign or after its number written "at least N"
    or "at most N" (_AT_LEAST, _AT_MOST, _AT_OR)."""
    text = _AT_OR.sub(lambda m: "at least" if m.group(1) else "at most", text)
    text = _AT_LEAST.sub(lambda m: f"at least {m.group(1) or m.group(2)}", text)
    return _AT_MOST.sub(lambda m: f"at most {m.group(1) or m.group(2)}", text)


# Where a script written without spaces (Chinese, Japanese) meets digits or Latin letters:
# a word boundary there, so that "1行目は50文字以内" holds the numbers 1 and 50, not one
# value of fourteen characters.
_UNSPACED_EDGE = re.compile(
    r"(?<=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff])(?=[0-9A-Za-z])"
    r"|(?<=[0-9A-Za-z])(?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff])"
)


def _tokens(text: str) -> list[_Token]:
    text = _UNSPACED_EDGE.sub(" ", text)
    text = _DISLIKES.sub("dislikes", text)
    text = _bounds_written_before(_NEGATED_BOUND.sub(_negated_bound, text))
    text = _SUNDAY.sub("Sunday", _HOUR_RANGE.sub(_hour_range, text))
    text = _DECIMAL_COMMA_BEFORE_TIME.sub(r"\1.\2", _DECIMAL_COMMA.sub(r"\1.\2", text))
    text = _THOUSANDS.sub("", text)
    text = _CURRENCY_MILLIONS.sub(r"\1M", _DOLLAR_COUNTRY.sub("", text))
    text = _DEGREES.sub(lambda m: f"{m.group(1)} deg{m.group(2)[0].upper()}", text)
    text = _DUTCH_OCLOCK.sub(_dutch_oclock, _CUBIC_METRES.sub("m³", text))
    text = _SLASH_RATE.sub(lambda m: " per " + _SLASH_UNITS.get(m.group(1), m.group(1)), text)
    text = _CUBIC_AFTER_AMOUNT.sub(r"\1m³", text)
    text = _LITRE_SYMBOL.sub(r"\1\2l", _WITHOUT.sub("without", text))
    tokens: list[_Token] = []
    matches = list(_TOKEN.finditer(text))
    mixed_case = any(ch.islower() for ch in text)  # (not all in capitals: _capital_name)
    for index, match in enumerate(matches):
        between = text[matches[index - 1].end() if index else 0 : match.start()]
        after = text[match.end() : matches[index + 1].start() if index + 1 < len(matches) else None]
        first = not tokens or any(mark in between for mark in _SENTENCE_END)
        # (a hyphen between spaces is a dash: "No emojis in comments - the user hates them")
        pause = any(mark in after for mark in _PAUSES) or _SPACED_HYPHEN.search(after) is not None
        raw = match.group()
        lower = raw.lower().replace("\u2019", "'")
        head, dash, rest = raw.partition("-")
        iso = _year_first(raw)
        if iso and 1 <= int(iso.group(2)) <= 12 and 1 <= int(iso.group(3)) <= 31:
            # "2025-03-14" as "March 14 2025", as the date is also written
            month = _MONTHS.split()[int(iso.group(2)) - 1]
            tokens.append(_Token(month.title(), month, first))
            tokens.append(_Token(iso.group(3), str(int(iso.group(3))), False))
            tokens.append(_Token(iso.group(1), iso.group(1), False, pause))
        elif dash and rest and (head.replace(".", "", 1).isdigit() or head.lower() in NUMBERS):
            # "two-bedroom" is "two" and "bedroom"; "15-minute" is "15" and "minute"
            tokens.append(_Token(head, _number(head.lower()) or head, first))
            tokens.append(_Token(rest, _stem(rest.lower()), False, pause))
        elif lower in _APOSTROPHE_LESS:
            # "im" is "i'm" (chat leaves the apostrophe out)
            tokens.append(_Token(raw, _APOSTROPHE_LESS[lower], first, pause))
        elif lower in _LIKE_NOT or lower.endswith("n't"):
            tokens.append(_Token(raw, "not", first, pause))  # "don't", "never": see _LIKE_NOT
        elif lower == "first" and _adverb(tokens, matches, index, pause):
            # an adverb that closes a clause ("ask the user *first*", "*First*, run the
            # linter"), not the ordinal ("the first Monday", "stop on first failure",
            # "instead of the first.") nor a place in a sequence ("first, then ...")
            tokens.append(_Token(raw, lower, first, pause))
        elif (days := _day_list(raw)) is not None:
            # "Tue/Wed", "Mon-Thu": the weekdays, as "Tuesdays and Wednesdays" (and an en dash)
            for k, (part, weekday) in enumerate(days):
                tokens.append(_Token(part, weekday, first and not k, pause and k == len(days) - 1))
        elif (versioned := _VERSIONED_NAME.fullmatch(lower)) is not None:
            # "pg15", "node@20.11", "python3.12": the name and its version, as "PG 15"
            name, version = versioned.group(1), versioned.group(2)
            if name in ("py", "python") and re.fullmatch(r"[23]\d{1,2}", version):
                version = f"{version[0]}.{version[1:]}"  # tox's "py311" is Python 3.11
            tokens.append(_Token(raw[: len(name)], _stem(name), first))
            tokens.append(_Token(version, _number(version) or version, False, pause))
        elif _COMPOUND.fullmatch(lower):
            # a compound of words, each part stemmed ("squash-merged" / "squash-merge")
            norm = "-".join(_stem(part) for part in lower.split("-"))
            tokens.append(_Token(raw, norm, first, pause))
        elif (day := _day_abbreviation(raw)) is not None:
            tokens.append(_Token(raw, day, first, pause))
        elif (address := _HOST_PORT.fullmatch(raw)) is not None:
            # "kafka-01:9092" is the host and the port, as "host kafka-01, port 9092"
            host = _tokens(address.group(1))
            tokens += [replace(host[0], first=first), *host[1:]]
            tokens.append(_Token(address.group(2), address.group(2), False, pause))
        elif mixed_case and _capital_name(raw, lower, first):
            # a name in capitals that is also a function word ("*HERE* for geocoding", "the
            # *IT* team"): a word of its own
            tokens.append(_Token(raw, lower + _NAMED, first, pause))
        else:
            number = _number(lower)
            norm = number if number is not None else _stem(lower)
            tokens.append(_Token(raw, norm, first, pause))
    tokens = _with_magnitudes(_with_number_words(_with_phrases(tokens)))
    return _with_measures(_with_sizes(_with_durations(_with_seconds(_with_times(tokens)))))


# Function words written in capitals for emphasis ("do *NOT* push", "*NEVER*", "*ONLY* on
# Fridays"), never a name.
_CAPITAL_EMPHASIS_WORDS = """
    not never always must only all any no do does don't should will and or but the a an is
    are be now before after off on up out in at to of for with without every each from into
    onto by over under than then very so too also"""
_CAPITAL_EMPHASIS = frozenset(_CAPITAL_EMPHASIS_WORDS.split())


def _capital_name(raw: str, lower: str, first: bool) -> bool:
    """A function word in capitals inside a sentence (of a text not all in capitals): a name
    ("HERE", "IT", "US", "WHO"), not emphasis (_CAPITAL_EMPHASIS)."""
    if first or len(raw) < 2 or not raw.isupper() or lower in _CAPITAL_EMPHASIS:
        return False
    return lower in STOPWORDS


# The mark on such a name's norm, which keeps it out of STOPWORDS ("HERE": "here_").
_NAMED = "_"


def _named_in_capitals(token: _Token) -> bool:
    """The token is a name in capitals that is also a function word (_capital_name)."""
    return token.norm == token.lower + _NAMED


# A number's order of magnitude, written after it ("40 million") or on it ("40M", "4.2k",
# "$1.5bn"): the value is the whole number ("40000000"), so "4.2k tests" and "4,200 tests"
# state one value. A lower-case "m" is a million only after a currency sign (else metres or
# minutes), and "B" is never a billion (bytes).
_MAGNITUDE_WORDS = {"thousand": 1000, "million": 10**6, "billion": 10**9}
_MAGNITUDE_SUFFIXES = {"k": 1000, "m": 10**6, "bn": 10**9}
_COMPACT_MAGNITUDE = re.compile(r"(\d+(?:\.\d+)?)(k|K|M|(?i:bn))")


def _whole(amount: str, magnitude: int) -> str:
    """The number `amount` times `magnitude`, written out ("4.2", 1000 -> "4200"), exactly."""
    with localcontext() as exact:
        exact.prec = len(amount) + 12
        return f"{(Decimal(amount) * magnitude).normalize():f}"


# Two words written as one word's long form: "pull request" is "PR" ("pull requests" "PRs").
_PHRASES = {("pull", "request"): "pr", ("pull", "requests"): "prs"}
_PHRASE_STARTS = frozenset(first for first, _ in _PHRASES)


def _with_phrases(tokens: list[_Token]) -> list[_Token]:
    """Each pair of words of _PHRASES as one token whose norm is the short form."""
    if not any(token.lower in _PHRASE_STARTS for token in tokens):
        return tokens
    result: list[_Token] = []
    for token in tokens:
        previous = result[-1] if result else None
        norm = None if previous is None else _PHRASES.get((previous.lower, token.lower))
        if previous is not None and norm is not None and not previous.pause:
            merged = f"{previous.text} {token.text}"
            result[-1] = _Token(merged, norm, previous.first, token.pause)
            continue
        result.append(token)
    return result


# A number written in several words is one value: "four hundred and twelve" is 412, "eight
# thousand and eighty" 8080,
# "sixty-four" and "twenty five" 64 and 25, "twelve hundred" 1200, "four and a half" 4.5, and
# before a unit of time "half an hour" 0.5 hours and "a quarter of an hour" 0.25.
_UNIT_WORDS = {word: n for n, word in enumerate(_NUMBER_WORDS.split()[:10])}
_TEEN_WORDS = {word: n + 10 for n, word in enumerate(_NUMBER_WORDS.split()[10:20])}
_TENS_WORDS = {word: int(NUMBERS[word]) for word in ["twenty", *_TENS.split()]}
_FRACTION_UNITS = frozenset({"second", "minute", "hour", "day", "week", "month", "year"})
_PART_OF_A_UNIT = {"quarter-hour": "0.25", "half-hour": "0.5"}
# a part of a unit of time named by its denominator ("a *third* of a minute", "two *fifths*
# of an hour")
_DENOMINATORS = {
    word: n
    for n, singular in ((3, "third"), (5, "fifth"), (6, "sixth"), (10, "tenth"), (20, "twentieth"))
    for word in (singular, singular + "s")
}
# the words a number written in words is made of (its text, for _cardinal and _is_value)
_NUMBER_PHRASE_WORDS = frozenset(
    [*_UNIT_WORDS, *_TEEN_WORDS, *_TENS_WORDS, "hundred", "and", "a", "an", "half", "quarter"]
) | {"of", "quarters", "thousand", "dozen", *_DENOMINATORS}


def _number_phrase(text: str) -> bool:
    """Whether the text is a number written in several words (see _with_number_words)."""
    words = text.lower().replace("-", " ").split()
    head = words[1:] if words[:1] and words[0].isdigit() else words  # "2 and a half"
    return len(words) > 1 and all(word in _NUMBER_PHRASE_WORDS for word in head)


def _below_hundred(tokens: list[_Token], i: int) -> tuple[int, int] | None:
    """A number under a hundred written in words at tokens[i] ("twelve", "sixty four"), and
    how many tokens it takes."""
    word = tokens[i].lower
    if word in _UNIT_WORDS or word in _TEEN_WORDS:
        return (_UNIT_WORDS | _TEEN_WORDS)[word], 1
    if word not in _TENS_WORDS:
        return None
    after = tokens[i + 1].lower if i + 1 < len(tokens) else ""
    if not tokens[i].pause and after in _UNIT_WORDS and _UNIT_WORDS[after] > 0:
        return _TENS_WORDS[word] + _UNIT_WORDS[after], 2
    return _TENS_WORDS[word], 1


def _below_thousand(tokens: list[_Token], i: int) -> tuple[Decimal, int] | None:
    """A number under a thousand written in words at tokens[i] ("twelve", "four hundred and
    twelve", "twelve hundred"), and how many tokens it takes."""
    found = _below_hundred(tokens, i)
    if found is None:
        return None
    return _times(tokens, i, (Decimal(found[0]), found[1]), "hundred", _below_hundred)


_SCALES = {"hundred": 100, "thousand": 1000}  # the words _times multiplies by


def _times(
    tokens: list[_Token],
    i: int,
    found: tuple[Decimal, int],
    word: str,
    rest: Callable[[list[_Token], int], tuple[int | Decimal, int] | None],
) -> tuple[Decimal, int]:
    """The number `found` at tokens[i] times `word` ("hundred", "thousand") when that word
    follows it, plus the smaller number `rest` reads after it ("four hundred *and twelve*",
    "eight thousand *and eighty*"), and how many tokens it all takes."""
    factor = _SCALES[word]
    value, size = found
    end = i + size
    if end >= len(tokens) or tokens[end].lower != word or tokens[end - 1].pause:
        return found
    if not 0 < value < factor:
        return found
    value, size = value * factor, size + 1
    after = i + size + (1 if i + size < len(tokens) and tokens[i + size].lower == "and" else 0)
    more = rest(tokens, after) if after < len(tokens) else None
    if more is not None and not tokens[i + size - 1].pause:
        value, size = value + more[0], after - i + more[1]
    return value, size


def _number_in_words(tokens: list[_Token], i: int) -> tuple[Decimal, int] | None:
    """The number written in words from tokens[i], and how many tokens it takes, when it is
    more than one word (one word is read as it is); a whole number in digits "and a half"
    too ("2 and a half hours" is 2.5)."""
    if tokens[i].text.isdigit() and not tokens[i].pause:
        if [t.lower for t in tokens[i + 1 : i + 4]] == ["and", "a", "half"]:
            return Decimal(tokens[i].text) + Decimal("0.5"), 4
        return None
    if tokens[i].lower not in _NUMBER_PHRASE_WORDS:
        return None
    lower = [t.lower for t in tokens[i : i + 6]]
    unit = lower[2] if len(lower) > 2 else ""
    if lower[:2] in (["half", "an"], ["half", "a"]) and unit.rstrip("s") in _FRACTION_UNITS:
        return Decimal("0.5"), 2  # "half an hour"
    if lower[:3] == ["half", "a", "dozen"]:
        return Decimal(6), 3  # "half a dozen" is 6 (not a dozen, 12)
    quarter = lower[:3] in (["quarter", "of", "an"], ["quarter", "of", "a"])
    if quarter and len(lower) > 3 and lower[3].rstrip("s") in _FRACTION_UNITS:
        return Decimal("0.25"), 3  # "a quarter of an hour"
    quarters = lower[:4] in (["three", "quarters", "of", "an"], ["three", "quarters", "of", "a"])
    if quarters and len(lower) > 4 and lower[4].rstrip("s") in _FRACTION_UNITS:
        return Decimal("0.75"), 4  # "three quarters of an hour"
    if (part := _part_of_a_unit(lower)) is not None:
        return part  # "a third of a minute", "two fifths of an hour"
    found = _below_thousand(tokens, i)
    if found is None:
        return None
    end = i + found[1]
    if end < len(tokens) and tokens[end].lower == "dozen" and not tokens[end - 1].pause:
        return found[0] * 12, found[1] + 1  # "two dozen" is 24 (not 2 and 12)
    # "eight thousand and eighty", "twelve thousand five hundred"
    value, size = _times(tokens, i, found, "thousand", _below_thousand)
    rest = [t.lower for t in tokens[i + size : i + size + 4]]
    if rest[:3] == ["and", "a", "half"] and not tokens[i + size - 1].pause:
        value, size = value + Decimal("0.5"), size + 3  # "four and a half hours"
    return (value, size) if size > 1 else None


def _part_of_a_unit(lower: list[str]) -> tuple[Decimal, int] | None:
    """A part of a unit of time named by its denominator at lower[0] ("*third* of a minute"),
    or by a count and its denominator ("*two fifths* of an hour"), and how many words it
    takes before the unit."""
    count = _UNIT_WORDS.get(lower[0]) if lower else None
    start = 0 if count is None else 1
    if len(lower) < start + 4 or lower[start] not in _DENOMINATORS:
        return None
    if lower[start + 1 : start + 3] not in (["of", "a"], ["of", "an"]):
        return None
    if lower[start + 3].rstrip("s") not in _FRACTION_UNITS or count == 0:
        return None
    return Decimal(count or 1) / _DENOMINATORS[lower[start]], start + 3


def _with_number_words(tokens: list[_Token]) -> list[_Token]:
    """Each number written in several words as one token whose norm is the number (see
    _NUMBER_PHRASE_WORDS)."""
    result: list[_Token] = []
    i = 0
    while i < len(tokens):
        found = _number_in_words(tokens, i)
        if found is None:
            result.append(tokens[i])
            i += 1
            continue
        value, size = found
        taken = tokens[i : i + size]
        text = " ".join(t.text for t in taken)
        result.append(_Token(text, f"{value.normalize():f}", taken[0].first, taken[-1].pause))
        i += size
    return result


def _with_magnitudes(tokens: list[_Token]) -> list[_Token]:
    """A number with its order of magnitude as one value (see _MAGNITUDE_WORDS)."""

    def on_it(token: _Token) -> str | None:
        compact = _COMPACT_MAGNITUDE.fullmatch(token.text)
        if compact is None:
            return None
        return _whole(compact.group(1), _MAGNITUDE_SUFFIXES[compact.group(2).lower()])

    def after_it(token: _Token, word: _Token) -> str | None:
        if word.lower not in _MAGNITUDE_WORDS or token.pause or not _CARDINAL.fullmatch(token.norm):
            return None
        return _whole(token.norm, _MAGNITUDE_WORDS[word.lower])

    return _with_units(tokens, on_it, after_it)


def _with_units(
    tokens: list[_Token],
    on_it: Callable[[_Token], str | None],
    after_it: Callable[[_Token, _Token], str | None],
) -> list[_Token]:
    """Each number with its unit as one token whose norm is the value: the unit written on
    the number (`on_it`: the token's norm, or None) or as the next word (`after_it`)."""
    result: list[_Token] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        norm = on_it(token)
        if norm is not None:
            result.append(_Token(token.text, norm, token.first, token.pause))
            i += 1
            continue
        unit = tokens[i + 1] if i + 1 < len(tokens) else None
        norm = None if unit is None else after_it(token, unit)
        if unit is not None and norm is not None:
            result.append(_Token(f"{token.text} {unit.text}", norm, token.first, unit.pause))
            i += 2
            continue
        result.append(token)
        i += 1
    return result


# Units of time, in seconds: a duration is compared in seconds ("30 minutes" = "1800
# seconds" = "30min"; "half an hour" is not read).
_DURATION_UNITS = {
    "ms": 0.001,
    "s": 1,  # "after 30 s", in lower case
    "millisecond": 0.001,
    "milliseconds": 0.001,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "day": 86400,
    "days": 86400,
    "week": 604800,
    "weeks": 604800,
    "month": 2628000,  # a twelfth of a year: "12 months" = "a year"
    "months": 2628000,
    "year": 31536000,
    "years": 31536000,
    "yr": 31536000,
    "yrs": 31536000,
}
# The same units in the other languages memories are written in, read only after a number
# ("600 segundos" / "10 minutos", "720 heures" / "30 jours", "anderthalb Minuten" is not read):
# French, Spanish, Portuguese, Italian, German (a noun, in its capital: "3 Tage"), Dutch,
# Swedish, Norwegian, Danish, Polish and Turkish. Kept apart from _DURATION_UNITS, whose words
# are also read alone ("for *an* hour" is no French year).
_FOREIGN_DURATION_UNITS = {
    word: _DURATION_UNITS[unit]
    for unit, words in (
        (
            "second",
            "seconde secondes segundo segundos secondo secondi seconden sekund sekunder"
            " sekundy sekundę saniye",
        ),
        ("minute", "minuto minutos minuti minuut minuten minut minuter minutter minuty dakika"),
        ("hour", "heure heures hora horas ora ore uur timme timmar godzina godziny godzin saat"),
        (
            "day",
            "jour jours día días dia dias giorno giorni dag dagen dagar dager dage dni dzień gün",
        ),
        (
            "week",
            "semaine semaines semana semanas settimana settimane weken vecka veckor uke"
            " uker uge uger tydzień tygodnie tygodni hafta",
        ),
        (
            "month",
            "mois mes meses mese mesi maand maanden månad månader måned måneder"
            " miesiąc miesiące miesięcy",
        ),
        ("year", "an ans année années año años ano anos anno anni jaar jaren år y\u0131l"),
    )
    for word in words.split()
}
# German nouns, read only in their capital ("3 *Tage*"; "a v3 tag" is no day)
_GERMAN_DURATION_UNITS = {
    word: _DURATION_UNITS[unit]
    for unit, words in (
        ("second", "sekunde sekunden"),
        ("minute", "minute minuten"),
        ("hour", "stunde stunden"),
        ("day", "tag tage tagen"),
        ("week", "woche wochen"),
        ("month", "monat monate monaten"),
        ("year", "jahr jahre jahren"),
    )
    for word in words.split()
}
# a decimal comma before a unit of time in any of these languages ("0,34 seconde", "1,5
# Stunden"; _DECIMAL_COMMA reads it before a short unit)
_DECIMAL_COMMA_BEFORE_TIME = re.compile(
    r"(?<![\d.,])(\d+),(\d{1,2})(?![\d,])(?=\s?(?:"
    + "|".join(sorted({*_DURATION_UNITS, *_FOREIGN_DURATION_UNITS, *_GERMAN_DURATION_UNITS}))
    + r")\b)",
    re.IGNORECASE,
)
# "500ms", "30min", "24h", "14d", "2w", in lower case ("2d" and "3d" are not read: a 3d
# printer; "30s" is read in context, _with_seconds)
_COMPACT_DURATION = re.compile(
    r"(\d+(?:\.\d+)?)(ms|sec|secs|min|mins|h|hr|hrs)|(?![23]d)(\d+)(d|w|wk|wks)"
)
# units that are a duration only in lower case ("4 H" is not four hours)
_LOWER_CASE_UNITS = frozenset({"ms", "s", "h", "hr", "hrs", "min", "mins", "sec", "secs"})
_CARDINAL = re.compile(r"\d+(?:\.\d+)?")
_CARDINAL_WORDS = frozenset(_NUMBER_WORDS.split()) | frozenset(_TENS.split()) | {"hundred"}

# The norm of an amount with its unit: a duration in seconds ("1800s") or a size in bytes
# ("4294967296bytes")
_AMOUNT_NORM = re.compile(r"\d+(?:\.\d+)?(?:s|bytes)")


def _time_unit(unit: str) -> Decimal | None:
    """The seconds of a unit of time in any of the languages read (_DURATION_UNITS,
    _FOREIGN_DURATION_UNITS, _GERMAN_DURATION_UNITS), or None."""
    size = (
        _DURATION_UNITS.get(unit)
        or _FOREIGN_DURATION_UNITS.get(unit)
        or _GERMAN_DURATION_UNITS.get(unit)
    )
    return None if size is None else Decimal(str(size))


def _in_seconds(amount: str | Decimal, unit: str) -> Decimal:
    """The seconds of an amount of a unit of time (_time_unit), a third of a unit to the
    microsecond ("a third of a minute" is 20)."""
    size = _time_unit(unit)
    if size is None:  # (callers read the unit from these tables)
        raise KeyError(unit)
    value = Decimal(amount) * size
    if value.as_tuple().exponent < -6:  # type: ignore[operator]
        value = value.quantize(Decimal("0.000001"))
    return value


def _seconds(amount: str | Decimal, unit: str) -> str:
    """The duration's norm: its exact seconds, written out ("1800s", "0.0015s", _in_seconds)."""
    return f"{_in_seconds(amount, unit).normalize():f}s"


# "30s" read as seconds ("timeout: 30s"), but not after a determiner or a possessive ("the
# 90s", "in her 30s"), nor after a word in mixed case ("iPhone 4s"), nor as a decade ("1990s")
_SECONDS_ON_IT = re.compile(r"(\d{1,3}(?:\.\d+)?)s")
_NOT_SECONDS_AFTER = frozenset({"the", "early", "late", "mid"}) | _POSSESSIVES


def _with_seconds(tokens: list[_Token]) -> list[_Token]:
    """A number with "s" written on it as a duration in seconds, where nothing says it is a
    decade, an age or a model (_SECONDS_ON_IT)."""
    result: list[_Token] = []
    for i, token in enumerate(tokens):
        match = _SECONDS_ON_IT.fullmatch(token.text)
        before = tokens[i - 1].text if i else ""
        mixed_case = before[1:] != before[1:].lower() and before != before.upper()
        if match and before.lower() not in _NOT_SECONDS_AFTER and not mixed_case:
            token = _Token(token.text, _seconds(match.group(1), "sec"), token.first, token.pause)
        result.append(token)
    return result


# Units of size, in bytes, as people convert them: in binary multiples up to gigabytes ("4 GB"
# = "4096 MB"), a terabyte a thousand gigabytes ("0.5 TB" = "500 GB"); "Mb" and "Gb" are bits.
_SIZE_UNITS = {
    unit: size
    for names, size in (
        ("kb kib kilobyte kilobytes", 1024),
        ("mb mib megabyte megabytes meg megs", 1024**2),
        ("gb gib gigabyte gigabytes gig gigs", 1024**3),
        ("tb terabyte terabytes", 1000 * 1024**3),
        ("tib", 1024**4),
    )
    for unit in names.split()
}
_COMPACT_SIZE = re.compile(r"(\d+(?:\.\d+)?)((?i:[kmgt]i?b))")


def _bits(unit: str) -> bool:
    """A unit of bits, not bytes: "Mb", "Gb"."""
    return len(unit) == 2 and unit[0].isupper() and unit[1] == "b"


def _bytes(amount: str, unit: str) -> str | None:
    """A size's norm: its exact bytes ("4294967296bytes"); None for bits ("100Mb")."""
    if _bits(unit):
        return None
    return f"{(Decimal(amount) * _SIZE_UNITS[unit.lower()]).normalize():f}bytes"


def _cardinal(token: _Token) -> bool:
    """A cardinal number in digits or words, not an ordinal ("the *first* day", "the 3rd
    day")."""
    written = (
        _CARDINAL.fullmatch(token.text)
        or token.lower in _CARDINAL_WORDS
        or _number_phrase(token.text)
    )
    return bool(written and _CARDINAL.fullmatch(token.norm))


def _with_sizes(tokens: list[_Token]) -> list[_Token]:
    """A number with a unit of size as one value, in bytes ("4 GB", "4GB", "4096 MB" and "four
    gigabytes" read alike)."""

    def on_it(token: _Token) -> str | None:
        compact = _COMPACT_SIZE.fullmatch(token.text)
        return None if compact is None else _bytes(compact.group(1), compact.group(2))

    def after_it(token: _Token, unit: _Token) -> str | None:
        if _cardinal(token) and unit.lower in _SIZE_UNITS:
            return _bytes(token.norm, unit.text)
        return None

    return _with_units(tokens, on_it, after_it)


# A temperature's unit, written with the degree sign or in words ("4 °C", "39.2°F", "four
# degrees Celsius"), read as one word ("degC", "degF") before the text is split into words.
_DEGREES = re.compile(
    r"(\d(?:[\d.]*\d)?|\b[a-z]+)\s*(?:°\s*|\s+degrees?\s+)(C|F|[Cc]elsius|[Ff]ahrenheit)\b"
)
# Units of mass in grams and of length in metres, as people convert them ("12 tonnes" =
# "12,000 kg", "5 km" = "5,000 meters"; not a bare "m", also minutes or millions; no pounds
# or miles, whose conversions are rounded).
_MEASURE_UNITS = {
    unit: (size, kind)
    for names, size, kind in (
        ("mg milligram milligrams", Decimal("0.001"), "g"),
        ("g gram grams", Decimal(1), "g"),
        ("kg kgs kilo kilos kilogram kilograms", Decimal(1000), "g"),
        ("t tonne tonnes", Decimal(1000000), "g"),
        ("mm millimeter millimeters millimetre millimetres", Decimal("0.001"), "m"),
        ("cm centimeter centimeters centimetre centimetres", Decimal("0.01"), "m"),
        ("m meter meters metre metres", Decimal(1), "m"),
        ("km kms kilometer kilometers kilometre kilometres", Decimal(1000), "m"),
        ("ml milliliter milliliters millilitre millilitres", Decimal("0.001"), "l"),
        ("l liter liters litre litres", Decimal(1), "l"),
        ("m³ m3", Decimal(1000), "l"),  # a cubic metre ("28 cubic metres" / "28,000 litres")
    )
    for unit in names.split()
}
# A percentile in words ("the 99th percentile", "99th-percentile"), read as its short form
# ("p99").
_PERCENTILE = re.compile(r"(\d{1,2})(?:st|nd|rd|th)(?:-percentile)?", re.IGNORECASE)
# Units of power, energy, frequency, voltage and conductivity with a prefix, in their own
# capitals ("4.2 MW" / "4,200 kW", "20 kHz" / "20,000 Hz", "0.17 GHz" / "170 MHz", "2.5 mS/cm"
# / "2500 µS/cm"), as the base unit ("w", "hz", ...)
_PREFIXES = {"": Decimal(1), "k": Decimal(1000), "M": Decimal(10**6), "G": Decimal(10**9)}
_PREFIXES |= {"m": Decimal("0.001"), "µ": Decimal("0.000001"), "u": Decimal("0.000001")}
_SI_MEASURES = {
    prefix + base: (size, base.lower())
    for base, prefixes in (("W", "kMGm"), ("Wh", "kMG"), ("Hz", "kMG"), ("V", "km"))
    for prefix in ("", *prefixes)
    for size in [_PREFIXES[prefix]]
} | {prefix + "S/cm": (_PREFIXES[prefix], "s/cm") for prefix in ("m", "µ", "u")}
# their names, in lower case ("a 48-volt battery", "20 kilohertz")
_SI_NAMES = {
    name: symbol
    for symbol, names in (
        ("W", "watt watts"),
        ("kW", "kilowatt kilowatts"),
        ("MW", "megawatt megawatts"),
        ("Hz", "hertz"),
        ("kHz", "kilohertz"),
        ("MHz", "megahertz"),
        ("GHz", "gigahertz"),
        ("V", "volt volts"),
        ("mV", "millivolt millivolts"),
        ("kV", "kilovolt kilovolts"),
    )
    for name in names.split()
}
_COMPACT_SI = re.compile(r"(\d+(?:\.\d+)?)(" + "|".join(sorted(_SI_MEASURES, key=len)[::-1]) + ")")
_MEASURE_NORM = re.compile(r"\d+(?:\.\d+)?(?:g|m|l|w|wh|hz|v|s/cm|°c)")
_COMPACT_MEASURE = re.compile(r"(\d+(?:\.\d+)?)(mg|kg|g|mm|cm|km|ml)")


def measured(norm: str) -> bool:
    """The norm is a mass, a length, a volume, a temperature or a power with its unit
    (_with_measures)."""
    return _MEASURE_NORM.fullmatch(norm) is not None


def _in_base_units(amount: str, unit: str) -> str:
    """A mass's norm in grams ("12000000g"), a length's in metres ("5000m"), a volume's in
    litres ("2l")."""
    size, kind = _MEASURE_UNITS[unit]
    return f"{(Decimal(amount) * size).normalize():f}{kind}"


def _in_si_base(amount: str, unit: str) -> str:
    """A power's norm in watts ("4200000w"), a frequency's in hertz, ... (_SI_MEASURES)."""
    size, base = _SI_MEASURES[unit]
    return f"{(Decimal(amount) * size).normalize():f}{base}"


# Dutch "uur" after a word that says when is o'clock, not hours ("vóór 3 uur 's middags" is
# before 15:00, "om 9 uur" at 09:00; "na 24 uur" is after 24 hours)
_DUTCH_OCLOCK = re.compile(
    r"\b(om|vóór|voor|tot|vanaf|tegen|rond)\s+(\d{1,2})\s+uur\b(\s+'s\s+(?:middags|avonds))?",
    re.IGNORECASE,
)


def _dutch_oclock(found: re.Match[str]) -> str:
    hour = int(found.group(2))
    if found.group(3) and hour < 12:
        hour += 12
    return f"{found.group(1)} {hour:02d}:00" if hour < 24 else found.group(0)


# "cubic metres" as the unit's symbol, read as litres (_MEASURE_UNITS)
_CUBIC_METRES = re.compile(r"\bcubic\s+met(?:re|er)s?\b", re.IGNORECASE)
# a rate written with a slash after an amount or a currency: "GBP 39.00/mo" is "GBP 39.00
# per month", "1,85 EUR/m3" "... EUR per m³", as the other text may say it ("£39 a month",
# "€1.85 per cubic metre"); not "km/h" (a unit of its own) nor "main/dev" (no amount before)
_SLASH_RATE = re.compile(
    r"(?:(?<=\d)|(?<=[€$£¥])|(?<=\b[A-Z]{3}))/"
    r"(mo|month|yr|year|wk|week|day|hr|hour|min|m3|m³|kg|kWh)\b"
)
_SLASH_UNITS = {"mo": "month", "yr": "year", "wk": "week", "hr": "hour", "m3": "m³"}
# cubic metres after an amount, as written with a digit ("12 m3")
_CUBIC_AFTER_AMOUNT = re.compile(r"(?<=\d)(\s?)m3\b")
# the litre's symbol in its capital after an amount ("1500 L", "250 mL": "1,500 litres"), and
# "w/o" for "without" ("after 10 min w/o ack")
_LITRE_SYMBOL = re.compile(r"(?<=\d)(\s?)(m?)L\b")
_WITHOUT = re.compile(r"(?<!\w)w/o\b", re.IGNORECASE)


def _celsius(amount: str, unit: str) -> str:
    """A temperature's norm in degrees Celsius to a tenth ("39.2°F" and "4 °C": "4°c")."""
    value = Decimal(amount)
    if unit == "degf":
        value = (value - 32) * 5 / 9
    return f"{value.quantize(Decimal('0.1')).normalize():f}°c"


def _with_measures(tokens: list[_Token]) -> list[_Token]:
    """A number with a unit of mass, length, volume or temperature as one value, the same in
    any of the units ("12 tonnes" / "12,000 kg", "5 km" / "5,000 meters", "2 litres" / "2000
    ml", "39.2°F" / "4°C")."""

    def on_it(token: _Token) -> str | None:
        percentile = _PERCENTILE.fullmatch(token.text)
        if percentile is not None and token.text.lower().endswith("percentile"):
            return f"p{percentile.group(1)}"  # "99th-percentile"
        compact = _COMPACT_MEASURE.fullmatch(token.text)
        if compact is not None:
            return _in_base_units(compact.group(1), compact.group(2))
        si = _COMPACT_SI.fullmatch(token.text)  # "20kHz", "3.3V"
        return None if si is None else _in_si_base(si.group(1), si.group(2))

    def after_it(token: _Token, unit: _Token) -> str | None:
        percentile = _PERCENTILE.fullmatch(token.text)
        if percentile is not None and unit.lower == "percentile":
            return f"p{percentile.group(1)}"  # "the 99th percentile"
        if not _cardinal(token):
            return None
        if unit.lower in ("degc", "degf"):
            return _celsius(token.norm, unit.lower)
        if unit.lower in _MEASURE_UNITS and unit.text == unit.lower:
            return _in_base_units(token.norm, unit.lower)
        if unit.text in _SI_MEASURES:  # "4.2 MW" / "4,200 kW", in their own capitals
            return _in_si_base(token.norm, unit.text)
        if unit.text in _SI_NAMES:  # "48 volts"
            return _in_si_base(token.norm, _SI_NAMES[unit.text])
        return None

    # (a temperature written as it was, "8 °C", where a reason shows the value)
    return [
        replace(token, text=_DEGREES_READ.sub(r" °\1", token.text))
        for token in _with_units(tokens, on_it, after_it)
    ]


_DEGREES_READ = re.compile(r" deg([CF])$")


# A unit and a half said in words ("*an hour and a half*" is 90 minutes).
def _with_a_unit_and_a_half(tokens: list[_Token]) -> list[_Token]:
    """ "an hour and a half", "a day and a half", ... as one duration token: its text as
    written, its norm the seconds."""
    lower = [token.lower for token in tokens]
    result: list[_Token] = []
    i = 0
    while i < len(tokens):
        unit = lower[i + 1] if i + 1 < len(tokens) else ""
        if (
            lower[i] in ("a", "an")
            and unit in _FRACTION_UNITS
            and lower[i + 2 : i + 5] == ["and", "a", "half"]
            and not tokens[i + 1].pause
        ):
            taken = tokens[i : i + 5]
            text = " ".join(t.text for t in taken)
            result.append(_Token(text, _seconds("1.5", unit), taken[0].first, taken[-1].pause))
            i += 5
            continue
        result.append(tokens[i])
        i += 1
    return result


def _with_durations(tokens: list[_Token]) -> list[_Token]:
    """A number with a unit of time as one value, in seconds ("30 minutes", "30min" and "1800
    seconds" read alike; "a month" alone is not read, it is more often a rate): the unit is
    part of the value; "an hour and a half" too (_with_a_unit_and_a_half). How often said in words
    ("daily", "once a minute") is read where the other text gives a period too
    (rates_written_out)."""

    def on_it(token: _Token) -> str | None:
        if token.lower in _PART_OF_A_UNIT:  # "a *quarter-hour*", "a *half-hour* slot"
            return _seconds(_PART_OF_A_UNIT[token.lower], "hour")
        # written in lower case only: "Room *4H*" is a room
        compact = _COMPACT_DURATION.fullmatch(token.text)
        if compact is None:
            return None
        if compact.group(1) is None:  # days or weeks
            unit = "day" if compact.group(4) == "d" else "week"
            return _seconds(compact.group(3), unit)
        return _seconds(compact.group(1), compact.group(2))

    def after_it(token: _Token, unit: _Token) -> str | None:
        if token.lower in {"quarter", "half"} and unit.lower in _FRACTION_UNITS:
            return _seconds("0.25" if token.lower == "quarter" else "0.5", unit.lower)
        if (
            unit.lower in _DURATION_UNITS
            and (unit.lower not in _LOWER_CASE_UNITS or unit.text == unit.lower)
            and _cardinal(token)
        ):
            return _seconds(token.norm, unit.lower)
        foreign = unit.lower in _FOREIGN_DURATION_UNITS or (
            unit.lower in _GERMAN_DURATION_UNITS and unit.text[:1].isupper()
        )
        if foreign and _cardinal(token) and token.text[:1].isdigit():
            return _seconds(token.norm, unit.lower)
        return None

    return _with_compound_durations(_with_units(_with_a_unit_and_a_half(tokens), on_it, after_it))


_SECONDS_NORM = re.compile(r"(\d+(?:\.\d+)?)s")


def _unit_seconds(token: _Token) -> Decimal | None:
    """The seconds of the unit a duration token is written in ("1 minute": 60), or None."""
    if _SECONDS_NORM.fullmatch(token.norm) is None:
        return None
    compact = _COMPACT_DURATION.fullmatch(token.text)
    if compact is not None:
        unit = compact.group(2) or ("day" if compact.group(4) == "d" else "week")
    else:
        unit = token.text.split()[-1].lower()
    return _time_unit(unit)


def _with_compound_durations(tokens: list[_Token]) -> list[_Token]:
    """A duration said in two units as one ("1 minute 35 seconds", "2 hours and 15 minutes",
    "1h 30min" are 95, 8100 and 5400 seconds): a duration right after one in a larger unit,
    less than one of that unit."""
    result: list[_Token] = []
    i = 0
    while i < len(tokens):
        token, unit = tokens[i], _unit_seconds(tokens[i])
        after = i + 2 if i + 2 < len(tokens) and tokens[i + 1].lower == "and" else i + 1
        rest = tokens[after] if after < len(tokens) and not token.pause else None
        if after > i + 1 and tokens[i + 1].pause:
            rest = None
        smaller = None if rest is None else _SECONDS_NORM.fullmatch(rest.norm)
        if unit is not None and rest is not None and smaller and _unit_seconds(rest) is not None:
            part = Decimal(smaller.group(1))
            if 0 < part < unit:
                whole = Decimal(token.norm[:-1]) + part
                taken = tokens[i : after + 1]
                text = " ".join(t.text for t in taken)
                result.append(_Token(text, _seconds(whole, "s"), token.first, taken[-1].pause))
                i = after + 1
                continue
        result.append(token)
        i += 1
    return result


def _with_times(tokens: list[_Token]) -> list[_Token]:
    """Clock times as minutes after midnight ("t120"): "02:00", "2 am", "2am", "14:05", "2:05
    pm", "half past two", "two o'clock" and "the 2.05 train" (_DOTTED) in the same way. A bare
    number is a time only with a colon, am/pm, o'clock, "in the morning/afternoon/evening", "at
    night", or after "half past", "quarter past" or "quarter to"."""
    lower = [token.lower.rstrip(".") for token in tokens]
    result: list[_Token] = []
    i = 0
    while i < len(tokens):
        time, used = _clock_time(tokens, lower, i)
        if time is None:
            result.append(tokens[i])
            i += 1
            continue
        result.append(
            _Token(tokens[i].text, f"t{time}", tokens[i].first, tokens[i + used - 1].pause)
        )
        i += used
    return result


_DAY_PARTS = {"morning": "am", "afternoon": "pm", "evening": "pm", "night": "pm"}
_NAMED_TIMES = {"noon": 720, "midday": 720, "midnight": 0}


def _clock_time(tokens: list[_Token], lower: list[str], i: int) -> tuple[int | None, int]:
    """The time (minutes after midnight) starting at token i, and how many tokens it takes."""
    if lower[i] in _NAMED_TIMES:
        return _NAMED_TIMES[lower[i]], 1  # "at noon" / "at 12:00"
    offset, start = 0, i
    if lower[i : i + 2] in (["half", "past"], ["quarter", "past"], ["quarter", "to"]):
        offset = {"half": 30, "quarter": 15}[lower[i]] * (-1 if lower[i + 1] == "to" else 1)
        start = i + 2
        if start >= len(tokens):
            return None, 1
    match = _CLOCK.fullmatch(lower[start]) or _CLOCK.fullmatch(tokens[start].norm)
    dotted = None if match is not None else _DOTTED.fullmatch(lower[start])
    if dotted is not None:
        after = lower[start + 1] if start + 1 < len(lower) else ""
        before = lower[start - 1] if start > 0 else ""
        said = bool(dotted.group(3)) or after in _MERIDIEM or after in _DOTTED_AFTER
        # (a number with a unit of time is a duration: "expire *after 0.25 h*"; a bare "0."
        # is a share, not a time after midnight: "sampling traces *at 0.25*")
        beside = before in _DOTTED_BEFORE and after not in _DURATION_UNITS
        match = dotted if said or (beside and dotted.group(1) != "0") else None
    if match is None:
        return None, 1
    hours, minutes = int(match.group(1)), int(match.group(2) or 0)
    meridiem, end = match.group(3), start + 1
    following = lower[end : end + 3]
    if meridiem is None and following[:1] and following[0] in _MERIDIEM:
        meridiem, end = following[0], end + 1
    elif following[:1] == ["o'clock"]:
        end += 1
        meridiem = meridiem or ""
    elif following[:2] == ["in", "the"] and following[2:3] and following[2] in _DAY_PARTS:
        meridiem, end = _DAY_PARTS[following[2]], end + 3
    elif following[:2] == ["at", "night"]:
        meridiem, end = "pm", end + 2
    if meridiem is None and match.group(2) is None and not offset:
        return None, 1  # a bare number
    if meridiem and meridiem.startswith("p") and hours < 12:
        hours += 12
    if meridiem and meridiem.startswith("a") and hours == 12:
        hours = 0
    if hours >= 24 or minutes >= 60:
        return None, 1
    return (hours * 60 + minutes + offset) % (24 * 60), end - i


def _is_value(token: _Token) -> bool:
    text = token.text
    if token.norm.startswith("t") and token.norm[1:].isdigit():
        return True  # a time
    if _AMOUNT_NORM.fullmatch(token.norm) or _MEASURE_NORM.fullmatch(token.norm):
        return True  # a duration, a size, a mass, a length or a temperature
    if any(ch.isdigit() for ch in text) or token.norm in NUMBERS.values():
        return True
    if _number_phrase(text):
        return True  # "four hundred and twelve"
    if " " in text and text.rpartition(" ")[2].lower() in _MAGNITUDE_WORDS:
        return True  # "two million" (a number and its magnitude, one token)
    if token.lower.rstrip(".") in _LATIN_ABBREVIATIONS:
        return False  # "e.g.", "i.e.": no identifier
    if any(ch in "._:/+#@" for ch in text[1:]) or "_" in text:
        return True
    if "-" in text:
        return True  # an identifier or a compound; compounds are matched by their parts
    if token.lower in _LEVEL_WORDS and text.isupper():
        return True  # a level in capitals ("log level is *WARN*", "log level: *ERROR*")
    if not text[0].isupper() or token.first:
        return False
    if len(text) == 1:
        return text != "I"  # "service A"
    if token.norm in STOPWORDS:
        return token.lower in CALENDAR  # "due in *May*", not the verb
    if _named_in_capitals(token):
        return True  # "Mapbox for maps and *HERE* for geocoding"
    # an acronym ("API", "CI", "ORMs") is more often what a fact is about than its value
    return not (text.isupper() or (text[:-1].isupper() and text.endswith("s")))


_LATIN_ABBREVIATIONS = frozenset({"e.g", "i.e", "cf", "etc", "viz"})
# Levels that are written in capitals and are values all the same (log and alert levels).
_LEVELS = "trace debug info notice warn warning error fatal critical alert emergency"
_LEVEL_WORDS = frozenset(_LEVELS.split())


def _value_key(token: _Token) -> str:
    # a lone capital letter stays apart from the article "a"
    return f"letter:{token.text}" if len(token.text) == 1 and token.text.isalpha() else token.norm


@dataclass(frozen=True, slots=True)
class Statement:
    """What a memory's text states, as far as the dedup rule looks."""

    tokens: tuple[_Token, ...]
    words: frozenset[str]  # content words (stems), values and the parts of compounds
    values: frozenset[str]
    relations: tuple[str, ...]  # relation nouns after a possessive, with repeats
    markers: frozenset[str]
    negated: frozenset[str]  # words right after a negator, "instead of", "rather than", ...
    negations: int  # how many of its clauses are negated (see _negations)
    latin_share: float  # of its letters, digits and symbols, those an English model knows
    unknown: str  # the others (emoji, other scripts), in order
    # each duration's value (its seconds) and the number written with it: "7 years old" states
    # the age "seven" too
    amounts: tuple[tuple[str, str], ...] = ()
    # the words that are parts of a path or an address ("config/worker.yaml": config, worker,
    # yaml), not words of their own
    in_paths: frozenset[str] = frozenset()


# The months by every name a text gives them ("Sept", "sep", "September"): a month is a value
# in any case, "May" and "March" (a modal and a verb too) only beside a number ("may 3rd",
# "3 March", "May 2025").
_MONTH_NAMES = {name: full for full in _MONTHS.split()[:12] for name in (full, full[:3])} | {
    "sept": "september"
}
_MONTH_ONLY_BESIDE_A_NUMBER = frozenset({"may", "march", "mar"})
# Months that are given names too ("April leads QA", "moved to Jun"): a month beside a number
# or after a word that says when ("in June", "until August").
_MONTH_OR_NAME = frozenset({"april", "june", "august", "jan", "jun"})
_WHEN_WORDS = frozenset({"in", "on", "by", "until", "till", "since", "from", "before", "after"})
_WHEN_WORDS |= frozenset({"during", "through", "of", "last", "next", "this", "early", "late"})
_MONTH_AS_WHEN = _MONTH_ONLY_BESIDE_A_NUMBER | _MONTH_OR_NAME


def _month(tokens: list[_Token], i: int) -> str | None:
    """The value "month:<name>" of the token at i when it names a month (see _MONTH_NAMES)."""
    token = tokens[i]
    full = _MONTH_NAMES.get(token.lower.rstrip("."))
    if full is None:
        return None
    if token.lower != full and not token.text[0].isupper():
        return None  # "jan", "dec", "sep" in lower case are words of their own
    if token.lower in _MONTH_AS_WHEN:
        beside = [tokens[j].norm for j in (i - 1, i + 1) if 0 <= j < len(tokens)]
        when = i > 0 and tokens[i - 1].lower in _WHEN_WORDS and token.lower in _MONTH_OR_NAME
        if not when and not any(norm.isdigit() for norm in beside):
            return None
    return "month:" + full


def _values(tokens: list[_Token]) -> set[str]:
    """The values of a text; a name of several capitalised words is one value ("Casa
    Lola", "Nori House"); a month is "month:<name>" (see _month)."""
    values: list[str] = []
    previous_was_name = False
    for i, token in enumerate(tokens):
        date = _month(tokens, i) or (f"day:{token.norm}" if token.norm in _WEEKDAY_NAMES else None)
        if date is not None:
            values.append(date)  # "on monday", "Tuesdays", in any case
            previous_was_name = False
            continue
        if not _is_value(token):
            previous_was_name = False
            continue
        key = _value_key(token)
        is_name = key.isalpha() and token.text[:1].isupper()
        # (a mark between ends a name: "Port Ardgal, Innisbrae" or with a dash between are two
        # places)
        if is_name and previous_was_name and not tokens[i - 1].pause:
            values[-1] += " " + key
        else:
            values.append(key)
        previous_was_name = is_name
    return set(values)


_OWNING = frozenset({"owns", "owned", "owning", "owner", "owners"})


def _amount_number(text: str) -> str:
    """The number written with a duration or a size ("30 minutes", "30s", "4GB": "30", "30",
    "4"; "thirty four years": "34")."""
    words = text.split()[:-1]
    if _number_phrase(" ".join(words)):
        found = _number_in_words([_Token(word, word.lower(), False) for word in words], 0)
        if found is not None:
            return f"{found[0].normalize():f}"
    first = text.split()[0].lower()
    number = _number(first)
    if number is None and (digits := _CARDINAL.match(first)):
        number = digits.group()
    return number or text


# Currencies written as a word beside an amount: no detail of their own, as a sign is none
# ("EUR 12k" / "\u20ac12,000", "1,900 NOK" / "1900 kroner")
_CURRENCY_WORD_LIST = """
    eur euro euros usd dollar dollars gbp chf nok sek dkk kr kroner krone kronor pln jpy yen
    nzd aud cad hkd sgd inr cny rmb brl mxn zar czk huf quid pound pounds bucks"""
_CURRENCY_WORDS = frozenset(_CURRENCY_WORD_LIST.split())


def _as_written_alike(tokens: list[_Token]) -> list[_Token]:
    """The tokens with a month's short name beside a number as its name ("4 *Nov* 2024" is
    "November", as the date 2024-11-04 reads) and without a currency word beside an amount."""
    kept: list[_Token] = []
    for i, token in enumerate(tokens):
        beside = [tokens[j].norm for j in (i - 1, i + 1) if 0 <= j < len(tokens)]
        if token.lower in _CURRENCY_WORDS and any(_AMOUNT_OF_MONEY.fullmatch(b) for b in beside):
            if token.pause and kept:
                kept[-1] = replace(kept[-1], pause=True)
            continue
        month = _month(tokens, i)
        if month is not None and token.norm != (full := month.removeprefix("month:")):
            token = replace(token, norm=full)
        kept.append(token)
    return kept


_AMOUNT_OF_MONEY = re.compile(r"\d+(?:\.\d+)?")
_NEGATIVE = re.compile(r"(?:^|(?<=[\s(\[:=~\u2248]))[-\u2212](\d+(?:[.,]\d+)?)")


# A placeholder ("<ticket-id>", "{slug}") with written characters joined to it on either side
# ("feature/<ticket-id>", "PROJ-{n}", "<env>.internal").
_WRITTEN_PATTERN = re.compile(
    r"[\w.#@-]*[/._#@-](?:<[^<>\s]{1,40}>|\{[^{}\s]{1,40}\})[\w./#@{}<>-]*"
    r"|(?:<[^<>\s]{1,40}>|\{[^{}\s]{1,40}\})[/._#@-][\w./#@{}<>-]+"
)


def _pattern_value(written: str) -> str:
    """A written pattern's value: as written, lower-cased."""
    return "q:" + written.lower().rstrip(".")


def _apostrophe_s(word: str) -> str:
    """A word in lower case without an "'s" after it ("there's" is "there")."""
    return word.replace("\u2019", "'").removesuffix("'s")


@lru_cache(maxsize=1024)
def statement(text: str) -> Statement:
    """The Statement of a text (cached: a save compares the same texts several times)."""
    tokens = _as_written_alike(_tokens(text))
    values = _values(tokens)
    # a number below zero is another value than the same number above it ("-18 °C" / "18
    # °C"), its minus sign right before it and after a space or a mark, not a hyphen or a
    # range ("COVID-19", "5-10")
    values.update(f"minus:{m.group(1).replace(',', '')}" for m in _NEGATIVE.finditer(text))
    for quoted in _QUOTED.finditer(text):
        inner = quoted.group()[1:-1]
        values.update(_value_key(token) for token in _tokens(inner))
        if not _WRITTEN_PATTERN.fullmatch(inner.strip()):  # (a pattern's value is below)
            values.add("q:" + " ".join(inner.lower().split()))  # the quoted text as a whole
    # a pattern with a placeholder and written parts around it, as a whole: "feature/<ticket-id>"
    # is another value than "feat/<ticket-id>" (its parts in any order: the same parts in
    # another order are read as swapped, see _parts_reordered)
    values.update(_pattern_value(found.group()) for found in _WRITTEN_PATTERN.finditer(text))
    amounts = {t.norm: _amount_number(t.text) for t in tokens if _AMOUNT_NORM.fullmatch(t.norm)}
    # a date's value is no word ("day:friday"): its word is the token's ("friday")
    dates = {value for value in values if value.startswith(("month:", "day:"))}
    words = {token.norm for token in tokens} | (values - dates) | set(amounts.values())
    words.update(part for value in values - dates if value[:2] != "q:" for part in value.split())
    in_paths: set[str] = set()
    for token in tokens:
        if token.norm in amounts:
            continue  # a duration's seconds are no word of the text ("1209600"), nor a size's bytes
        whole = _ZERO_VERSION.sub(r"\1", token.norm)  # "apache-2.0": apache, 2 (as "2.0")
        parts = {_stem(part) for part in re.split(r"[-./:@_]+", whole) if part}
        words.update(parts)
        if re.search(r"[./:@_]", token.norm[1:]):
            in_paths.update(parts)
    lower = [token.lower for token in tokens]
    relations = []
    for i, word in enumerate(lower):
        noun = word.removesuffix("'s")
        written = tokens[i].text
        if noun in RELATIONS and not (i and written[:1].isupper() and written[1:].islower()):
            # (a word in capitals inside the sentence is a name: "my dog *Buddy*"; after one,
            # it names a thing: "swarmwatch's *Grafana board*")
            if i > 1 and tokens[i - 1].text[:1].isupper() and not lower[i - 1].endswith("'s"):
                continue
            before = lower[max(0, i - 3) : i]
            if any(w in _POSSESSIVES or w.endswith(("'s", "s'")) for w in before):
                qualifiers = [w for w in before if w in _RELATION_QUALIFIERS]
                relations.append(" ".join([*qualifiers, noun]))
    # a change word before a condition states a rule, not a change ("events are *dropped if*
    # a batch exceeds 10 MB")
    markers = {
        word
        for i, word in enumerate(lower)
        if word in CHANGE_MARKERS
        and not (i + 1 < len(lower) and lower[i + 1] in _CONDITIONS)
        and not _describes(tokens, i)
        and not (word == "since" and _held_before(tokens, i))
        and not _in_a_condition(tokens, lower, i)
        and not _in_an_exception(tokens, lower, i)
        # what someone thinks of a thing, not a change of it ("Kay *thinks* rewriting
        # berthline pricing in Go is a *mistake*")
        and not _in_an_opinion(tokens, lower, i)
        # a state said of a switch, in the present: "the flag *is switched on*" says
        # "enabled" ("was switched on" may tell the change)
        and not (
            word == "switched"
            and 0 < i < len(lower) - 1
            and lower[i - 1] in ("is", "are")
            and lower[i + 1] in ("on", "off")
        )
        # a period named by its first day is a date, not a change ("the week *starting* Oct
        # 14", "the sprint *beginning* Monday")
        and not (i and lower[i - 1] in _SPANS and word in _FROM_WHEN)
        # "*by mistake*" tells how something happened, not that a value was wrong, unless
        # it is what was said ("I always *say* Tank by mistake")
        and not (
            word == "mistake"
            and i
            and lower[i - 1] == "by"
            and not _SAYING & set(lower[max(0, i - 4) : i])
        )
    }
    # (after a speaker's name too: "Odile: *update:* costume fitting is tuesday at 6")
    opening = 1 if lower[1:2] == ["update"] and label(text) is not None else 0
    if lower[opening : opening + 1] == ["update"] and tokens[opening].pause:
        markers.add("updated")  # "*Update:* the cron now runs at 03:00"
    markers.update(
        " ".join(lower[i : i + 2])
        for i in range(len(lower) - 1)
        if (lower[i], lower[i + 1]) in CHANGE_PHRASES
        # a passive "is used to" says no change ("Vite *is used to* build the frontend")
        and not (lower[i] == "used" and i > 0 and lower[i - 1] in _BE)
        # nor objecting ("engineers *pushed back on* the decision") nor rounding ("rounds
        # prices *down to* the nearest 5p")
        and lower[i : i + 3] != ["pushed", "back", "on"]
        # "pushed to" moves a date or a time ("was *pushed to* December 20", "... to next
        # week"), not an image to a registry
        and not (
            lower[i : i + 2] == ["pushed", "to"]
            and not any(_is_time(t) for t in tokens[i + 2 : i + 4])
        )
        and not (
            lower[i] == "down" and any(w.startswith("round") for w in lower[max(0, i - 3) : i])
        )
    )
    # letters, digits and symbols, and those an English model does not know
    relevant = [ch for ch in text if unicodedata.category(ch)[0] in "LNS"]
    unknown = [ch for ch in relevant if not _known_character(ch)]
    negated: set[str] = set()
    for i, word in enumerate(lower):
        if _negates_at(tokens, i) or (i > 0 and (lower[i - 1], word) in _NEGATION_PHRASES):
            # (up to a mark: "is not idempotent; *retries* can double-insert")
            negated.update(t.norm for t in _up_to_a_mark(tokens[i + 1 : i + 4]))
    # the stem of a function word is no word either ("were" is "wer", "there" is "ther"),
    # unless another word of the text has it
    # (one said with "'s" too: "*there's* no GraphQL endpoint")
    function = {t.norm for t in tokens if _apostrophe_s(t.lower) in _FUNCTION_WORDS}
    stopped = function - {t.norm for t in tokens if _apostrophe_s(t.lower) not in _FUNCTION_WORDS}
    # "rather", "instead" and "better" only join a rejection ("pnpm *rather than* npm" says
    # what "pnpm, not npm" and "likes pnpm *better than* npm" say)
    stopped |= {
        tokens[i].norm
        for i, pair in enumerate(pairwise(lower))
        if pair in REJECTING_PHRASES or pair == ("better", "than")
    }
    # "owns" is a verb of what a text says ("owner" the same), though "own" ("my own") is a
    # stopword
    owning = {"own" for t in tokens if t.lower in _OWNING}
    return Statement(
        tokens=tuple(tokens),
        words=frozenset(words - STOPWORDS - stopped) | owning,
        values=frozenset(values - STOPWORDS),
        relations=tuple(sorted(relations)),
        markers=frozenset(markers),
        negated=frozenset(negated - STOPWORDS),
        negations=_negations(tokens),
        latin_share=1 - len(unknown) / len(relevant) if relevant else 0.0,
        unknown="".join(unknown),
        amounts=tuple(amounts.items()),
        in_paths=frozenset(in_paths),
    )


def _held_before(tokens: Sequence[_Token], i: int) -> bool:
    """Whether "has been" (_HELD) comes before the word at i in its clause, at most eight
    words back ("the cluster *has been* on Kubernetes 1.29 *since* the spring upgrade")."""
    start = i
    while start > max(0, i - 8) and not tokens[start - 1].pause:
        start -= 1
    words = [t.lower for t in tokens[start:i]]
    return bool(_HELD & set(pairwise(words)))


_SAYING_WORDS = """
    say says said saying write writes wrote writing type typed typing call called calling"""
_SAYING = frozenset(_SAYING_WORDS.split())


# Words that open an exception: what follows in its clause names a kind of thing left out
# ("a failing test before a fix, *apart from* one-line *typo* patches", "*except* *moved*
# files"), no change.
_EXCEPTING = frozenset({"except", "excluding", "besides", "exception"})
_EXCEPTING_PHRASES = frozenset({("apart", "from"), ("aside", "from"), ("other", "than")})
_EXCEPTION_REACH = 6  # tokens back from the change word


def _in_an_exception(tokens: Sequence[_Token], lower: list[str], i: int) -> bool:
    """Whether the change word at i stands in an exception (_EXCEPTING, _EXCEPTING_PHRASES)
    opened earlier in its clause, no mark between."""
    return _opened_before(tokens, lower, i, _EXCEPTION_REACH, _EXCEPTING, _EXCEPTING_PHRASES)


def _describes(tokens: Sequence[_Token], i: int) -> bool:
    """Whether the change word at i describes the noun after it, after a number or a
    determiner ("under 200 *changed* lines", "the *updated* rows", "each *moved* file", "a
    *wrong* password"): no change said."""
    describing = tokens[i].lower.endswith("ed") or tokens[i].lower == "wrong"
    if not i or i + 1 >= len(tokens) or tokens[i].pause or not describing:
        return False  # (a participle or "wrong": "Service A *now* listens" says a change)
    before, after = tokens[i - 1], tokens[i + 1]
    # (not a letter naming a thing: "Service *A* now ...")
    determiner = before.lower in _DETERMINERS and (
        before.text.islower() or (before.first and len(before.text) > 1)
    )
    counted = determiner or _CARDINAL.fullmatch(before.text) is not None
    return counted and after.norm not in STOPWORDS and after.text.isalpha()


def _up_to_a_mark(tokens: Sequence[_Token]) -> Sequence[_Token]:
    """The tokens up to the first one a mark follows, that one included."""
    for k, token in enumerate(tokens):
        if token.pause:
            return tokens[: k + 1]
    return tokens


def _negates_at(tokens: Sequence[_Token], i: int) -> bool:
    """Whether the word at i negates (NEGATORS, or a contraction in "n't"): not in a phrase
    that does not negate ("not only", "nothing but", "from nothing"), and not "no" that
    answers ("no, that's all")."""
    word = tokens[i].lower
    if word not in NEGATORS and not word.endswith("n't"):
        return False
    following = tokens[i + 1].lower if i + 1 < len(tokens) else None
    if (word, following) in _NOT_NEGATING:
        return False
    if i and (tokens[i - 1].lower, word) in _NOT_NEGATING_AFTER:
        return False
    # "no" alone before a pause, opening its clause, answers ("no, that's all"); "dashboard
    # repo no." negates
    opens = i == 0 or tokens[i].first or tokens[i - 1].pause
    return not (word == "no" and tokens[i].pause and opens)


def _negations(tokens: Sequence[_Token]) -> int:
    """How many clauses of the text are negated: clauses end at a mark (a comma, a dash, the
    end of a sentence) and begin at a joining word ("and", "but", "because", ...); a clause
    with two negations says yes ("never apply *without* the plan", "*not* that I *don't*
    like it")."""
    negated, odd = 0, False
    for i in range(len(tokens)):
        if _opens_clause(tokens, i):
            negated, odd = negated + odd, False
        if _negates_at(tokens, i) and not _contrasts_at(tokens, i):
            odd = not odd
    return negated + odd


def _opens_clause(tokens: Sequence[_Token], i: int) -> bool:
    """Whether the word at i (not the first) begins a clause: a sentence, a joining word
    ("and", "but", "because", ...: _CLAUSE_STARTS), or after a mark."""
    token = tokens[i]
    return bool(i) and (token.first or token.lower in _CLAUSE_STARTS or tokens[i - 1].pause)


# Words that open a phrase of where or with what ("*in* env files", "*on* Fridays"): after
# them a "never" rejects (_contrasts_at)
_PLACE = frozenset({"in", "on", "at", "into", "onto", "with", "via", "through", "from", "for"})


def _contrasts_at(tokens: Sequence[_Token], i: int) -> bool:
    """Whether the word at i is a "not" or "never" that rejects one thing for another, as
    "rather than" does: it opens a clause of at most four words after a pause, which ends
    the text or another pause ("use pnpm*, not npm,* in this repo", "stored in Vault*, never
    in env files*"); not a clause of its own ("fast*, not reliable enough for prod*")."""
    word = tokens[i].lower
    if word not in ("not", "never") or not i or not tokens[i - 1].pause or tokens[i].first:
        return False
    if i + 1 < len(tokens) and tokens[i + 1].lower == "even":
        return False  # "not even staging" counts it in
    if word == "never" and (i + 1 == len(tokens) or tokens[i + 1].lower not in _PLACE):
        return False  # "never in env files" rejects; "never drink it" negates
    rest = tokens[i + 1 : i + 5]
    for n, token in enumerate(rest):
        if token.first:  # the next sentence
            return n > 0
        if token.pause:
            return True
    return bool(rest) and i + 1 + len(rest) == len(tokens)


def _known_character(ch: str) -> bool:
    """Whether an English model knows the character: ASCII and Latin letters, accented ones
    included (the tokenizer strips accents), but not the compatibility forms it leaves alone
    (full-width, circled, mathematical letters), other scripts, or emoji."""
    if ch.isascii() or unicodedata.category(ch) in ("Sc", "Sm", "Sk"):
        return True  # currency and mathematical signs: "€2,000", "≤ 5"
    if unicodedata.decomposition(ch).startswith("<"):
        return False  # a compatibility form: <wide>, <circle>, <font>, ...
    return "LATIN" in unicodedata.name(ch, "")


def label(text: str) -> str | None:
    """Who says the text or what it is about, when it opens with a short label and a colon
    ("Caroline: I joined ...", "Staging: deploys from main"), lower-cased; None without one
    (or when the label is a word such as "Correction" or "Note")."""
    match = _LABEL.match(text)
    if match is None:
        return None
    name = " ".join(match.group(1).lower().split())
    if len(name.split()) > 3 or name.split()[0] in NOT_LABELS:
        return None
    return name


def anchors(text: str) -> frozenset[str]:
    """When the text says something happens: "yesterday", "last friday", "march", "2019",
    "3 year ago", "in the spring" (as "spring")."""
    return _anchors_of(statement(text).tokens)


def _anchors_of(tokens: Sequence[_Token]) -> frozenset[str]:
    """anchors, of a text's tokens."""
    lower = [t.lower.rstrip(".") for t in tokens]
    norms = [t.norm for t in tokens]
    found: set[str] = set()
    for i, word in enumerate(lower):
        after = lower[i + 1].removesuffix("s") if i + 1 < len(lower) else ""
        if word == "ago" and i:
            found.add(f"{' '.join(norms[max(0, i - 2) : i])} ago")
        elif word in _ANCHOR_WORDS:
            found.add(word)
        elif word in _ANCHOR_HEADS and (after in CALENDAR or after in _PERIODS):
            found.add(f"{word} {after}")
        elif (
            norms[i] in CALENDAR
            and (tokens[i].text[:1].isupper() or norms[i] != "may")
            and not (word.endswith("s") and word[:-1] in _WEEKDAY_NAMES)  # "on Fridays": a habit
        ):
            if not (i and lower[i - 1] in _ANCHOR_HEADS):
                found.add(norms[i])
        elif (word in _PERIODS and lower[max(0, i - 2) : i] == ["in", "the"]) or (
            len(word) == 4 and word.isdigit() and word[:2] in ("19", "20")
        ):
            found.add(word)  # "in the spring", a year
    return frozenset(found)


# A habit ("on *Wednesdays*", "*every* sprint", "*daily*") and the time of one occasion near
# now ("*this* Wednesday", "*tomorrow*", "*tonight's*"), unless a word says from when
# ("*starting* next Monday")
_HABITUAL = frozenset(
    {"every", "each", "daily", "weekly", "monthly", "nightly", "always", "usually", "normally"}
)
_NEAR_NOW_WORDS = frozenset({"today", "tonight", "tomorrow"})
_NEAR_NOW_HEADS = frozenset({"this", "next"})
_DAY_PARTS_NEAR = _WEEKDAY_NAMES | {"morning", "afternoon", "evening", "night", "weekend"}
_FROM_WHEN = frozenset({"starting", "from", "beginning", "effective", "since", "after"})
# Spans of time a text may name by their first day ("the week starting Oct 14")
_SPANS = _PERIODS | {"weeks", "fortnight", "shift", "cycle", "iteration"}


def _states_a_habit(words: Sequence[str]) -> bool:
    """A habit word among the lower-cased words, a day or a part of one in the plural ("on
    Fridays", "Friday afternoons"), or a weekday after "the" that names what recurs on it
    ("runs *the Thursday* architecture review")."""
    return any(
        w in _HABITUAL
        or (w[:-1] in _DAY_PARTS_NEAR and w[-1] == "s")
        or (w in _WEEKDAY_NAMES and i and words[i - 1] == "the")
        for i, w in enumerate(words)
    )


def one_off(existing: str, new: str) -> bool:
    """The new text tells of one occasion near now of a habit the existing one states ("The
    grooming meeting is on Wednesdays" / "The grooming meeting is cancelled this Wednesday",
    "Deploys happen every Tuesday" / "No deploy tomorrow"), and states no habit itself: the
    habit still holds."""
    old = [t.lower for t in statement(existing).tokens]
    # "every Tuesday" is the habit's day, not an occasion's
    days = {w for i, w in enumerate(old) if i and old[i - 1] in ("every", "each")}
    if not _states_a_habit(old) or anchors(existing) - days:
        return False
    lower = [t.lower.removesuffix("'s").removesuffix("\u2019s") for t in statement(new).tokens]
    if _states_a_habit(lower):
        return False  # "Next month deploys move to Thursdays"
    # "this week" of a weekly habit when a day of it is named ("moved to Thursday this week";
    # not "switched to VS Code this week")
    parts = _DAY_PARTS_NEAR | ({"week"} if _WEEKDAY_NAMES & set(lower) else set())
    near = [
        word in _NEAR_NOW_WORDS
        or (word in _NEAR_NOW_HEADS and i + 1 < len(lower) and lower[i + 1] in parts)
        for i, word in enumerate(lower)
    ]
    said_from = [
        (i and lower[i - 1] in _FROM_WHEN) or lower[max(0, i - 2) : i] == ["as", "of"]
        for i in range(len(lower))
    ]
    return any(near) and not any(n and f for n, f in zip(near, said_from, strict=True))


def event_of_a_habit(existing: str, new: str) -> bool:
    """The old text states a habit ("*every* night", "on *Fridays*", "*whenever* a build acts
    weird") and the new one tells, in the past and without a habit or a change word, one time
    it happened ("Ezra *deploys* Oakhaven on Fridays" / "Ezra *deployed* Oakhaven on Friday",
    "Nightly builds fail on ARM runners" / "Last night's build *failed* on the ARM runner"):
    the habit still holds. ("Lesson learned" is a label, not a past.)"""
    old, new_ = statement(existing), statement(new)
    before = [t.lower for t in old.tokens]
    lower = [t.lower for t in new_.tokens]
    if not (_states_a_habit(before) or "whenever" in before) or _past_told(old):
        return False
    if _states_a_habit(lower) or "whenever" in lower or new_.markers - old.markers:
        return False
    if set(lower) & _NOT_A_PAST:
        return False  # "must be *pinned*", "is *built*", "wants it *phrased*": not a past
    return any(
        _in_the_past_word(w)
        for i, w in enumerate(lower)
        if not (w == "learned" and i and lower[i - 1] == "lesson")
    )


def habit_of_an_event(existing: str, new: str) -> bool:
    """The other way round of event_of_a_habit: the old text tells one time something
    happened, the new one, with no change word, states the habit ("The user ran the full
    test suite before pushing to main" / "The user *always runs* the full test suite before
    pushing to main"): both hold."""
    return not statement(new).markers and event_of_a_habit(new, existing)


_MODALS = frozenset({"must", "should", "can", "may", "need", "needs", "will", "would"})
_WANTS = frozenset({"want", "wants", "prefer", "prefers", "like", "likes", "expects"})


# What joins another statement to a text: marks (a semicolon, dashes, a comma) and words.
_JOINERS = frozenset({";", "\u2014", "\u2013", "-", ","}) | frozenset(
    ["and", "but", "with", "plus", "which", "who"]
)


# Words that join another thing to what a text names ("requires VPN access *in addition to*
# 2FA"): a new text that keeps every word of the old one and adds one with these says more.
_ADDING_PHRASES = frozenset({("in", "addition"), ("as", "well"), ("along", "with"), ("on", "top")})


def adds_alongside(existing: str, new: str) -> bool:
    """The new text keeps every content word of the old one and joins others to them with a
    phrase that adds ("in addition to", "as well as", "along with", "on top of") the old text
    does not have: another thing said beside what the old one says ("The
    admin panel requires 2FA" / "... requires VPN access in addition to 2FA")."""
    old, new_ = statement(existing), statement(new)
    if not old.words < new_.words:
        return False

    def phrases(one: Statement) -> set[tuple[str, str]]:
        lower = [t.lower for t in one.tokens]
        return {pair for pair in pairwise(lower) if pair in _ADDING_PHRASES}

    return bool(phrases(new_) - phrases(old))


# Words with which a text says how someone takes a fact, not the fact ("The user *doubts*
# the benchmark ...", "... *was annoyed that* ...", "*thanked* Omar for ...").
_ATTITUDE_WORDS = """
    doubt doubts doubted skeptical sceptical objected thank thanks thanked annoyed annoys
    complain complains complained worry worries worried praise praises praised questioned
    disagree disagrees disagreed frustrated surprised glad
    happy unhappy upset pleased impressed excited concerned suspicious relieved proud
    disappointed looks confirmed liked loved loves hated hates nervous anxious shocked scared afraid
    angry thrilled delighted acceptable unacceptable laughed shrugged dismissed finds
    annoying frustrating confusing painful tedious thinks believes feels"""
_ATTITUDE = frozenset(_ATTITUDE_WORDS.split())
# ... and phrases that do the same ("Tobiah is *fed up with* the flaky tests")
_ATTITUDE_PHRASES = frozenset({("fed", "up"), ("sick", "of"), ("tired", "of")})


def _attitudes(one: Statement) -> set[str]:
    """The words and phrases of _ATTITUDE and _ATTITUDE_PHRASES the text says."""
    lower = [t.lower for t in one.tokens]
    phrases = {" ".join(pair) for pair in pairwise(lower) if pair in _ATTITUDE_PHRASES}
    return (set(lower) & _ATTITUDE) | phrases


_HATING = frozenset(_stem(word) for word in ("hate", "dislike", "loathe"))


# Words with which a text tells an opinion someone holds ("The user *says* ...").
_OPINING = frozenset({"say", "says", "said", "think", "thinks", "thought", "feels", "felt"})


def reacts_to(existing: str, new: str) -> bool:
    """The new text says how someone takes what the old one states, which it keeps ("The
    benchmark shows the rewrite is 4x faster" / "The user *doubts* the benchmark showing
    the rewrite is 4x faster", "Omar published the guide" / "The user *thanked* Omar for
    publishing the guide", "The dashboard shipped on Tuesday" / "The user said the
    dashboard shipped on Tuesday *looks* great"): a statement of its own about the first."""
    old, new_ = statement(existing), statement(new)
    said = _attitudes(new_)
    # (an opinion said again in other words is no reaction to it: "The user says the
    # dashboard is too cluttered" / "The user said the dashboard looks cluttered")
    if not said or said & _attitudes(old) or _OPINING & {t.lower for t in old.tokens}:
        return False
    # (nor is a liking said again: "The user likes dark mode" / "The user loves dark mode";
    # but "thinks" is no liking of what "uses" says: "Dock telemetry uses MQTT" / "User
    # thinks choosing MQTT ... was a mistake")
    liking = _SAME_MEANING | _HATING
    if old.words & liking and {_stem(word) for word in said} & liking:
        return False
    kept = old.words - new_.words
    if len(kept) <= 1 and len(old.words) >= 3:
        return True
    # (or half its words, the one a reaction is about before the other: "Barney is
    # *delighted* with *uv* in *timetabler*" of "timetabler manages its dependencies with uv")
    shared = old.words & new_.words
    return 2 * len(shared) >= len(old.words) >= 3 and _reacted_before(new_, shared)


def _reacted_before(one: Statement, words: Set[str]) -> bool:
    """An attitude word (_attitudes) comes before every word of `words` in the text."""
    lower = [t.lower for t in one.tokens]
    said = [i for i, word in enumerate(lower) if word in _ATTITUDE]
    places = [i for i, t in enumerate(one.tokens) if t.norm in words]
    return bool(said and places) and min(said) < min(places)


# Verbs that say a thing changed by an amount: the number after "by" is how much it changed,
# no value of the thing ("Members can *extend* a reservation *by* 10 minutes").
_DELTA_VERB_WORDS = """
    extend increase raise lower reduce decrease cut shorten lengthen grow drop bump boost
    trim delay postpone push slip speed slow improve rise fall shrink expand add exceed beat
    outperform outrun outlast"""
_DELTA_VERBS = frozenset(_stem(word) for word in _DELTA_VERB_WORDS.split())


def _deltas(one: Statement) -> set[str]:
    """The values the text gives after "by" with a verb of _DELTA_VERBS before it in the
    same clause: amounts of a change."""
    tokens, found = one.tokens, set()
    for i, token in enumerate(tokens[:-1]):
        if token.lower != "by" or tokens[i + 1].norm not in one.values:
            continue
        for k in range(i - 1, -1, -1):
            if tokens[k].pause:
                break
            if _stem(tokens[k].lower) in _DELTA_VERBS:
                found.add(_value_key(tokens[i + 1]))
                break
    return found


# Words after which a verb's "-ed" or "-ing" form says what kind of thing follows.
_BEFORE_AN_ADJECTIVE_WORDS = "with the a an of for all any no on to about from every each"
_BEFORE_AN_ADJECTIVE = frozenset(_BEFORE_AN_ADJECTIVE_WORDS.split())


def participle_exchanged(existing: str, new: str) -> bool:
    """A verb's "-ed" form before a word in one text and its "-ing" form before the same word
    in the other ("*expired* medical certificates" / "*expiring* medical certificates",
    "*failed* jobs" / "*failing* jobs"): a state and one coming, two facts."""
    # (as an adjective: after a word such as "with" or "the", not a verb's: "fixtures
    # *mutating* state" / "fixtures that *mutated* state")
    pairs = [
        {
            (a.lower, b.norm)
            for before, a, b in zip(one.tokens, one.tokens[1:], one.tokens[2:], strict=False)
            if before.lower in _BEFORE_AN_ADJECTIVE and not before.pause
        }
        for one in (statement(existing), statement(new))
    ]
    for mine, theirs in (pairs, pairs[::-1]):
        for word, after in mine:
            if not word.endswith("ed"):
                continue
            for other, after_other in theirs:
                alike = other.endswith("ing") and _stem(other) == _stem(word)
                if alike and after == after_other:
                    return True
    return False


def by_an_amount(existing: str, new: str) -> bool:
    """One text gives a number as how much a thing changed ("Members can extend a bike
    reservation *by* 10 minutes"), the other the same number as a value, with no verb of a
    change ("Members can reserve a bike *for* 10 minutes"): two facts with one number, unless
    it names the value the thing changed to as well."""
    old, new_ = statement(existing), statement(new)
    for one, other in ((old, new_), (new_, old)):
        deltas = _deltas(one) & other.values
        changing = {_stem(t.lower) for t in other.tokens} & _DELTA_VERBS
        # (not when it gives the new value too: "... extended by 2 weeks *to 4 weeks*")
        more = one.values - other.values - other.words
        if deltas and not changing and not _deltas(other) and not more:
            return True
    return False


def _lists(one: Statement) -> list[list[str]]:
    """The text's lists of one-word items: "A, B and C", "A and B", "A, B, or C" (and in
    other languages, _LIST_JOINERS: "18, 20 *a* 22")."""
    tokens = one.tokens
    foreign = not _reads_english(one)
    found: list[list[str]] = []
    i = 0
    while i < len(tokens):
        items, j = [tokens[i].norm], i
        while j + 1 < len(tokens):
            joins = _joins(tokens, j + 1, foreign=foreign)
            if tokens[j].pause and not joins and not tokens[j + 1].first:
                items.append(tokens[j + 1].norm)  # "A, B" (not across a sentence or a colon)
                j += 1
            elif joins and j + 2 < len(tokens):
                items.append(tokens[j + 2].norm)  # "A and B", "A, and B"
                j += 2
                break
            else:
                break
        if len(items) > 1 and j > i and _joins(tokens, j - 1, foreign=foreign):
            found.append(items)
        i = max(j, i) + 1
    return found


# Words that join the last item of a list: "and", "or" and their like in other languages;
# those that are also English words or letters ("a", "i", "e", "o", "y", "en") only
# between two numbers ("Node 18, 20 *a* 22"), or "y", "e", "i", "en" in a text that does
# not read English ("Marisol usa Neovim, tmux *y* lazygit").
_LIST_JOINER_WORDS = """
    and or und oder et ou och eller og ve veya és vagy și sau и или та oraz lub"""
# (and the Ukrainian "i", a Cyrillic letter that looks like the Latin one)
_LIST_JOINERS = frozenset(_LIST_JOINER_WORDS.split()) | {"\u0456"}
_NUMBER_JOINER_WORDS = "a i e o y u en"
_NUMBER_JOINERS = frozenset(_NUMBER_JOINER_WORDS.split())
_FOREIGN_JOINERS = frozenset({"y", "e", "i", "en"})


def _joins(tokens: Sequence[_Token], k: int, *, foreign: bool = False) -> bool:
    """The token at k joins the last item of a list (_LIST_JOINERS, _NUMBER_JOINERS,
    _FOREIGN_JOINERS in a text that does not read English)."""
    if not 0 < k < len(tokens) - 1:
        return False
    word = tokens[k].lower
    if word in _LIST_JOINERS or (foreign and word in _FOREIGN_JOINERS):
        return True
    numbers = all(_CARDINAL.fullmatch(tokens[n].text) for n in (k - 1, k + 1))
    return word in _NUMBER_JOINERS and numbers


def adds_an_item(existing: str, new: str) -> bool:
    """The new text's list has every item of one of the old text's lists and more, the rest
    of the old text kept ("The pre-commit hooks are black and isort" / "... black, isort, and
    mypy"): another value of the list, not a rewording."""
    old, new_ = statement(existing), statement(new)
    if _item_joined(old, new_, alignment(existing, new)[0]):
        return True
    # a list of three or more written with commas alone ("Supported browsers: Chrome,
    # Firefox, Safari" / "... Chrome, Firefox, Safari, Edge"), the text around it the same
    if any(
        mine < theirs and around == around_new
        for mine, around in _comma_items(existing)
        for theirs, around_new in _comma_items(new)
    ):
        return True
    # a list that ends each text after a colon or a dash ("hooks: ruff, mypy" / "hooks Tam
    # insists on — ruff, mypy, and codespell")
    # (of the same things: "Linters for *Tern*: ..." / "Linters for *Wren*: ..." are two)
    mine_tail, theirs_tail = _tail_items(existing), _tail_items(new)
    if len(mine_tail) >= 2 and set(mine_tail) < set(theirs_tail):
        heads = [statement(_TAIL_MARK.split(text)[0]) for text in (existing, new)]
        first, second = heads
        if not (first.values - second.values - second.words) | (
            second.values - first.values - first.words
        ):
            return True
    # (a name of several words read across the items, "Rasmus, Tobias", is the items, where
    # the two lists open and close with the same items: "Rasmus, Tobias and the user" /
    # "Rasmus, Tobias, Kofi and the user")
    items = {item for found in _lists(new_) for item in found}
    across = old.words - new_.words
    if any(" " not in word or not set(word.split()) <= items for word in across):
        return False
    # (an item more that the old text has elsewhere is no item added: "offering: US and EU")
    return any(
        set(mine) < set(theirs)
        and not (set(theirs) - set(mine)) & old.words
        and (not across or (mine[0], mine[-1]) == (theirs[0], theirs[-1]))
        for mine in _lists(old)
        for theirs in _lists(new_)
    )


_COMMA_LIST = re.compile(r"[\w.+#/-]+(?:,\s+[\w.+#/-]+){2,}")
_TAIL_MARK = re.compile(r"(?::|\u2014|\u2013|\s-\s)")
_TAIL_ITEM_JOINERS = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")


def _tail_items(text: str) -> list[str]:
    """The items of a list of one-word items that ends the text after its last colon or
    dash ("Tam's required pre-commit hooks*: ruff, mypy*"), lower-cased; none when what
    follows the mark is no such list."""
    parts = _TAIL_MARK.split(text.strip().rstrip("."))
    if len(parts) < 2:
        return []
    items = [item.strip().lower() for item in _TAIL_ITEM_JOINERS.split(parts[-1])]
    if len(items) < 2 or any(not item or " " in item for item in items):
        return []
    return items


def _comma_items(text: str) -> list[tuple[frozenset[str], tuple[str, str]]]:
    """The one-word items of each list of three or more written with commas alone, and the
    text before and after it (lower-cased, without its marks)."""

    def plain(part: str) -> str:
        return " ".join(re.findall(r"\w+", part.lower()))

    return [
        (
            frozenset(_stem(item.strip().strip(".").lower()) for item in match.group(0).split(",")),
            (plain(text[: match.start()]), plain(text[match.end() :])),
        )
        for match in _COMMA_LIST.finditer(text)
    ]


def _item_joined(old: Statement, new: Statement, opcodes: _Opcodes) -> bool:
    """One item said alone in the old text, and in the new one "and" or "or" and one or two
    words the old text lacks inserted right after it, the old text's next word following
    ("The user wants type *hints* in all Python code" / "... type *hints and docstrings* in
    all public Python functions"): a list of it and another in its place; not a clause joined
    (a verb "is", "are", "has" after it)."""
    for operation, i1, _, j1, j2 in opcodes:
        if operation != "insert" or not 0 < i1 <= len(old.tokens) or not 2 <= j2 - j1 <= 3:
            continue
        joiner, *added = new.tokens[j1:j2]
        item = old.tokens[i1 - 1]
        if joiner.lower not in ("and", "or") or item.lower in STOPWORDS:
            continue
        if i1 == len(old.tokens):
            # the last item of a list that ends the old text ("lens types: single vision,
            # *bifocal*" / "handles single vision, *bifocal and progressive* lenses")
            listed = i1 > 1 and (old.tokens[i1 - 2].pause or old.tokens[i1 - 2].lower in _JOINING)
            if listed and any(t.lower not in STOPWORDS and t.norm not in old.words for t in added):
                return True
            continue
        if item.pause:
            continue
        if any(t.lower in STOPWORDS or t.norm in old.words or t.pause for t in added[:-1]):
            continue
        following = new.tokens[j2].lower if j2 < len(new.tokens) else ""
        if following in _BE or following in ("has", "have"):
            continue  # a clause joined ("..., and *mTLS is* turned on"): a fact added
        if added[-1].lower not in STOPWORDS and added[-1].norm not in old.words:
            return True
    return False


def adds_a_fact(existing: str, new: str) -> bool:
    """The new text says all the old one says and joins another statement to it ("Prod DB is
    Postgres 15" / "... with a read replica in eu-west-1b", "... ; property tests use
    Hypothesis", "potato salad" / "potato salad and a pie"): the old text, in order, then a
    joining word or mark and content words the old text does not have."""
    old, new_ = statement(existing), statement(new)
    if not old.words <= new_.words:
        return False
    a, b = [t.norm for t in old.tokens], [t.norm for t in new_.tokens]
    opcodes, kept = alignment(existing, new)
    if kept < len(a):
        return False
    tail = [op for op in opcodes if op[0] != "equal"]
    if len(tail) != 1 or tail[0][0] != "insert":
        return False
    _, _, _, j1, j2 = tail[0]
    added = [w for w in b[j1:j2] if w not in STOPWORDS and w not in old.words]
    if not added:
        return False
    if new_.tokens[j1].lower in _JOINERS:
        return True
    if j1 == 0:
        return False
    between = re.search(
        re.escape(new_.tokens[j1 - 1].text) + r"([^\w]*)" + re.escape(new_.tokens[j1].text), new
    )
    return between is not None and bool(set(between.group(1)) & _JOINERS)


def changes_late(existing: str, new: str) -> bool:
    """Every difference of the two texts is in the second half of each (the value said of the
    subject, not the subject: "Staging deploys ..." / "Prod deploys ..." differ early)."""
    opcodes, _ = alignment(existing, new)
    a, b = len(statement(existing).tokens), len(statement(new).tokens)
    changed = [op for op in opcodes if op[0] != "equal"]
    return bool(changed) and all(i1 >= a / 2 and j1 >= b / 2 for _, i1, _, j1, _ in changed)


# Words that open a memory with what kind of statement it is ("*Risk:* ...", "*Mitigation:*
# ...", "*Lesson:* ...", "*Plan:* ..."): two texts of two kinds are two statements, however
# alike ("Risk: only one engineer knows the billing codebase" / "Mitigation: a second
# engineer is now shadowing the billing codebase owner"). Not the words that say a change
# ("Correction:", "Update:").
_KIND_OPENER_WORDS = """
    risk risks mitigation lesson lessons decision plan proposal incident goal requirement
    constraint assumption convention preference fact instruction pattern rule caveat context
    todo tip warning workaround question idea observation hypothesis finding postmortem"""
_KIND_OPENERS = frozenset(_KIND_OPENER_WORDS.split())


def kinds_differ(existing: str, new: str) -> bool:
    """Both texts open with a word of _KIND_OPENERS and a colon (as _LABEL reads a label),
    and not the same word; or one opens with a word of _TENTATIVE ("*Proposal:* replace
    Jenkins with GitHub Actions") and the other with no label at all (a statement of what
    is: "Gullwing CI runs on GitHub Actions instead of Jenkins")."""
    one, other = (_LABEL.match(text) for text in (existing, new))
    if one is None or other is None:
        found = one or other
        return found is not None and _label_kind(found) in _TENTATIVE
    if _label_kind(one) not in _KIND_OPENERS or _label_kind(other) not in _KIND_OPENERS:
        return False
    return _label_kind(one).removesuffix("s") != _label_kind(other).removesuffix("s")


def _label_kind(label: re.Match[str]) -> str:
    """The word of a label as _LABEL matched it, lower-cased ("Risk: ..." -> "risk")."""
    return label.group(1).lower().strip()


# Kinds of statement that say what is not (yet) so: against a plain statement, another one.
_TENTATIVE = frozenset({"proposal", "proposals", "idea", "ideas", "question", "hypothesis", "todo"})


def _speaker(text: str) -> bool:
    """The text opens with a label that may name who says it (label): one word ("Kenji:",
    "bea:", "Ana (treasurer):"), or a name of words in capitals ("Mrs. Okafor:"); not a subject
    with words in lower case ("Greystone API version: 2.10.0", "Corvid weekly sync: Wed
    15:00", "Owners of Tidewater: ...")."""
    match = _LABEL.match(text)
    if match is None or label(text) is None:
        return False
    # (a role in brackets goes with the name: "Ana (treasurer):", "Support (Ali):")
    words = re.sub(r"\([^)]*\)?", " ", match.group(1)).split()
    return len(words) <= 1 or all(word[:1].isupper() for word in words)


def _one_speaker(existing: str, new: str) -> bool:
    """One text opens with a speaker's label (_speaker) that names none of the other's words,
    the other with no label: someone says it ("Staging runs in us-east-1" / "*Ife*: staging
    is in us-east-1"), not what it is about ("Rowan runs on Node.js version 20" / "*Rowan*:
    node v20", "Deploy order: ...")."""
    old_label, new_label = label(existing), label(new)
    if old_label is not None and new_label is None and _speaker(existing):
        said, other = old_label, new
    elif new_label is not None and old_label is None and _speaker(new):
        said, other = new_label, existing
    else:
        return False
    written = {form for t in statement(other).tokens for form in (t.lower, t.norm)}
    # (a label written as one word with a hyphen is the other text's word: "*seedbank-api*
    # uses PostgreSQL 16" / "*seedbank-api*: PG16")
    forms = {form for w in re.findall(r"\w+", said) for form in (w, _stem(w))} | {said}
    return not forms & written


def labels_differ(existing: str, new: str) -> bool:
    """Both texts open with a label and not the same ("Audrey: ..." / "Andrew: ...")."""
    old_label, new_label = label(existing), label(new)
    return old_label is not None and new_label is not None and old_label != new_label


_ORDINAL_WORDS_ALL = frozenset(_ORDINAL_WORDS.split()) | {"last", "next", "another", "other"}
# What says a text is about the future: a plan, not what happened.
_FUTURE = frozenset(
    {"will", "'ll", "won't", "wont", "gonna", "plan", "planning", "planned", "plans"}
    | {"intend", "intends", "intending", "goal"}
    | {"aim", "aims", "aiming"}
)
# Words that open a plan's word of its own (not "will": "the standup will be at 9:30").
_PLANNING = ("plan", "intend")
# A label that says the text is a plan ("*Goal for Q3:* move CI to self-hosted runners"; not
# a goal's value: "The user's savings goal is 500 euros").
_PLAN_LABEL = re.compile(r"\s*(?:goal|aim|objective|plan)s?\b[^:.;]{0,30}:", re.IGNORECASE)
_FUTURE_PHRASES = frozenset({("going", "to"), ("about", "to")})


def _future(one: Statement, *, refusals: bool = True) -> bool:
    """Whether the text says what will be: "will", "'ll", "going to", "plan", ...; with
    `refusals` False, not a refusal said for no time (_refusals)."""
    lower = [t.lower for t in one.tokens]
    # (a plan measured against is no plan: "ahead *of plan*", "*as planned*", "later *than
    # planned*", "according *to plan*"; nor "planned" after an article or a possessive, a
    # thing's kind: "its *planned* route", "the *planned* maintenance window")
    measured = {
        i
        for i, w in enumerate(lower[1:], start=1)
        if lower[i - 1] in _AGAINST_A_PLAN or (w == "planned" and lower[i - 1] in _DETERMINERS)
    }
    if not refusals:
        measured |= _refusals(one)
    return any(
        (w in _FUTURE and i not in measured) or w.endswith("'ll") for i, w in enumerate(lower)
    ) or any(p in _FUTURE_PHRASES for p in pairwise(lower))


def _refusals(one: Statement) -> set[int]:
    """Where the text says "won't" or "will not" of a thing it does or lets happen, for no
    time ("jumpbook *won't let* a customer book two sessions", "Wiremu *will not* approve a
    red build"): what it refuses, not a plan; not "*won't be*" (what will not be: "the
    concert won't be livestreamed") nor a refusal for a time ("Kofi *won't* come
    *tomorrow*")."""
    lower = [t.lower for t in one.tokens]
    if _anchors_of(one.tokens):
        return set()
    return {
        i
        for i, w in enumerate(lower)
        if (w in ("won't", "wont") and lower[i + 1 : i + 2] != ["be"])
        or (
            w == "will"
            and lower[i + 1 : i + 2] in (["not"], ["never"])
            and lower[i + 2 : i + 3] != ["be"]
        )
    }


def _futures(old: Statement, new: Statement) -> tuple[bool, bool]:
    """_future of each text, a refusal for no time read as a plan only when the other text
    says "will" of the same kind ("The importer *will* retry failed rows" / "The importer
    *won't* retry failed rows": one tense, the negation of the other)."""
    return (
        _future(old, refusals=_says_will(new)),
        _future(new, refusals=_says_will(old)),
    )


def _says_will(one: Statement) -> bool:
    """The text says "will" or "'ll" without a negation after it."""
    lower = [t.lower for t in one.tokens]
    return any(
        (w == "will" and lower[i + 1 : i + 2] not in (["not"], ["never"])) or w.endswith("'ll")
        for i, w in enumerate(lower)
    )


_AGAINST_A_PLAN = frozenset({"of", "to", "as", "than", "behind"})


def another_occasion(existing: str, new: str) -> bool:
    """The texts tell of different occasions: both say when, and not at the same time; the
    new one says it happened again, or names another one of the same thing ("the interview"
    / "the *second* interview"); or one is a plan and the other is not ("I'll bring the
    speaker" / "I brought the speaker")."""
    old_at, new_at = anchors(existing), anchors(new)
    if old_at and new_at and not old_at & new_at:
        # a day or a month alone is the value of what is so now ("The fiscal year starts in
        # *April*" / "*October*", "Sprint planning happens on *Monday*"), the time of an
        # occasion when either text tells what happened ("I went to the movies on *Tuesday*")
        calendar = (old_at | new_at) <= CALENDAR
        if not calendar or _tells_the_past(existing) or _tells_the_past(new):
            return True
    old, new_ = statement(existing), statement(new)
    # (two decisions: "will" says what was decided, no plan: "Decision: Ferncast *will use*
    # SQLite for local dev" / "Decision: for local dev, Ferncast *uses* SQLite")
    decisions = all(one.tokens and one.tokens[0].lower == "decision" for one in (old, new_))
    old_plan, new_plan = _futures(old, new_)
    if old_plan != new_plan and not decisions:
        return True
    opcodes, _ = alignment(existing, new)
    for operation, i1, _, j1, j2 in opcodes:
        inserted = [t.lower for t in new_.tokens[j1:j2]]
        if operation == "insert" and i1 < len(old.tokens) and j2 - j1 == 1:
            word = inserted[0]
            if word in _ORDINAL_WORDS_ALL or _ORDINAL.fullmatch(word):
                return True
    lower = {t.lower for t in statement(new).tokens} - {t.lower for t in statement(existing).tokens}
    if lower & _ANOTHER_TIME or _state_and_past(existing, new):
        return True
    return _verb_in_two_tenses(old, new_) or _verb_in_two_tenses(new_, old)


def _verb_in_two_tenses(past: Statement, present: Statement) -> bool:
    """One text tells what happened with a verb in the past and the other what is so with
    the same verb in the present, between the same words ("Bettina *deployed* rotation-engine
    on a Friday evening" / "Bettina *deploys* rotation-engine on Friday evenings", "went
    climbing before work" / "i *go* climbing before work"): an event and a habit, or how
    things were and are. Between the same words, so that neither is a participle or an
    adjective ("the user's *preferred* editor is Neovim" / "the user *prefers* Neovim", "a
    monorepo *managed* by Nx" / "Nx *manages* the repo") nor a noun ("columns *named* in
    snake_case" / "column *names*")."""
    mine, theirs = past.tokens, present.tokens
    told = {t.lower for t in theirs}
    for i, token in enumerate(mine):
        past_word = _in_the_past_word(token.lower) and token.lower.isalpha()
        if not past_word or token.lower in told | _CARDINAL_WORDS:  # ("hundred")
            continue
        if i and mine[i - 1].lower in _BE | _HAVE | _DETERMINERS:
            continue  # a participle or an adjective ("a *rescued* greyhound", "is *used*")
        for j, other in enumerate(theirs):
            if other.norm != token.norm or _in_the_past_word(other.lower) or j == 0:
                continue
            after = [
                one[k + 1].norm if k + 1 < len(one) else "" for one, k in ((mine, i), (theirs, j))
            ]
            before = theirs[j - 1].lower
            # (a chat turn drops its subject: "Dani: went climbing" / "Dani: i go climbing")
            opens = i == 0 or (i == 1 and j == 2 and mine[0].norm == theirs[0].norm)
            same_before = (i > 0 and mine[i - 1].norm == theirs[j - 1].norm) or (
                opens and before in _PLURAL_SUBJECTS
            )
            if after[0] == after[1] and same_before:
                return True
    return False


_PLURAL_SUBJECTS = frozenset({"i", "we", "you", "they"})


# Words that say a text tells of the present ("is", "I'm", "we're").
_PRESENT = frozenset({"is", "are", "am", "i'm", "im", "we're", "you're", "they're", "it's"})
_PAST_TENSE = frozenset({"ran", "taught", "got", "made", "took", "became", "left"})


_PAST_FORMS = frozenset(
    past for entry in _IRREGULAR_VERBS.split() for past in entry.split(":")[1].split(",")
) - {"used"}


def _tells_the_past(text: str) -> bool:
    """The text tells what happened: a verb in the past ("went", "launched", "was") and no
    word of the present ("is", "has")."""
    return _past_told(statement(text))


def _past_told(one: Statement) -> bool:
    """_tells_the_past, of a text read."""
    words = [t.lower for t in one.tokens]
    return any(map(_in_the_past_word, words)) and not set(words) & _NOW_TOO


def _in_the_past_word(word: str) -> bool:
    """A lower-cased word that tells the past: "was", "went", a verb in "-ed"."""
    return word in _WAS or word in _PAST_FORMS or (word.endswith("ed") and len(word) > 4)


def _state_and_past(existing: str, new: str) -> bool:
    """One text says how things are now and the other what happened at a past time ("the user
    *is* learning Elixir" / "the user *taught* an Elixir workshop *last year*", "my team *is*
    in first place" / "my team *was* in last place *last season*"): two occasions."""
    texts = (existing, new)
    past = [
        _in_the_past(anchors(t))
        and any(
            w.lower in _PAST or w.lower in _PAST_TENSE or w.lower.endswith("ed")
            for w in statement(t).tokens
        )
        for t in texts
    ]
    present = [
        not anchors(t) and any(w.lower in _PRESENT for w in statement(t).tokens) for t in texts
    ]
    if (past[0] and present[1]) or (past[1] and present[0]):
        return True
    # or one says only how things were, the other only how they are ("the user *is* on the
    # payments team" / "before payments, the user *was* on the search team")
    tenses = [_tense(t) for t in texts]
    return None not in tenses and tenses[0] != tenses[1]


# Words that say a text tells of the past state of things ("used to" too), and of the present
# one (with _PRESENT): a text that has words of one and none of the other is in that tense.
_WAS = frozenset({"was", "were", "had", "previously", "formerly", "originally"})
_NOW_TOO = _PRESENT | frozenset(
    {"has", "have", "we've", "i've", "they've", "he's", "she's", "that's", "there's"}
)


# Words that say a text tells of a habit, how things go now ("gets reset *every* Monday").
_HABIT = frozenset({"every", "gets", "usually", "always"})


# Change words that tell how things were, not that they changed now ("*formerly* handled by
# Airflow", "*used to* run on Jenkins"): a text in the past tense with no other tells history.
_HISTORY_MARKERS = frozenset({"previously", "formerly", "used to", "originally"})


def tells_history(existing: str, new: str) -> bool:
    """The new text is only in the past tense, the old one not in the past (a verb of its own
    is no tense to this reading: "The user *writes* tests first"), and the new one's change
    words only say how things were ("Ingest is handled by the Go service" / "Ingest was
    formerly handled by Airflow", "At their previous job, the user *used to* write tests
    first"): it tells what was, and cannot replace what is."""
    added = statement(new).markers - statement(existing).markers
    return (
        bool(added)
        and added <= _HISTORY_MARKERS
        and _tense(new) == "past"
        and _tense(existing) != "past"
    )


def tells_history_before(existing: str, new: str) -> bool:
    """The old text only tells how things were ("The user *used to* keep notes in Obsidian")
    and the new one says how they are with no word of a change ("The user keeps notes in
    Obsidian"): the past and the present, two occasions; neither replaces the other."""
    old, new_ = statement(existing), statement(new)
    return (
        bool(old.markers)
        and old.markers <= _HISTORY_MARKERS
        and not new_.markers
        and _tense(existing) == "past"
        and _tense(new) != "past"
    )


def _tense(text: str) -> str | None:
    one = statement(text)
    words = {t.lower for t in one.tokens}
    # (a passive "is used to" is no marker: "Vite *is used to* build the frontend")
    used_to = "used to" in one.markers
    was = bool(words & _WAS) or used_to
    # a habit word in a habit of the past is of the past ("*used to* pair *every* day")
    now = bool(words & (_NOW_TOO | _TODAY)) or (bool(words & _HABIT) and not used_to)
    return "past" if was and not now else "present" if now and not was else None


_BE = frozenset({"is", "are", "was", "were", "be", "been", "being", "get", "gets", "got"})
# Words that say a text is no past told (event_of_a_habit): the present, a modal, a passive of
# the present ("is built"; "was run" is a past), a wish.
_NOT_A_PAST = _NOW_TOO | _MODALS | (_BE - _WAS) | _WANTS
# Words that say a text tells of the present whatever its verbs ("it uses Vitest *today*").
_TODAY = frozenset({"now", "today", "currently", "nowadays", "presently", "anymore"})


def past_and_plan(existing: str, new: str) -> bool:
    """One text says when something happened and the other when it will happen ("Upgrade
    Django to 5.0 *next quarter*" / "Django was upgraded to 4.2 *last quarter*"): two
    occasions, whatever change word one of them has."""
    old_at, new_at = anchors(existing), anchors(new)
    return (_in_the_past(old_at) and _in_the_future(new_at)) or (
        _in_the_future(old_at) and _in_the_past(new_at)
    )


def _in_the_future(found: Set[str]) -> bool:
    """Whether one of a text's time anchors is to come: "next ...", "tomorrow"."""
    return any(a.startswith(("next", "coming")) or a == "tomorrow" for a in found)


def _in_the_past(found: Set[str]) -> bool:
    """Whether one of a text's time anchors (see anchors) is in the past: "last ...", "...
    ago", "yesterday"."""
    return any(a.startswith("last") or a.endswith("ago") or a == "yesterday" for a in found)


DIRECTIONS = frozenset(
    frozenset(_stem(word) for word in pair.split(":")) for pair in _DIRECTION_PAIRS.split()
)


def one_in_each(
    pairs: Set[frozenset[str]], mine: Set[str], theirs: Set[str]
) -> tuple[str, str] | None:
    """One of `pairs` (two words each) with one word in `mine` only and the other in
    `theirs` only, as (mine's, theirs'); the first in the words' order."""
    return next(each_in_each(pairs, mine, theirs), None)


def each_in_each(
    pairs: Set[frozenset[str]], mine: Set[str], theirs: Set[str]
) -> Iterator[tuple[str, str]]:
    """Every pair of one_in_each, in the words' order: looked up by the words, so a list of
    thousands of pairs costs no more than one of ten."""
    only_theirs = sorted(theirs - mine)
    for a in sorted(mine - theirs):
        for b in only_theirs:
            if frozenset((a, b)) in pairs:
                yield a, b


def changes_direction(existing: str, new: str) -> bool:
    """One text says one direction of an exchange and the other the other, each alone
    (DIRECTIONS: "returns" / "accepts", "reads" / "writes", "upload" / "download"), or the
    new one says the way back ("Contacts sync from HubSpot into the warehouse" / "Contacts
    sync from the warehouse *back into* HubSpot")."""
    old, new_ = statement(existing), statement(new)
    if one_in_each(DIRECTIONS, old.words, new_.words) is not None:
        return True
    return _says_back(new_) and not _says_back(old)


# "back" before one of these says the way back ("syncs *back into* the CRM"), but not after a
# verb it makes another verb of ("*pushed back* to December 20", "*went back* to Node").
_BACK_TO = frozenset({"to", "into", "onto", "from", "in"})
_BACK_VERB_WORDS = """
    push pushed pushes go goes went gone come comes came roll rolled get got set fall falls
    fell put puts bring brings brought send sends sent give gives gave pay pays paid read
    reads write writes wrote call calls called scale scaled hold holds held look looked turn
    turned move moves moved hand handed"""
_BACK_VERBS = frozenset(_BACK_VERB_WORDS.split())


def _says_back(one: Statement) -> bool:
    words = ["", *(t.lower for t in one.tokens)]
    return any(
        b == "back" and c in _BACK_TO and a not in _BACK_VERBS
        for a, b, c in zip(words, words[1:], words[2:], strict=False)
    )


def adds_another(existing: str, new: str) -> bool:
    """The new text says the same holds of something else as well ("too", "also", "either",
    "as well", where the existing text has none of them): another holder or thing."""
    old = [t.lower for t in statement(existing).tokens]
    new_ = [t.lower for t in statement(new).tokens]

    def additive(words: list[str]) -> bool:
        return bool(set(words) & _ADDITIVE) or any(p in _ADDING_PHRASES for p in pairwise(words))

    return additive(new_) and not additive(old)


def asks(text: str) -> bool:
    """The text is a question: it ends with a question mark, or its first sentence does
    ("Does notify-gw still go through Twilio for SMS? Marisol wants to check.": what follows
    a question opening a text says who asks or why, no answer to it)."""
    written = text.rstrip().rstrip("\"')»”")
    first = _SENTENCE_BREAK.split(written, maxsplit=1)[0]
    return written.endswith(_QUESTION_MARKS) or first.endswith(_QUESTION_MARKS)


_QUESTION_MARKS = ("?", "\uff1f", "\u061f")  # and the full-width and the Arabic ones
_SENTENCE_BREAK = re.compile(r"(?<=[.!?\uff1f\u061f])\s+")


_ASKING = frozenset({"asked", "asks", "asking", "wondered", "wonders", "wondering"})
_QUESTION_WORDS = frozenset(
    {"whether", "why", "if", "how", "what", "which", "when", "where", "who"}
)
_ADDRESSED = frozenset({"me", "us", "you", "him", "her", "them"})
# Words that leave a question open before "whether" or "if" ("need to *check whether* the repo
# still uses Poetry", "*not sure if* staging has the fix", "*unclear whether* ..."): a text
# that wonders states neither value.
_WONDERING_WORDS = """
    check checking recheck double-check verify verifying confirm confirming sure unsure
    unclear uncertain know knows idea investigate investigating see determine ask"""
_WONDERING = frozenset(_WONDERING_WORDS.split())
# ... and "out" after these ("*find out whether*"; "go out whether or not" says no question)
_FINDING = frozenset({"find", "finding", "figure", "figuring", "work", "working"})


# Who a request is addressed to, before its "to": a pronoun ("asked *me* to"), or a noun
# after one of these ("asked *the agent* to", "asked *our* DBA to").
_ADDRESSEE_DETERMINERS = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their"})


def _asks_someone_to(following: Sequence[_Token]) -> bool:
    """The words after an asking word are "to" and a verb ("asked *to* rename the folder"), or
    name someone and then "to": a pronoun ("asked *her* to"), a name ("asked *Priya* to"), or
    one or two words after a determiner ("asked *the agent* to", "asked *her manager* to",
    "asked *the new DBA* to")."""
    words = [t.lower for t in following]
    if not words:
        return False
    if words[0] == "to" and len(words) > 1 and words[1] not in STOPWORDS:
        return True
    if words[0] in _ADDRESSED and words[1:2] == ["to"]:
        return True
    if words[0] in _ADDRESSEE_DETERMINERS:
        return "to" in words[2:4]
    return following[0].text[:1].isupper() and words[1:2] == ["to"]


def speech(text: str) -> Literal["question", "request", "statement"]:
    """What the text does: asks ("...?", "the user *asked why* the build is slow", "*wants to
    know* ...", "need to *check whether* ..."), reports a request ("the user *asked me to*
    bump lodash"), or states. A question or a request is not the answer or the deed ("The
    build takes 12 minutes", "I bumped lodash")."""
    if asks(text):
        return "question"
    tokens = statement(text).tokens
    lower = [t.lower for t in tokens]
    for i, word in enumerate(lower):
        following = lower[i + 1 : i + 4]
        if word in _ASKING and any(w in _QUESTION_WORDS for w in following[:2]):
            return "question"
        wonders = word in _WONDERING or (word == "out" and i and lower[i - 1] in _FINDING)
        if wonders and following[:1] and following[0] in {"whether", "if"}:
            return "question"
        if word == "know" and lower[max(0, i - 2) : i] == ["wants", "to"]:
            return "question"
        if word in _ASKING and _asks_someone_to(tokens[i + 1 : i + 5]):
            return "request"
    return "statement"


# Words that open a lesson: what happened and what it taught, not the rule it led to
# ("Lesson: renaming a function without an alias broke two packages" / "Always keep an
# alias ...").
_LESSON_WORDS = frozenset({"lesson", "lessons", "learned", "learnt", "til", "postmortem"})


def tells_a_lesson(text: str) -> bool:
    """The text is a lesson: one of _LESSON_WORDS among its first three words (after a
    speaker's label), or "lesson learned" / "learned the hard way" in it."""
    lower = [t.lower for t in statement(text).tokens]
    if (name := label(text)) is not None:
        lower = lower[len(statement(name).tokens) :]
    if any(w in _LESSON_WORDS for w in lower[:3]):
        return True
    phrases = set(pairwise(lower))
    return ("lesson", "learned") in phrases or ("hard", "way") in phrases


# How an instruction opens: "Always ...", "Never ...", "Don't ...", "Mock the clock ...".
_INSTRUCTION_WORDS = """
    always never don't dont do avoid please make keep use run mock bring carry book prefer
    remember ensure check write add put pin set stop start test deploy commit push pull merge
    rebase squash review update bump install call wrap pass wait read skip"""
_INSTRUCTION_STARTS = frozenset(_INSTRUCTION_WORDS.split())


def instructs(text: str) -> bool:
    """The text opens (after a speaker's label) with a word that gives an instruction."""
    lower = [t.lower for t in statement(text).tokens]
    if (name := label(text)) is not None:
        lower = lower[len(statement(name).tokens) :]
    return bool(lower) and lower[0] in _INSTRUCTION_STARTS


def lesson_and_rule(existing: str, new: str) -> bool:
    """One text tells a lesson and the other gives an instruction ("Lesson: renaming a public
    function without an alias broke two packages" / "Always keep an alias when renaming a
    public function"): what happened and the rule it led to are two memories; nor does any
    text that tells no lesson replace an older one that does."""
    old_lesson, new_lesson = tells_a_lesson(existing), tells_a_lesson(new)
    if old_lesson == new_lesson:
        return False
    if old_lesson:
        # what a lesson tells happened, and a text that is no lesson never undoes it ("Lesson:
        # mocking the clock hid a timezone bug" / "Scheduler tests now run against a real
        # clock"); one that names the lesson may correct it ("Correction to that lesson: ...")
        return "lesson" not in {t.norm for t in statement(new).tokens}
    return instructs(existing)


# Words on a plan's side that make it a change from now on ("*from now on* deploys will run
# at 3am"), not a plan against what happened.
_FROM_NOW = frozenset({"now", "instead", "henceforth", "onwards", "forward"})


def plan_and_event(existing: str, new: str) -> bool:
    """One text is a plan and the other says it happened ("Plan: migrate auth to Clerk next
    quarter" / "Auth migrated to Clerk last week": a past change word, "was", "did", "last
    ...", "... ago"): what was planned and what happened are two facts, whatever change word
    the event uses, unless the plan says it holds from now on ("from now on deploys will run
    at 3am"), or is a standing fact said with "will" (no "plan", no time anchor) that the
    other corrects with a word that says a value changed ("the standup will be at 9:30 every
    day" / "the standup was moved to 10:00")."""
    old, new_ = statement(existing), statement(new)
    old_plan, new_plan = _futures(old, new_)
    if old_plan == new_plan:
        return False
    (plan, event), event_text = ((old, new_), new) if old_plan else ((new_, old), existing)
    plan_text = existing if plan is old else new
    if any(t.lower in _FROM_NOW for t in plan.tokens):
        return False
    if (
        not anchors(plan_text)
        and not any(t.lower.startswith(_PLANNING) for t in plan.tokens)
        and not _PLAN_LABEL.match(plan_text)
        and event.markers & STRONG_MARKERS
    ):
        return False  # "the standup *will be* at 9:30 every day" / "the standup *was moved* to 10"
    return any(_happened(t.lower) for t in event.tokens) or _in_the_past(anchors(event_text))


# Words that say something happened: with a change word in the past ("migrated", "moved").
_PAST = frozenset({"was", "were", "did", "had", "went", "done", "finished", "completed"})


def _happened(word: str) -> bool:
    return word in _PAST or (word in CHANGE_MARKERS and word.endswith("ed"))


def elaborates(existing: str, new: str) -> bool:
    """The new text is the old one, word for word and in order, with words of its own before
    or after it ("prefers pnpm over npm" / "... over npm *for the frontend; the backend uses
    uv*", "my son plays the violin" / "... the violin *in the school orchestra on
    Wednesdays*"): it narrows or adds to the old fact, and is not the same statement (see
    adds_a_fact, which needs a joining word for one added word)."""
    old, new_ = statement(existing), statement(new)
    if not old.words or not old.words <= new_.words:
        return False
    opcodes, kept = alignment(existing, new)
    if kept < len(old.tokens) or any(op[0] not in ("equal", "insert") for op in opcodes):
        return False
    inserts = [op for op in opcodes if op[0] == "insert"]
    if any(0 < i1 < len(old.tokens) for _, i1, _, _, _ in inserts):
        return False  # words put inside the old text change it; see changed_values
    added = {new_.tokens[j].norm for _, _, _, j1, j2 in inserts for j in range(j1, j2)}
    # what the new text says is not so only names the value again ("main (not master)")
    return len(added - STOPWORDS - old.words - new_.negated) >= _ELABORATION_WORDS


def acts_differ(existing: str, new: str) -> bool:
    """Both texts open with the same person and say another act of theirs, the old text's
    verb said nowhere in the new one nor the new one's in the old ("Kofi *approves* schema
    changes to slipway-book" / "Kofi *gets notified of* slipway-book schema changes", "The
    user *approved* the schema change" / "The user *asked for* a schema change"): what one
    does with the same thing, two statements. Not verbs of one meaning (_SAME_VERBS, a
    choice: "prefers" / "likes", a wish: "wants" / "expects", _WISHES), nor one that only
    links a thing to its value ("uses", "has"), nor a state ("is based in": _opening_act)."""
    old, new_ = statement(existing), statement(new)
    first, second = _opening_act(old), _opening_act(new_)
    if first is None or second is None:
        # or the same thing opening both in the passive ("stubline refunds *are processed*
        # within 5 business days" / "stubline refunds *must be requested* within 5 business
        # days of the concert")
        first, second = _passive_act(old), _passive_act(new_)
    if first is None or second is None or first[0] != second[0]:
        return False
    verbs = {first[1], second[1]}
    if len(verbs) < 2 or len(_as_one_verb(verbs)) < 2:
        return False
    if verbs & LINKING_VERBS or verbs <= _SAME_MEANING or verbs <= _WISHES:
        return False
    return first[1] not in {t.norm for t in new_.tokens} and second[1] not in {
        t.norm for t in old.tokens
    }


# Words between a person and their act that are no act ("Kofi *gets* notified", "Ana *will*
# review"), and verbs that all say what someone wants ("wants" / "expects" / "insists").
_ACT_HELPERS = frozenset(
    {"get", "gets", "got", "will", "would", "can", "could", "should", "must", "may", "might"}
)
_WISHES_WORDS = "want expect require need insist demand ask prefer like"
_WISHES = frozenset(_stem(word) for word in _WISHES_WORDS.split())


def _opening_act(one: Statement) -> tuple[str, str] | None:
    """(subject, verb) of a text that opens with a person ("Kofi", "The user", "I") and a
    verb of theirs, auxiliaries and adverbs in "-ly" passed ("Kofi *gets notified*"); None
    otherwise."""
    tokens = one.tokens[_label_length(one.tokens) :]
    lower = [t.lower for t in tokens]
    if len(tokens) < 2:
        return None
    if lower[:2] == ["the", "user"]:
        subject, at = "user", 2
    elif lower[0] in ("i", "we", "user"):
        subject, at = lower[0], 1
    elif tokens[0].text[:1].isupper() and tokens[0].norm not in STOPWORDS and not tokens[0].pause:
        subject, at = tokens[0].norm, 1
    else:
        return None
    while at < len(tokens) and (lower[at] in _ACT_HELPERS or lower[at].endswith("ly")):
        at += 1
    if at < len(tokens) and lower[at] in _BE:
        return None  # a state: "The user *is based* in Lisbon"
    if at >= len(tokens):
        return None
    verb = tokens[at]
    # ("owns" is an act, though "own" is a stopword: "my *own* branch")
    stopword = verb.norm in STOPWORDS and verb.lower not in _OWNING
    if not verb.lower.isalpha() or verb.text[:1].isupper() or stopword:
        return None
    if not (
        verb.lower.endswith(("s", "ed")) or verb.lower in _PAST_FORMS or subject in ("i", "we")
    ):
        return None  # no verb of theirs ("Kofi's ...", "Kofi schema ..."; "Leo *wrote* ...")
    return subject, verb.norm


def _passive_act(one: Statement) -> tuple[str, str] | None:
    """(subject, participle) of a text that opens with a thing and what is done to it in the
    passive ("Refunds *are processed* ...", "The nightly backup *gets verified* ...",
    "Refunds *must be requested* ..."): the content words before "is", "are", "be", "get",
    ... (a modal passed), and the participle after it, something said after that (when, by
    whom, where); None otherwise (a state said last: "The build is *broken*.")."""
    tokens = one.tokens[_label_length(one.tokens) :]
    lower = [t.lower for t in tokens]
    at = next((i for i, word in enumerate(lower) if word in _BE), None)
    if at is None or at == 0:
        return None
    before = [t for t in tokens[:at] if t.lower not in _ACT_HELPERS]
    subject = [t.norm for t in before]
    if not subject or any(t.norm in STOPWORDS - {"the", "a", "an"} for t in before):
        return None  # not a thing alone before it ("It is", "What is", "The user's ... is")
    after = at + 1
    while after < len(tokens) and lower[after].endswith("ly"):
        after += 1
    if after >= len(tokens):
        return None
    participle = tokens[after]
    if not participle.lower.isalpha() or participle.norm in STOPWORDS:
        return None
    if not (participle.lower.endswith("ed") or participle.lower in _PAST_FORMS):
        return None  # a state or a value ("is 10 minutes", "are slow")
    if after + 1 >= len(tokens) or not tokens[after + 1].lower.isalnum():
        return None  # nothing done, a state said last ("The staging cluster is *broken*.")
    words = [word for word in subject if word not in ("the", "a", "an")]
    return " ".join(words), participle.norm


def adds_an_exception(existing: str, new: str) -> bool:
    """The new text opens an exception the old one lacks (_EXCEPTING, _EXCEPTING_PHRASES:
    "except", "apart from", "other than") and names in it a content word the old text does
    not have ("Dima skips meetings before 10:00" / "No meetings before 10:00 for Dima,
    *apart from* the Monday on-call handover"): the rule with a case left out, another
    statement than the rule for every case. Not with a change word of its own ("Update:
    prod deploys are *now* allowed on Fridays, except during a freeze": a correction)."""
    old, new_ = statement(existing), statement(new)
    if new_.markers - old.markers:
        return False
    known = old.words | old.values
    lower = [t.lower for t in new_.tokens]
    theirs = {t.lower for t in old.tokens}
    for i, word in enumerate(lower):
        phrase = tuple(lower[i : i + 2])
        if word in _EXCEPTING and word not in theirs:
            start = i + 1
        elif phrase in _EXCEPTING_PHRASES and not set(phrase) <= theirs:
            start = i + 2
        else:
            continue
        for token in new_.tokens[start:]:
            if token.norm in new_.words | new_.values and token.norm not in known:
                return True
            if token.pause:
                break
    return False


def narrows_a_noun(existing: str, new: str) -> bool:
    """The new text is the old one with a word put between a determiner or possessive and
    what followed it ("my lease" / "my *car* lease", "the API" / "the *public* API"): another,
    narrower thing. Everything else stays in place and in order."""
    old, new_ = statement(existing), statement(new)
    opcodes, kept = alignment(existing, new)
    if kept < len(old.tokens) or any(op[0] not in ("equal", "insert") for op in opcodes):
        return False
    for _, i1, _, j1, j2 in (op for op in opcodes if op[0] == "insert"):
        inserted = new_.tokens[j1:j2]
        # (or before the noun that opens the old text: "Deploys ..." / "*Hotfix* deploys ...")
        # (not a label: "*Decision:* the event bus is RabbitMQ")
        opening = (
            i1 == 0 == j1
            and bool(old.tokens)
            and not inserted[-1].pause
            and not (
                {t.lower for t in inserted} & (CHANGE_MARKERS | _INSTRUCTION_STARTS | NEGATORS)
            )
        )
        before_noun = 0 < i1 < len(old.tokens) and old.tokens[i1 - 1].lower in _DETERMINERS
        if not (opening or before_noun):
            continue
        if len(inserted) <= 2 and all(t.norm not in STOPWORDS for t in inserted):
            return True
    return False


# Words that say a statement holds of every one of a kind ("*all* services log in JSON"; not
# "any", which rewordings use for "all": "ask before adding *any* dependency").
_UNIVERSAL = frozenset({"all", "every"})
# and words that say as much before the other text's noun ("*whatever* code editor it is")
_ANY = frozenset({"whatever", "whichever", "each", "any", "every", "all"})


def _said_of_all(one: Statement) -> frozenset[str]:
    """The nouns the text says something of every one of: the content words within two words
    after "all" or "every" ("*all* services", "*every* team"), but a time ("every Tuesday",
    "every other week", "every 90 days": how often, not of what)."""
    nouns: set[str] = set()
    for i, token in enumerate(one.tokens):
        if token.lower in _UNIVERSAL:
            following = [t for t in one.tokens[i + 1 : i + 3] if t.norm not in STOPWORDS]
            if any(_is_time(t) for t in following):
                continue
            nouns.update(t.norm for t in following)
    return frozenset(nouns)


_TIME_WORDS = CALENDAR | _PERIODS


def _is_time(token: _Token) -> bool:
    return (
        token.norm in CALENDAR
        or token.lower.removesuffix("s") in _TIME_WORDS
        or token.lower in _DURATION_UNITS
        or any(ch.isdigit() for ch in token.norm)
        or token.lower in _ORDINAL_WORDS_ALL
    )


def one_or_all(existing: str, new: str) -> bool:
    """One text says it of every one of a kind and the other of one of them, named by a word
    before the noun that the first text does not have ("*all* services log in JSON" / "*the
    payments* service logs in JSON", "the *payments* team reviews within 24 hours" / "*every*
    team ..."): a wider or a narrower statement, not the same."""
    old, new_ = statement(existing), statement(new)
    for one, other in ((old, new_), (new_, old)):
        for noun in _said_of_all(one) - _said_of_all(other):
            for before, token in pairwise(other.tokens):
                if token.norm != noun or before.norm in STOPWORDS or before.lower in _ANY:
                    continue
                # a word of its own ("the *payments* service"), not one the first text says
                # in another form ("exactly" / "an *exact* version")
                if not any(word.startswith(before.norm) for word in one.words):
                    return True
    return False


# How many content words of its own a text adds at either end of the old one to say more
# than it ("... the violin *in the school orchestra on Wednesdays*"; "running late" /
# "running a bit late, sorry" adds two and says the same).
_ELABORATION_WORDS = 3


# Words that make a negation a limit or an exception ("*no more than* 3 retries", "never
# deploy *except* on Tuesdays", "don't use any ORM *other than* SQLAlchemy"): what follows
# them is allowed, and another value of it is a conflict.
_LIMITS = frozenset({"than", "except", "unless", "only", "besides", "other", "but"})


def rules_out_both(existing: str, new: str) -> bool:
    """Both texts rule something out, and what one rules out the other does not: two
    prohibitions or denials of two things, which hold together ("*Never* force-push to
    *main*" / "*Never* force-push to *release branches*", "The service does *not* use
    *Redis*" / "... does *not* use *Memcached*"). A value replaced (changed_values) in text
    read as English ("no" is no negation in Portuguese: "moro *no* terceiro andar"); each
    text negates as many clauses; every word one has and the other lacks comes after a
    negator in its own clause; none is a number; and neither text states a limit or an
    exception (_LIMITS: "*never* more than 3 retries" / "*never* more than 5 retries" is
    another value of one limit)."""
    old, new_ = statement(existing), statement(new)
    if not old.negations or old.negations != new_.negations:
        return False
    if not (reads_english(existing) and reads_english(new)) or not changed_values(existing, new):
        return False
    if any(t.lower in _LIMITS for one in (old, new_) for t in one.tokens):
        return False
    mine, theirs = _content_norms(old), _content_norms(new_)
    gone, came = mine - theirs, theirs - mine
    if not gone or not came or any(ch.isdigit() for word in gone | came for ch in word):
        return False
    return gone <= _ruled_out(old) and came <= _ruled_out(new_)


def _content_norms(one: Statement) -> frozenset[str]:
    """The text's content words as its tokens have them (not the parts and stems Statement.words
    adds, which _ruled_out would not find: "release" is "relea" and "releas" there)."""
    return frozenset(t.norm for t in one.tokens if t.norm not in STOPWORDS and t.text.isalnum())


def _ruled_out(one: Statement) -> frozenset[str]:
    """The words after each negator of the text, to the end of its clause (_negations)."""
    found: set[str] = set()
    inside = False
    for i, token in enumerate(one.tokens):
        if _opens_clause(one.tokens, i):
            inside = False
        if inside:
            found.add(token.norm)
        if _negates_at(one.tokens, i):
            inside = True
    return frozenset(found)


# Words of other languages written in Latin script that are not English words: a text with
# several of them is not one the English model reads (its similarities are not evidence).
# Line by line: Spanish, Portuguese, French, German, French, German, Italian, Portuguese,
# Turkish, Polish, Dutch, Vietnamese, Swedish, Norwegian and Danish, Finnish, Indonesian and
# Malay, Czech, Romanian, Hungarian, Tagalog, Hindi in Latin letters ("bor", "vill", "ikke",
# "yang", "hai": a word English also has, "till", "men", "van", "den", is left out).
_FOREIGN_WORDS = """
    el la los las del que por para con una uno muy pero también está esta este
    da dos das meu minha às em nas nos ele ela eu você o e
    le je nous vous leur de en un
    sie wir ihr mein meine
    est et les des du une avec sur dans pas sont mais aussi très cette ces
    der das und ist nicht mit für ein eine auf zu dem wird sind auch oder wir ich
    il di che della gli sono non nella anche
    não uma com ao são também está na faz fez pelo pela numa passada passado
    segunda terça quarta quinta sexta sábado domingo
    ve bir bu için ile değil çok
    się nie jest że oraz jak który
    het een niet ook zijn wordt
    và là của không có được
    och att som det bor eller vill hos ett alltid aldrig ingen mycket hon efter utan sig använder
    og ikke jeg aldri meget hun bruker
    että hän minä olen käyttää
    yang dari untuk dengan tidak itu saya kami adalah akan sudah juga pengguna
    jsou není jsem také používá
    este sunt pentru
    egy nem hogy
    mga
    hai hain nahi aur kya bhi
"""
FOREIGN_WORDS = frozenset(_FOREIGN_WORDS.split())
# Letters that English words never have (a name may: one such word is not enough).
FOREIGN_LETTERS = frozenset("\u0131şğñãõßłżźśćńąęőűøåæțșăđ")  # \u0131: the dotless i
# The accented letters of French, Spanish, Portuguese, Italian and German, which English has
# only in a few borrowed words and names ("café", "José"): reads_foreign counts them, against
# the text's English function words.
_ACCENTED = FOREIGN_LETTERS | frozenset("éèêëàâáíìîïóòôúùûüöäçœ")


def reads_foreign(text: str) -> bool:
    """The text has at least two words of another language (FOREIGN_WORDS, words with
    FOREIGN_LETTERS, or words in lower case with accented letters: "Café Olé" is a name) and
    more of them than English stopwords."""
    lower = [t.lower for t in statement(text).tokens]
    words = [(t.lower, t.text[:1].isupper()) for t in statement(text).tokens]
    foreign = sum(
        1
        for word, capital in words
        if word in FOREIGN_WORDS
        or (FOREIGN_LETTERS & set(word))
        or (not capital and _ACCENTED & set(word))
    )
    return foreign >= 2 and foreign > sum(1 for word in lower if word in STOPWORDS)


# The words a negation brings with it, compared as stems: the negators themselves and the
# auxiliaries ("does *not* want" / "wants", "is*n't* heated" / "is heated", "*without* sugar"
# / "with sugar"); not words said in place of what is negated.
_AUXILIARY_WORDS = """
    do does did is are was were be been will would can could shall should may might must have
    has had need needs needed"""
_POLARITY_WORDS = frozenset(_stem(word) for word in NEGATORS | set(_AUXILIARY_WORDS.split()))
_POLARITY_WORDS |= {"not"}


# Words that only stress what a text says ("i'm *def* not a morning person", "*honestly*
# never again"): no value said instead of what is negated.
_EMPHASIS_WORDS = """
    def definitely really totally absolutely honestly literally seriously certainly truly
    lol lmao tbh ngl fr btw whatsoever kinda sorta super"""
_EMPHASIS = frozenset(_stem(word) for word in _EMPHASIS_WORDS.split())


def _said_instead(old: Statement, new: Statement) -> frozenset[str]:
    """The content words the new text says that the old does not, but what it negates, the
    words of a negation and of emphasis."""
    return new.words - old.words - new.negated - _POLARITY_WORDS - _EMPHASIS


def negating_side(existing: str, new: str) -> Literal["existing", "new"] | None:
    """Which text negates what the other states: it has more negated clauses (see _negations:
    "not", "never", "no", "without", "don't", "isn't", ...; "not only" and two negations in one
    clause are not one), and the first content word after one of its negators is a word of
    the other text or a verb of the same preference ("require an API key" / "don't *require*
    an API key", "love sushi" / "don't *like* sushi"; not "pnpm" / "pnpm,
    not *npm*", nor "a gluten intolerance" / "can't *tolerate* gluten"). None when neither
    does, or both as often ("never deploy on Fridays" / "don't deploy on Fridays": a
    rewording)."""
    old, new_ = statement(existing), statement(new)
    if old.negations == new_.negations:
        return None
    fewer, more = (old, new_) if old.negations < new_.negations else (new_, old)
    if fewer.words & AVERSE and not _negated_heads(more) & AVERSE:
        # a verb that says no agrees with a negation ("The user *dislikes* emojis" / "*No*
        # emojis: the user *doesn't* like them"), unless the negation is of that verb ("The
        # user *doesn't hate* tabs")
        return None
    # (what the other text negates as well it does not state: "The user doesn't want emojis
    # in commits" / "No emojis in commits; the user does not want them"; unless its two
    # negations in one clause say yes: "must *never* be merged *without* review")
    if new_.negations > old.negations:
        return "new" if _negated_heads(new_) & _stated(old) - _denied(old) else None
    return "existing" if _negated_heads(old) & _stated(new_) - _denied(new_) else None


def _denied(one: Statement) -> frozenset[str]:
    """The words the text negates, when it has a negated clause."""
    return one.negated if one.negations else frozenset()


# Words after a negator that are part of the negation, not what it negates ("no *longer*
# needed", "not *even* close", "haven't *ever* been").
_NEGATION_TAILS = frozenset({"longer", "more", "ever", "even", "yet", "really"})
_NOT_A_HEAD = STOPWORDS | _POLARITY_WORDS | _NEGATION_TAILS


def polarity_opposite(pair: frozenset[str], existing: str, new: str) -> bool:
    """Whether two values of one setting (OPPOSITES) are opposite in these texts: always, but
    a pair with a negator ("always" / "never") only when the texts' polarity differs ("never
    run it without the plan" / "always run it with the plan" say the same)."""
    if not pair & NEGATORS:
        return True
    return statement(existing).negations != statement(new).negations


def _stated(one: Statement) -> frozenset[str]:
    """The text's words, and every verb of preference when it has one ("love sushi" states
    what "don't like sushi" negates)."""
    return one.words | _SAME_MEANING if one.words & _SAME_MEANING else one.words


def negated_words(text: str) -> frozenset[str]:
    """What the text negates: the first content word after each of its negators."""
    return frozenset(_negated_heads(statement(text)))


def rejected_words(one: Statement, *, also_stated: bool = False) -> frozenset[str]:
    """The content words a text rejects for another thing: the words of the phrase after a
    contrastive "not" (_contrasts_at), "rather than", "instead of", or "over" and "than" in a
    text of preference ("prefers pytest *over* unittest", "would rather use pnpm *than*
    npm"), up to the next function word after them or the end of the clause ("instead of
    *grep* for searching code", "not in *environment files*"), a preposition opening the
    phrase read through to what it names ("not *behind* the *VPN*"); not a number ("over
    1,000,000 rows"), nor a word the text also states outside such a phrase ("Postgres
    advisory *locks* instead of Redis *locks*"): with also_stated, those words only."""
    tokens = one.tokens
    preferring = bool(one.words & _SAME_MEANING - {"use"}) or any(
        t.lower in _COMPARING for t in tokens
    )
    inside: set[int] = set()
    for i, token in enumerate(tokens):
        pair = (token.lower, tokens[i + 1].lower) if i + 1 < len(tokens) else None
        comparing = token.lower in ("over", "than") and preferring
        if comparing and token.lower == "over" and i and tokens[i - 1].norm in _OVER_VERBS:
            comparing = False  # "chose Dagster to *take over* orchestration"
        comparing = comparing or _preferred_to(one, i)
        if _contrasts_at(tokens, i) or comparing or token.lower in _FOREIGN_REJECTING:
            start = i + 1
        elif pair in REJECTING_PHRASES or pair in _FOREIGN_REJECTING_PHRASES:
            start = i + 2
        else:
            continue
        seen = False
        for n in range(start, min(start + 4, len(tokens))):
            following = tokens[n]
            function = following.norm in STOPWORDS or following.lower in _FOREIGN_FUNCTION
            if function or following.lower in _CLAUSE_STARTS:
                if seen or following.lower in _CLAUSE_STARTS:
                    break
                continue
            if any(ch.isdigit() for ch in following.text + following.norm):
                break  # a number, in digits or words ("fewer than *four hundred* lines")
            inside.add(n)
            if following.lower in _PLACE_PREPOSITIONS and not (seen or following.pause):
                continue  # what it names is rejected too: "not behind *the VPN*"
            seen = True
            if following.pause:
                break
    elsewhere = {t.norm for n, t in enumerate(tokens) if n not in inside}
    if also_stated:
        return frozenset(tokens[n].norm for n in inside) & elsewhere
    return frozenset(tokens[n].norm for n in inside) - elsewhere


# Prepositions of place that are content words (not STOPWORDS): a rejected phrase they open
# rejects what they name too ("publicly reachable, not *behind the VPN*").
_PLACE_PREPOSITION_WORDS = """
    above across against along among around behind below beneath beside beyond inside near
    onto outside past throughout toward towards underneath upon via within"""
_PLACE_PREPOSITIONS = frozenset(_PLACE_PREPOSITION_WORDS.split())


def _preferred_to(one: Statement, i: int) -> bool:
    """Whether the word at i is the "to" of "prefers X *to* Y": "prefer" within the three
    words before it, a word between, no mark, a thing right before it and one of the two
    words after it naming a thing, not a verb ("prefers tabs *to spaces*", "... libraries
    *to the* standard library", "merges to merge *commits*"; not "prefers *to use*", "the
    preferred way *to trigger*": _opens_a_thing)."""
    tokens = one.tokens
    if tokens[i].lower != "to" or i < 2 or i + 1 >= len(tokens):
        return False
    # a thing on each side: "prefers *tabs* to *spaces*", "squash *merges* to merge *commits*"
    if tokens[i - 1].norm == _PREFER or not _opens_a_thing(one, tokens[i - 1]):
        return False
    following = tokens[i + 1 : i + 3]
    if not any(_opens_a_thing(one, token) for token in following):
        return False
    before = tokens[max(i - 4, 0) : i]
    if any(t.pause for t in before):
        return False
    return any(t.norm == _PREFER for t in before[:-1])


def _opens_a_thing(one: Statement, token: _Token) -> bool:
    """A word that opens the name of a thing, not an infinitive: an article or a possessive,
    a value, a word in capitals, a participle ("mocked", not "proceed"), a gerund
    ("rebasing") or a plural ("spaces", not "access")."""
    low = token.lower
    if low in _OPENING_ARTICLES or low in _POSSESSIVES:
        return True
    if token.norm in one.values or token.text[:1].isupper():
        return True
    if low.endswith("ed") and not low.endswith("eed"):
        return True  # a participle before its noun: "*mocked* unit tests"
    if low.endswith("ing") and len(low) > 5:
        return True  # what is done, as a noun: "prefers squashing *to rebasing*"
    return low.endswith("s") and not low.endswith(("ss", "us", "is"))


_PREFER = "prefer"


# Words that make "than" reject what follows it ("would *rather* use pnpm than npm", "likes
# tabs *better* than spaces")
_COMPARING = frozenset({"rather", "better"})
# Verbs that "over" follows as part of them ("take over", "fail over"): no preference.
_OVER_VERB_WORDS = "take took taken hand fail switch turn roll"
_OVER_VERBS = frozenset(_stem(w) for w in _OVER_VERB_WORDS.split())
# Words and pairs of other languages that reject what follows them, none an English word
# ("Vim *gegenüber* VS Code", "pytest *zamiast* unittest", "*en vez de* npm", "*in lieu of*"),
# and the function words of those languages read through after them ("statt *mit* npm").
_FOREIGN_REJECTING_WORDS = (
    "gegenüber statt anstatt anstelle plutôt invece piuttosto istället framför zamiast niż än"
)
_FOREIGN_REJECTING = frozenset(_FOREIGN_REJECTING_WORDS.split())
_FOREIGN_REJECTING_PHRASES = frozenset(
    {("en", "vez"), ("en", "lugar"), ("em", "vez"), ("ao", "invés"), ("in", "plaats")}
    | {("i", "stedet"), ("au", "lieu"), ("in", "lieu")}
)
_FOREIGN_FUNCTION_WORDS = "van för de di del do mit von"
_FOREIGN_FUNCTION = FOREIGN_WORDS | frozenset(_FOREIGN_FUNCTION_WORDS.split())


def stated_plainly(one: Statement) -> frozenset[str]:
    """The text's words, less those it negates or rejects and any word right after "over"
    ("use Postgres *over* MongoDB": no verb of preference, and still no statement of it)."""
    after_over = {b.norm for a, b in pairwise(one.tokens) if a.lower == "over"}
    return one.words - one.negated - rejected_words(one) - after_over


def tells_apart(existing: str, new: str) -> bool:
    """The new text rejects a phrase of the old text's words, every word of which it states
    outside the rejection too ("Thandi signed off on the rollout plan for brinegate v2, *not
    on the rollout itself*" / "Thandi signed off on the brinegate v2 rollout"): it tells its
    own thing from the old text's and says the old statement is not so; never a rewording of
    it. (A rejected word said only there is rejects_the_other's.)"""
    old, new_ = statement(existing), statement(new)
    alone = rejected_words(new_) - _REFLEXIVES  # ("... not the rollout *itself*")
    both = rejected_words(new_, also_stated=True) - _words_of_values(new_)
    # (not a value rejected for another: "room 5, *not room* 2", "#ci-alerts, not #builds")
    return bool(both & old.words) and not alone and not new_.markers - old.markers


def _words_of_values(one: Statement) -> frozenset[str]:
    """The words of the text's values and those written beside a number ("*room* 5")."""
    tokens = one.tokens
    beside = {
        a.norm for a, b in pairwise(tokens) if any(ch.isdigit() for ch in b.text) and not a.pause
    }
    return frozenset(w for value in one.values for w in _as_words(value).split()) | beside


_REFLEXIVES = frozenset({"itself", "themselves", "himself", "herself", "themself"})


def rejects_the_other(old: Statement, new: Statement) -> bool:
    """One text rejects a word the other states plainly ("Tests are written with pytest" /
    "... with unittest*, not pytest*"): not the same statement, whatever else they share."""
    return bool(
        rejected_words(new) & stated_plainly(old) or rejected_words(old) & stated_plainly(new)
    )


def _negated_heads(one: Statement) -> set[str]:
    """The first content word after each negator, within the three words after it."""
    heads: set[str] = set()
    for i in range(len(one.tokens)):
        if _negates_at(one.tokens, i):
            following = [t.norm for t in one.tokens[i + 1 : i + 4]]
            head = next((w for w in following if w not in _NOT_A_HEAD), None)
            if head is not None:
                heads.add(head)
    return heads


_ANTONYM_PAIRS = frozenset(
    frozenset(_stem(word) for word in pair.split(":")) for pair in _ANTONYMS.split()
)


def negates(existing: str, new: str) -> bool:
    """One text says the other is not so, with nothing in place of it ("I'm allergic to cats" /
    "I'm not allergic to cats at all"), or swaps a word for its opposite ("hate" / "love",
    "tabs" / "spaces", "enabled" / "disabled"): a different value of the same thing (not
    with a word naming a thing exchanged beside it: opposite_of_another_thing)."""
    old, new_ = statement(existing), statement(new)
    # nothing in place of what is negated, but a verb of the same meaning ("don't like" /
    # "love")
    # (not when what one negates the other rejects: "Do *not* use ORMs" / "raw SQL *rather
    # than* an ORM" agree)
    agree = old.negated & rejected_words(new_) or new_.negated & rejected_words(old)
    if negating_side(existing, new) and not _said_instead(old, new_) - _SAME_MEANING and not agree:
        return True
    return _opposite_exchanged(existing, new) is True


# Words right before a number that say it is a bound, and which way: "*under* 300 lines" /
# "*over* 300 lines", "*at least* 85%" / "*at most* 85%", "*longer than* 72 characters".
# (a bound said with a negator, "no more than", "no longer than", is read as "at most" or
# "at least" before: _NEGATED_BOUND)
_UPPER_WORDS = ("under", "below", "less than", "fewer than", "at most", "within")
_LOWER_WORDS = ("over", "above", "more than", "greater than", "at least")
_BOUNDS = {words: "upper" for words in _UPPER_WORDS} | {words: "lower" for words in _LOWER_WORDS}
# and comparatives, which also say what is refused ("rejects uploads *larger than* 25 MB": a
# maximum), so they turn a bound but add none
_UPPER_COMPARED = "shorter smaller lower"
_LOWER_COMPARED = "longer larger bigger higher"
# and words that name the bound ("*capped at* 12 MB" / "*at least* 12 MB"), which a text
# may add to the same value without saying more ("up to 12 MB per file" / "12 MB per file")
_UPPER_NAMED = "capped at", "up to", "limited to", "maximum of", "max of", "max", "maximum"
_LOWER_NAMED = "minimum of", "min of", "min", "minimum", "starting at"
_COMPARED_BOUNDS = (
    _BOUNDS
    | {
        f"{word} than": way
        for way, words in (("upper", _UPPER_COMPARED), ("lower", _LOWER_COMPARED))
        for word in words.split()
    }
    | dict.fromkeys(_UPPER_NAMED, "upper")
    | dict.fromkeys(_LOWER_NAMED, "lower")
)


def _bounds(one: Statement, bounds: dict[str, str] = _COMPARED_BOUNDS) -> dict[str, str]:
    """Each number of the text said as a bound, and which (upper or lower)."""
    lower = [token.lower for token in one.tokens]
    found: dict[str, str] = {}
    for i, token in enumerate(one.tokens):
        if token.norm not in one.values or not any(ch.isdigit() for ch in token.norm):
            continue
        # (an article between: "more than *a* quarter of an hour")
        at = i - 1 if i > 1 and lower[i - 1] in ("a", "an") else i
        for size in (3, 2, 1):  # "no more than" before "more than"
            words = " ".join(lower[max(at - size, 0) : at])
            if at >= size and words in bounds:
                found[token.norm] = bounds[words]
                break
    return found


def bound_directions(text: str) -> dict[str, str]:
    """Each number of the text said as a bound, and which (upper or lower): _bounds."""
    return _bounds(statement(text))


def _bound_turned(old: Statement, new: Statement) -> bool:
    """One number both texts state, said as a bound the other way ("PRs of *under* 300
    lines" / "PRs of *over* 300 lines")."""
    mine, theirs = _bounds(old), _bounds(new)
    return any(theirs.get(value, way) != way for value, way in mine.items())


# Nouns of undoing a thing: "approved *the revert of* the schema change" is about another act
# than "approved the schema change".
_UNDOING_WORDS = """
    revert reverts reversal reversals rollback rollbacks roll-back undo undoing removal
    deletion cancellation withdrawal retraction revocation rescission"""
_UNDOING = frozenset(_UNDOING_WORDS.split())

_UNDOING_VERB_WORDS = """
    revert reverted reverting remove removed removing delete deleted deleting cancel
    cancelled canceled cancelling canceling withdraw withdrew withdrawn withdrawing retract
    retracted retracting revoke revoked revoking undo undid undone rolled rollback"""
_UNDOING_VERBS = frozenset(_UNDOING_VERB_WORDS.split())


def undoes(existing: str, new: str) -> bool:
    """One text names the undoing of a thing ("the *revert of* the pattern_drafts schema
    change", "the *rollback of* 4.2") and the other names no undoing: what is said of the
    undoing (approved, scheduled, owned) is another statement than the same said of the
    thing ("Ras approved the schema change for `pattern_drafts`")."""

    def undone(text: str) -> bool:
        lower = [t.lower for t in statement(text).tokens]
        return any(
            word in _UNDOING and i + 1 < len(lower) and lower[i + 1] == "of"
            for i, word in enumerate(lower)
        )

    def undoing(text: str) -> bool:
        # (a verb of it too: "approved *removing* the legacy importer")
        return bool({t.lower for t in statement(text).tokens} & (_UNDOING | _UNDOING_VERBS))

    return (undone(new) and not undoing(existing)) or (undone(existing) and not undoing(new))


def default_and_required(existing: str, new: str) -> bool:
    """One text says what happens by default ("runs with `--dry-run` *by default*", "*defaults
    to* 30 days") and the other that it is required or must ("`--dry-run` is *required*",
    "*must* run with", "*always*"), with no default: what may be overridden and what may
    not, two statements."""

    def default(text: str) -> bool:
        lower = [t.lower for t in statement(text).tokens]
        return any(word.startswith("default") for word in lower)

    def required(text: str) -> bool:
        return bool({t.lower for t in statement(text).tokens} & _REQUIRING)

    return (default(new) and required(existing) and not default(existing)) or (
        default(existing) and required(new) and not default(new)
    )


_REQUIRING = frozenset({"required", "requires", "require", "mandatory", "must", "always"})


def opposite_of_another_thing(existing: str, new: str) -> bool:
    """An opposite exchanged ("enabled" / "disabled") while a word naming a thing is exchanged
    elsewhere ("dark mode in the *editor*" / "light mode in the *terminal*"): what is said
    of another thing, another statement."""
    return _opposite_exchanged(existing, new) == "of another thing"


@lru_cache(maxsize=256)
def _opposite_exchanged(existing: str, new: str) -> bool | Literal["of another thing"]:
    """Whether the texts exchange a word for its opposite (negates), and "of another thing"
    when a word naming a thing is exchanged beside it."""
    old, new_ = statement(existing), statement(new)
    opcodes, _ = alignment(existing, new)
    found, others = False, []
    denied = negated_words(existing), negated_words(new)
    had = {t.norm for t in old.tokens} | {t.text.lower() for t in old.tokens}
    said = {t.norm for t in new_.tokens} | {t.text.lower() for t in new_.tokens}
    for operation, i1, i2, j1, j2 in opcodes:
        if operation != "replace":
            continue
        gone = {t.text.lower() for t in old.tokens[i1:i2]} | {t.norm for t in old.tokens[i1:i2]}
        came = {t.text.lower() for t in new_.tokens[j1:j2]} | {t.norm for t in new_.tokens[j1:j2]}
        # a word negated in one text against its opposite in the other says the same ("not
        # *allowed*" / "*forbidden*")
        if bool(gone & denied[0]) != bool(came & denied[1]):
            others.append((old.tokens[i1:i2], new_.tokens[j1:j2]))
            continue
        # (not two values both texts state, each said of its thing in another order: "tabs
        # in Go and spaces in Kotlin" / "in Kotlin spaces; in Go, tabs", which the swap
        # readers tell from an exchange)
        pairs = [frozenset({a, b}) for a in gone for b in came if not (a in said and b in had)]
        if any(
            pair in _ANTONYM_PAIRS
            or (pair in OPPOSITES and polarity_opposite(pair, existing, new))
            # (of the same polarity: "Do *not* run them against production" / "point them
            # only at *non-production* ones" agree)
            or (_hyphen_negated(pair) and old.negations == new_.negations)
            for pair in pairs
        ):
            found = True
        elif not any(pair in OPPOSITES or pair in _SAID_OPPOSITES for pair in pairs):
            others.append((old.tokens[i1:i2], new_.tokens[j1:j2]))
    if not (found or _exchanges_an_opposite(old, new_)):
        return False
    # the opposite said of another thing: a word of a thing exchanged elsewhere ("dark mode in
    # the *editor*" / "light mode in the *terminal*", "*Staging* deploys are automatic" /
    # "*Production* deploys need a manual approval")
    if any(_names_a_thing(a, new_) and _names_a_thing(b, old) for a, b in others):
        return "of another thing"
    return True


def _hyphen_negated(pair: Set[str]) -> bool:
    """One word is the other with a negating prefix and a hyphen ("iced" / "de-iced",
    "blocking" / "non-blocking")."""
    if len(pair) != 2:
        return False
    short, long = sorted(pair, key=len)
    return len(short) >= 3 and any(long == prefix + short for prefix in _HYPHENED_NEGATIONS)


def _names_a_thing(span: Sequence[_Token], other: Statement) -> bool:
    """A content word of the span that the other text does not have, in a span with no number
    ("before *9am*" / "after *10pm*" says when)."""
    if any(ch.isdigit() for t in span for ch in t.text):
        return False
    theirs = {t.norm for t in other.tokens}
    return any(t.norm not in STOPWORDS and t.norm not in theirs and t.text.isalpha() for t in span)


# Opposites of _OTHER_OPPOSITES that say what a thing is, whatever the sentence order ("the
# risk level is *low*" / "the migration's risk level is *high*"); not those that more often
# pick one of two things ("the *old* / *new* billing system", "*local* / *remote* cache").
_SAID = """
    low:high same:separate same:different keep:delete kept:deleted more:less first:last
    early:late good:bad better:worse short:long"""
_SAID_OPPOSITES = frozenset(frozenset(pair.split(":")) for pair in _SAID.split())
# At most this many other content words exchanged on each side around an opposite read in
# any order (_exchanges_an_opposite).
OPPOSITE_OTHER_WORDS = 2


def _exchanges_an_opposite(old: Statement, new: Statement) -> bool:
    """A word of one text and its opposite in the other wherever they stand ("Dark mode is
    *enabled* by default" / "The admin panel has dark mode *disabled* by default"), with at
    most OPPOSITE_OTHER_WORDS other content words exchanged on each side, the same polarity
    for a pair without a negator, and neither word before a noun both texts have (a modifier
    that picks one thing of a kind: "the *old* billing system" / "the *new* billing
    system")."""
    gone, came = old.words - new.words, new.words - old.words
    if not gone or not came or old.negations != new.negations:
        return False  # (another polarity: "dislikes emojis" / "doesn't like emojis")
    shared = old.words & new.words
    gone_forms, came_forms = _exchanged_forms(old, gone), _exchanged_forms(new, came)
    for a, b in ((a, b) for a in gone_forms for b in came_forms):
        pair = frozenset({a, b})
        if pair in OPPOSITES and pair & NEGATORS:
            continue  # "always" / "never": read with the polarity by the alignment above
        if pair not in OPPOSITES and pair not in _ANTONYM_PAIRS and pair not in _SAID_OPPOSITES:
            continue
        modifier = _before_a_shared_noun(old, a, shared) or _before_a_shared_noun(new, b, shared)
        if modifier and "same" not in pair:  # "the *same* / a *separate* database" picks none
            continue
        others_gone = {w for w in gone if a not in _exchanged_forms(old, {w})}
        others_came = {w for w in came if b not in _exchanged_forms(new, {w})}
        if max(len(others_gone), len(others_came)) <= OPPOSITE_OTHER_WORDS:
            return True
    return False


def _before_a_shared_noun(one: Statement, word: str, shared: Set[str]) -> bool:
    """The word (as written or as a stem) stands right before a content word of `shared`."""
    tokens = one.tokens
    return any(
        word in (token.lower, token.norm) and following.norm in shared
        for token, following in pairwise(tokens)
    )


# -- features of a pair ---------------------------------------------------------------------


def unit_size(word: str) -> str | None:
    """The unit an English word names after a number, as the size the rule converts it to
    ("h" and "hours" are "3600s", "kg" is "1000g", "GB" a number of bytes), so that two words
    of one size are one unit; None for a word that names no duration, size, mass, length or
    volume (_DURATION_UNITS, _SIZE_UNITS, _MEASURE_UNITS)."""
    lower = word.lower()
    if lower in _DURATION_UNITS:
        return f"{_DURATION_UNITS[lower]}s"
    if lower in _SIZE_UNITS:
        return f"{_SIZE_UNITS[lower]}bytes"
    if lower in _MEASURE_UNITS:
        size, kind = _MEASURE_UNITS[lower]
        return f"{size.normalize():f}{kind}"
    return None


def content_words(text: str) -> frozenset[str]:
    """The stems of the text's words, lower-cased, without stopwords (values included)."""
    return statement(text).words


def value_words(text: str) -> frozenset[str]:
    """The words that state a value: numbers, times, versions, identifiers, names, quoted."""
    return statement(text).values


def says_it_changed(existing: str, new: str) -> bool:
    """The new text has a change marker ("now", "no longer", "switched", ...) that the
    existing one does not, or says that a word of the existing text is no longer so ("...,
    not 429", "instead of Fridays", "rather than the sister-in-law")."""
    old, new_ = statement(existing), statement(new)
    added: set[str] = set(new_.markers - old.markers - _exchanged_markers(old, new_))
    # (a change word that is the old text's own verb in another form says no change: "The
    # fiscal year *starts* in April" / "... a fiscal year *starting* in July"; not one that
    # says only that a value changed, whose noun is as common: "each *change*" / "*changed*")
    added = {m for m in added if m in STRONG_MARKERS or _stem(m) not in old.words}
    # ("instead of npm" where the old text rejects npm too, "rather than npm": no change)
    rejected_before, rejected_now = rejected_words(old), rejected_words(new_)
    if rejected_before and rejected_now and rejected_now <= rejected_before:
        added -= {"instead"}
    if added - WEAK_MARKERS or (added and changed_values(existing, new)):
        return True
    if _was_then_is(old, new_):
        return True
    # a negation names an old value as no longer so only when the text says what is instead
    # ("not 429" beside "430"); "I'm not allergic to cats" only negates (see negates), as a
    # verb negated does ("pp-sync *is not* idempotent; retries can double-insert results":
    # the old statement denied, and why)
    # (nor one the old text rejects too: "tabs *over spaces*" / "Tabs, *not spaces*")
    rejected = _rejected(new_) - old.negated - rejected_before
    rejected -= rejected_words(old, also_stated=True)
    return bool(rejected & old.words) and bool(_said_instead(old, new_))


_AUXILIARIES = frozenset(_AUXILIARY_WORDS.split())


def _rejected(one: Statement) -> frozenset[str]:
    """The words the text's negations reject as values, not those of a verb negated: after a
    negator no auxiliary stands right before ("430, *not 429*", "Dr Okafor, *not* Dr
    Halvorsen", "3:30 *not 3*": no mark needed before it, as _contrasts_at needs; not "*is
    not* idempotent", "*doesn't* fit", "*never* deploys")."""
    tokens, lower = one.tokens, [t.lower for t in one.tokens]
    rejected: set[str] = set()
    for i, word in enumerate(lower):
        after_auxiliary = i and lower[i - 1] in _AUXILIARIES and not tokens[i - 1].pause
        of_a_verb = word == "never" or word.endswith("n't") or after_auxiliary
        # (not in a condition: "*If* there's *no* acknowledgement within 60 s, ...")
        in_a_condition = _opened_before(tokens, lower, i, i, _CONDITIONS)
        rejects = _negates_at(tokens, i) and not of_a_verb and not in_a_condition
        # (or a phrase of its own: "*rather than* the sister-in-law", "*instead of* Fridays")
        if rejects or (i and (lower[i - 1], word) in _NEGATION_PHRASES):
            rejected.update(t.norm for t in _up_to_a_mark(tokens[i + 1 : i + 4]))
    return frozenset(rejected) & one.negated


def _exchanged_markers(old: Statement, new: Statement) -> set[str]:
    """The new text's change words that are the value exchanged, not a change said: each has
    its opposite in the old text, and they are all that differs ("the e2e tests pass when
    the mock server is *started* first" / "... is *stopped* first": another value, no change
    word); but "*stopped* using Redis" after "started using Redis" says that a habit ended."""
    words = [t.lower for t in new.tokens]
    gained = {
        word
        for word, after in pairwise([*words, ""])
        if word in new.markers and not after.endswith("ing")
    } - {t.lower for t in old.tokens}
    lost = {t.lower for t in old.tokens} - {t.lower for t in new.tokens}
    exchanged = {m for m in gained if any(frozenset({m, w}) in OPPOSITES for w in lost)}
    if not exchanged:
        return set()
    partners = {w for w in lost if any(frozenset({m, w}) in OPPOSITES for m in exchanged)}
    kept_new = new.words - {_stem(m) for m in exchanged}
    kept_old = old.words - {_stem(w) for w in partners}
    return exchanged if kept_new == kept_old else set()


def _was_then_is(old: Statement, new: Statement) -> bool:
    """The new text says an old value was so and another one is ("Embedding job batch size:
    *was* 64, *is* 128", "Data warehouse *was* Redshift, *is* Snowflake"), or gives a new
    value and then the old one between marks ("Finch job: 05:00 *(was 01:00)*"): a change
    named."""
    lower = [t.lower for t in new.tokens]
    was = next((i for i, w in enumerate(lower) if w in ("was", "were")), None)
    is_ = max((i for i, w in enumerate(lower) if w in ("is", "are")), default=None)

    def keys(tokens: Sequence[_Token]) -> set[str]:
        return {t.norm for t in tokens} | {_value_key(t) for t in tokens}

    if was is not None and was and new.tokens[was - 1].pause and (is_ is None or is_ < was):
        # the new value, then the old one between marks ("Finch job: 05:00 *(was 01:00)*")
        end = next((i for i in range(was, len(lower)) if new.tokens[i].pause), len(lower) - 1)
        named = keys(new.tokens[was + 1 : end + 1])
        return bool(old.values & named) and bool(new.values - old.values - named)
    if was is None or is_ is None or was > is_:
        return False

    before, after = keys(new.tokens[was + 1 : is_]), keys(new.tokens[is_ + 1 :])
    return bool(old.values & before) and bool((new.values - old.values) & after)


def keeps_every_word(existing: str, new: str) -> bool:
    """Every content word of the existing text is in the new one (the same statement,
    extended or qualified)."""
    return statement(existing).words <= statement(new).words


def keeps_the_subject(existing: str, new: str) -> bool:
    """The two texts share at least half of each one's subject words, their content words
    that are neither values nor change words ("The user's *manager* is Elena" / "The user's
    *manager* is now Kwame"; "*Staging* is hosted on Heroku" / "*Staging* moved to Fly.io"),
    and open with the same label or none (or a label only one has, which the other says:
    _label_is_the_subject). Below the text rule's band, a text that says it
    changed needs this to be kept beside the memory as a conflict (DedupPolicy.change_from):
    there the model's similarity alone does not say that the two are about one thing ("The
    team uses Slack for incident chat" / "Team moved standups to Slack huddles", 0.51)."""
    subject, other = _subject_words(statement(existing)), _subject_words(statement(new))
    kept = subject & other
    return (
        bool(kept)
        and 2 * len(kept) >= max(len(subject), len(other))
        and (label(existing) == label(new) or _label_is_the_subject(existing, new))
    )


def _label_is_the_subject(existing: str, new: str) -> bool:
    """One text opens with a label and the other with none, whose words the other says:
    the label names what both are about ("*Coverage threshold*: 70%" / "Nadia bumped the
    *coverage threshold* to 85%"), not who says it ("Kenji: ...")."""
    labels = [label(existing), label(new)]
    if (labels[0] is None) == (labels[1] is None):
        return False
    said = statement(new if labels[0] is not None else existing).words
    named = content_words(labels[0] or labels[1] or "")
    return bool(named) and named <= said


def _own_value_parts(one: Statement, values: Set[str]) -> set[str]:
    """_value_parts of the text's `values`, but not a word the text writes on its own that a
    value has in a short form (ALIASES: "*staging* DB host: pg-*stg*-07")."""
    written = _written_parts(values)
    short = {_stem(part) for part in written if part in ALIASES}
    return {_stem(part) for part in written} - {
        t.norm for t in one.tokens if t.norm in short and t.lower not in written
    }


def _value_parts(values: Set[str]) -> set[str]:
    """The stems of the words the values are written with ("america/new_york": america, new,
    york; "day:friday": friday)."""
    return {_stem(part) for part in _written_parts(values)}


def _written_parts(values: Set[str]) -> set[str]:
    """The words the values are written with, as written."""
    return {part for value in values for part in re.split(r"[-./:@_ ]+", _as_words(value)) if part}


# Verbs that say only where or with what a thing is, or when it happens: the subject is what
# they are said of ("The data pipeline *runs on* Python 3.11" / "The data pipeline *uses*
# Python 3.9"; "The fiscal year *starts* in April" / "*begins* in October").
_PLAIN_VERB_WORDS = "run use go send live sit host store keep stay start begin happen take"
_PLAIN_VERBS = frozenset(_stem(word) for word in _PLAIN_VERB_WORDS.split())


def _subject_words(one: Statement) -> frozenset[str]:
    """The words a text says its values of: its content words that are neither values, nor
    parts or amounts of one, nor numbers, nor change words."""
    # each word once, as the text has it, but no stopword, by its stem or as written ("have"
    # is the stem "hav")
    norms = {t.norm for t in one.tokens if t.lower not in STOPWORDS} - STOPWORDS
    parts = _own_value_parts(one, one.values)
    # a change word by its written form ("moved" is the stem "mov")
    changes = {t.norm for t in one.tokens if t.lower in CHANGE_MARKERS} | CHANGE_MARKERS
    words = frozenset(
        word
        for word in norms - one.values - changes
        if word not in parts and not any(ch.isdigit() for ch in word)
    )
    # a size says what it measures by its unit, as the word "GB" did before sizes were read
    # as one value ("... with *500 GB* storage" / "... with *100 GB* storage")
    if any(t.norm.endswith("bytes") and _AMOUNT_NORM.fullmatch(t.norm) for t in one.tokens):
        words |= {"unit:size"}
    # (but a verb stays when the subject would be one word without it: "CI *runs* on Jenkins")
    return words - _PLAIN_VERBS if len(words - _PLAIN_VERBS) >= 2 else words


def same_subject_words(existing: str, new: str) -> bool:
    """Both texts have the same subject words (_subject_words), at least two: all they differ
    in is values and words without content ("The cache TTL is 5 minutes" / "Cache TTL: 10
    minutes", "The team's timezone is Europe/Berlin" / "Team timezone: America/New_York"); a
    name one has as a value and the other as a word counts as a subject word of both when
    written as one thing's name (_same_name), and a verb as any of its _SAME_VERBS group.
    One value changed there is another value of the same subject wherever it stands in the
    sentence, not another subject ("*Staging* deploys from main" / "*Prod* deploys ..." differ
    in a subject word), when the values that differ come after the subject words (_said_last).
    A label counts as words ("Cache TTL: ..."); two labels must agree."""
    old, new_ = statement(existing), statement(new)
    # a name one text has as a value and the other as a word is the same subject word
    # ("Max upload size for *Paperlane* ..." / "*Paperlane's* max upload size ...", "The
    # *Heron* API ..." / "*Heron* API ..." opening the sentence)
    named = _same_name(old, new_, (old.values & new_.words) | (new_.values & old.words))
    subject = _subject_words(old) | (named - new_.values)
    if labels_differ(existing, new) or len(subject) < 2:
        return False
    # (a verb of _SAME_VERBS in place of one of its group: "Logs are *retained* for 14 days" /
    # "... *kept* for 90 days")
    mine, theirs = _as_one_verb(subject), _as_one_verb(_subject_words(new_) | (named - old.values))
    if mine != theirs and not (len(mine - _PLAIN_VERBS) >= 2 and mine ^ theirs <= _PLAIN_VERBS):
        return False
    # (an hour said bare and as a time of day is one value: "starts at *8*" / "*8pm*")
    lost, gained = _bare_hours_apart(
        old.values - new_.values - named, new_.values - old.values - named
    )
    if not (lost or gained) or len(gained) > len(lost):
        return False  # values in place of others, not more said ("..., in Leeds since 2021")
    measured = [{_measure(v) for v in values} for values in (lost, gained)]
    if lost and gained and None not in measured[0] | measured[1]:
        # a duration, a size or a time of day, what is said of a thing wherever it stands,
        # each in place of one of its kind (not "taken at 2 AM" / "retained two weeks")
        return measured[0] == measured[1]
    # the values that differ come after every subject word in both texts: a value before
    # them names which thing ("Kafka topic *orders.created* has 12 partitions" / "*orders.
    # cancelled*"), one after them is what is said of it ("Cache TTL: *10 minutes*")
    return _said_last(old, lost, subject) and _said_last(new_, gained, subject)


_OF_A_THING = frozenset({"in", "for", "of"})


def _as_one_verb(words: Set[str]) -> frozenset[str]:
    """The words, each verb of a _SAME_VERBS group as the group's first."""
    return frozenset(
        next((min(group) for group in _SAME_VERBS if word in group), word) for word in words
    )


def _same_name(old: Statement, new: Statement, names: Set[str]) -> frozenset[str]:
    """Of `names` (a value of one text the other has as a word), those written as the
    same thing's name in both: a possessive in either ("*Paperlane's* max upload size") or
    the same word after it in both ("The *Heron API*" / "*Heron API*"); not a name that is
    what one text says and the other's subject ("reports to *Felix*" / "*Felix* reports to
    Nadia")."""

    def places(one: Statement, name: str) -> list[int]:
        return [
            i
            for i, t in enumerate(one.tokens)
            if name in (t.norm, _value_key(t), t.norm.removesuffix("'s"))
        ]

    def after(one: Statement, i: int) -> str | None:
        return one.tokens[i + 1].norm if i + 1 < len(one.tokens) else None

    found = set()
    for name in names:
        mine, theirs = places(old, name), places(new, name)
        possessive = any(
            one.tokens[i].lower.endswith("'s")
            for one, at in ((old, mine), (new, theirs))
            for i in at
        )
        # a name that opens one text, after "in", "for", "of" in the other ("Logs *in Topaz*
        # are retained ..." / "*Topaz* keeps logs ...")
        opens = any(at == [0] and other for at, other in ((mine, theirs), (theirs, mine)))
        owner = any(
            one.tokens[i - 1].lower in _OF_A_THING
            for one, at in ((old, mine), (new, theirs))
            for i in at
            if i
        )
        followed = {after(old, i) for i in mine} & {after(new, i) for i in theirs} - {None}
        if possessive or followed or (opens and owner):
            found.add(name)
    return frozenset(found)


def _measure(value: str) -> str | None:
    """What a value measures when it is a duration ("3600s"), a size ("1024bytes") or a time
    of day ("t570"): never the name of a thing; None for any other value."""
    if value[:1] == "t" and value[1:].isdigit():
        return "time"
    if _AMOUNT_NORM.fullmatch(value):
        return "size" if value.endswith("bytes") else "duration"
    return None


def _bare_hours_apart(lost: Set[str], gained: Set[str]) -> tuple[set[str], set[str]]:
    """`lost` and `gained` less each bare hour of one (1 to 12) and a time of day of the
    other on that hour, morning or evening ("8" / "t1200"), when the one with the bare hour
    has no time of day besides."""
    lost, gained = set(lost), set(gained)
    for one, other in ((lost, gained), (gained, lost)):
        if any(_measure(value) == "time" for value in one):
            continue  # a time of its own besides: the numbers may be exchanged ("the *2nd*
            # at *06:00*" / "the *6th* at *02:00*")
        for hour in [v for v in one if re.fullmatch(r"\d{1,2}", v) and 1 <= int(v) <= 12]:
            same = {f"t{int(hour) % 12 * 60}", f"t{(int(hour) % 12 + 12) * 60}"} & other
            if same:
                one.discard(hour)
                other.discard(min(same))
    return lost, gained


def _said_last(one: Statement, values: Set[str], subject: frozenset[str]) -> bool:
    """Every token of `values` comes after every token of `subject` in the text."""
    keys = set(values) | _own_value_parts(one, values)
    at_value = [i for i, t in enumerate(one.tokens) if t.norm in keys or _value_key(t) in keys]
    # (a word right after a number is its unit: "10 *MB*", "300 *lines*")
    numbers = {i for i in at_value if _counts(one.tokens[i])}
    at_subject = [i for i, t in enumerate(one.tokens) if t.norm in subject and i - 1 not in numbers]
    if not (at_value and at_subject):
        return False
    # a number with its unit is an amount, what is said of the subject wherever it stands
    # ("*2-space* indentation in YAML" / "*4-space* ..."); a name or an identifier before the
    # subject words names which thing ("Kafka topic *orders.created* has ...")
    # (or with a name between, "*4* Celery workers")
    amounts = {
        i
        for i in numbers
        if _amount(one.tokens, i)
        and (
            one.tokens[i + 1].norm in subject
            or (
                i + 2 < len(one.tokens)
                and one.tokens[i + 2].norm in subject
                and one.tokens[i + 1].text[:1].isupper()
                and not one.tokens[i + 1].pause
            )
        )
    }
    named = [i for i in at_value if i not in amounts]
    return not named or min(named) > max(at_subject)


def _counts(token: _Token) -> bool:
    """The token has a number that is its own ("10", "4th", "30 minutes", "9:30", "t3.large"),
    not a name's number written with it ("p95", "Q3", "v2", "P1", "U12")."""
    if _number_phrase(token.text):
        return True  # "five hundred"
    return any(ch.isdigit() for ch in token.text) and not _NAME_NUMBER.fullmatch(token.text)


# letters and then digits, nothing else: a code that names which one
_NAME_NUMBER = re.compile(r"[A-Za-z]{1,3}\d+")


def _amount(tokens: Sequence[_Token], i: int) -> bool:
    """The token at i is a count with its unit after it ("*3* replicas", "*2*-space", "*20*
    mg"): a cardinal in digits or words, not a name's number ("p95", "Q3", "v1", "*Year* 4",
    "the 3rd grade")."""
    token = tokens[i]
    if i + 1 >= len(tokens):
        return False
    cardinal = token.lower in _CARDINAL_WORDS or bool(_CARDINAL.fullmatch(token.text))
    cardinal = cardinal or _number_phrase(token.text)
    before = tokens[i - 1] if i else None
    named = before is not None and (
        (before.text[:1].isupper() and not before.first) or before.lower in _NUMBERED
    )
    return cardinal and not named


# Words whose number names which one ("*Year* 4", "*room* 6", "*sprint* 12").
_NUMBERED_WORDS = """
    year grade class room floor level tier phase stage version release week day sprint
    building gate terminal platform track lane zone team group batch wave round part chapter
    step number no migration ticket issue incident service node port shard partition host
    server bus route line channel episode season page item task job build pr"""
_NUMBERED = frozenset(_NUMBERED_WORDS.split())


def keeps_the_values(existing: str, new: str) -> bool:
    """Both texts state the same values, at least one a number, a time or a date, and differ
    in words only: what changed is what the value is said of, not the value ("The cache TTL
    for *product* pages is 10 minutes" / "... for *category* pages is 10 minutes", "The
    GitHub org has 42 *repositories*" / "42 *members*"), another subject rather than another
    value."""
    old, new_ = statement(existing), statement(new)
    shared = old.values & new_.values
    return (
        any(_kind(value) in ("number", "date") or value[:1].isdigit() for value in shared)
        and not _lost_values(old, new_)
        and not _lost_values(new_, old)
        and old.words != new_.words
        # a word in capitals exchanged is a value ("10:00 *CET*" / "10:00 *EST*")
        and not _acronym_exchanged(old, new_)
    )


# Words of opposite meaning that OPPOSITES does not hold as two values of one setting (a
# modifier's "high" / "low" names two things there), nor _ANTONYMS as feelings: a text that
# exchanges one for the other is never a rewording ("Risk level is *low*" / "*high*"), nor a
# value as it is against a bound or a target for it ("*Minimum* test coverage: 80%" /
# "*current* test coverage: 80%"), nor two settings or measures of one resource ("Memory
# *limit* on the pod is 512Mi" / "The pod *requests* 512Mi of memory", "*soft* / *hard*
# limit", "*average* / *peak* latency").
_OTHER_OPPOSITES = """
    low:high keep:delete kept:deleted same:separate same:different more:less first:last
    old:new small:large short:long early:late good:bad better:worse up:down in:out
    internal:external local:remote
    current:minimum current:maximum current:target current:required current:goal
    actual:minimum actual:maximum actual:target actual:required actual:goal
    limit:request cap:request limit:reservation limit:default cap:default quota:usage
    limit:usage soft:hard floor:ceiling maximum:default minimum:default max:default
    min:default average:peak average:maximum average:minimum average:median mean:median
    mean:peak median:peak"""
# Names of environments and branches: one in place of another is another thing, not another
# word for it ("Merging to *develop* triggers a staging deploy" / "Merging to *main* ...").
_ENVIRONMENT_WORDS = frozenset(
    [
        *("main", "master", "develop", "dev", "trunk", "release", "staging", "stage"),
        *("production", "prod", "test", "qa", "uat", "sandbox", "preview", "local"),
    ]
)
# (each pair as written and as stems, compared with the words as written and as stems)
_WRITTEN_OPPOSITES = OPPOSITES | frozenset(
    frozenset(pair.split(":")) for pair in (_OTHER_OPPOSITES + _ANTONYMS).split()
)
REWORDING_OPPOSITES = _WRITTEN_OPPOSITES | frozenset(
    frozenset(_stem(word) for word in pair) for pair in _WRITTEN_OPPOSITES
)
_NEGATING_PREFIXES = ("dis", "un", "in", "im", "ir", "il", "non", "non-")
# The same, written with a hyphen, which a text reads as a value and whose word it keeps
# ("iced" / "*de-*iced"); "de" alone begins too many words ("grade" / "degrade").
_HYPHENED_NEGATIONS = ("de-", "un-", "non-", "dis-")
# At most this many content words of each text missing from the other in a rewording.
REWORDED_WORDS = 1


def _opposite_words(one: str, other: str) -> bool:
    """The two words have opposite meanings: a pair of REWORDING_OPPOSITES, or one is the
    other with a negating prefix ("likes" / "dislikes", "secure" / "insecure")."""
    if frozenset({one, other}) in REWORDING_OPPOSITES:
        return True
    # as written, or an adverb against its adjective ("*synchronously*" / "*asynchronous*")
    adjectives = (word.removesuffix("ly") if len(word) > 6 else word for word in (one, other))
    return _prefixed(one, other) or _prefixed(*adjectives)


def _prefixed(one: str, other: str) -> bool:
    """One word is the other with a negating prefix (_opposite_words)."""
    short, long = sorted((one, other), key=len)
    if len(short) < 3:
        return False  # "to" / "into", "do" / "undo" is no opposite said
    if long == "a" + short and len(short) >= 6:
        return True  # "symmetric" / "asymmetric" (not "side" / "aside", "round" / "around")
    return any(long == prefix + short for prefix in _NEGATING_PREFIXES)


_SWITCHED = {"on": "enabled", "off": "disabled"}


def _exchanged_forms(one: Statement, words: Set[str]) -> set[str]:
    """The words of `words` as written and as stems, and what a phrase of them says ("turned
    *on*" is "enabled")."""
    forms: set[str] = set()
    for token, following in zip(one.tokens, [*one.tokens[1:], None], strict=False):
        if token.norm in words:
            forms |= {token.lower, token.norm}
            if token.norm in ("turn", "switch") and following is not None:
                forms |= {_SWITCHED.get(following.lower, token.lower)}
    return forms


def _plain_words(one: Statement, text: str, words: Set[str]) -> bool:
    """Every word of `words` is written in the text as a word of the language, not as a value:
    letters only (a hyphen or an apostrophe inside), in lower case unless it opens a sentence,
    not after a sign that makes a handle or a tag of it ("@mkowalski", "#ops"), and not the
    name of an environment or a branch ("*develop*" / "*main*")."""
    for token in one.tokens:
        if token.norm not in words:
            continue
        letters = token.text.replace("-", "").replace("'", "").replace("\u2019", "")
        if not letters.isalpha() or token.lower in _ENVIRONMENT_WORDS:
            return False
        if not (token.first or token.text.islower()):
            return False
        if re.search(r"[@#$/\\]" + re.escape(token.text) + r"\b", text):
            return False
    return True


def rewords(existing: str, new: str) -> bool:
    """The new text states the same values with the same negations, and each text has at most
    REWORDED_WORDS content words the other lacks, the new one no fewer than the old one (a
    word dropped with none in its place is a detail lost), each a plain word (_plain_words),
    none a holder ("user", a person, a relation) and none the opposite of one of the other's
    ("The metrics cluster *keeps* raw samples in S3" / "Raw samples are *stored* in S3 by the
    metrics cluster"). Read only at a high similarity (DedupPolicy.reworded_from), after every
    other guard (one word replaced in place is a changed value, changed_values; the same
    number said with other words, keeps_the_values): a word exchanged there is most often
    another word for the same thing."""
    old, new_ = statement(existing), statement(new)
    if not _same_values(old, new_) or old.negations != new_.negations or _narrows(old, new_):
        return False
    if _other_units(old, new_):
        return False  # "100 *characters*" / "100 *lines*"
    # "always" says what "every" or "each" says ("*Always* run the linter before pushing" /
    # "Run the linter before *every* push")
    gone = old.words - new_.words - (_ALWAYS if _says_every(new_) else frozenset())
    came = new_.words - old.words - (_ALWAYS if _says_every(old) else frozenset())
    if rejected_words(old) and rejected_words(old) == rejected_words(new_):
        # one choice, the same thing rejected: a verb of choosing for another says nothing
        # ("prefers pnpm over npm" / "likes using pnpm instead of npm")
        gone, came = gone - _SAME_MEANING, came - _SAME_MEANING
    if len(came) > REWORDED_WORDS or len(came) < len(gone):
        return False
    if not (_plain_words(old, existing, gone) and _plain_words(new_, new, came)):
        return False
    user_in = ["user" in {t.norm for t in one.tokens} for one in (old, new_)]
    if (gone | came) & _HOLDER_WORDS or user_in[0] != user_in[1]:
        return False  # another holder ("The *user* wants ..." / "*Marco* wants ...")
    if _named_behind(old, new_, gone, came):
        return False
    return not _opposite_in_its_place(old, new_, gone, came)


def _named_behind(old: Statement, new: Statement, gone: Set[str], came: Set[str]) -> bool:
    """A word of the new text's own comes right after a word both say, where the old text
    had a word of its own right before that word: the thing it named is now another thing's
    part ("a *real* turnstile" / "a turnstile *simulator*"), not the same thing reworded (a
    word exchanged in its place, "a *physical* turnstile", is read as before, and so is
    another form of the old word: "doesn't *drink* coffee" / "isn't a coffee *drinker*")."""
    before = [t.norm for t in old.tokens]
    after = [t.norm for t in new.tokens]
    for j in range(1, len(after)):
        if after[j] not in came or after[j - 1] not in before:
            continue
        i = before.index(after[j - 1])
        if i > 0 and before[i - 1] in gone and not _one_word(before[i - 1], after[j]):
            return True
    return False


def _one_word(first: str, second: str) -> bool:
    """Two forms of one word, one the other's beginning ("drink" / "drinker")."""
    short, long = sorted((first, second), key=len)
    return len(short) >= 4 and long.startswith(short)


def _opposite_in_its_place(old: Statement, new: Statement, gone: Set[str], came: Set[str]) -> bool:
    """A word `old` has and `new` lacks is the opposite of one `new` has in its place, by the
    words as written or their stems `gone` / `came` ("*deleted*" / "*keeps*")."""
    before = _exchanged_forms(old, gone)
    before |= {t.lower for t in old.tokens} - {t.lower for t in new.tokens}
    after = _exchanged_forms(new, came)
    after |= {t.lower for t in new.tokens} - {t.lower for t in old.tokens}
    return any(_opposite_words(a, b) for a in before for b in after)


_EVERY = frozenset({"every", "each", "whenever", "any"})
_ALWAYS = frozenset({"alway"})


def _says_every(one: Statement) -> bool:
    return bool({t.lower for t in one.tokens} & _EVERY)


def _same_values(old: Statement, new: Statement, *, both: bool = True) -> bool:
    """The new text states no value the old one does not (nor the old one a value the new one
    does not, with `both`), where a value of one that the other has as a word counts as had:
    a name that opens a sentence is read as a word ("*Renovate* opens update PRs" / "update
    PRs are opened by *Renovate*")."""
    if not (new.values - old.values) <= old.words:
        return False
    return not both or (old.values - new.values) <= new.words


# Words that say a text is not (yet) a fact: a question, a plan, a condition, a possibility,
# how things were ("Decision *deferred*: *whether* to adopt OpenTelemetry" / "Decision: adopt
# OpenTelemetry").
_MOOD_WORDS = """
    whether might may could maybe perhaps possibly probably plan plans planned planning
    propose proposes proposed proposal intend intends intended deferred consider considers
    considering if unless until formerly previously wondered hope hopes"""
_MOOD = frozenset(_MOOD_WORDS.split())
# A text that says the same values in other words drops fewer than this many content words
# more than it adds (more is a detail lost: "... exports reports to acme-reports *and emails a
# summary to finance*" / "... exports reports to acme-reports").
SAME_VALUES_DROPPED = 1
# Under the rewording band (down to the text rule's), the same values are a rewording only
# with at most this many content words added and dropped together ("Max upload size on
# Fennel is 25 MB" / "Fennel caps uploads at 25 megabytes": "caps"); a word exchanged for
# another is not ("*Deploy* announcements ..." / "*Rollback* announcements ...").
TERSE_WORDS_CHANGED = 1
# Verbs that only link a thing to its value, added or dropped ("Starling's Postgres version is
# 16" / "Starling *runs* PostgreSQL 16"; not "lives" / "works": "The user lives in Toronto" /
# "The user works from the Toronto office").
_LINKING_VERB_WORDS = "use run have keep hold serve contain get set"
LINKING_VERBS = frozenset(_stem(word) for word in _LINKING_VERB_WORDS.split())
# Words that carry no detail of their own, dropped freely in a rewording: verbs that only
# link a thing to its value ("The API server *listens* on port 8080" / "API server port:
# 8080", "The monorepo *uses* Bazel for builds" / "Builds in the monorepo are done with
# Bazel") and words that say a number is rounded ("*roughly* 2 million rows" / "about 2M").
_NO_DETAIL_WORDS = """
    use run set get go call name listen happen work do make take have keep live handle
    manage mean indicate serve hold contain involve write per percent job roughly
    approximately around about circa"""
_NO_DETAIL = frozenset(_stem(word) for word in _NO_DETAIL_WORDS.split())
# Words that say a value is an upper bound: one of them dropped is no detail lost when the
# other text says a bound with another ("*Max* upload size is 25 MB" / "Uploads are *capped
# at* 25 MB", "*limited to*", "accepts *up to*").
_UPPER_BOUND = frozenset(_stem(word) for word in ("max", "maximum", "most", "cap", "limit", "upto"))


def _joined_words(one: Statement, other: Statement) -> frozenset[str]:
    """Two words of `one` side by side that `other` writes as one ("time zone" / "timezone",
    "time out" / "timeout"): the stems of the two and of the one."""
    tokens = one.tokens
    found: set[str] = set()
    for first, second in pairwise(tokens):
        if (joined := _stem(first.lower + second.lower)) in other.words:
            found |= {first.norm, second.norm, joined}
    return frozenset(found)


def _as_written(one: Statement) -> list[str]:
    """The text's words as written (in lower case), its values as read ("10k" / "10.000")."""
    return [t.norm if _is_value(t) else t.lower for t in one.tokens]


def restates_the_values(existing: str, new: str) -> bool:
    """The same fact in other words (_values_restated)."""
    return _values_restated(existing, new) is not None


def _values_restated(existing: str, new: str) -> int | None:
    """How many content words the new text adds and drops in saying the same fact in other
    words, or None where it does not say it: both texts state the same values (numbers, versions,
    names, identifiers; at least one) and the same terms (_terms: "@kvasquez", "APAC", "p95"),
    each of one text's terms a term or word of the other ("DB" / "database"), negate as often,
    say it in the same mood (_MOOD: neither a plan, a question or a possibility where the
    other is not), say no direction of an exchange the other does not, and the new one drops
    fewer than SAME_VALUES_DROPPED content words more than it adds ("The search service runs
    with a 10 GB heap" / "Search service heap size: ten gigabytes"; a word the new text has
    only inside a name both have is dropped, _borrowed). Read in the rewording band
    (DedupPolicy.reworded_from), and below it in the text rule's band where at most
    TERSE_WORDS_CHANGED words are added or dropped, for text read as English, never for two
    chat turns of one speaker, and after every other guard (a changed value, subject, holder,
    occasion, attribute or phrase has decided before)."""
    old, new_ = statement(existing), statement(new)
    if not _values_agree(old, new_) or old.negations != new_.negations:
        return None
    mine, theirs = _terms(old, existing), _terms(new_, new)
    if not (_named_in(mine, new_, theirs) and _named_in(theirs, old, mine)):
        return None
    if {t.lower for t in old.tokens} & _MOOD != {t.lower for t in new_.tokens} & _MOOD:
        return None
    if changes_direction(existing, new) or _narrows(old, new_) or _other_units(old, new_):
        return None
    if _restricted(new_) - _restricted(old):
        return None  # "allows force-push on feature branches *only* after a review"
    if _opposite_in_its_place(old, new_, old.words - new_.words, new_.words - old.words):
        return None  # "Feature branches are *deleted* after merge" / "... *keeps* ..."
    # the parts of a compound the other text has whole or in words are no words added or
    # dropped ("start-up" / "startup", "req/min" / "requests per minute")
    parts = {part for value in new_.values if _named_in({value}, old) for part in _parts(value)}
    kinds = _kind_nouns(old, new_.values)
    joined = _joined_words(old, new_) | _joined_words(new_, old)
    gone = old.words - new_.words - _NO_DETAIL - kinds - parts - joined
    came = new_.words - old.words - parts - joined
    if _bounded(new_):
        gone -= _UPPER_BOUND
    if any(value.endswith("bytes") for value in new_.values):
        gone -= {"siz"}  # a size in bytes says it is a size ("max size: 25 MB" / "25 MB")
    if _dated(old) and _dated(new_):
        # the same date says when: "*scheduled for* 2026-04-09" / ": April 9th, 2026"
        gone -= _DATE_WORDS
        came -= _DATE_WORDS
    if _bounded(old):
        came -= _UPPER_BOUND
    # (a verb of a _SAME_VERBS group in place of another of it is no word changed: "need" /
    # "require")
    same = _as_one_verb(gone) & _as_one_verb(came)
    gone = frozenset(w for w in gone if _as_one_verb({w}).isdisjoint(same))
    came = frozenset(w for w in came if _as_one_verb({w}).isdisjoint(same))
    # (a word the other text has only inside a name both have is dropped: "*Deploy*
    # announcements go in #eng-deploys" / "Rollback announcements go in #eng-deploys")
    dropped = [w for w in gone if not _named_in({w}, new_)] + sorted(_borrowed(old, new_))
    added = [w for w in came if not _named_in({w}, old)]
    if len(dropped) - len(added) >= SAME_VALUES_DROPPED:
        return None
    # (what is counted as changed: no verb that only links a thing to its value, "runs", nor
    # a number, which the values compared already: "*2* GiB" / "*2048* MiB")
    return sum(1 for word in [*added, *dropped] if word not in LINKING_VERBS and not word.isdigit())


def _dated(one: Statement) -> bool:
    """The text gives a date (a month with a day or a year)."""
    return any(value.startswith("month:") for value in one.values)


# Words that only say a date is when something is to happen, beside the same date
# ("*scheduled for* 14 October 2025" / "launches on 2025-10-14", "*deadline*: 2024-09-30" /
# "*due* on 30 September 2024").
_DATE_WORD_LIST = "scheduled planned slated due deadline target date"
_DATE_WORDS = frozenset(_stem(word) for word in _DATE_WORD_LIST.split())


def _bounded(one: Statement) -> bool:
    """The text says its value is an upper bound (_UPPER_BOUND, "up to")."""
    lowered = [token.lower for token in one.tokens]
    up_to = any(a == "up" and b == "to" for a, b in pairwise(lowered))
    return up_to or bool({token.norm for token in one.tokens} & _UPPER_BOUND)


def _parts(value: str) -> frozenset[str]:
    """The stems of a compound value's parts ("start-up": start, up)."""
    found = [part for part in _NAME_PARTS.split(value.removeprefix("q:")) if part]
    if len(found) < 2:
        return frozenset()
    return frozenset(_stem(_UNIT_PARTS.get(part, part)) for part in found)


def _kind_nouns(one: Statement, kept: Set[str]) -> frozenset[str]:
    """The nouns of `one` that name what kind of thing the value right after them is, where
    the other text keeps that value ("the *bucket* s3://builds", "*version* 15", "*port*
    8443"): the value says it without them (_KIND_NOUNS)."""
    tokens = one.tokens
    return frozenset(
        tokens[i].norm
        for i in range(len(tokens) - 1)
        if tokens[i + 1].norm in kept and tokens[i].norm in _KIND_NOUNS
    )


def kind_nouns_beside(one: Statement, kept: Set[str]) -> frozenset[str]:
    """As _kind_nouns, with the noun before or after the kept value ("the *topic*
    `tanks/+/readings`", "the `tanks/+/readings` *topic*")."""
    tokens = one.tokens
    after = frozenset(
        tokens[i].norm
        for i in range(1, len(tokens))
        if _value_key(tokens[i - 1]) in kept and tokens[i].norm in _KIND_NOUNS
    )
    return _kind_nouns(one, kept) | after


# Nouns that name the kind of the value written after them ("*version* 15", "the *bucket*
# s3://builds", "*region* eu-west-1", "*namespace* analytics-prod").
_KIND_NOUN_WORDS = """
    version release port bucket region zone namespace branch channel repo repository level
    tag image topic queue table schema database host hostname domain url path directory
    folder file handle account label prefix suffix header variable field endpoint package
    library module class instance tier plan"""
_KIND_NOUNS = frozenset(_stem(word) for word in _KIND_NOUN_WORDS.split())


def _values_agree(old: Statement, new: Statement) -> bool:
    """Both texts state the same values, where a quoted value is its text ("`orders.created`"
    / "orders.created") and a value of one that the other has as words counts as had: a name
    that opens a sentence is read as a word ("The *Harrow* API request timeout ..." /
    "*Harrow* API requests time out ...", "*GitHub Actions* runs the pipeline")."""
    mine = {value.removeprefix("q:") for value in old.values}
    theirs = {value.removeprefix("q:") for value in new.values}
    # one value both state, or the only value of the two, which the other has as words (a
    # name that opens its sentence: "... managed with *Alembic*" / "*Alembic* handles ..."),
    # never two names each a value of one side only ("Marco reports to *Priya*" / "Priya ...
    # reports to *Marco*")
    shared = any(
        set(a.split()) <= set(b.split()) or set(b.split()) <= set(a.split())
        for a in mine
        for b in theirs
    )
    if not (shared or len(_as_one(old.values) | _as_one(new.values)) == 1):
        return False
    return _named_in(mine, new) and _named_in(theirs, old)


def _as_one(values: Set[str]) -> set[str]:
    """The values, a quoted text's words counted in it ("`make dist`": one value, not three)."""
    quoted = {value[2:] for value in values if value.startswith("q:")}
    words = {_stem(word) for text in quoted for word in text.split()}
    return quoted | {value for value in values - words if not value.startswith("q:")}


def _named_in(names: Set[str], other: Statement, also: Set[str] = frozenset()) -> bool:
    """Every one of `names` (values or terms) is one of the other text's values, words or
    `also`, or all its words are: a quoted one as its text, "github action" in "GitHub Actions
    runs ..." whose name opens the sentence, a compound by its parts or joined ("single-quoted"
    / "single quotes", "back-end" / "backend", "`make lint`" / "make lint", "req/min" /
    "requests per minute")."""
    pool = other.words | other.values | also
    pool = pool | {name.removeprefix("q:") for name in pool}
    return all(_is_named(name.removeprefix("q:"), pool) for name in names)


def _is_named(name: str, pool: Set[str]) -> bool:
    if name in pool or set(name.split()) <= pool:
        return True
    written = [part for part in _NAME_PARTS.split(name) if part]
    if len(written) > 1 and _stem("".join(written)) in pool:
        return True  # "start-up" / "startup"
    parts = [_part_stem(part) for part in written]
    parts = [part for part in parts if part not in STOPWORDS and any(c.isalnum() for c in part)]
    if len(parts) < 2:
        return False
    for other in pool:
        theirs = [_part_stem(part) for part in _NAME_PARTS.split(other) if part]
        if len(theirs) < 2 or not set(theirs) & set(parts):
            continue
        if sorted(theirs) == sorted(parts) and theirs != parts:
            return False  # the same parts in another order ("DD/MM/YYYY" / "MM/DD/YYYY")
        if not set(theirs) <= set(parts):
            return False  # another name of the same stem ("acme-builds" / "acme-artifacts")
    return set(parts) <= pool


def _part_stem(part: str) -> str:
    """A part of a compound as the words of a text are read (a short unit as its word)."""
    return _stem(_UNIT_PARTS.get(part, part)) if part.isalpha() else part


_NAME_PARTS = re.compile(r"[\s/-]+")
# Short units after a slash ("req/min", "requests/hr"), as their words.
_UNIT_PARTS = {"min": "minute", "mins": "minute", "sec": "second", "hr": "hour", "hrs": "hour"}


def _terms(one: Statement, text: str) -> frozenset[str]:
    """What names a thing in the text besides its values: its words in capitals (_acronyms)
    and every content word not written as a plain word of the language (_plain_words: a handle
    or tag, "@kvasquez"; a word with a digit or a mark, "p95", "new_checkout"; a name in
    capitals inside a sentence, "Kafka"; an environment or a branch, "staging")."""
    # (not a month or a day by its name, compared as a value: "*March* 3, 2026" / "3 *Mar*")
    words = {token.norm for token in one.tokens} - STOPWORDS - CALENDAR
    named = {word for word in words if not _plain_words(one, text, {word})}
    return frozenset(one.values | _acronyms(one) | named)


def restates(existing: str, new: str) -> bool:
    """The new text keeps every content word of the existing one and adds no value and no
    negation: the same statement in more words ("Feature flags are managed with
    LaunchDarkly" / "We manage feature flags through LaunchDarkly"). A value added
    ("Python" / "Python 3.12 with pandas 2.2", "a code owner" / "two code owners"; a word in
    capitals too, "US and EU" / "US, EU and APAC": one more item of a list) narrows or
    changes the fact, and a negation added ("reachable only through the VPN" / "publicly
    reachable without the VPN") states its opposite."""
    old, new_ = statement(existing), statement(new)
    return (
        bool(old.words)
        and old.words <= new_.words
        and not _borrowed(old, new_)
        # a bound added to the same number says something else of it ("The cluster has 12
        # nodes" / "The cluster autoscaler *maximum* is 12 nodes")
        and (_bounded(new_) <= _bounded(old) or not old.values)
        # a restriction added narrows the fact ("Code freeze starts Dec 15" / "... for the
        # mobile apps *only*")
        and not (_restricted(new_) - _restricted(old))
        and not _narrows(old, new_)
        and _same_values(old, new_, both=False)
        and _acronyms(new_) <= _acronyms(old) | old.words
        and new_.negations == old.negations
        and not _other_units(old, new_)
        and not _moved_into_a_purpose(old, new_)
    )


_PURPOSE_SUBJECTS = frozenset({"i", "you", "he", "she", "we", "they", "it"})
_PURPOSE_MODALS = frozenset({"can", "could", "will", "would", "may", "might"})


def _moved_into_a_purpose(old: Statement, new: Statement) -> bool:
    """A word of the old text that the new one says only in a clause of purpose with a
    subject of its own ("Bea wants the agent to *delete* merged branches" / "... to list
    merged branches *so she can delete* them herself"): that one does it, for that."""
    lower = [t.lower for t in new.tokens]
    for i, word in enumerate(lower):
        if word != "so":
            continue
        k = i + 2 if lower[i + 1 : i + 2] == ["that"] else i + 1
        if k + 1 >= len(lower) or lower[k + 1] not in _PURPOSE_MODALS:
            continue
        if lower[k] not in _PURPOSE_SUBJECTS and not new.tokens[k].text[:1].isupper():
            continue
        before = {t.norm for t in new.tokens[:i]}
        after = {t.norm for t in new.tokens[k + 2 :]}
        if (after - before) & old.words:
            return True
    return False


_RESTRICTING = frozenset({"only", "except", "excluding", "solely", "exclusively", "apart"})


# Words that open a phrase saying where, when or for whom a statement holds ("for the mobile
# app", "until the reorg", "after the upgrade", "in staging").
_SCOPING_WORDS = "for until till except unless after before during when if within outside in on per"
_SCOPING = frozenset(_SCOPING_WORDS.split())


def _scope_added(old: Statement, new: Statement) -> bool:
    """The new text narrows the old one to part of what it said: right after a word of the
    old text, a word of _SCOPING, then a content word the old text does not have ("Feature
    flags *for the mobile app* are managed in LaunchDarkly", "25 MB *for free users*", "owned
    the data pipeline *until the reorg*"); not a phrase of new words ("listens *for
    connections*")."""
    tokens = new.tokens
    # the same word before the same preposition in the old text: the old phrase, a word
    # added in it ("emojis in *git* commit messages", "OpenTelemetry for *distributed* tracing")
    kept = {(a.norm, b.lower) for a, b in pairwise(old.tokens)}
    kinds = _kind_nouns(new, old.values)
    for i, token in enumerate(tokens[1:-1], start=1):
        before = tokens[i - 1]
        if token.lower not in _SCOPING or before.pause or before.norm not in old.words:
            continue
        if tokens[i + 1].lower in _NOT_SCOPING or (before.norm, token.lower) in kept:
            continue  # "in *this* repo", "in *less* than 4 hours", "in *total*"
        # ("in front of the site" says where as "for the site" does)
        following = [t for t in tokens[i + 1 : i + 5] if t.norm in new.words - {"front"}]
        if token.lower in ("for", "when", "while") and tokens[i + 1].lower.endswith("ing"):
            continue  # what for, not for whom: "for *testing*", "when *writing* code"
        if following and (_AMOUNT_NORM.fullmatch(following[0].norm) or _number(following[0].norm)):
            continue  # "fixed *for five years*": a number the value rules read
        if following and following[0].norm not in old.words | kinds:
            return True  # ("listens on *port* 5432": what kind of thing the value is)
    return False


_OPENING_REACH = 6  # tokens after the word of _SCOPING that opens a text, to a mark


def _opening_scope(one: Statement) -> frozenset[str] | None:
    """The content words of the phrase of where, when or for whom the text opens with (a
    word of _SCOPING, up to a mark within _OPENING_REACH tokens, more of the text after it),
    or None."""
    tokens = one.tokens
    if len(tokens) < 3 or tokens[0].lower not in _SCOPING:
        return None
    phrase = _up_to_a_mark(tokens[1 : 1 + _OPENING_REACH])
    if not phrase[-1].pause or phrase[-1] is tokens[-1]:
        return None
    return frozenset(t.norm for t in phrase if t.norm in one.words)


def scopes_differ(old: Statement, new: Statement) -> bool:
    """Both texts open with a phrase of where, when or for whom (_opening_scope), and the two
    share no content word ("*On the user's work laptop,* Docker Desktop is capped at 8 GB" /
    "*On the user's home desktop,* ..."; "*For hotfixes,* ..." / "*For regular releases,*
    ..."): the same statement of two parts, each its own subject."""
    first, second = _opening_scope(old), _opening_scope(new)
    if not first or not second:
        return False
    return not first & second


# A short phrase and a comma the new text opens with: a part of its own ("*Locally,* ...",
# "*At home,* ..."), unless a word that only leads in ("Actually, ...", "Update, ...")
_OPENING_PHRASE = re.compile(r"\s*([^\W\d_][\w'-]*)(?:\s+[\w'-]+){0,2}\s*,")
_LEAD_IN_WORDS = """
    actually also so now yes yeah ok okay well btw fyi correction update note edit again
    anyway honestly basically"""
_LEAD_INS = frozenset(_LEAD_IN_WORDS.split())


def scope_dropped(existing: str, new: str) -> bool:
    """The old text opens with a phrase of where, when or for whom (_opening_scope) and the
    new one says none of its content words and opens with no part of its own ("*In project
    92,* releases of reporting are cut every Wednesday" / "reporting releases moved to
    Monday"; not "*In CI,* ..." / "*Locally,* ..."): the old holds of that part, the new of
    what the speaker means now; which, the words do not say."""
    first = _opening_scope(statement(existing))
    if not first or first & statement(new).words:
        return False
    opening = _OPENING_PHRASE.match(new)
    return opening is None or opening.group(1).lower() in _LEAD_INS


# The words of _SCOPING that open a part, not an occasion or a condition ("*In* project 69,",
# "*On* the work laptop,", "*For* hotfixes,"; not "*After* the reorg,", "*When* online,")
_PART_OPENERS = frozenset({"in", "on", "for", "within", "per"})


def part_opened(existing: str, new: str) -> bool:
    """The new text opens with a part the old one does not name (_opening_scope, opened by
    one of _PART_OPENERS: "scheduler releases moved to Wednesday." / "*In project 69,*
    releases of scheduler are cut every Thursday."), and the old opens with no part of its
    own: the new one says it of that part only, the old holds of the rest (scope_dropped the
    other way round)."""
    new_ = statement(new)
    if not new_.tokens or new_.tokens[0].lower not in _PART_OPENERS:
        return False
    return scope_dropped(new, existing) and _opening_scope(statement(existing)) is None


# Words after a word of _SCOPING that say no part: this one, a bound, an idiom.
_NOT_SCOPING_WORDS = """
    this these our here less more fewer under over at all every each any both
    total general practice fact short particular advance cent"""
_NOT_SCOPING = frozenset(_NOT_SCOPING_WORDS.split())


def narrows(existing: str, new: str) -> bool:
    """The new text says the old one of a part only (_narrows, or a restricting word of its
    own: "only", "except", ...): however close, no rewording of it; unless it names an old
    value as the one it changed from ("grew *from four people* to six this quarter")."""
    old, new_ = statement(existing), statement(new)
    lower = [t.lower for t in new_.tokens]
    changed = "from" in lower and "to" in lower[lower.index("from") :]
    if changed and {t.norm for t in _named_as_old(new_.tokens)} & old.words:
        return False
    restricted = _restricted(new_) - _restricted(old)
    if restricted == {"only"} and {t.lower for t in old.tokens} & NEGATORS:
        # a rule said the other way round: "must *never* start a show *without* a confirmed
        # KDM" / "may *only* start a show once the KDM is confirmed"
        restricted = frozenset()
    return _narrows(old, new_) or bool(restricted)


def _narrows(old: Statement, new: Statement) -> bool:
    """The new text holds what the old one says only for part of it, from a bound on, or on
    one occasion near now the old text does not name (_scope_added, _part_named,
    _bound_added, _near_now): another statement, never a rewording of it."""
    return (
        _scope_added(old, new)
        or _part_named(old, new)
        or _container_named(old, new)
        or _modifier_put_before(old, new)
        or _bound_added(old, new)
        or _near_now(old, new)
    )


# Modifiers that pick out one part of a thing: an environment or a branch, who may see it,
# how old it is, which platform or side, which kind of change ("the *staging* cert", "all
# *public* functions", "*new* tests", "Dependabot *security* updates", "*untested*
# migrations").
# ("release", "test" and "stage" are words of their own too: "on *release* 3.2.0", "*test*
# logs")
_PART_MODIFIERS = """
    public private internal external new legacy old existing mobile web desktop ios android
    frontend backend untested tested security major minor patch admin premium enterprise
    primary secondary replica inbound outbound"""
_PART_WORDS = (_ENVIRONMENT_WORDS - {"release", "test", "stage"}) | frozenset(
    _PART_MODIFIERS.split()
)
# (a phone's system names the mobile app already: "The Android app" / "The Android mobile app")
_MOBILE_SYSTEMS = frozenset({"android", "ios", "iphone"})


def _part_named(old: Statement, new: Statement) -> bool:
    """The new text puts a modifier of _PART_WORDS the old text lacks before a content word,
    next to a word of the old text or in a phrase of where it opens with ("Risk: the
    Saltmarsh cert expires on June 1" / "Risk: the Saltmarsh *staging* cert expires ...",
    "type hints on all *public* functions", "*In the dev environment,* pp-gateway logs ..."):
    it says the old statement of one part only. Not where the old text names a part the new one
    does not (a modifier put in place of another: "legacy" / "old"), a word written apart
    ("devtools" / "dev tools"), or after "a" ("a *new* release branch gets cut": an event)."""
    said = {token.lower for token in old.tokens} | old.words
    written = {token.lower for token in new.tokens}
    if any(token.lower in _PART_WORDS and token.lower not in written for token in old.tokens):
        return False
    tokens = new.tokens
    for i, token in enumerate(tokens):
        if token.lower not in _PART_WORDS or token.lower in said or token.norm in old.words:
            continue
        if token.lower == "mobile" and said & _MOBILE_SYSTEMS:
            continue
        before = tokens[i - 1] if i else None
        if before is not None and before.lower in ("a", "an"):
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if following is not None and token.lower + following.lower in said:
            continue
        # a phrase of where the text opens with, no mark after it ("*In the dev* cluster
        # hivepulse logs at debug level")
        opening = i and tokens[0].lower in _SCOPING and not tokens[0].pause
        if opening and all(t.lower in _OPENING_ARTICLES for t in tokens[1:i]):
            return True
        # where it goes or holds: "before deploying Fathom *to production*", "Never commit
        # .env files *to public* repos"; or a phrase of where the text opens with ("*In the
        # dev environment,* pp-gateway logs request bodies")
        if before is not None and before.lower in _TOWARDS and not before.pause:
            return True
        # or after one and "the" ("the feature flags *of the mobile* booking app")
        if (
            i >= 2
            and before is not None
            and before.lower == "the"
            and tokens[i - 2].lower in _TOWARDS | {"of"}
            and not (before.pause or tokens[i - 2].pause)
        ):
            return True
        if token.norm in (_opening_scope(new) or ()):
            return True
        if following is None or token.pause or following.lower in STOPWORDS:
            continue
        beside_old = before is not None and not before.pause and before.norm in old.words
        if following.norm in old.words or beside_old:
            return True
    return False


# Words that name where something is kept or runs: "*In the drafthall repo,* ..."
_CONTAINER_WORDS = """
    repo repos repository repositories project projects codebase monorepo service services
    package packages module modules app apps crate crates workspace cluster clusters
    namespace team org organization account directory folder"""
_CONTAINERS = frozenset(_CONTAINER_WORDS.split())


def _modifier_put_before(old: Statement, new: Statement) -> bool:
    """The new text puts a word of its own between an article and a noun of the old text
    where the old text had another word, one it now says after the noun ("approved *the
    migration plan* for herdwatch" / "approved *the rollback plan* for the herdwatch
    *migration*"): another thing of that name, the old one only named beside it; not a word
    that describes (_DESCRIBING: "a *separate* index")."""
    before_old = {
        noun.norm: modifier.norm
        for _, (article, modifier, noun) in _after_an_article(old.tokens)
        if modifier.norm in old.words and noun.norm in old.words
    }
    new_pairs = {(a.norm, b.norm) for a, b in pairwise(new.tokens) if not a.pause}
    norms = [t.norm for t in new.tokens]
    for at, (_, added, noun) in _after_an_article(new.tokens):
        if added.norm in old.words or added.norm not in new.words or _number(added.norm):
            continue
        if added.lower in _DESCRIBING:
            continue  # "a *separate* index": the same thing described
        modifier = before_old.get(noun.norm)
        if modifier not in new.words or (modifier, noun.norm) in new_pairs:
            continue
        # the old word said after the noun now ("the rollback plan for the ... *migration*")
        if modifier in norms[at + 3 :]:
            return True
    return False


# Words between an article and a noun that describe the thing, not name another one
_DESCRIBING = frozenset(
    {"separate", "dedicated", "single", "standalone", "whole", "entire", "own", "same"}
)


def _after_an_article(
    tokens: Sequence[_Token],
) -> list[tuple[int, tuple[_Token, _Token, _Token]]]:
    """Each article with the two words after it, no mark between them ("*the migration
    plan*"), with the article's place."""
    return [
        (i, (tokens[i], tokens[i + 1], tokens[i + 2]))
        for i in range(len(tokens) - 2)
        if tokens[i].lower in _ARTICLES and not (tokens[i].pause or tokens[i + 1].pause)
    ]


def _container_named(old: Statement, new: Statement) -> bool:
    """The new text opens with a phrase of where that names a container of _CONTAINERS by a
    content word the old text does not have ("*In the drafthall repo,* Ras wants PR
    descriptions in English" / "Ras wants PR descriptions written in English"): the old
    statement of one repository, service or team only. Not a container alone ("In our
    repo, ...", "In this project, ...") nor one the old text names too."""
    scope = _opening_scope(new)
    if not scope:
        return False
    written = {t.lower for t in _up_to_a_mark(new.tokens[1 : 1 + _OPENING_REACH])}
    if not written & _CONTAINERS:
        return False
    return bool(scope - old.words - {_stem(word) for word in _CONTAINERS} - _CONTAINERS)


# Words between the word of where that opens a text and a part word ("In *the* dev cluster").
_OPENING_ARTICLES = frozenset({"the", "our", "its", "their"})

# Words after which a modifier of _PART_WORDS says where a statement holds.
_TOWARDS = frozenset({"to", "in", "on", "for", "from", "into"})


def _near_now(old: Statement, new: Statement) -> bool:
    """The new text tells when, counted from now ("*this year*", "*this week*", "*last*
    sprint", "*yesterday*", "two days *ago*"), and the old text tells no when at all and no
    event either ("The team is five engineers" / "The team hired five engineers *this
    year*"; not "The user switched to Zed" / "... to Zed *last month*": when it happened)."""
    if _past_told(old):
        return False
    found = _anchors_of(new.tokens)
    near = {a for a in found if a.split()[0] in _ANCHOR_HEADS or a in _ANCHOR_WORDS}
    return bool(near | {a for a in found if a.endswith(" ago")}) and not _anchors_of(old.tokens)


def _bound_added(old: Statement, new: Statement) -> bool:
    """The new text says a number of the old one is a bound the old does not ("processes ~500
    jobs/min" / "should process *at least* 500 jobs/min"); an upper bound of a maximum or a
    budget is the same ("Max upload 25 MB" / "uploads of at most 25 MB"), and so is a lower
    bound of a minimum ("Minimum password length is 12" / "at least twelve characters")."""
    mine = _bounds(old)
    said = {token.norm for token in old.tokens}
    return any(
        value in old.values
        and value not in mine
        and not (way == "upper" and (_bounded(old) or "budget" in said))
        and not (way == "lower" and said & _LOWER_BOUND)
        for value, way in _bounds(new, _BOUNDS).items()
    )


_LOWER_BOUND = frozenset(_stem(word) for word in ("min", "minimum", "least", "floor"))


def _restricted(one: Statement) -> frozenset[str]:
    """The words of the text that restrict what it says to part of it (_RESTRICTING), "but"
    after a word of all ("applies to *everything but* hotfixes", "*all but* one"), and "own"
    after a possessive ("force-pushing to *her own* feature branches"; not after "as", which
    says what a thing is: "runs *as its own* Go microservice", a service apart)."""
    lower = [token.lower for token in one.tokens]
    but = {b for a, b in pairwise(lower) if b == "but" and a in _ALL_OF}
    own = {
        "own"
        for i in range(1, len(lower))
        if lower[i] == "own"
        and (lower[i - 1] in _POSSESSIVES or lower[i - 1].endswith("'s"))
        and not (i > 1 and lower[i - 2] == "as")
    }
    return frozenset(lower) & _RESTRICTING | but | own


_ALL_OF = frozenset({"everything", "anything", "everyone", "anyone", "everybody", "all"})


def _borrowed(one: Statement, other: Statement) -> frozenset[str]:
    """Words `one` has on their own that `other` has only as a part of a compound or a name
    both texts have ("*Deploy* announcements go in #eng-deploys" / "Rollback announcements
    go in #eng-deploys": "deploy" is the channel's, which the old text has too; "the work
    laptop runs Docker Desktop" / "the home *desktop* runs Docker Desktop"): the other text
    does not have them, though its words do."""
    own, others = _own_words(one), _own_words(other)
    missing = (own & other.words) - others - other.values
    if not missing:
        return frozenset()
    shared = _compounds(one) & _compounds(other)
    elsewhere = _compounds(other) - shared
    inside = {part for whole in shared for part in _compound_parts(whole)}
    outside = {part for whole in elsewhere for part in _compound_parts(whole)}
    return frozenset(word for word in missing if word in inside and word not in outside)


def _own_words(one: Statement) -> set[str]:
    """The words of the text's tokens, less those in capitals inside a name of several words
    ("Docker *Desktop*"; not the first word, in capitals anyway)."""
    names = {part for value in one.values if " " in value for part in value.split()}
    return {
        token.norm
        for token in one.tokens
        if token.first or not (token.text[:1].isupper() and _value_key(token) in names)
    }


def _compounds(one: Statement) -> frozenset[str]:
    """The text's compounds ("#eng-deploys", "config/worker.yaml") and names of several
    words ("docker desktop")."""
    found = {token.norm for token in one.tokens if re.search(r"[-./:@_]", token.norm[1:])}
    found.update(value for value in one.values if " " in value and value[:2] != "q:")
    return frozenset(found)


def _compound_parts(whole: str) -> set[str]:
    return {_stem(part) for part in re.split(r"[-./:@_ ]+", whole) if part} | set(whole.split())


def _leaves_out(old: Statement, new: Statement) -> bool:
    """The new text adds a verb that says no, which the old one has none of ("semicolons" /
    "semicolons *omitted*"; "when a part *fails to* ship")): it says the opposite in the old
    text's words."""
    if _fails_to(new) and not _fails_to(old):
        return True
    return bool((new.words - old.words) & _LEAVING_OUT) and not old.words & _LEAVING_OUT


def _fails_to(one: Statement) -> bool:
    """ "fails to", "failed to", "fail to", "failing to": the verb after it not done."""
    lower = [t.lower for t in one.tokens]
    return any(
        a in ("fail", "fails", "failed", "failing") and b == "to" for a, b in pairwise(lower)
    )


# Verbs that leave a thing out, as a negation would ("semicolons *omitted*").
_LEAVING_OUT_WORDS = "omit omitted omits skip skipped exclude excluded disable disabled"
_LEAVING_OUT = AVERSE | frozenset(_stem(word) for word in _LEAVING_OUT_WORDS.split())


def _other_units(old: Statement, new: Statement) -> bool:
    """A number of both texts counts another thing in the new one: the word right after it
    differs ("Staging uses *4 worker* nodes" / "Staging uses *4 GB* of memory per worker
    node")."""

    def units(one: Statement) -> dict[str, set[str]]:
        # the two words after the number ("4 *worker processes*", "3 *Tern replicas*")
        found: dict[str, set[str]] = {}
        tokens = one.tokens
        for i, token in enumerate(tokens[:-1]):
            if not _CARDINAL.fullmatch(token.text) or token.pause:
                continue
            for following in tokens[i + 1 : i + 3]:
                if not following.text.isalpha() or following.lower in STOPWORDS | {"per"}:
                    break
                found.setdefault(token.norm, set()).add(following.norm)
                if following.pause:
                    break
        return found

    old_units, new_units = units(old), units(new)
    return any(
        number in new_units
        and not any(_same_unit(a, b) for a in old_units[number] for b in new_units[number])
        for number in old_units
    )


def _same_unit(one: str, other: str) -> bool:
    """Two words after one number that count the same thing: the same stem, a percentage
    either way ("85% usage" / "85 percent"), or one a short form of the other ("px" /
    "pixels", "chars" / "characters": its letters in order, from the same first letter)."""
    if one == other or {one, other} & _PERCENT:
        return True
    short, long = sorted((one, other), key=len)
    if len(short) > 5 or short[:1] != long[:1]:
        return False
    rest = iter(long)
    return all(letter in rest for letter in short)


_PERCENT = frozenset({"percent", "perc", "pct"})


def relations_differ(existing: str, new: str) -> bool:
    """The texts are about different holders: a relation one of them names after a
    possessive ("the user's *mother*", "the user's *former* employer", "the manager's
    *manager*") is not named as often in the other ("the user", "the user's employer"), or
    a possessive of another person stands in the same place ("*my* uber is 5 min away" /
    "*your* uber ..."), or another owner has the same thing ("the *user's* manager" /
    "*Lena's* manager")."""
    old, new_ = statement(existing), statement(new)
    return (
        _others_named(existing, new)
        or _others_named(new, existing)
        or _more_relations(old, new_)
        or _more_relations(new_, old)
        or _other_possession(old, new_)
        or _other_possession(new_, old)
        or _other_possessor(existing, new)
        or _other_owner(old, new_)
        or _owner_for_another(old, new_)
        or _owner_for_another(new_, old)
    )


# A subject of others than the one a text is about, opening it (after a chat speaker's name):
# other people, "*Other* team members still use ...", "*Everyone else* on the team uses VS
# Code", "*The rest of* the team ...", "*Nobody else* has access", or the other ones of a
# kind, "*The other* replica is in Frankfurt" (not "*Other than* Lena, ...").
_OTHERS = re.compile(
    r"^\W*(?:[A-Z][\w'.-]*:\s*)?(?:the\s+)?(?:others?\b(?!\s+than)|(?:every|no|some|any)"
    r"(?:one|body)\s+else\b|no\s+one\s+else\b|rest\s+of\b)",
    re.IGNORECASE,
)


_OTHERS_SAID = re.compile(r"\b(?:others?|else|rest\s+of)\b", re.IGNORECASE)


def _others_named(text: str, other: str) -> bool:
    """The text opens with a subject of others (_OTHERS) and the other text names no others
    anywhere (not "we got there before *the others*" / "*the others* got there before us":
    two values swapped)."""
    return _OTHERS.match(text) is not None and _OTHERS_SAID.search(other) is None


# Words before "'s" that say "is" or "us", never whose something is ("it's running", "let's").
_NOT_OWNER_WORDS = """
    it that this there here what who where when how why let he she everything something
    nothing everyone someone"""
_NOT_OWNERS = frozenset(_NOT_OWNER_WORDS.split())


def _possessives(one: Statement) -> Iterator[tuple[_Token, _Token]]:
    """Each "X's Y" of the text, as (X, Y): not "X's" that says "X is" ("the hike's *roughly*
    10k", "manchester's *where* i was born", "it's running"), nor a Y that is a stopword."""
    for owner, owned in pairwise(one.tokens):
        if not owner.lower.endswith(("'s", "s'")) or owned.norm in STOPWORDS:
            continue
        if owner.lower.endswith("'s") and (_contracted(owned) or owner.norm in _NOT_OWNERS):
            continue
        yield owner, owned


def _owners(one: Statement) -> dict[str, str]:
    """What each "X's Y" of the text says: Y (its stem) -> X."""
    return {owned.norm: owner.norm for owner, owned in _possessives(one)}


def _other_owner(old: Statement, new: Statement) -> bool:
    """The same thing of another owner, neither owner named in the other text: "the
    *user's* manager" / "*Lena's* manager" (not "Lena is *Tom's* mentor" / "Tom is *Lena's*
    mentor": two persons exchanged, see swapped)."""
    mine, theirs = _owners(old), _owners(new)
    return any(
        other not in (owner, *old.words) and owner not in new.words
        for owned, owner in mine.items()
        if (other := theirs.get(owned)) is not None
    )


def _owner_for_another(one: Statement, other: Statement) -> bool:
    """`one` says "X's Y" of a person named in capitals and the other text says "Y ... for Z"
    or "Y ... of Z", Z another name in capitals, neither name in the other text ("*Bart's*
    editor: Neovim" / "Editor of choice for *Priya Okonkwo-Lind*: Neovim"): another
    person's."""
    for owner, owned in _possessives(one):
        if not owner.text[:1].isupper() or owner.norm in other.words or owned.norm in RELATIONS:
            continue
        tokens = other.tokens
        for i, token in enumerate(tokens):
            if token.norm != owned.norm:
                continue
            for k in range(i + 1, min(i + 1 + _OWNER_FOR_REACH, len(tokens) - 1)):
                if tokens[k - 1].pause:
                    break
                if tokens[k].lower not in ("for", "of"):
                    continue
                name = tokens[k + 1]
                if (
                    name.text[:1].isupper()
                    and not name.first
                    and name.norm not in one.words | one.values | STOPWORDS
                ):
                    return True
    return False


_OWNER_FOR_REACH = 3  # words after Y up to its "for" / "of" ("editor *of choice for* Priya")


# Possessives by grammatical person: one of another person in the same place is another
# holder ("my" / "your" / "his"); within one person they may name the same one ("my team" /
# "our team", "the user checks *their* blood sugar" / "*his* blood sugar").
_POSSESSOR_PERSON = {
    **dict.fromkeys(("my", "our"), "first"),
    "your": "second",
    "his": "he",
    "her": "she",
    "its": "it",
}
# "their" may stand for any one third person ("the user checks *their* / *his* blood sugar")
_ANY_THIRD = frozenset({"he", "she", "it"})


# Words between a verb and its object that leave the object's place as it is ("emails *the*
# staff", "notifies *all* drivers").
_OBJECT_DETERMINERS = _POSSESSIVES | frozenset({"the", "a", "an", "all", "every", "each", "any"})


def moves_a_party_aside(existing: str, new: str) -> bool:
    """One text's party between two words both texts have ("cardhub emails *patrons* when
    ...") is replaced there by words of the other's own ("cardhub emails *staff* when ..."),
    and named in the other only as the owner or the modifier of a noun that the first text
    has after a determiner ("*their* card" / "a *patron's* card", "after *each* payment" /
    "after each *customer* payment"): the thing is done to, for or by another party, the
    first one only named beside it. Either way round."""
    old, new_ = statement(existing), statement(new)
    return _party_moved_aside(old, new_) or _party_moved_aside(new_, old)


def _party_moved_aside(one: Statement, other: Statement) -> bool:
    norms = {t.norm for t in one.tokens}
    tokens = one.tokens
    for i in range(1, len(tokens) - 1):
        h = i - 1
        while h > 0 and tokens[h].norm in _OBJECT_DETERMINERS:
            h -= 1
        head, party, then = tokens[h], tokens[i], tokens[i + 1]
        if head.pause or party.lower.endswith(("'s", "s'")):
            continue
        if not (_plain_slot(head) and _plain_slot(party)):
            continue
        for j, token in enumerate(other.tokens):
            if token.norm != head.norm or token.pause:
                continue
            k = j + 1
            while k < len(other.tokens) and other.tokens[k].norm in _OBJECT_DETERMINERS:
                k += 1
            came: list[_Token] = []
            while k < len(other.tokens) and other.tokens[k].norm != then.norm and len(came) < 4:
                came.append(other.tokens[k])
                k += 1
            if k == len(other.tokens) or not 1 <= len(came) <= 3:
                continue
            if any(t.norm in norms or not _plain_slot(t) for t in came):
                continue
            if _named_aside(other, party, one):
                return True
    return False


def _plain_slot(token: _Token) -> bool:
    """A content word that is no value."""
    return token.norm not in STOPWORDS and not _is_value(token)


def _named_aside(other: Statement, party: _Token, one: Statement) -> bool:
    """The party is named in `other` only as the owner or the modifier of a noun ("a
    *patron's* card", "each *customer* payment") that `one` has after a determiner ("*their*
    card", "*each* payment")."""
    determined = {
        noun.norm
        for before, noun in pairwise(one.tokens)
        if before.norm in _OBJECT_DETERMINERS and _plain_slot(noun)
    }
    named = [m for m, token in enumerate(other.tokens) if token.norm == party.norm]
    return bool(named) and all(
        m + 1 < len(other.tokens)
        and not other.tokens[m].pause
        and other.tokens[m + 1].norm in determined
        and m > 0
        and other.tokens[m - 1].norm in _OBJECT_DETERMINERS
        for m in named
    )


def _other_possessor(existing: str, new: str) -> bool:
    """One possessive replaced by a possessive of another person, everything around it in
    place ("i passed *my* driving test" / "gabe passed *his* driving test", "approved *his*
    PTO" / "approved *her* PTO")."""
    # aligned on the words as written: alignment()'s stems line other words up around the
    # possessive (tried: one held-out verify claim changed its answer with them)
    a = [t.lower for t in statement(existing).tokens]
    b = [t.lower for t in statement(new).tokens]
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    for operation, i1, i2, j1, j2 in matcher.get_opcodes():
        if operation == "replace" and i2 - i1 == 1 and j2 - j1 == 1:
            one, other = _possessor_person(a[i1]), _possessor_person(b[j1])
            if one and other and not one & other:
                return True
    return False


def _possessor_person(word: str) -> frozenset[str]:
    """Who a possessive may stand for (empty for a word that is not one)."""
    if word == "their":
        return _ANY_THIRD
    person = _POSSESSOR_PERSON.get(word)
    return frozenset() if person is None else frozenset({person})


def _other_possession(one: Statement, other: Statement) -> bool:
    """`one` says "X's Y" where the other text names X but not Y ("the tenant's *guarantor*
    pays" / "the tenant pays"): about someone or something of X's, not X."""
    # Not for "the user's ...": memories name the user's attributes that way ("the user's
    # main laptop" / "the user's primary machine"); the user's people are RELATIONS. Nor
    # after a preposition, where it says where or with what, not who ("... in *Oksana's
    # routine*", "not via *Comarch's* REST API").
    adjuncts = {
        token.norm
        for before, token in pairwise(one.tokens)
        if before.lower in _ADJUNCT_PREPOSITIONS and token.lower.endswith(("'s", "s'"))
    }
    return any(
        owner.norm in other.words
        and owned.norm not in other.words
        and not _same_possession(one, other, owner.norm)
        and owner.norm not in adjuncts
        # what of X's is named by a word the other text says of X ("*duskcalc's* container
        # base image" / "duskcalc switched its base image"), or is what X wants, keeps to or
        # runs by ("*Ingi's* rule", "*Bea's* preference", "*Renovate's* schedule"): X itself
        and not (
            _owned_phrase(one, owner.norm) & other.words
            and not _names_another(one, other, owner.norm)
        )
        and owned.lower not in _OWN_WAYS
        and not _attribute_named(one, other, owned)
        and not _said_by_its_verb(owned.lower, other)
        for owner, owned in _possessives(one)
    )


def _attribute_named(one: Statement, other: Statement, owned: _Token) -> bool:
    """`one` says "X's Y is V" of a thing Y, not a person ("Ottoline's *editor is Neovim*"),
    and the other text names V or V is a name or a value: a statement of X's own
    ("Ottoline uses Neovim"), not of someone of X's ("the tenant's guarantor pays" / "the
    tenant pays")."""
    if owned.norm in RELATIONS:
        return False
    tokens = one.tokens
    at = next(i for i, token in enumerate(tokens) if token is owned)
    for i in range(at + 1, min(at + 3, len(tokens) - 1)):
        if tokens[i - 1].pause:
            return False
        if tokens[i].lower in _COPULAS:
            value = next((t for t in tokens[i + 1 : i + 3] if t.lower not in _ARTICLES), None)
            if value is None:
                return False
            # (or a name or value of its own: "Casimir's editor is *VS Code*" / "Casimir
            # codes in Neovim", X's own editor)
            named = value.norm in one.values or (value.text[:1].isupper() and not value.first)
            return named or value.norm in other.words - STOPWORDS
    return False


def _owned_phrase(one: Statement, owner: str) -> set[str]:
    """The content words of the first two after each "X's" of `owner`, up to a mark, a
    function word or a verb ("the tenant's *guarantor* pays the rent": a word in "-s" before
    a function word is read as one)."""
    tokens = one.tokens
    words: set[str] = set()
    for i, token in enumerate(tokens):
        if token.norm != owner or not token.lower.endswith(("'s", "s'")) or token.pause:
            continue
        for n in range(i + 1, min(i + 3, len(tokens))):
            following = tokens[n]
            after = tokens[n + 1].norm if n + 1 < len(tokens) else ""
            if following.norm in STOPWORDS:
                break
            if following.lower.endswith("s") and after in STOPWORDS and n > i + 1:
                break  # "... guarantor *pays* the rent"
            words.add(following.norm)
            if following.pause:
                break
    return words & one.words


def _names_another(one: Statement, other: Statement, owner: str) -> bool:
    """Before "X's", `one` names someone or something in capitals the other text does not
    ("*Ilona* agreed with Hedda's suggestion", "*Hana* said Priya's rewritten module ..."):
    what of X's it says is another's view of it."""
    for token in one.tokens:
        if token.norm == owner:
            return False
        if token.text[:1].isupper() and token.norm not in other.words | STOPWORDS:
            return True
    return False


# What a person or a thing has that says what it is, wants or does, or when, where or how
# it is: "X's *rule*", "X's *approval*", "X's *day* off", "X's *weight*" are statements of
# X, not of someone or something of X's.
_OWN_WAY_WORDS = """
    preference preferences preferred favourite favorite favourites favorites rule rules
    choice choices opinion opinions view views habit habits style schedule order orders
    setting settings config configuration default defaults dependencies dependency
    requirement requirements wish wishes call decision policy convention conventions
    approval approvals sign-off signoff responsibility responsibilities ownership
    timezone day days hours shift shifts availability birthday age weight height title role
    email address phone"""
_OWN_WAYS = frozenset(_OWN_WAY_WORDS.split())


# Prepositions before "X's Y" that make it a place or a means, not a holder.
_ADJUNCT_PREPOSITIONS = frozenset({"in", "into", "via", "through", "from", "on", "at", "inside"})


_POSSESSION_REACH = 3  # words after "X's" that name what of X's it is


def _owned_words(one: Statement, owner: str) -> set[str]:
    """The words (not stopwords) in the few after each "X's" of `owner` in the text."""
    norms = [t.norm for t in one.tokens]
    words: set[str] = set()
    for i, token in enumerate(one.tokens):
        if token.norm == owner and token.lower.endswith(("'s", "s'")):
            words.update(n for n in norms[i + 1 : i + 1 + _POSSESSION_REACH] if n in one.words)
    return words


def _same_possession(one: Statement, other: Statement, owner: str) -> bool:
    """Both texts say "X's ..." of the same X and share a word in what follows it: the same
    thing of X's said two ways ("Marula's max *upload* size" / "Marula's *upload* limit"), not
    another ("Vireo's training data" / "Vireo's evaluation reports")."""
    return bool(_owned_words(one, owner) & _owned_words(other, owner))


# Words that follow "X's" when it says "X is" or "X has", not whose something is.
_AFTER_IS_WORDS = """
    where when how what who why now still always never usually also just gonna going been
    getting got done over back here there not finally already"""
_AFTER_IS = frozenset(_AFTER_IS_WORDS.split())


def _contracted(following: _Token) -> bool:
    """Whether the word after "X's" shows that it is "X is" (see _other_possession): one of
    _AFTER_IS, an adverb in "-ly", a number, a duration, a day or a month."""
    word = following.lower
    return (
        word in _AFTER_IS
        or (word.endswith("ly") and len(word) > 4)
        or any(ch.isdigit() for ch in following.norm)
        or following.norm in CALENDAR
    )


_SETTING_VALUES = frozenset(word for pair in OPPOSITES for word in pair)
_PERSON_WORDS = "i me you he him she her we us they them"
_PERSONS = frozenset(_PERSON_WORDS.split())
_SWAP_ITEMS = _SETTING_VALUES | _PERSONS | {"user"}
_HOLDER_WORDS = _PERSONS | RELATIONS | {"user"}
_SWAP_CHUNK = 3  # the longest run of content words exchanged as one item ("12 months")
_SWAP_COVERED = 0.8  # the share of the new text's content words the old one must have


def swapped(existing: str, new: str) -> tuple[str, str] | None:
    """The two items that exchanged places between the texts, all else in order: "prefers
    *tabs* over *spaces*" / "prefers *spaces* over *tabs*", "on in *staging* and off in
    *production*" / "on in *production* and off in *staging*", "the user uses *VS Code* and
    Leo uses *Neovim*" / "... *Neovim* ... *VS Code*" (None when they did not). The new text
    may state part of the old one (its content words nearly all in the old). Each item must
    take the other's place (a word beside it stays): a sentence turned around ("Bob is on call
    this week" / "This week the on-call person is Bob") or a phrase moved to the other end
    ("In this repository the user prefers pnpm" / "The user prefers pnpm in this repository")
    says the same."""
    if (parts := _parts_reordered(existing, new) or _numbers_exchanged(existing, new)) is not None:
        return parts  # in any language: "gl-<ticket>-<slug>" / "gl-<slug>-<ticket>"
    old, new_ = statement(existing), statement(new)
    if not (_reads_english(old) and _reads_english(new_)):
        # word order is read by English words (another language orders its own); a terse
        # note without them still says who does what to whom by its ends
        if reads_english(existing) and reads_english(new):
            return (
                _role_turned(old, new_)
                or _ends_exchanged(old, new_)
                or _two_values_exchanged(old, new_)
                or _roles_exchanged(existing, new, old, new_)
            )
        return None
    found = _exchanged(old, new_)
    if found is None and _speaks_of_self(old) and _speaks_of_self(new_):
        # the speaker as one person however written, copulas aside: "*i'm* older than *my
        # sister*" / "*my sister* is older than *me*", "*Mark* reports to *me*" / "*I*
        # report to *Mark*"
        found = _exchanged(_as_persons(old), _as_persons(new_), holding=_SPEAKERS)
    if found is None and (moved := _without_moved_phrase(old, new_)) is not None:
        # a phrase moved to the other end as well ("Marco reports to Lena *on the data
        # team*" / "*On the data team*, Lena reports to Marco"): the rest is read
        found = _exchanged(*moved, joined=True)
    return (
        found
        or _possessor_swapped(old, new_)
        or _role_turned(old, new_)
        or _voice_turned(old, new_)
        or _ends_exchanged(old, new_)
        or _two_values_exchanged(old, new_)
        or _roles_exchanged(existing, new, old, new_)
    )


# The parts of a written pattern or format: a placeholder in brackets ("<ticket number>",
# "{slug}", "[level]"), the fields of a date or time format written as one token
# ("YYYY-MM-DD", "HH:mm"), or the steps of a chain of arrows ("Priya -> Tom -> Efua").
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>|\{[^{}\n]{1,40}\}|\[[^\[\]\n]{1,40}\]")
_ARROW = re.compile(r"\s*(?:->|→|=>|⇒)\s*")
_STEP = r"[\w#@]+(?:[./-][\w#@]+)*"
_ARROW_CHAIN = re.compile(rf"{_STEP}(?:\s*(?:->|→|=>|⇒)\s*{_STEP})+")
_FORMAT_FIELD = re.compile(r"Y{2,4}|M{1,2}|D{1,2}|H{1,2}|h{1,2}|m{1,2}|s{1,2}|S{3}")
_FORMAT_TOKEN = re.compile(r"\b[YMDHhmsS]{1,4}(?:[-/.:_T][YMDHhmsS]{1,4})+\b")


def _pattern_parts(text: str) -> tuple[list[str], str]:
    """A text's pattern parts in order (each _PLACEHOLDER, each step of an _ARROW_CHAIN, each
    _FORMAT_FIELD of a format token whose every field is one, each quoted text), and the text
    without them."""
    parts: list[str] = []
    rest: list[str] = []
    at = 0
    listed = -1  # where the run of quoted texts joined as one list begins (in `parts`)
    readings = (
        f"{_PLACEHOLDER.pattern}|{_ARROW_CHAIN.pattern}|{_FORMAT_TOKEN.pattern}"
        f"|{QUOTED_TEXT.pattern}"
    )
    for found in re.finditer(readings, text):
        written = found.group(0)
        if written[0] in "<{[`\"'\u201c":
            # quoted items of one list ("'dev', 'staging' and 'prod'") in any order are the
            # same list: each run of them is read sorted
            quoted = written[0] not in "<{["
            joined = _QUOTED_LIST_JOIN.fullmatch(text[at : found.start()])
            if not (quoted and listed >= 0 and parts and joined):
                listed = len(parts) if quoted else -1
            parts.append(" ".join(written[1:-1].lower().split()))
            if quoted:
                parts[listed:] = sorted(parts[listed:])
        elif _ARROW.search(written):
            listed = -1
            parts.extend(step.lower() for step in _ARROW.split(written))
        else:
            listed = -1
            fields = re.split(r"[-/.:_T]", written)
            if not all(_FORMAT_FIELD.fullmatch(field) for field in fields):
                continue
            parts.extend(fields)
        rest.append(text[at : found.start()])
        at = found.end()
    rest.append(text[at:])
    return parts, " ".join(rest)


# What joins two quoted items of one list: a comma, "and", "or", "&" or "/" (with a comma).
_QUOTED_LIST_JOIN = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+|&\s*|/\s*)", re.I)


def _parts_reordered(existing: str, new: str) -> tuple[str, str] | None:
    """The first two parts of a pattern or format (_pattern_parts) that one text puts in
    another order than the other, the same parts in both ("gl-<ticket number>-<short-slug>"
    / "gl-<short-slug>-<ticket number>", "YYYY-MM-DD" / "DD-MM-YYYY"), when the rest of one
    text has no content word the other lacks; else None."""
    old_parts, old_rest = _pattern_parts(existing)
    new_parts, new_rest = _pattern_parts(new)
    if len(old_parts) < 2 or old_parts == new_parts or sorted(old_parts) != sorted(new_parts):
        return None
    old_words, new_words = content_words(old_rest), content_words(new_rest)
    if not (old_words <= new_words or new_words <= old_words):
        return None
    first = next(i for i, (a, b) in enumerate(zip(old_parts, new_parts, strict=True)) if a != b)
    return old_parts[first], new_parts[first]


# A number and the word it counts or measures after it ("5 times", "30-second", "4 GB").
_NUMBER_AND_WORD = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s+|-)?([^\W\d_]+)")


def _counted(text: str) -> list[tuple[str, str]]:
    """The text's numbers with the content word each counts or measures, in order."""
    return [
        (found.group(1), _stem(found.group(2).lower()))
        for found in _NUMBER_AND_WORD.finditer(text)
        if found.group(2).lower() not in STOPWORDS
    ]


def _numbers_exchanged(existing: str, new: str) -> tuple[str, str] | None:
    """Two numbers each said of the other's word, the same numbers and words in both ("retries
    *4* times with a *20*-second delay" / "retries *20* times with a *4*-second delay"), when
    the rest of one text has no content word the other lacks: one word with its old and new
    number; else None (the save rule's reading; verify_features.numbers_exchanged also reads
    a claim that states part of a memory, in English)."""
    old, new_ = _counted(existing), _counted(new)
    if len(old) < 2 or set(old) == set(new_):
        return None
    if sorted(n for n, _ in old) != sorted(n for n, _ in new_):
        return None
    if sorted(w for _, w in old) != sorted(w for _, w in new_):
        return None
    # (the words but the numbers and the measures made of them: "20s" / "4s")
    old_words = {w for w in content_words(existing) if not any(c.isdigit() for c in w)}
    new_words = {w for w in content_words(new) if not any(c.isdigit() for c in w)}
    if not (old_words <= new_words or new_words <= old_words):
        return None
    # the first word of the old text whose number changed, with its old and new number (as
    # verify_features.numbers_exchanged says it: "5 data / 3 data")
    written = {
        (found.group(1), _stem(found.group(2).lower())): found.group(2)
        for found in _NUMBER_AND_WORD.finditer(existing)
    }
    for number, word in old:
        now = next((n for n, w in new_ if w == word and (n, w) not in old), None)
        if (number, word) not in new_ and now is not None:
            as_written = written.get((number, word), word)
            return f"{number} {as_written}", f"{now} {as_written}"
    return None


def _two_values_exchanged(old: Statement, new: Statement) -> tuple[str, str] | None:
    """Two values of the old text in each other's places and every other word where it was,
    with a content word between them: "tapline usa *PostgreSQL* y dripwatch usa
    *ClickHouse*" / the two exchanged, read in any language written in words; not two items
    of one list, with only a joiner between them ("usa PostgreSQL y ClickHouse")."""
    olds, news = [t.norm for t in old.tokens], [t.norm for t in new.tokens]
    if len(olds) != len(news):
        return None
    moved = [i for i, (a, b) in enumerate(zip(olds, news, strict=True)) if a != b]
    if len(moved) != 2:
        return None
    i, j = moved
    if (olds[i], olds[j]) != (news[j], news[i]) or not {olds[i], olds[j]} <= old.values:
        return None
    between = {t.norm for t in old.tokens[i + 1 : j] if t.lower not in _ANY_JOINER}
    if not between & (old.words - old.values):
        return None
    return old.tokens[i].text, old.tokens[j].text


_ANY_JOINER = _LIST_JOINERS | _FOREIGN_JOINERS


def _roles_exchanged(
    existing: str, new: str, old: Statement, new_: Statement
) -> tuple[str, str] | None:
    """Two persons both texts name in capitals, and a clause of each text that names one of
    them only, another one in each, with the same words besides ("*Primary on-call*: Bart;
    secondary: Tomasz" / "Tomasz is *primary on-call*, with Bart as backup"): who has which
    role exchanged, however each text says the other role ("Alice reviews the frontend, Bob
    the backend" / "Bob reviews the backend, Alice the frontend" is one fact). A clause ends
    at a comma or a semicolon; each of the two must have one of its own in both texts."""
    names = _capitalised(old) & _capitalised(new_)
    if len(names) < 2:
        return None
    mine, theirs = _clauses_of_one(existing, names), _clauses_of_one(new, names)
    # each of the two in a clause of its own in both texts, not items of one list ("depends
    # on Postgres, Redis and NATS" / "on NATS, Postgres and Redis")
    alone = {person for person, _ in mine} & {person for person, _ in theirs}
    for person, words in mine:
        for other, said in theirs:
            if other != person and said == words and {person, other} <= alone:
                written = {t.norm: t.text for t in old.tokens}
                return written.get(person, person), written.get(other, other)
    return None


def _capitalised(one: Statement) -> set[str]:
    """The words the text writes with a capital first letter as names are written (not
    function words, not an acronym: "QA"), as norms."""
    return {t.norm for t in one.tokens if t.text[:1].isupper() and not t.text.isupper()} - STOPWORDS


_CLAUSE_MARKS = re.compile(r"[,;]\s")


def _clauses_of_one(text: str, names: Set[str]) -> list[tuple[str, frozenset[str]]]:
    """The text's clauses that name one of `names`, as (that name, the clause's other content
    words), those with some."""
    found = []
    for clause in _CLAUSE_MARKS.split(text):
        one = statement(clause)
        persons = {t.norm for t in one.tokens} & names
        words = one.words - names - STOPWORDS
        if len(persons) == 1 and words:
            found.append((next(iter(persons)), frozenset(words)))
    return found


# Words between two things that make their order no matter ("Ana works *with* Bo", "Ana
# *and* Bo"), or say one is the other ("X *is* Y"): the ends exchanged around them are one fact.
_ORDERLESS_WORDS = "and or nor plus both either & with vs versus against = am"
_ORDERLESS_BETWEEN = _BE | frozenset(_ORDERLESS_WORDS.split())


def _ends_exchanged(old: Statement, new: Statement) -> tuple[str, str] | None:
    """The whole text as "A verb B" and "B verb A", the words between them the same and none
    of them one that makes the order no matter (_ORDERLESS_BETWEEN): "lane-sync calls
    cardvault" / "cardvault calls lane-sync", "Ana mentors Bo" / "Bo mentors Ana", "Ana
    reviews Bo's PRs" / "Bo reviews Ana's PRs" (where the text's start, which swapped does
    not count as a place, is one of the two)."""
    olds, news = [t.norm for t in old.tokens], [t.norm for t in new.tokens]
    if len(olds) != len(news) or olds == news:
        return None
    # what both ends own, the same after both, is no part of them ("Tobias reviews
    # *Marisol's* PRs" / "Marisol reviews *Tobias's* PRs")
    cut = len(olds)
    while cut > 1 and olds[cut - 1] == news[cut - 1]:
        cut -= 1
    owned = cut < len(olds) and all(
        one.tokens[cut - 1].lower.endswith(("'s", "s'", "\u2019s")) for one in (old, new)
    )
    if not owned:
        cut = len(olds)
    said = old.words | old.values
    for a in range(1, cut - 1):
        for b in range(a + 1, cut):
            head, middle, tail = olds[:a], olds[a:b], olds[b:cut]
            if news[:cut] != tail + middle + head or head == tail:
                continue
            between = old.tokens[a:b]
            lower = {t.lower for t in between}
            if lower & _ORDERLESS_BETWEEN or not set(head) & said or not set(tail) & said:
                continue
            # the verb right after the first thing, no mark around the words between: not a
            # phrase moved ("... runs *at 6 AM UTC* daily" / "Daily at 06:00 UTC ... runs")
            # nor a list reordered ("Port 5433, Postgres, Fenwick staging")
            ends = (old.tokens[a - 1], old.tokens[b - 1], new.tokens[len(tail) - 1])
            if between[0].lower in STOPWORDS or any(t.pause for t in ends):
                continue
            return " ".join(t.text for t in old.tokens[:a]), " ".join(
                t.text for t in old.tokens[b:cut]
            )
    return None


# Words that say in which order things come, or which of two is preferred: the same words
# around them in another order say another thing ("tag, build, publish" / "build, tag,
# publish"; "... first, then ..."; "next to the source files *rather* than in a tests
# directory" / the other way round). Not "before", "after" or "next", which also say when.
_ORDER_WORDS = frozenset({"first", "then", "rather", "instead", "over", "order", "followed"})


def two_events(existing: str, new: str) -> bool:
    """Each text tells something done, its verbs all in the past and none a copula ("Adaeze
    *rotated* the Postmark API key" / "Adaeze *revoked* the old Postmark API key"): two
    things that happened, not a state and its change, whatever change word the second one's
    verb is; unless the new text rejects a word of the old one."""
    old, new_ = statement(existing), statement(new)
    if _rejected(new_) & old.words:
        return False  # one event told right ("Actually, Saoirse designed it, *not Efua*")
    return _tells_an_event(old) and _tells_an_event(new_)


def _tells_an_event(one: Statement) -> bool:
    """The text's verbs are all in the past (_verb_forms), one at least, the first right
    after a person's name ("*Adaeze* rotated"; not "We picked Postgres" / "We switched to
    CockroachDB", a choice changed) or a release's ("*Version 2.4* deprecated"), and it has
    no form of "be" or "have" (a state: "Node version pinned to 18" is none)."""
    forms = _verb_forms(one)
    if set(forms.values()) != {"past"} or {t.lower for t in one.tokens} & (_BE | _HAVE):
        return False
    first = next(i for i, t in enumerate(one.tokens) if t.norm in forms)
    if first == 0:
        return False
    doer = one.tokens[first - 1].text
    if first >= 2 and one.tokens[first - 2].lower in _RELEASE_WORDS:
        # a release that did it ("*Version 2.3* introduced the bulk import endpoint" /
        # "*Version 2.4* deprecated ...")
        return _is_value(one.tokens[first - 1])
    return doer[:1].isupper() and doer[1:].islower() and doer.lower() not in STOPWORDS


_RELEASE_WORDS = frozenset({"version", "release", "build", "sprint", "milestone"})


_HAVE = frozenset({"has", "have", "had"})


def tense_differs(old: Statement, new: Statement) -> bool:
    """The same content words in the same order, and one verb said in the past in one text
    and in the present in the other ("Juniper *used* MongoDB as its primary store" /
    "Juniper *uses* ...", "User *lived* in Bergen" / "User *lives* in Bergen"): how it was
    and how it is, two facts, however close; not a participle after "is", "has" or a
    determiner ("is *deployed*", "the *merged* PR"), nor one before "by"."""
    spans = _over_a_past_span(old), _over_a_past_span(new)
    if spans[0] != spans[1]:
        # "Ingi *used* Vim *for years*" / "Ingi's editor is Vim": how it was, for a while
        present = new if spans[0] else old
        return not any(_past_form(t.lower) for t in present.tokens)
    # (one thing or several of it: "reviewed the *PR*" / "reviews the *PRs*")
    same_words = set(_singular(list(old.words))) == set(_singular(list(new.words)))
    if not same_words or _singular(_content_order(old)) != _singular(_content_order(new)):
        return False
    was, now = _verb_forms(old), _verb_forms(new)
    return any({was[word], now[word]} == {"past", "present"} for word in was.keys() & now.keys())


# Units of a month or more ("for *years*"), and spans said without a number
_SPANS_OF_YEARS = frozenset(
    unit for unit, seconds in _DURATION_UNITS.items() if seconds >= _DURATION_UNITS["month"]
) | {"decade", "decades", "ages"}


def _over_a_past_span(one: Statement) -> bool:
    """A verb in the past and "for" a span of months or years after it ("*used* Vim *for
    years*", "*worked* at Nordwind *for two years*")."""
    lower = [t.lower for t in one.tokens]
    for i, word in enumerate(lower):
        if not _past_form(word):
            continue
        rest = lower[i + 1 :]
        for j, following in enumerate(rest):
            if following == "for" and set(rest[j + 1 : j + 4]) & _SPANS_OF_YEARS:
                return True
    return False


def _singular(words: list[str]) -> list[str]:
    """Stems with the plural "s" a short word keeps ("prs") dropped: "pr"."""
    return [word.removesuffix("s") for word in words]


def _content_order(one: Statement) -> list[str]:
    """The text's content words in the order it says them."""
    return [token.norm for token in one.tokens if token.norm in one.words]


def _past_form(word: str) -> bool:
    """A verb written in the past ("moved", "led", "used"), as a word in lower case."""
    return word.endswith("ed") or word in _PAST_FORMS or word == "used"


def _verb_forms(one: Statement) -> dict[str, str]:
    """Each verb's tense as written, past or present, where the text says it one way; not a
    participle or adjective (_NOT_BEFORE_A_VERB before it, "by" after it), nor a day, a
    month or a value."""
    found: dict[str, set[str]] = {}
    tokens = one.tokens
    for i, token in enumerate(tokens):
        low = token.lower
        before = tokens[i - 1].lower if i else ""
        after = tokens[i + 1].lower if i + 1 < len(tokens) else ""
        if low.endswith("ing") and before in ("is", "are", "am") and token.norm in one.words:
            found.setdefault(token.norm, set()).add("present")  # "is *leading*"
            continue
        if before in _NOT_BEFORE_A_VERB or after == "by" or token.norm in one.values:
            continue
        if token.norm in STOPWORDS or token.norm in CALENDAR:
            continue
        if token.text[:1].isupper() and _past_form(after):
            continue  # a name before its verb ("*Jonas* calibrated"), no verb in "-s"
        if low == token.norm:
            # a bare verb is present only after a subject pronoun ("*We deploy* ...")
            if before in _PLAIN_SUBJECTS and token.norm in one.words:
                found.setdefault(token.norm, set()).add("present")
            continue
        if _past_form(low):
            found.setdefault(token.norm, set()).add("past")
        elif low.endswith("s") and not low.endswith("ss"):
            found.setdefault(token.norm, set()).add("present")
    return {word: tenses.pop() for word, tenses in found.items() if len(tenses) == 1}


# The pronouns after which a verb's bare form is the present ("*we deploy*", "*they use*").
_PLAIN_SUBJECTS = frozenset({"i", "we", "you", "they"})
# The words after which a past form is a participle or an adjective ("is *deployed*", "has
# *shipped*", "the *merged* PR").
_NOT_BEFORE_A_VERB = (
    _BE | _POSSESSIVES | frozenset({"has", "have", "had", "having", "the", "a", "an"})
)


def plan_and_done(old: Statement, new: Statement) -> bool:
    """One text says a thing is to be done ("Rafael *wants to move* the boothbot agents onto
    ARM boxes", "Dependabot *should be turned on* for marquee-web") and the other that it was
    done, the same verb in the past ("Rafael *moved* the boothbot agents ...", "Dependabot
    *was turned on* ..."), the rest of their content words the same: a plan and what came of
    it, two occasions, whatever change word the verb itself is."""
    for plan, done in ((old, new), (new, old)):
        planned = _planned_verbs(plan)
        if not planned or _planned_verbs(done):
            continue
        if (plan.words - _INTENT) != (done.words - _INTENT):
            continue
        if planned & _done_verbs(done):
            return True
    return False


def scheduled_and_done(old: Statement, new: Statement) -> bool:
    """One text says a thing is scheduled for a time ("Moving tide-tables onto Kubernetes *is
    scheduled for* Q3", _SCHEDULED) and the other that it was done, a verb in the past and no
    schedule, no date moved ("tide-tables *has been migrated* to Kubernetes"; not "the demo
    *got rescheduled* to March 11", "launch *slipped* to March 28", "has a blood test
    *booked*": _DATE_MOVED): a plan and what came of it, two occasions."""
    for plan, done in ((old, new), (new, old)):
        if not _SCHEDULED.search(" ".join(t.lower for t in plan.tokens)):
            continue
        written = " ".join(t.lower for t in done.tokens)
        if _SCHEDULED.search(written) or {t.lower for t in done.tokens} & _DATE_MOVED:
            continue
        if (_done_verbs(done) | _perfect(done)) - _SCHEDULING and done.words & plan.words:
            return True
    return False


def _perfect(one: Statement) -> set[str]:
    """The verbs the text says are done, in the perfect ("*has been migrated*", "*have
    moved*")."""
    lower = [t.lower for t in one.tokens]
    found: set[str] = set()
    for i, word in enumerate(lower):
        if (word in _HAVE or word in ("'s", "'ve")) and i + 1 < len(lower):
            j = i + 2 if lower[i + 1] == "been" and i + 2 < len(lower) else i + 1
            if _past_form(lower[j]):
                found.add(one.tokens[j].norm)
    return found


_SCHEDULED = re.compile(r"\b(?:scheduled|planned|slated)\s+(?:for|in|on|to)\b")
_SCHEDULING = frozenset(_stem(word) for word in ("scheduled", "planned", "slated"))
# Verbs that move a date or drop a plan, and those of a booking (a schedule said in the
# past: "has a blood test *booked*"): a text with one says the schedule, not what came of it.
_DATE_MOVED_WORDS = """
    rescheduled postponed pushed moved bumped slipped shifted delayed deferred cancelled
    canceled dropped brought booked arranged reserved confirmed"""
_DATE_MOVED = frozenset(_DATE_MOVED_WORDS.split())


def headed_as_a_plan(existing: str, new: str) -> bool:
    """One text is headed as a plan or says it is one ("*Plan:* migrate harbourmaster from
    Flyway to Liquibase in Q1", "*Goal for Q3:* move CI to self-hosted runners", "... is *on
    the 2025 roadmap*": _a_plan) and the other is not and says nothing is still to be done
    ("harbourmaster migrations are on Liquibase now"): a plan and what came of it
    (plan_and_done), two occasions."""
    headed = _a_plan(existing), _a_plan(new)
    if headed[0] == headed[1]:
        return False
    old, new_ = statement(existing), statement(new)
    done = new_ if headed[0] else old
    return not _planned_verbs(done) and bool(old.words & new_.words)


def _a_plan(text: str) -> bool:
    """The text is headed as a plan (_PLAN_HEADING) or says it is on one (_PLAN_PHRASE: "...
    is *on the 2025 roadmap*", "*in the backlog*"; not "is planned for June", whose date a
    correction may move: "... pushed to August")."""
    return _PLAN_HEADING.match(text) is not None or _PLAN_PHRASE.search(text) is not None


_PLAN_PHRASE = re.compile(
    r"\b(?:on|in)\s+(?:the|our|their|its)\b[^.;:]{0,24}?\b(?:roadmap|backlog)\b",
    re.IGNORECASE,
)


# A heading that says what follows is a plan or a goal, up to its colon ("Plan:", "Goal for
# Q3:", "TODO:", "Next steps:", "Roadmap:").
_PLAN_HEADING = re.compile(
    r"\s*(?:plan|planned|plans|goal|goals|todo|to-do|to do|next steps?|roadmap|proposal"
    r"|proposed|objective|intent)\b[^:.;]{0,30}:",
    re.IGNORECASE,
)


def _done_verbs(one: Statement) -> set[str]:
    """The verbs the text says in the past ("*moved*", "*was turned* on"), not a passive of
    the present ("*are stored* in UTC", "*is written* in Kotlin")."""
    tokens = one.tokens
    return {
        token.norm
        for i, token in enumerate(tokens)
        if _past_form(token.lower) and not (i and tokens[i - 1].lower in _NOW_PASSIVE)
    }


# "is", "are" or "be" before a participle say a passive of the present, "was" and "were" one of
# the past ("*are stored* in UTC" / "*was turned* on").
_NOW_PASSIVE = (_BE - {"was", "were", "got"}) | {"am"}


def _planned_verbs(one: Statement) -> set[str]:
    """The verbs the text says are to be done: right after "to", "should", "will", "must" or
    "should be" that follows an intention word (_INTENT) or a modal (_TO_BE_DONE)."""
    tokens = one.tokens
    found: set[str] = set()
    for i, token in enumerate(tokens[:-1]):
        low = token.lower
        if low in _TO_BE_DONE or (low == "to" and i and tokens[i - 1].norm in _INTENT):
            j = i + 1
            if tokens[j].lower == "be" and j + 1 < len(tokens):
                j += 1
            found.add(tokens[j].norm)
    return found


# Words that say what is meant to be done ("*wants to* move", "*plans to* split", "is *going*
# to"), and modals that say it is still to be done ("*should* be turned on", "*will* ship").
_INTENT_WORDS = "want plan intend going aim hope need"
_INTENT = frozenset(_stem(word) for word in _INTENT_WORDS.split())
_TO_BE_DONE = frozenset({"should", "will", "shall", "must", "ought"})


def reorders(old: Statement, new: Statement) -> bool:
    """An order word both texts have (_ORDER_WORDS) has other content words before it in one
    than in the other, or the same ones after it in another order: items exchanged that
    `swapped` does not read, several words each or more than two ("deploy the database
    migrations *first*, then the backend services, and ... roll out the frontend bundle" /
    "roll out the frontend bundle *first*, then ..."). For two texts of the same content
    words (compare); a sentence turned around without such a word ("The frontend is built
    with Vite" / "Vite builds the frontend") is no exchange."""
    if (moved := _without_moved_phrase(old, new)) is not None:
        # a phrase moved to the other end says the same ("*In this repository* the user
        # prefers pnpm over npm" / "The user prefers pnpm over npm *in this repository*")
        old, new = moved
    # (not a word that opens the text, which orders nothing before it: "*First*, run the
    # linter, then the tests" / "Run the linter first, then the tests")
    old_lower = ["", *(t.lower for t in old.tokens[1:])]
    new_lower = ["", *(t.lower for t in new.tokens[1:])]

    def content(statement_: Statement, tokens: Sequence[_Token]) -> list[str]:
        return [t.norm for t in tokens if t.norm in statement_.words]

    for word in sorted(_ORDER_WORDS & set(old_lower) & set(new_lower)):
        i, j = old_lower.index(word), new_lower.index(word)
        if set(content(old, old.tokens[:i])) != set(content(new, new.tokens[:j])):
            return True
        if content(old, old.tokens[i + 1 :]) != content(new, new.tokens[j + 1 :]):
            return True
    return False


def _without_moved_phrase(old: Statement, new: Statement) -> tuple[Statement, Statement] | None:
    """Both statements without the phrase one has at its end and the other at its start
    (after a speaker's label), with the words that lead into it ("on the", "at my"); None
    when there is no such phrase."""
    for first, second in ((old, new), (new, old)):
        start = _label_length(second.tokens)
        lead = [t.norm for t in first.tokens]
        for size in range(4, 0, -1):
            phrase = [t.norm for t in second.tokens[start : start + size]]
            if len(phrase) < size or lead[-size:] != phrase or size >= len(lead) - start:
                continue
            if not any(norm not in STOPWORDS for norm in phrase):
                continue
            end = len(first.tokens) - size
            while end > 0 and first.tokens[end - 1].lower in STOPWORDS:
                end -= 1  # the words that lead into the phrase: "on the", "at my"
            shortened = replace(first, tokens=first.tokens[:end])
            rest = replace(second, tokens=second.tokens[:start] + second.tokens[start + size :])
            return (shortened, rest) if first is old else (rest, shortened)
    return None


def _exchanged(
    old: Statement,
    new_: Statement,
    holding: frozenset[str] | None = None,
    *,
    joined: bool = False,
) -> tuple[str, str] | None:
    """The two items that exchanged places between the statements (see swapped), one of them
    one of the `holding` words alone when they are given; with `joined`, the two ends of the
    sentence (after a speaker's label) that a content word joins ("*Marco* reports to
    *Lena*"; not "the apartment is at 12 Harbour Road", a sentence that may be turned
    around, nor two words inside it)."""
    # the values of a setting count though they are stopwords ("on in staging, off in prod"),
    # and so do the persons ("*me* on drums, *alex* on bass" / "*alex* on drums, *me* on bass")
    a = [t.norm for t in old.tokens if _swap_item(t)]
    b = [t.norm for t in new_.tokens if _swap_item(t)]
    shared = set(a) & set(b)
    if not b or len([w for w in b if w in shared]) < _SWAP_COVERED * len(b):
        return None
    a_shared = [w for w in a if w in shared]
    b_shared = [w for w in b if w in shared]
    if a_shared == b_shared or sorted(a_shared) != sorted(b_shared):
        return None
    start = next(i for i, (x, y) in enumerate(zip(a_shared, b_shared, strict=True)) if x != y)
    end = len(a_shared) - next(
        i for i, (x, y) in enumerate(zip(a_shared[::-1], b_shared[::-1], strict=True)) if x != y
    )
    span, other = a_shared[start:end], b_shared[start:end]
    if joined and (end != len(a_shared) or start > _label_length(old.tokens)):
        return None
    for first in range(1, min(_SWAP_CHUNK, len(span) - 1) + 1):
        for last in range(1, min(_SWAP_CHUNK, len(span) - first) + 1):
            head, middle, tail = span[:first], span[first : len(span) - last], span[-last:]
            if holding is not None and not any([w] in (head, tail) for w in holding):
                continue
            if joined and not _content_between(old, head, tail):
                continue
            if head != tail and other == tail + middle + head and _ordered(old, new_, head, tail):
                if not middle and (
                    _side_by_side(old, head, tail) or _side_by_side(new_, tail, head)
                ):
                    # two words side by side in one text are two modifiers of one noun,
                    # not two places ("SQL written in lowercase keywords" / "lowercase SQL
                    # keywords")
                    continue
                written = {t.norm: t.text for t in reversed(old.tokens)}  # the first as written
                return " ".join(written[w] for w in head), " ".join(written[w] for w in tail)
    return None


def _side_by_side(one: Statement, first: list[str], second: list[str]) -> bool:
    """Whether `second` follows `first` in the text with no word between them."""
    norms = [t.norm for t in one.tokens]
    return any(
        norms[i : i + len(first)] == first
        and norms[i + len(first) : i + len(first) + len(second)] == second
        for i in range(len(norms))
    )


def _content_between(old: Statement, head: list[str], tail: list[str]) -> bool:
    """Whether a content word stands between the end of `head` and the start of `tail`."""
    norms = [t.norm for t in old.tokens]
    if head[-1] not in norms or tail[0] not in norms:
        return False
    start = norms.index(head[-1]) + 1
    end = norms.index(tail[0], start) if tail[0] in norms[start:] else start
    return any(t.lower not in STOPWORDS for t in old.tokens[start:end])


def _swap_item(token: _Token) -> bool:
    return (
        token.lower not in STOPWORDS
        or token.lower in _SWAP_ITEMS
        or token.norm in _SPEAKERS
        or _named_in_capitals(token)  # "HERE"
    )


# The speaker, however the text names them ("I", "I'm", "me", "myself"; "my" too where a
# possessor is read), the speaker with others ("we", "us"; "our"), and the copulas that a
# contraction ("I'm", "we're") hides.
_SELF = "\x00self"
_SELF_WORDS = frozenset({"i", "i'm", "im", "me", "myself", "i've", "i'd"})
_WE = "\x00we"
_WE_WORDS = frozenset({"we", "we're", "us", "ourselves", "we've", "we'd"})
_SPEAKERS = frozenset({_SELF, _WE})
_SELF_COPULAS = frozenset({"am", "is", "are"})


_SPEAKER_WORDS = _SELF_WORDS | _WE_WORDS | {"my", "our"}


def _speaks_of_self(one: Statement) -> bool:
    return any(t.lower in _SPEAKER_WORDS for t in one.tokens)


def _as_persons(one: Statement, *, possessive: bool = False) -> Statement:
    """The statement with the speaker as one token (see _SELF_WORDS) and no copula ("X's" is
    X already: see _stem): the places persons stand in, however the sentence is contracted."""
    tokens = []
    for token in one.tokens:
        if token.lower in _SELF_COPULAS:
            continue
        if token.lower in _SELF_WORDS or (possessive and token.lower == "my"):
            tokens.append(replace(token, norm=_SELF))
        elif token.lower in _WE_WORDS or (possessive and token.lower == "our"):
            tokens.append(replace(token, norm=_WE))
        else:
            tokens.append(token)
    return replace(one, tokens=tuple(tokens))


def _possessor_swapped(old: Statement, new: Statement) -> tuple[str, str] | None:
    """The holder and the possessor of one relation exchanged: "dave is *my* boss" / "*I'm*
    dave's boss", "Ana is Bo's mentor" / "Bo is Ana's mentor" (None otherwise)."""
    # either text may name the relation first: "Kofi's manager is Femke Jansen" / "Kofi is
    # Femke Jansen's manager", "Priya is my mentor" / "The user is Priya's mentor"
    first, second = _relation(old), _relation(new)
    if first is None or second is None or first[2] != second[2]:
        return None
    (holders, holder_text), (possessors, possessor_text) = first[0], first[1]
    turned = _one_person(holders, second[1][0]) and _one_person(possessors, second[0][0])
    if turned and not _one_person(holders, possessors):
        return holder_text, possessor_text
    return None


def _role_turned(old: Statement, new: Statement) -> tuple[str, str] | None:
    """One text names a relation with its noun ("Mari is Tobiah's *mentor*") and the other
    with its verb, the two persons the other way round ("Tobiah *mentors* Mari": who mentors
    whom turned; "Ana *manages* Bo" / "Bo is Ana's *manager*" is the other way and says the
    same; "Bo's manager is Ana" / "*Ana reports to Bo*" turned, "Bo reports to Ana" the
    same). None otherwise."""
    for nouned, verbed in ((old, new), (new, old)):
        found = _relation(nouned)
        if found is None:
            continue
        (holders, holder_text), (possessors, possessor_text), noun = found
        tokens = verbed.tokens[_label_length(verbed.tokens) :]
        if noun in _REPORTED_TO:
            # "<possessor> reports to <holder>" says the relation the same way round
            for k, token in enumerate(tokens[1:-2], 1):
                if token.lower not in _REPORTING or tokens[k + 1].lower != "to":
                    continue
                doer, done = _name_before(tokens, k), _name_after(tokens, k + 2)
                if doer is None or done is None:
                    continue
                if _one_person(holders, doer[0]) and _one_person(possessors, done[0]):
                    return holder_text, possessor_text
        for k, token in enumerate(tokens):
            if not 0 < k < len(tokens) - 1 or not _names_the_role(token.lower, noun):
                continue
            before = tokens[k - 1].lower
            if before in _POSSESSIVES or before.endswith(("'s", "\u2019s")):
                continue  # the noun after its owner ("my coach Kofi")
            doer, done = _name_before(tokens, k), _name_after(tokens, k + 1)
            if doer is None or done is None:
                continue
            turned = _one_person(possessors, doer[0]) and _one_person(holders, done[0])
            if turned and not _one_person(holders, possessors):
                return holder_text, possessor_text
    return None


def _names_the_role(word: str, noun: str) -> bool:
    """The word is a verb of the relation noun: "mentors" (mentor), "coach" (coach),
    "manages" (manager), "supervises" (supervisor), "trains" (trainer)."""
    if word.endswith(("'s", "\u2019s")):
        return False
    stem = _stem(word)
    return noun == stem or (noun.startswith(stem) and noun[len(stem) :] in ("er", "or", "r"))


# Words that join a person to a relation ("X *is* Y's manager", "Y's manager *was* X").
_RELATION_COPULAS = frozenset({"is", "was", "am", "are", "remains"})
_Named = tuple[frozenset[str], str]  # a person's name words (norms) and the name as written


def _relation(one: Statement) -> tuple[_Named, _Named, str] | None:
    """(holder, possessor, noun) of a text's first clause that names one relation (RELATIONS)
    of one person to another: "<holder> is <possessor>'s <noun>" or "<possessor>'s <noun> is
    <holder>", a name being capitalised words or the speaker (I, my, the user: _SELF); a
    modifier may stand before the noun ("line manager", "team lead"); None otherwise."""
    tokens = one.tokens[_label_length(one.tokens) :]
    end = next((i + 1 for i, t in enumerate(tokens) if t.pause), len(tokens))
    tokens = tokens[:end]
    for k, token in enumerate(tokens):
        if _noun(token) not in RELATIONS or token.lower.endswith("'s"):
            continue
        if k + 1 < len(tokens) and tokens[k + 1].lower in RELATIONS:
            continue  # the noun is the last of a compound ("team lead")
        owner = next((j for j in range(k - 1, max(-1, k - 3), -1) if _owns(tokens[j])), None)
        if owner is None or not all(t.text[:1].islower() for t in tokens[owner + 1 : k]):
            continue
        possessor = _name_before(tokens, owner + 1)
        if possessor is None:
            return None
        start = owner + 1 - len(possessor[1].split())
        if k + 1 < len(tokens) and tokens[k + 1].lower in _RELATION_COPULAS:
            holder = _name_after(tokens, k + 2)  # "<possessor>'s <noun> is <holder>"
            if holder is None or k + 2 + len(holder[1].split()) < len(tokens):
                return None
        elif start == 1 and tokens[0].lower in ("i'm", "im", "we're") and k + 1 == len(tokens):
            # "I'm <possessor>'s <noun>", "we're ..."
            holder = frozenset({_WE if tokens[0].lower == "we're" else _SELF}), tokens[0].text
        elif start > 0 and tokens[start - 1].lower in _RELATION_COPULAS and k + 1 == len(tokens):
            holder = _name_before(tokens, start - 1)  # "<holder> is <possessor>'s <noun>"
            if holder is None or start - 1 - len(holder[1].split()) > 0:
                return None
        else:
            return None
        return holder, possessor, token.norm
    return None


def _one_person(one: frozenset[str], other: frozenset[str]) -> bool:
    """Two names of one person: one's words all in the other's ("Femke" / "Femke Jansen"; not
    "Femke Jansen" / "Femke Bakker", "Mr Lee" / "Mr Tan")."""
    return one <= other or other <= one


# Relations the other text may say by a verb: "Sol's *manager* is Tobiah" / "Sol *reports
# to* Odile".
_REPORTED_TO = frozenset({"manager", "boss", "supervisor", "lead"})
_REPORTING = frozenset({"report", "reports", "reported", "reporting"})


def _said_by_its_verb(noun: str, other: Statement) -> int:
    """How often the other text says the relation `noun` by its verb ("reports to": a
    manager)."""
    if noun not in _REPORTED_TO:
        return 0
    return sum(
        1 for said, to in pairwise(other.tokens) if said.lower in _REPORTING and to.lower == "to"
    )


def _owns(token: _Token) -> bool:
    """A possessive: "X's", "my", "our"."""
    return token.lower.endswith("'s") or token.lower in ("my", "our")


def _name_before(tokens: Sequence[_Token], end: int) -> _Named | None:
    """The name that ends right before `end` (its last token may be a possessive): the
    speaker ("I", "my", "the user", "the user's") or a run of capitalised words."""
    last = tokens[end - 1]
    if _noun(last) in ("i", "my", "me", "user") or last.lower in _SELF_WORDS:
        start = end - 2 if end > 1 and tokens[end - 2].lower == "the" else end - 1
        written = " ".join(t.text for t in tokens[start:end])
        return frozenset({_SELF}), written.removesuffix("'s").removesuffix("\u2019s")
    if last.lower == "our" or last.lower in _WE_WORDS:
        return frozenset({_WE}), last.text
    start = end
    while start > 0 and tokens[start - 1].text[:1].isupper() and not tokens[start - 1].pause:
        if tokens[start - 1].lower in STOPWORDS | _SELF_WORDS | _WE_WORDS:
            break  # "*Now* Kofi is ...", "*The* CTO", "*I'm* Femke's ..."
        start -= 1
        if tokens[start].first:
            break
    if start == end and _plain_name(tokens, end - 1):
        start = end - 1  # a chat's name in lower case ("kofi's manager is femke")
    if start == end or (start < end - 1 and tokens[end - 2].pause):
        return None
    names = tokens[start:end]
    written = " ".join(t.text for t in names)
    return frozenset(_noun(t) for t in names), written.removesuffix("'s").removesuffix("\u2019s")


def _plain_name(tokens: Sequence[_Token], i: int) -> bool:
    """The word at i may be a name written in lower case: a text with no capital letter (a
    chat's "kofi is femke's manager"), and the word no stopword, no speaker and no value."""
    word = tokens[i]
    if any(t.text != t.text.lower() for t in tokens):
        return False
    return _noun(word) not in STOPWORDS and word.lower not in _SELF_WORDS and _noun(word).isalpha()


def _name_after(tokens: Sequence[_Token], start: int) -> _Named | None:
    """The name that starts at `start`: the speaker ("me", "I", "the user") or a run of
    capitalised words up to a mark."""
    if start >= len(tokens):
        return None
    first = tokens[start]
    if first.lower in _SELF_WORDS or (
        first.lower == "the" and start + 1 < len(tokens) and tokens[start + 1].lower == "user"
    ):
        length = 2 if first.lower == "the" else 1
        return frozenset({_SELF}), " ".join(t.text for t in tokens[start : start + length])
    if first.lower in _WE_WORDS:
        return frozenset({_WE}), first.text
    end = start
    while end < len(tokens) and tokens[end].text[:1].isupper():
        end += 1
        if tokens[end - 1].pause:
            break
    if end == start and _plain_name(tokens, start):
        end = start + 1  # a chat's name in lower case ("... is femke")
    if end == start:
        return None
    names = tokens[start:end]
    return frozenset(_noun(t) for t in names), " ".join(t.text for t in names)


def _reads_english(text: Statement) -> bool:
    """An English function word ("the", "is", "over", "and", ...), and no word of another
    language (FOREIGN_WORDS but one in capitals, or a letter English does not use: see
    reads_foreign)."""
    lower = [t.lower for t in text.tokens]
    # (a word in capitals is a name, not a word of another language: "*EU* users", "*US*")
    foreign = any(
        (t.lower in FOREIGN_WORDS and not t.text.isupper()) or FOREIGN_LETTERS & set(t.lower)
        for t in text.tokens
    )
    return not foreign and any(word in STOPWORDS or word in _SELF_WORDS for word in lower)


def _ordered(old: Statement, new: Statement, head: list[str], tail: list[str]) -> bool:
    """Whether the items changed places and nothing else did (see swapped): each item's place
    keeps a word beside it ("prefers [tabs] over" / "prefers [spaces] over"), which a sentence
    turned around does not ("[Bob] is on call this week" / "This week ... is [Bob]")."""
    return (
        _same_place(old, head, new, tail)
        and _same_place(old, tail, new, head)
        and not _listed(old, head, tail)
        and not _joined_by_nothing(old, head, tail)
        and not _compounded(old, new, head, tail)
        and not _passive_of(new, tail, head)
        and not _passive_of(old, head, tail)
        and _dative_kept(old, head, new, tail)
        and _dative_kept(old, tail, new, head)
    )


# Words that make their noun the one something is given to or done for: a sentence that
# drops one says the same the other way round ("the banner must be shown *to* EU visitors"
# / "EU visitors must be shown the banner").
_DATIVE = frozenset({"to", "for"})


def _dative_kept(old: Statement, item: list[str], new: Statement, other: list[str]) -> bool:
    """Whether `other` stands in the new text after the same "to" or "for" as `item` in the
    old one, when one of them has it, or after another word of where to or from ("pushes a
    value *to* MQTT" / "go *from* MQTT ... into the SCADA system" still exchange)."""
    # (an article between is no word: "reports *to the* user" / "reports *to* Tomasz")
    before, _ = _beside([t for t in old.tokens if t.lower not in _PLACELESS_LOWER], item)
    new_before, _ = _beside([t for t in new.tokens if t.lower not in _PLACELESS_LOWER], other)
    if before == new_before or not {before, new_before} & _DATIVE:
        return True
    return before in _PLACE_WORDS and new_before in _PLACE_WORDS


# Words that say where to or from: an item after one of them on both sides keeps its place.
_PLACE_WORDS = frozenset({"to", "from", "into", "onto", "through", "via", "toward", "towards"})


# What may stand between the two sides of a sentence that says the same turned around ("the
# base URL *is* https://..." / "https://... *is* the base URL").
_COPULAS = frozenset({"is", "are", "was", "were", "="})


def _joined_by_nothing(old: Statement, head: list[str], tail: list[str]) -> bool:
    """Whether nothing but a copula stands between the items in the old text: a name written
    the other way ("Ford Mustang" / "Mustang (Ford)") or the two sides of "is"."""
    norms = [t.norm for t in old.tokens]
    if head[-1] not in norms:
        return False
    start = norms.index(head[-1]) + 1
    if tail[0] not in norms[start:]:
        return False
    end = norms.index(tail[0], start)
    # an article or a possessive may open the second side ("dave is *my* boss" / "my boss
    # is dave")
    between = [t.lower for t in old.tokens[start:end]]
    return not between or (
        any(word in _COPULAS for word in between)
        and all(word in _COPULAS or word in _PLACELESS_LOWER for word in between)
    )


# Words that make the noun before them of the one after ("approval *from* two reviewers",
# "the logs *of* the gateway"), said too as the one before the noun ("two reviewer approvals").
_OF = frozenset({"of", "from", "by"})


def _compounded(old: Statement, new: Statement, head: list[str], tail: list[str]) -> bool:
    """Whether the old text joins the items with "of", "from" or "by" (and articles) and the
    new one writes them side by side the other way round, one noun of the other: "approval
    *from* two reviewers" / "two reviewer approvals", "the logs *of* the gateway" / "the
    gateway logs"."""
    norms = [t.norm for t in old.tokens]
    if head[-1] not in norms or tail[0] not in norms:
        return False
    start = norms.index(head[-1]) + 1
    if tail[0] not in norms[start:]:
        return False
    between = [t.lower for t in old.tokens[start : norms.index(tail[0], start)]]
    if not (set(between) & _OF and all(w in _OF or w in _PLACELESS_LOWER for w in between)):
        return False
    new_norms = [t.norm for t in new.tokens]
    joined = tail + head
    return any(new_norms[i : i + len(joined)] == joined for i in range(len(new_norms)))


def _passives(one: Statement) -> list[tuple[int, int, int]]:
    """The passives of the text, as token indexes (a form of "be", the verb, "by"): a verb in
    the past at most two words before "by", a form of "be" at most two words before the verb,
    no mark between them ("must *be approved by*", "are *personally reviewed by*", "can *be
    triggered only by*")."""
    tokens = one.tokens
    found = []
    for by, token in enumerate(tokens):
        if token.lower != "by":
            continue
        verb = next(
            (v for v in range(by - 1, max(by - 3, -1), -1) if _past_form(tokens[v].lower)), None
        )
        if verb is None or tokens[verb].norm in STOPWORDS:
            continue
        be = next(
            (b for b in range(verb - 1, max(verb - 3, -1), -1) if tokens[b].lower in _BE), None
        )
        if be is not None and not any(t.pause for t in tokens[be:by]):
            found.append((be, verb, by))
    return found


def _passive_of(one: Statement, first: list[str], second: list[str]) -> bool:
    """Whether `one` says in the passive what the other text says in the active, `second`
    being the one who acts: `first` before the passive (_passives), `second` right after its
    "by" ("the security team must approve all IAM changes" / "all IAM changes must be approved
    *by* the security team")."""
    norms = [t.norm for t in one.tokens]
    if first[0] not in norms or second[0] not in norms:
        return False
    start, end = norms.index(first[0]), norms.index(second[0])
    lower = [t.lower for t in one.tokens]
    return not any(t.pause for t in one.tokens[start:end]) and any(
        start < be and all(w in _PLACELESS_LOWER for w in lower[by + 1 : end])
        for be, _, by in _passives(one)
        if by < end
    )


def _voice_turned(old: Statement, new: Statement) -> tuple[str, str] | None:
    """The two persons or things of one verb exchanged by its voice, in the same order: "Ana
    *mentors* Bo" / "Ana *is mentored by* Bo" (who mentors whom turned), as one text says in
    the passive (_passives) what the other says in the active, the verb's object right after
    it (not "Tests are run by CI" / "Tests run on CI")."""
    for passive, active in ((old, new), (new, old)):
        lower = [t.lower for t in active.tokens]
        found = _passives(passive)
        if not found or "by" in lower:
            continue
        be, verb_at, by = found[0]
        tokens = passive.tokens
        agent = next((t for t in tokens[by + 1 :] if t.lower not in _PLACELESS_LOWER), None)
        subject = next(
            (t for t in reversed(tokens[:be]) if t.norm in passive.words | passive.values), None
        )
        verb = tokens[verb_at]
        if agent is None or subject is None or agent.norm == subject.norm:
            continue
        if agent.lower in _BY_AN_AMOUNT or agent.text[:1].isdigit():
            continue  # by how much, not by whom: "rotated *by more than* ten degrees"
        norms = [t.norm for t in active.tokens]
        if subject.norm not in norms or agent.norm not in norms or verb.norm not in norms:
            continue
        at, acts, done = norms.index(subject.norm), norms.index(verb.norm), norms.index(agent.norm)
        between = [w for w in lower[acts + 1 : done] if w not in _PLACELESS_LOWER]
        if at < acts < done and not between:
            return subject.text, agent.text
    return None


# Words after "by" that say by how much, not by whom ("raised *by about* 5%").
_BY_AN_AMOUNT = frozenset(
    {"more", "less", "fewer", "over", "under", "up", "about", "around", "roughly", "nearly"}
    | {"almost", "at", "half", "much", "far", "exactly", "approximately", "some", "another"}
)


# Words that join the items of a list without ordering them ("cats and dogs").
_JOINING = frozenset({"and", "or", "nor", "plus", "both", "either", "&"})


def _listed(old: Statement, head: list[str], tail: list[str]) -> bool:
    """Whether only "and", "or", articles and other content words stand between the two
    items: items of one list ("Python, Go and Rust" / "Rust, Go and Python", "a desk and a
    lamp") say the same in any order."""
    norms = [t.norm for t in old.tokens]
    if head[-1] not in norms or tail[0] not in norms:
        return False
    first = norms.index(head[0])
    start, end = norms.index(head[-1]) + 1, len(norms) - 1 - norms[::-1].index(tail[0])
    between = old.tokens[start:end]
    # two clauses alike are not a list: "uses VS Code and Leo *uses* Neovim", "Tomasz *owns*
    # Orderbridge and Aoife *owns* Lectern"
    lead = old.tokens[first - 1].norm if first > 0 else None
    if lead is not None and lead not in STOPWORDS and lead in {t.norm for t in between}:
        return False
    follow, after_tail = old.tokens[start].norm, end + len(tail)
    # (the word after the first a verb with a thing of its own, not an item's last word:
    # "lint, unit *tests* and contract tests")
    if (
        not old.tokens[start].pause
        and start + 1 < len(norms)
        and old.tokens[start + 1].lower not in _JOINING
        and old.tokens[start].lower not in STOPWORDS
        and after_tail < len(norms)
        and norms[after_tail] == follow
        and any(t.lower in _JOINING for t in between)
    ):
        return False
    if len(between) == 2 and between[-1].lower in _PLACELESS_LOWER:
        between = between[:-1]  # the second item's article: "water and *a* pencil"
    return any(t.lower in _JOINING for t in between) and all(
        t.lower in _JOINING or t.lower not in STOPWORDS for t in between
    )


# Words too common beside an item to say that it stands in the same place.
_PLACELESS_WORDS = "the a an this that my our their his her"
# as the texts' norms (_beside reads norms: "this" is "thi")
_PLACELESS_LOWER = frozenset(_PLACELESS_WORDS.split())
_PLACELESS = frozenset(_stem(word) for word in _PLACELESS_LOWER)


def _same_place(old: Statement, item: list[str], new: Statement, other: list[str]) -> bool:
    """Whether `other` stands in the new text where `item` stood in the old one: the same
    word (not an article) right before or right after it."""
    before, after = _beside(old.tokens, item)
    new_before, new_after = _beside(new.tokens, other)
    return (before is not None and before == new_before and before not in _PLACELESS) or (
        after is not None and after == new_after and after not in _PLACELESS
    )


_END = "\x00end"


def _label_length(tokens: Sequence[_Token]) -> int:
    """How many tokens open the text before a colon or a sentence's end, up to three (a
    label: "Valeria: ..." takes one), 0 when none does."""
    return next((i + 1 for i in range(min(3, len(tokens) - 1)) if tokens[i + 1].first), 0)


def _beside(tokens: Sequence[_Token], item: list[str]) -> tuple[str | None, str | None]:
    """The words right before and right after the first place the item stands in the text."""
    norms = [t.norm for t in tokens]
    for start in (i for i, norm in enumerate(norms) if norm == item[0]):
        end = start
        for word in item[1:]:  # the item's words in order, stopwords between them allowed
            found = next((j for j in range(end + 1, len(norms)) if norms[j] == word), None)
            if found is None:
                break
            end = found
        else:
            # a speaker's label opens the text: what follows it is at the start; a possessive
            # right before the item is part of it ("lent *my sister* the car")
            label_end = _label_length(tokens)
            if start > label_end and tokens[start - 1].lower in _POSSESSIVES:
                start -= 1
            before = tokens[start - 1].norm if start > label_end else None
            # the end of the text is a place too ("the beach over *the mountains*" / "the
            # mountains over *the beach*"); its start is not (a sentence turned around)
            after = tokens[end + 1].norm if end + 1 < len(tokens) else _END
            return before, after
    return None, None


def holders_differ(existing: str, new: str) -> bool:
    """The two texts are said of, or by, different holders: other relations ("the user's
    manager"), other chat speakers ("Audrey: ..." / "Andrew: ..."), or the same said of
    something else too. No reading of them makes one the same fact as the other."""
    return (
        (relations_differ(existing, new) and not corrects_a_relation(existing, new))
        or labels_differ(existing, new)
        or adds_another(existing, new)
    )


def corrects_a_relation(existing: str, new: str) -> bool:
    """The new text says that a relation of the existing one was wrong ("... their wife, not
    their brother", "the sister, not the sister-in-law", "instead of their cousin"), or
    that the old text's value was, naming another ("Kwame's timezone is GMT" / "Kwame is on
    WAT, *not GMT*"): one holder either way."""
    old, new_ = statement(existing), statement(new)
    # (a thing of X's, no person: "the user's *sister*" is another holder whatever is
    # negated; and only a word rejected for another, not a thing of someone's: "Sumac's tests
    # run with Vitest, not *Bun's* runner" is about Sumac's tests)
    things = not (old.relations or new_.relations)
    said = _said_instead(old, new_) - _CHANGE_STEMS  # not only "Correction:", "actually"
    if things and said and _rejects_an_old_word(old, new_):
        return True
    return any(_stem(relation.split()[-1]) in new_.negated for relation in old.relations)


def _rejects_an_old_word(old: Statement, new: Statement) -> bool:
    """The new text rejects a word of the old one for another (", *not* GMT", "*instead of*
    Friday": _contrasts_at, "instead of", "rather than"), the word no owner of a thing."""
    tokens = new.tokens
    for i, token in enumerate(tokens[1:], 1):
        if token.norm not in old.words or token.lower.endswith(("'s", "s'")):
            continue
        before = " ".join(t.lower for t in tokens[max(i - 2, 0) : i])
        if _contrasts_at(tokens, i - 1) or before in ("instead of", "rather than"):
            return True
    return False


# The change words by their stems ("*Correction:*", "*updated*" / "*Update:*", "*actually*").
_CHANGE_STEMS = frozenset(_stem(word) for word in CHANGE_MARKERS)


def _more_relations(one: Statement, other: Statement) -> bool:
    norms = [t.norm for t in other.tokens]
    lower = [t.lower for t in other.tokens]
    for relation in set(one.relations):
        *qualifiers, noun = relation.split()
        found = sum(
            1
            for i, norm in enumerate(norms)
            if norm == _stem(noun) and all(q in lower[max(0, i - 3) : i] for q in qualifiers)
        )
        found += _said_by_its_verb(noun, other)
        if one.relations.count(relation) > found:
            return True
    return False


def _as_words(value: str) -> str:
    """A value as the words (norms) of the text: a date without its kind ("day:friday" is
    "friday")."""
    return value.partition(":")[2] if value.startswith(("month:", "day:")) else value


def bare_value(value: str, one: Statement | None = None) -> str:
    """A value as a person reads it: a date's name without its kind ("day:friday" is
    "friday"), a time of day on the clock ("t840" is "14:00"), a lone capital letter without
    its kind ("letter:B" is "B"), a quoted text in quotes ("q:make lint" is '"make lint"'), a
    duration in its largest whole unit ("1209600s" is "14 days"); otherwise as the text `one`
    writes it, if given ("pytest-style", not its stem; "6144 MB"; a name of several words,
    "Château Lestrade", not "chateau lestrad"), a size without it in its largest unit
    ("8589934592bytes" is "8 GB"), a number below zero with its sign ("minus:80" is "-80")."""
    if value[:1] == "t" and value[1:].isdigit():
        return f"{int(value[1:]) // 60:02d}:{int(value[1:]) % 60:02d}"
    if value.startswith("letter:"):
        return value.removeprefix("letter:")
    if value.startswith("q:"):
        return f'"{value.removeprefix("q:")}"'
    size = _AMOUNT_NORM.fullmatch(value) and value.endswith("bytes")
    if _AMOUNT_NORM.fullmatch(value) and not size:
        return _duration_words(Decimal(value[:-1]))
    written = [t.text for t in one.tokens if _value_key(t) == value] if one else []
    if written and not value.startswith(("month:", "day:")):
        return written[0]
    if one is not None and " " in value:  # a name of several words ("Château Lestrade")
        parts, keys = value.split(" "), [_value_key(t) for t in one.tokens]
        for start in range(len(keys) - len(parts) + 1):
            if keys[start : start + len(parts)] == parts:
                return " ".join(t.text for t in one.tokens[start : start + len(parts)])
    if value.startswith("minus:"):
        return f"-{value.removeprefix('minus:')}"
    return _size_words(Decimal(value.removesuffix("bytes"))) if size else _as_words(value)


def _size_words(size: Decimal) -> str:
    """A size in bytes in the largest unit that holds it ("8589934592" is "8 GB", "1572864"
    "1.5 MB"), as _SIZE_UNITS reads them."""
    for unit in ("TB", "GB", "MB", "KB"):
        amount = size / _SIZE_UNITS[unit.lower()]
        if amount >= 1 and amount == amount.quantize(Decimal("0.01")):
            return f"{amount.normalize():f} {unit}"
    return f"{size.normalize():f} bytes"


# The units a duration is said in, the largest that holds it whole ("1209600s" is "14 days",
# "21600s" "6 hours"; a week is said in days, as often written, a month or a year as such)
_SAID_UNITS = (
    ("year", 31536000),
    ("month", 2628000),
    ("day", 86400),
    ("hour", 3600),
    ("minute", 60),
    ("second", 1),
)


def _duration_words(seconds: Decimal) -> str:
    """A duration in seconds as a person says it ("14 days", "1 hour", "0.5 seconds")."""
    for unit, size in _SAID_UNITS:
        amount = seconds / size
        if amount >= 1 and amount == amount.to_integral_value():
            return f"{amount:f} {unit}{'' if amount == 1 else 's'}"
    if seconds < 1:
        return f"{(seconds * 1000).normalize():f} ms"
    return f"{seconds.normalize():f} seconds"


def _kind(value: str) -> str:
    """number (versions and times too), name, or identifier: a value replaced by another of
    its kind is a different fact ("9001" / "9002"); a name lost while a number is gained is
    more often a rewording ("the Kafka topic ..." / "... three days")."""
    if value.startswith("letter:"):
        return "name"
    if value.startswith(("month:", "day:")):
        return "date"  # a weekday or a month for another ("on Friday" / "in January")
    if (value[:1] == "t" and value[1:].isdigit()) or _AMOUNT_NORM.fullmatch(value):
        return "number"  # a time of day, a duration or a size
    if _VERSION.fullmatch(value):
        return "number"
    if value.replace(" ", "").isalpha():
        return "name"
    return "identifier"


def _lost_values(old: Statement, new: Statement) -> frozenset[str]:
    """Values of `old` that `new` does not state (a name or a compound of words counts if all
    its parts are there: "single-quoted" / "single quotes")."""
    lost: set[str] = set()
    amounts = dict(old.amounts)
    # a number the old text states alone and as a duration's must be stated alone in the new
    # one too ("down for *3* hours on June *3*" / "down for 3 hours on June 17")
    bare = new.values | {t.norm for t in new.tokens}
    lost.update(v for v in old.values & set(amounts.values()) if v not in bare)
    # a duration stated by its number alone is stated ("7 years old" / "seven"), unless the
    # new text gives a duration of its own instead ("3 times, *24 hours* apart" / "24 times,
    # *3 hours* apart": the numbers exchanged between a count and a duration)
    another_duration = any(
        duration not in amounts and number in old.values for duration, number in new.amounts
    )
    # (nor when the new text counts with that number: "for *5 minutes*" / "*5 times* in an
    # hour")
    tokens = new.tokens
    counted = {a.norm for a, b in pairwise(tokens) if b.lower in ("times", "time", "x")}
    # a number only inside a decimal both texts have is not stated by it ("EMQX 5.3 on
    # *three* nodes" / "EMQX 5.*3* on five nodes"; but "one point four" / "v1.4")
    decimals = {t.norm for t in tokens if _DECIMAL.fullmatch(t.norm)} & old.words
    in_numbers = {part for decimal in decimals for part in decimal.split(".")}
    words = new.words - (in_numbers - bare)
    for value in old.values - words - new.values:
        number = amounts.get(value)
        if number in new.values and number not in counted and not another_duration:
            continue
        if value[:2] != "q:" and {_stem(p) for p in re.split(r"[:/@]", value) if p} <= words:
            continue  # "db-1.internal:5432" / "host db-1.internal, port 5432"
        if not any(c.isdigit() for c in value) and value[:2] != "q:":
            parts = {_stem(p) for p in re.split(r"[- ]", value) if p}
            if len(parts) > 1 and parts <= new.words:
                continue
        lost.add(value)
    return frozenset(lost)


def _loses_a_value(old: Statement, new: Statement) -> bool:
    """The new text leaves out a value of the old one (_lost_values), other than one written
    otherwise with the same parts: quoted or not ("`moment.js`" / "moment.js"), joined or
    apart ("Apache-2.0" / "Apache 2.0"); or it states a value only inside a longer one
    ("tf-locks" / "tf-locks-core")."""
    gained = [_parts_of(v) for v in new.values - old.values if " " not in v]
    for value in old.values - new.values:
        if " " in value:
            continue
        parts = _parts_of(value)
        if any(parts < more and not _stated_in(more - parts, old.words) for more in gained):
            return True  # "tf-locks" / "tf-locks-core"
    stated = new.words | new.values | {p for v in new.values for p in _parts_of(v)}
    # a number _lost_values finds lost is lost, though the new text has it in a duration ("down
    # for 3 hours on June *3*" / "down for 3 hours in June")
    return any(
        value.isdigit() or not _stated_in(_parts_of(value), stated)
        for value in _lost_values(old, new)
    )


# A new text that drops more content words than this (with none in their place) says less
# than the old one: the similarity alone does not supersede on it.
SHORTER_BY = 0
# Words that only join clauses ("when", "while"), not counted as words dropped or added.
_JOINING_WORDS = frozenset({"when", "whenever", "while", "where", "wherever"})


def says_less(old: Statement, new: Statement) -> bool:
    """The new text says less than the old one: it leaves out one of its values
    (_loses_a_value), negates more or less often, or drops more than SHORTER_BY content words
    with none in their place (_plain words)."""
    # (a value written otherwise with the same parts is neither dropped nor added: "Apache-2.0"
    # / "Apache 2.0")
    dropped = len(_plain(_unstated(old, new))) - len(_plain(_unstated(new, old)))
    return _loses_a_value(old, new) or old.negations != new.negations or dropped > SHORTER_BY


def extends_a_name(old: Statement, new: Statement) -> bool:
    """The new text names another thing of the same kind with a word of the old one's name
    and a part more, before the same noun ("The *quillpad* repo" / "The *quillpad-docs* repo",
    "The *React* app" / "The *React Native* app"): a thing of its own, however close the two
    texts are; not a part that only says how ("cursor-*based*", "staff-*level*")."""
    after_old = _word_after(old)
    after_new = _word_after(new)
    for value in new.values - old.values:
        parts = [_stem(part) for part in _parts_of(value)]
        if len(parts) < 2 or _stated_in(set(parts), old.words | old.values):
            continue
        if set(parts) - old.words <= _HOW_PARTS:
            continue
        noun = after_new.get(value) or after_new.get(value.split()[-1])  # "React Native"
        if noun is None or noun in new.values:
            continue  # "Apache License, Version *2.0*": the name goes on
        if any(after_old.get(part) == noun for part in parts):
            return True
    return False


def says_more(old: Statement, new: Statement, *, terse: bool = False) -> bool:
    """The new text says all the old one says, its content words in the same order, and adds
    words of its own among or around them ("Never commit .env files *to public repos*", "the
    Saltmarsh *staging* cert", "The user *was shocked* the AWS bill ...", "a *fork of* the
    repo"): a part, a bound, an exception, a detail or someone's view of it, under which the
    old statement may still hold as it stands. Words that only say how the same thing is
    said (_NO_DETAIL, _ADDS_NOTHING: "The API *listens on* port 7070", "... is not
    *allowed*") and the kind of a value or word the old text has (_kind_nouns: "on *port*
    6379", "the main *branch*") are no words added; nor, when the old text is a terse note
    (`terse`: terse_note), the words a sentence adds to one (_SENTENCE_WORDS: "stockroom:
    Python 3.12." / "The stockroom *service* is *built* on Python 3.12")."""
    added = new.words - old.words - _NO_DETAIL - _ADDS_NOTHING - _kind_nouns(new, old.values)
    tokens = new.tokens
    # the kind named after an old word: "to main" / "to the main *branch*"; not after a
    # noun whose plural became its singular, the new thing's kind: "the CI *runners*" /
    # "the CI *runner images*", nor after a kind itself, of which it names a part: "the
    # prod database" / "the prod *database schema*"
    written = {token.lower for token in old.tokens}
    added -= {
        after.norm
        for before, after in pairwise(tokens)
        if before.norm in old.words
        and after.norm in _KIND_NOUNS
        and before.norm not in _KIND_NOUNS
        and not {before.lower + "s", before.lower + "es"} & written
    }
    if {token.norm for token in old.tokens} & _BOUND_WORDS:
        added -= _BOUND_WORDS  # "under 40 lines" / "*fewer* than 40 lines"
    if terse:
        added -= _SENTENCE_WORDS  # "stockroom: Python 3.12." / "The stockroom *service* is ..."
    if not added or old.words - new.words:
        return False
    old_order, new_order = _content_order(old), _content_order(new)
    remaining = iter(new_order)
    if not old_order or not all(word in remaining for word in old_order):
        return False  # reordered: a rewording as often as not
    return any(word in added for word in new_order)


# A terse note: a few words, a colon, an arrow or a dash, and what is said of them
# ("stockroom: Python 3.12.", "beacon-relay prod → eu-central only", "Mina — no meetings Wed").
_TERSE_NOTE = re.compile(r"^[^:\u2192=.!?]{1,40}?(?::|\u2192|->|=|\s[\u2014\u2013-]\s)\s*\S")
_TERSE_MOST = 10  # tokens


def terse_note(text: str) -> bool:
    """Whether the text is a terse note (_TERSE_NOTE, at most _TERSE_MOST words)."""
    return _TERSE_NOTE.match(text) is not None and len(statement(text).tokens) <= _TERSE_MOST


# The words a sentence adds to a terse note of the same: what the thing is ("service",
# "frontend", "framework") and the verbs that say what a thing is written in, runs on, or
# does with its values ("is *written in* Go 1.22", "*listens* for connections on port 9000",
# "*stores* its data in Postgres 15"), none of them a detail of its own.
_SENTENCE_WORD_LIST = """
    service app application frontend backend api project repo codebase framework language
    runtime interpreter database version written built build running runs listens connection
    connections incoming store stores data host hosted bundled bundle based code currently
    using uses"""
_SENTENCE_WORDS = frozenset(_stem(word) for word in _SENTENCE_WORD_LIST.split())


# Words a restatement adds beyond _NO_DETAIL that say nothing of their own: a rule's "not
# allowed" for "never", "ever", where or with what a thing is ("located in", "equipped
# with"), what a duration is ("retention period"), chat's "a bit late, sorry" and "the
# *corresponding* ticket".
_ADDS_NOTHING_WORDS = """
    allowed forbidden permitted ever onto located equipped period bit sorry cent corresponding"""
_ADDS_NOTHING = frozenset(_stem(word) for word in _ADDS_NOTHING_WORDS.split())


# Words that say a value is a bound, one said for another ("*under* 40 lines" / "*fewer than*
# 40", "*max* 25 MB" / "*capped at* 25 MB").
_BOUND_WORD_LIST = "under below over above fewer less more than within least"
_BOUND_WORDS = _UPPER_BOUND | frozenset(_stem(word) for word in _BOUND_WORD_LIST.split())


# Parts of a compound that say how a thing is, not which thing it is.
_HOW_PARTS = frozenset(_stem(w) for w in ("based", "level", "style", "like", "type", "sized"))


def _word_after(one: Statement) -> dict[str, str]:
    """Each word or value of the text and the content word right after it, where one is."""
    tokens = one.tokens
    return {
        token.norm: after.norm
        for token, after in pairwise(tokens)
        if after.norm not in STOPWORDS and not token.pause
    }


def _unstated(one: Statement, other: Statement) -> set[str]:
    """The words of `one` that `other` lacks, but for a value of `one` whose parts `other`
    states ("Apache-2.0" / "Apache 2.0")."""
    stated = other.words | other.values
    return {
        w
        for w in one.words - other.words
        if not (w in one.values and " " not in w and _stated_in(_parts_of(w), stated))
    }


def _plain(words: Set[str]) -> set[str]:
    """The words counted one by one: not a quoted text or a name of several words as a whole
    ("q:make lint", "github action": their words count), nor a word that only joins clauses."""
    return {w for w in words if w[:2] != "q:" and " " not in w and w not in _JOINING_WORDS}


def _stated_in(parts: Set[str], words: Set[str]) -> bool:
    """Every part is one of the words, as written, as a stem or as a number."""
    return all(words & {p, _stem(p), _number(p)} for p in parts)


def _parts_of(value: str) -> frozenset[str]:
    """A value's parts as written, lower-cased (a quoted text's words, a compound's parts)."""
    inner = value[2:] if value[:2] == "q:" else value
    return frozenset(p for p in re.split(r"[-\s]+", inner.lower()) if p)


def _acronyms(one: Statement) -> frozenset[str]:
    """The text's words in capitals ("CET", "INFO", "AWS"). They are not values (see _is_value:
    an acronym is more often what a fact is about), but one exchanged for another is a value
    changed."""
    return frozenset(
        t.norm
        for t in one.tokens
        if t.text.isalpha() and len(t.text) > 1 and t.text.isupper() and t.norm not in _SHOUTED
    )


# Words written in capitals for emphasis ("NEVER push", "NO cleats"), not as a value.
_SHOUTED = (
    STOPWORDS
    | NEGATORS
    | frozenset(
        {"not", "always", "must", "important", "critical", "warning", "note", "only", "please"}
    )
)


def _acronym_exchanged(old: Statement, new: Statement) -> bool:
    """Each text has a word in capitals the other does not (_acronyms): a value exchanged."""
    old_norms, new_norms = {t.norm for t in old.tokens}, {t.norm for t in new.tokens}
    return bool(_acronyms(old) - new_norms) and bool(_acronyms(new) - old_norms)


def changed_values(existing: str, new: str) -> int:
    """How many values of the existing text the new one states differently: of each kind,
    as many as it both loses and gains (PROJ-123 / PROJ-456, port 9001 / 9002, "Casa Lola"
    / "Nori House"), or one capitalised name replacing another in the same place ("*Marco*
    is on call" / "*Marta* is on call"); plus a modifier swapped before the same noun ("the
    *left* knee" / "the *right* knee", see swaps_a_modifier) or a role ("tech lead" /
    "hiring manager")."""
    old, new_ = statement(existing), statement(new)
    opcodes, _ = alignment(existing, new)
    # (an hour said bare and as a time of day is one value: "at *10*" / "at *10:00*")
    lost_values, gained_values = _bare_hours_apart(_lost_values(old, new_), _lost_values(new_, old))
    lost = [_kind(value) for value in lost_values]
    gained = [_kind(value) for value in gained_values]
    per_kind = {kind: min(lost.count(kind), gained.count(kind)) for kind in set(lost)}
    if any(map(_TIME_VALUE.fullmatch, lost_values)) and any(
        map(_TIME_VALUE.fullmatch, gained_values)
    ):
        # a day with its time is one "when": "Fridays 14:00-16:00" / "now Wednesdays 10:00"
        per_kind["date"] = 0
    # a range of two numbers or times is one value ("08:00-16:00" / "now 10:00-18:00")
    ranges = min(_ranges_of(old, lost_values), _ranges_of(new_, gained_values))
    if per_kind.get("number", 0) >= 2 * ranges:
        per_kind["number"] = per_kind.get("number", 0) - ranges
    changes = sum(per_kind.values())
    if not changes and _swapped(old, new_, opcodes, names=True):
        changes = 1
    if not changes and _acronym_exchanged(old, new_):
        changes = 1  # "timezone is *CET*" / "*PST*", "log level *INFO*" / "*WARN*"
    modifier = _swapped(old, new_, opcodes, names=False)
    slot = not modifier and not changes and _refilled_slot(old, new_, opcodes)
    slot = slot or (not modifier and not changes and _refilled_template(old, new_, opcodes))
    return changes + modifier + slot + _swapped_role(old, new_)


def _ranges_of(one: Statement, values: Set[str]) -> int:
    """How many ranges the text writes with two of `values`: side by side (a dash between
    them: "08:00-16:00") or with "to", "until" or "till" between ("10 to 12")."""
    norms = [t.norm for t in one.tokens]
    found, i = 0, 0
    while i < len(norms) - 1:
        step = 2 if norms[i + 1] in _RANGE_WORDS else 1
        if norms[i] in values and i + step < len(norms) and norms[i + step] in values:
            found, i = found + 1, i + step + 1
        else:
            i += 1
    return found


_RANGE_WORDS = frozenset({"to", "until", "till"})


# A time of day, or a range of them, as values hold it ("t840", "14:00-16:00").
_TIME_VALUE = re.compile(r"t\d+|\d{1,2}:\d{2}(?:-\d{1,2}:\d{2})?")

# difflib's opcodes: (operation, old start, old end, new start, new end)
_Opcodes = Sequence[tuple[str, int, int, int, int]]


@lru_cache(maxsize=256)
def alignment(existing: str, new: str) -> tuple[_Opcodes, int]:
    """How the two texts' normalised words line up: difflib's opcodes, and how many words
    the matching blocks keep (computed once per pair, for the features that read it)."""
    a = [t.norm for t in statement(existing).tokens]
    b = [t.norm for t in statement(new).tokens]
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    kept = sum(size for _, _, size in matcher.get_matching_blocks())
    return matcher.get_opcodes(), kept


_SLOT_STOPWORDS = STOPWORDS - {"user", "i", "we", "you", "he", "she", "they"}
# (and for a template refilled, a pronoun's contraction: "*I'm* reading X" / "*currently*
# reading X")
_TEMPLATE_STOPWORDS = _SLOT_STOPWORDS | frozenset(
    f"{pronoun}'{verb}"
    for pronoun in ("i", "you", "we", "they", "he", "she", "it", "that", "there")
    for verb in ("m", "re", "s", "ve", "d", "ll")
)


def _refilled_slot(old: Statement, new: Statement, opcodes: _Opcodes) -> bool:
    """The same sentence with one place filled with other words, all else equal ("skips
    *breakfast* on weekdays" / "skips *dinner* on weekdays", "keeps the *winter coats* in the
    hall cupboard" / "... the *summer clothes* ..."): unless the words are opposites of one
    setting ("tabs" / "spaces"), an abbreviation, verbs of preference, or values (compared as
    values); see _refills."""
    different = [op for op in opcodes if op[0] != "equal"]
    counted: frozenset[str] = frozenset()  # what a count the old text ends with counts
    if len(different) == 2 and _unit_after_the_last_number(old, new, different[1]):
        # "max *line* length is 100" / "max *function* length is 100 lines"
        counted = frozenset(t.norm for t in new.tokens[different[1][3] : different[1][4]])
        different = different[:1]
    if len(different) != 1 or different[0][0] != "replace":
        return False
    _, i1, i2, j1, j2 = different[0]
    # "the *user* wants ..." / "the *client* wants ...": the user is a holder here
    return _refills(old, new, (i1, i2, j1, j2), _SLOT_STOPWORDS, at_start=False, apart=counted)


def _unit_after_the_last_number(
    old: Statement, new: Statement, operation: tuple[str, int, int, int, int]
) -> bool:
    """The new text adds one word after the number the old text ends with: what it counts
    ("... is 100" / "... is 100 *lines*")."""
    kind, i1, _, j1, j2 = operation
    return (
        kind == "insert"
        and i1 == len(old.tokens)
        and _CARDINAL.fullmatch(old.tokens[-1].text) is not None
        and j2 - j1 == 1
        and new.tokens[j1].lower.isalpha()
    )


# The endings that make a word of another word ("clinic" / "clinic*ian*", "test" / "test*er*",
# "account" / "account*ant*", "commit" / "commit*ter*"): the thing and the one who does it,
# two things; a short form cuts a word instead ("config" / "configuration").
_DERIVING = ("er", "or", "ian", "ant", "ist", "ee")
# the words ALIASES reads others as ("pref" for "preferences": a short form, not a word
# derived from)
_ALIASED = frozenset(ALIASES.values())


def _derived(short: str, long: str) -> bool:
    """`long` is `short` with a _DERIVING ending (its last consonant doubled or not, plural or
    not), `short` a word of four letters or more."""
    rest = long[len(short) :].removesuffix("s")
    if rest[:1] == short[-1:] and rest[1:] in _DERIVING:
        rest = rest[1:]
    return len(short) >= 4 and rest in _DERIVING and short not in _ALIASED


def _refills(
    old: Statement,
    new: Statement,
    place: tuple[int, int, int, int],
    stopwords: frozenset[str],
    *,
    at_start: bool,
    apart: frozenset[str] = frozenset(),
) -> bool:
    """Whether the words of `old` at place[0:2] are replaced by other words at place[2:4] in
    `new`: content words on both sides that the other text does not have anywhere (not words
    moved), not all of them values (compared as values), unless `at_start` counts them not
    several words at the start (a rewording often starts differently: "Clients may make 1,000
    ..." / "Any caller can make 1,000 ..."), and a single word for a single word not a
    setting's other value, an abbreviation or a verb of preference. A sentence refilled in
    several places (at_start) may start differently: "*Access tokens* from the auth service
    expire after 15 minutes" / "*Password reset links* from ..." are two things. Words of
    `new` whose norms are in `apart` (what a count at its end counts) are no old word moved."""
    i1, i2, j1, j2 = place
    gone = [t for t in old.tokens[i1:i2] if t.norm not in stopwords]
    came = [t for t in new.tokens[j1:j2] if t.norm not in stopwords]
    if not gone or not came:
        return False
    # words moved, not replaced; a plain word only inside a value of the other text
    # ("config/*worker*.yaml") was not moved there, a value out of one was ("redis-01:6379" /
    # "host redis-01, port 6379")
    old_norms, new_norms = {t.norm for t in old.tokens}, {t.norm for t in new.tokens}
    if any(t.norm not in apart and _stands_in(t, new, new_norms) for t in gone):
        return False
    if any(_stands_in(t, old, old_norms) for t in came):
        return False
    if all(_is_value(t) for t in gone + came):
        return False
    if not at_start and i1 == 0 and (len(gone) > 1 or len(came) > 1):
        return False
    if len(gone) == len(came) == 1 and _liking_said_both_ways(old, new, place, gone + came):
        return False  # "doesn't *want* long answers" / "*dislikes* long answers"
    if len(gone) == len(came) == 1:
        before, after = gone[0].text.lower(), came[0].text.lower()
        short, long = sorted((before, after), key=len)
        if {before, after} in OPPOSITES or (long.startswith(short) and not _derived(short, long)):
            return False  # (a short form: "config" / "configuration")
        counted = i1 > 0 and _CARDINAL.fullmatch(old.tokens[i1 - 1].text)
        if counted and _same_unit(before, after):
            return False  # a unit in short and in full: "320 *px*" / "320 *pixels*"
        pair = {gone[0].norm, came[0].norm}
        if pair <= _SAME_MEANING or any(pair <= group for group in _SAME_VERBS):
            return False
        following = [
            one.tokens[k].lower if k < len(one.tokens) else None
            for one, k in ((old, i2), (new, j2))
        ]
        if pair <= _WHERE_VERBS and following[0] == following[1] in _WHERE_PREPOSITIONS:
            return False  # where a thing is, either way: "*lives* in" / "is *kept* in"
    return True


# Verbs that say where a thing is before "in", "on", "at" or "under" ("config *lives* in
# .woodpecker.yml" / "config is *kept* in ..."): one in place of another says the same.
_WHERE_VERB_WORDS = "live sit keep store reside stay host locate go belong"
_WHERE_VERBS = frozenset(_stem(word) for word in _WHERE_VERB_WORDS.split())
_WHERE_PREPOSITIONS = frozenset({"in", "on", "at", "under", "inside"})


def _liking_said_both_ways(
    old: Statement, new: Statement, place: tuple[int, int, int, int], words: list[_Token]
) -> bool:
    """A verb of liking negated on one side, a verb that says no on the other (the two words
    `words`): the same said two ways ("doesn't want" / "dislikes")."""
    i1, i2, j1, j2 = place
    negated = [
        any(t.norm == "not" or t.lower in NEGATORS for t in span)
        for span in (old.tokens[i1:i2], new.tokens[j1:j2])
    ]
    norms = {t.norm for t in words}
    return negated[0] != negated[1] and bool(norms & AVERSE) and bool(norms & _SAME_MEANING)


def _stands_in(token: _Token, other: Statement, norms: set[str]) -> bool:
    """Whether the word is in the other text (whose tokens' norms are `norms`): a value
    anywhere, a plain word as a word of its own (not a part of a path or an address:
    "config/worker.yaml" has no word "worker")."""
    if token.norm not in other.words:
        return False
    return _is_value(token) or token.norm in norms or token.norm not in other.in_paths


# The share of each text's words that must stand in the same places for a text to be read as
# the other's sentence with parts filled anew (see _refilled_template).
_TEMPLATE_KEPT = 0.7


def _refilled_template(old: Statement, new: Statement, opcodes: _Opcodes) -> bool:
    """The same sentence, 70% of each text's words in place (_TEMPLATE_KEPT), with one or
    more of its places filled with other words ("*Maven artifacts* are stored in
    Artifactory" / "*npm packages* are stored in Artifactory", "the migration *failed* on
    *staging*" / "... *succeeded* on *production*"): another fact (each place as
    _refills reads it)."""
    kept = sum(i2 - i1 for op, i1, i2, _, _ in opcodes if op == "equal")
    # a bound one text adds is no word out of place ("photon-vault *max*
    # ingest queue length is 500 files" / "photon-vault ingest batch size is 500 files")
    added = sum(
        j2 - j1
        for op, _, _, j1, j2 in opcodes
        if op == "insert" and all(_qualifies(t) for t in new.tokens[j1:j2])
    )
    dropped = sum(
        i2 - i1
        for op, i1, i2, _, _ in opcodes
        if op == "delete" and all(_qualifies(t) for t in old.tokens[i1:i2])
    )
    if kept < _TEMPLATE_KEPT * (len(old.tokens) - dropped) or kept < _TEMPLATE_KEPT * (
        len(new.tokens) - added
    ):
        return False
    return any(
        _refills(old, new, (i1, i2, j1, j2), _TEMPLATE_STOPWORDS, at_start=True)
        for op, i1, i2, j1, j2 in opcodes
        if op == "replace"
    )


def _qualifies(token: _Token) -> bool:
    """A bound word ("max", "under"): it qualifies a sentence's words, as no other does (a
    stopword dropped is often a terse rewording's: "*The* nightly backup *job* starts at
    2:00" / "Nightly backups kick off at 02:00")."""
    return token.norm in _BOUND_WORDS


def _noun(token: _Token) -> str:
    return token.lower.removesuffix("'s").removesuffix("'")


def _swapped_role(old: Statement, new: Statement) -> bool:
    """Each text names a role the other does not ("Heidi is the *tech lead*" / "Heidi is the
    *hiring manager*"); a text that names none may abbreviate it ("the team's TL")."""
    roles_old = {t.norm for t in old.tokens if _noun(t) in RELATIONS}
    roles_new = {t.norm for t in new.tokens if _noun(t) in RELATIONS}
    # each names one the other does not ("the release manager is Priya and the reviewer is
    # Tom" / "the release manager is Priya" names one role fewer, none other)
    return bool(roles_old - roles_new) and bool(roles_new - roles_old)


def swaps_a_modifier(existing: str, new: str) -> bool:
    """One word of a noun phrase is replaced by another before the same noun ("the *blue*
    pool" / "the *green* pool", "the *staging* database" / "the *production* database"): a
    different thing of the same kind, unless the two are opposites ("single" / "double"); or
    the two texts open with two environments or branches, neither of which the other text
    names ("*Staging* uses Let's Encrypt certificates" / "*Production* was switched to
    DigiCert certificates"), where no noun follows to align them on."""
    old, new_ = statement(existing), statement(new)
    opcodes, _ = alignment(existing, new)
    if _swapped(old, new_, opcodes, names=False):
        return True
    first, second = _opening_environment(old), _opening_environment(new_)
    if first is None or second is None or first == second:
        return False  # (one environment however written: "*Prod* DB" / "*production* DB")
    return first not in {ALIASES.get(t.lower, t.lower) for t in new_.tokens} and second not in {
        ALIASES.get(t.lower, t.lower) for t in old.tokens
    }


def _opening_environment(one: Statement) -> str | None:
    """The environment or branch a text opens with, after a determiner or not ("*Prod* DB
    listens on 5433", "The *test* DB ..."), in lower case and in its short form (ALIASES:
    "production" is "prod")."""
    at = 1 if one.tokens and one.tokens[0].lower in _DETERMINERS else 0
    if len(one.tokens) > at and one.tokens[at].lower in _ENVIRONMENT_WORDS:
        return ALIASES.get(one.tokens[at].lower, one.tokens[at].lower)
    return None


_DETERMINER_WORDS = (
    "the a an this that these those my our your his her their its each every any some"
)
_DETERMINERS = frozenset(_DETERMINER_WORDS.split())


def _swapped(
    old: Statement,
    new: Statement,
    opcodes: _Opcodes,
    *,
    names: bool,
) -> bool:
    """One word replaced by one other in the same place: both capitalised names (`names`), or
    (not `names`) ordinary words between a determiner and the same following word."""
    return _swapped_at(old, new, opcodes, names=names) is not None


def swapped_after_a_change(existing: str, new: str) -> bool:
    """The modifier swapped (swaps_a_modifier) stands in the new text after a change word:
    it is the value changed to, not another thing of the same kind ("rosterd is hosted on
    the *on-prem* cluster" / "rosterd has been *moved to* the *cloud* cluster"; but "The
    *production* API moved to Node 22" / "The *staging* API was upgraded ...")."""
    old, new_ = statement(existing), statement(new)
    opcodes, _ = alignment(existing, new)
    found = _swapped_at(old, new_, opcodes, names=False)
    if found is None or not any(t.lower in new_.markers for t in new_.tokens[: found[1]]):
        return False
    # nothing else changed: no value of the old text lost but the modifier swapped out,
    # which may be a value itself ("the *on-prem* cluster"; not "pins the *nginx* image to
    # *1.25*" / "was updated to pin the *redis* image to 7.2"), and no event of the past
    # changed ("*was* written by the payments team in 2019" / "is now maintained by the
    # platform team")
    lost = old.values - new_.values - {old.tokens[found[0]].norm}
    return not lost and _tense(existing) != "past"


def _swapped_at(
    old: Statement,
    new: Statement,
    opcodes: _Opcodes,
    *,
    names: bool,
) -> tuple[int, int] | None:
    """_swapped: where the word swapped out stands in the old text's tokens and the word
    swapped in in the new one's, or None."""
    a, b = [t.norm for t in old.tokens], [t.norm for t in new.tokens]
    for operation, i1, i2, j1, j2 in opcodes:
        if operation != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
            continue
        before, after = old.tokens[i1], new.tokens[j1]
        pair = {before.text.lower(), after.text.lower()}
        if pair in OPPOSITES or pair & STOPWORDS:
            continue
        if before.norm in new.words or after.norm in old.words:
            continue  # a word moved, not replaced
        short, long = sorted((before.text.lower(), after.text.lower()), key=len)
        if long.startswith(short):
            continue  # an abbreviation: "prod" / "production"
        capitalised = before.text[:1].isupper() and after.text[:1].isupper()
        is_name = capitalised and not (before.text.isupper() or after.text.isupper())
        if names or is_name:
            if names and is_name:
                return i1, j1
            continue
        if _is_value(before) and _is_value(after):
            continue  # values are compared as values
        if {before.norm, after.norm} <= _SAME_MEANING:
            continue  # "prefers" / "likes"
        follows = a[i2] if i2 < len(a) else None
        preceding = old.tokens[i1 - 1].lower if i1 > 0 else ""
        # (after "for" or "of" too: "the rate limit *for free* accounts" / "*for enterprise*
        # accounts")
        determined = preceding in _DETERMINERS or preceding in ("for", "of")
        determined = determined or preceding.endswith(("'s", "s'"))
        if (
            determined
            and follows is not None
            and follows not in STOPWORDS
            and j2 < len(b)
            and b[j2] == follows
        ):
            return i1, j1
    return None


def replaces_a_phrase(existing: str, new: str) -> bool:
    """The same sentence ending in another phrase ("security reviews for new *internal
    services*" / "... for new *third-party vendor integrations*"): most words kept in order
    (at least half), and the content words it ends with (two or more on one side) replaced
    by words the other text does not have at all (a rewording moves or keeps its words, and
    often starts differently; a verb swapped for a synonym is one word)."""
    old, new_ = statement(existing), statement(new)
    a, b = [t.norm for t in old.tokens], [t.norm for t in new_.tokens]
    opcodes, kept = alignment(existing, new)
    if kept < 0.5 * max(len(a), len(b)):
        return False
    for operation, i1, i2, j1, j2 in opcodes:
        if operation != "replace" or i1 == 0 or j1 == 0:
            continue  # a rewording often starts differently ("When you see E1042, ...")
        gone = {w for w in a[i1:i2] if w not in STOPWORDS}
        came = {w for w in b[j1:j2] if w not in STOPWORDS}
        if gone & new_.words or came & old.words:
            continue
        if any(w not in STOPWORDS for w in a[i2:] + b[j2:]):
            continue  # only what the sentence ends with: its object
        if max(len(gone), len(came)) >= 2 and gone and came:
            return True
    return False


# Words that say which way a thing goes or stands, each with the one that says the other way
# ("copied *from* prod" / "copied *to* prod", "generated *at* the start" / "*for* the
# start"): not "in" / "on" / "at" among them, which often say one place two ways ("runs in
# staging" / "runs on staging").
_OTHER_WAY_WORDS = """
    from:to from:into from:onto from:for from:towards before:after above:below over:under
    with:without up:down off:on into:out for:against about:for about:to about:with
    about:from at:for at:from at:until from:until until:after since:until by:for"""
_OTHER_WAYS = frozenset(frozenset(pair.split(":")) for pair in _OTHER_WAY_WORDS.split())


def one_replacement(existing: str, new: str) -> tuple[int, int, int, int] | None:
    """Where the two texts differ, when they differ in one place only and by words in place of
    words (alignment): the old text's tokens [i1:i2] and the new one's [j1:j2]; else None."""
    opcodes, _ = alignment(existing, new)
    different = [op for op in opcodes if op[0] != "equal"]
    if len(different) != 1 or different[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = different[0]
    return i1, i2, j1, j2


def exchanges_a_way(existing: str, new: str) -> bool:
    """The two texts differ in one word only, which says the other way of the same thing
    (_OTHER_WAYS: "Staging data is copied *from* prod weekly" / "... *to* prod weekly",
    "signs off PRs *for* the mobile team" / "... *from* the mobile team", "asked *for* a
    page" / "asked *about* the page"): the words are all the same, but not the fact."""
    old, new_ = statement(existing), statement(new)
    replaced = one_replacement(existing, new)
    if replaced is None:
        return False
    i1, i2, j1, j2 = replaced
    # (an article changed beside it is no word: "asked *for a* page" / "*about the* page")
    was = [t.lower for t in old.tokens[i1:i2] if t.lower not in _ARTICLES]
    now = [t.lower for t in new_.tokens[j1:j2] if t.lower not in _ARTICLES]
    if len(was) != 1 or len(now) != 1:
        return False
    return frozenset({was[0], now[0]}) in _OTHER_WAYS


_ARTICLES = frozenset({"the", "a", "an"})


def names_the_change(existing: str, new: str) -> bool:
    """The new text says it changed and names the old values next to new ones ("switched
    from unittest to pytest", "went from 50051 to 50061"), or says an old value is no longer
    so ("instead of Dr Halvorsen")."""
    old, new_ = statement(existing), statement(new)
    if not says_it_changed(existing, new) or not old.values:
        return False
    negated = _negated(old, new_)
    if negated:  # "... Dr Okafor instead of Dr Halvorsen", "no longer Mrs Okonjo"
        # (but not when another numbered thing is said: "*Dome 2* closes at 85% humidity" /
        # "*Dome 1* closes at 80% humidity, not 85 as the runbook says", another_numbered)
        return not (_another_numbered(old, new_, negated) or _counts_another(old, new_, negated))
    if _from_one_to_another(old, new_):
        return True  # "User switched *from Black to ruff* format" (Python said no more)
    return old.values <= new_.words | new_.values and bool(new_.values - old.words - old.values)


def _negated(old: Statement, new: Statement) -> set[str]:
    """The old text's values the new one says are not so ("not 85", "instead of 8:10")."""
    return {value for value in old.values if set(_as_words(value).split()) <= new.negated}


def _counts_another(old: Statement, new: Statement, negated: Set[str]) -> bool:
    """A number the new text rejects counts, in the old text, a thing the new text does not
    name: the content word right after it there ("The leakwatch team has 4 *engineers*" /
    "The leakwatch team owns 6 dashboards, not 4"), another attribute whose number happens
    to be the old one; not a number at the end of a clause, before a word the new text has
    ("keeps 3 *years* of history" / "keeps 5 years of invoices, not 3") or before a currency
    ("30 *quid* each" / "£45 each, not 30")."""
    for token, after in itertools.pairwise(old.tokens):
        if token.pause or _value_key(token) not in negated:
            continue
        if not any(c.isdigit() for c in token.text) or not after.text[:1].isalpha():
            continue
        if after.lower in STOPWORDS or after.lower in _CURRENCY_WORDS:
            continue
        if after.norm not in new.words | new.values:
            return True
    return False


def another_numbered(existing: str, new: str) -> bool:
    """The new text says one of the old text's values is not so, of another thing of a
    numbered series (_another_numbered: "Bus 14 leaves at 8:10." / "Bus 16 leaves at 8:25
    instead of 8:10.")."""
    old, new_ = statement(existing), statement(new)
    negated = _negated(old, new_)
    return bool(negated) and _another_numbered(old, new_, negated)


def _another_numbered(old: Statement, new: Statement, negated: Set[str]) -> bool:
    """A name in capitals is given another number in the new text than in the old, and the
    old number is neither said in the new text nor the value it rejects (`negated`): another
    thing of the series ("*Pier 5* has 4 power outlets" / "*Pier 3* has 6 power outlets (not
    4)"), not the same thing at another version ("runs Postgres 16, not 15", "no longer runs
    on Node 18; it's on Node 22")."""
    before, after = _versions(old), _versions(new)
    return any(not before[name] & (after[name] | negated) for name in before.keys() & after.keys())


def _from_one_to_another(old: Statement, new: Statement) -> bool:
    """The new text says "from X to Y", X a value of the old text and Y a word it does not
    have, in one clause."""
    tokens = new.tokens
    for i, token in enumerate(tokens[:-3]):
        if token.lower != "from" or _value_key(tokens[i + 1]) not in old.values:
            continue
        for k in range(i + 1, len(tokens) - 1):
            if tokens[k].pause:
                break
            if tokens[k].lower == "to" and tokens[k + 1].norm not in old.words | STOPWORDS:
                return True
    return False


def model_knows(text: str, share: float = 0.5) -> bool:
    """Whether most of the text is in the Latin script an English model was trained on."""
    return statement(text).latin_share >= share


def reads_english(text: str) -> bool:
    """Whether the text reads as English as far as these word lists tell, for trusting a
    similarity alone: most of it in Latin script, and no word of another language
    (FOREIGN_WORDS, a function word even opening the text; a word in lower case with a letter
    English does not use: a name in capitals may have one, "José", "Søren") or more English
    function words (stopwords, negators, a few words that open terse notes: _ENGLISH_WORDS)
    than such words. Stricter than not reads_foreign, which needs two foreign words: "Der
    Nutzer bevorzugt kurze Funktionsnamen" is no English; "Redis: host redis-01, port 6379"
    is. A language with neither such words nor such letters in the lists reads as English
    here."""
    if not model_knows(text) or not _mostly_latin(text):
        return False
    tokens = statement(text).tokens
    english = sum(1 for t in tokens if t.lower in _ENGLISH_WORDS)
    foreign = sum(
        1
        for t in tokens
        if (t.lower in FOREIGN_WORDS and (t.first or not t.text[:1].isupper()))
        or (_ACCENTED & set(t.lower) and not t.text[:1].isupper())
    )
    return foreign == 0 or english > foreign


def _mostly_latin(text: str) -> bool:
    """Whether at least half the text's letters are Latin ones, a Chinese, Japanese or Korean
    character counting as three (about a syllable): a Chinese or Russian text with a few
    names in Latin letters is no English ("值班 Teodor 主值班 Astrid 副值班")."""
    latin = other = 0
    for ch in text:
        if not ch.isalpha():
            continue
        if _is_latin(ch):
            latin += 1
        else:
            other += 3 if unicodedata.name(ch, "").startswith(_SYLLABLE_SCRIPTS) else 1
    # (nor a text with a word of another script, even one glued to a Latin name as Japanese
    # writes its particles: "lane-sync вызывает cardvault", "tapline はPostgreSQL、dripwatch
    # はClickHouse*を使っている*")
    return latin >= other and not any(
        len(run) > 1 for word in re.findall(r"[^\W\d_]+", text) for run in _other_script(word)
    )


def _other_script(word: str) -> list[str]:
    """The runs of letters of a script other than Latin in the word."""
    return "".join(" " if _is_latin(ch) else ch for ch in word).split()


def _is_latin(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith("LATIN")


_SYLLABLE_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")


_TERSE_OPENERS = "when always never use uses must should every each via per after before"
_ENGLISH_WORDS = STOPWORDS | NEGATORS | _TEMPLATE_STOPWORDS | frozenset(_TERSE_OPENERS.split())


# -- the decision ---------------------------------------------------------------------------

Reason = Literal[
    "not similar",
    "unknown to the model",
    "different holder",
    "different value",
    "different values",
    "different subject",
    "different attribute",
    "different phrase",
    "similar",
    "says it changed",
    "keeps every word",
    "reworded",
    "same values",
    "keeps the subject",
    "next nearest changed",
    "names the change",
    "not enough evidence",
    "learned reading",
    "narrower statement",
    "wider statement",
    "says more",
    "another occasion",
    "opposite value",
    "another statement",
    "swapped values",
    "same holder",
]


# The reasons that mean: the same subject with another value, nothing says it changed, or a
# stated change too far in meaning to supersede on (a conflict to keep and flag).
_AS_REWORDED = frozenset({"similar", "same values", "reworded", "keeps every word", "same holder"})
CONFLICT_REASONS: frozenset[Reason] = frozenset(
    {
        "different value",
        "opposite value",
        "swapped values",
        "keeps the subject",
        "next nearest changed",
    }
)


@dataclass(frozen=True, slots=True)
class Decision:
    """A verdict and why, for the benchmark and the logs."""

    verdict: Verdict
    reason: Reason


@dataclass(frozen=True, slots=True)
class Comparison:
    """What the rule reads of a pair of texts, whatever their similarity (see compare)."""

    model_knows_both: bool  # most of each text is Latin script
    same_unknown: bool  # they do not differ in what an English model cannot see
    other_holder: bool  # relations_differ, and the new text does not correct a relation
    marked: bool  # says_it_changed
    changes: int  # changed_values
    modifier_swapped: bool  # swaps_a_modifier
    phrase_replaced: bool  # replaces_a_phrase
    restates: bool
    names_the_change: bool
    reworded: bool = False  # rewords
    same_values: bool = False  # restates_the_values
    words_changed: int = 0  # content words added and dropped in restating the values
    keeps_subject: bool = False  # keeps_the_subject
    same_subject: bool = False  # same_subject_words
    opening_name_replaced: bool = False  # replaces_an_opening_name
    object_replaced: bool = False  # replaces_the_object
    said_of_another: bool = False  # the same value said of something else (keeps_the_values)
    history: bool = False  # tells_history: the new text says only how things were
    past_and_plan: bool = False  # past_and_plan: one says when it was, the other when it will be
    # another speaker or subject label, the same said of something else, a fact joined to the
    # old text, or a question against a statement (save's rule only; verify reads claims)
    other_statement: bool = False
    other_occasion: bool = False  # another_occasion
    one_off: bool = False  # one_off: one occasion near now of a habit the old text states
    period_and_duration: bool = False  # how often in one text, how long in the other
    labelled: bool = False  # both open with the same label ("Caroline: ...")
    one_speaker: bool = False  # _one_speaker
    # the texts differ only in their second half (what is said of the subject), not in what
    # they are about: "the staging DB listens on *5432*" / "*5433*"
    changed_late: bool = False
    change_word: bool = True  # marked by a change word, not only by a negation ("not X")
    strong_change: bool = False  # one of STRONG_MARKERS
    foreign: bool = False  # either text reads as another language in Latin script
    english: bool = True  # both texts read as English (reads_english)
    same_words: bool = False  # the same content words, only the writing differs
    same_order: bool = False  # ... and in the same order
    same_written: bool = False  # ... each word as written, not only its stem
    says_less: bool = False  # says_less
    extends_a_name: bool = False  # extends_a_name
    # two things in each other's places, clause by clause (verify_features.exchange)
    crosswise: bool = False
    other_scope: bool = False  # scopes_differ
    scope_dropped: bool = False  # scope_dropped
    part_opened: bool = False  # part_opened
    role_holder_changed: bool = False  # role_holder_changed
    role_given: str | None = None  # role_given_to_another: the role's family
    role_restated: bool = False  # role_restated
    way_exchanged: bool = False  # exchanges_a_way
    acts_differ: bool = False  # acts_differ
    bound_turned: bool = False  # _bound_turned
    item_added: bool = False  # adds_an_item
    opposite: bool = False  # negates
    swapped: tuple[str, str] | None = None  # the two items that exchanged places (swapped)
    reordered: bool = False  # the same words ordered otherwise around an order word (reorders)
    still_holds: bool = False  # still_holds: another attribute changed, the old one holds
    during: bool = False  # changed_during: a change that held on one occasion
    two_events: bool = False  # two_events: each text tells one thing done, in the past
    corrects_another: bool = False  # corrects_another: it rejects a number the old lacks
    rejected_aside: bool = False  # rejected_aside: and says another value of the subject
    aside: Comparison | None = None  # _aside: the pair without the numbers rejected
    another_numbered: bool = False  # another_numbered: a value rejected of another thing
    narrows: bool = False  # narrows: a part, a bound, an occasion or a restriction added
    says_more: bool = False  # says_more: all the old text says, in order, and words added
    tense_differs: bool = False  # tense_differs: one verb in the past in one, present in other
    plan_done: bool = False  # plan_and_done: to be done in one, done in the other
    only_the_change: bool = False  # says_only_the_change
    another_version: bool = False  # another_version: a named thing at another version
    another_tool: bool = False  # another_tool: another named thing used beside it

    @property
    def one_value_of_one_subject(self) -> bool:
        """What the rule reads as another value of the same subject: one value changed late in
        the sentence or after the same subject words, a negation, or two items exchanged
        (what DedupPolicy.judge keeps as a conflict, CONFLICT_REASONS, when nothing says it
        changed)."""
        late = (
            self.changes == 1
            and self.changed_late
            and not (self.modifier_swapped or self.said_of_another or self.another_tool)
        )
        return late or self.value_after_the_subject or self.opposite or self.swapped is not None

    @property
    def values_after_the_subject(self) -> bool:
        """As value_after_the_subject, for two values or more replaced at once ("The primary
        database is *MySQL 8*" / "*PostgreSQL 15*", "supported regions are *us-east-1* and
        *eu-west-1*" / "*us-west-2* and *ap-southeast-1*"): the subject words are the same, so
        all that changed is what is said of it."""
        return self._said_of_the_subject and self.changes > 1

    @property
    def value_after_the_subject(self) -> bool:
        """The same subject words, and one value after them in place of another, nothing else
        ("The app is deployed to *Heroku*" / "*Fly.io*", however far apart the model puts the
        two: same_subject_words); not a closing phrase replaced."""
        return self._said_of_the_subject and self.changes == 1 and not self.phrase_replaced

    @property
    def _said_of_the_subject(self) -> bool:
        """The same subject words (same_subject_words), and neither the same value said of
        another thing, another occasion, a modifier swapped, nor another tool used beside
        the first (another_tool)."""
        return self.same_subject and not (
            self.modifier_swapped
            or self.said_of_another
            or self.other_occasion
            or self.another_tool
        )


# Words before a duration that make it a period, how often something happens ("*every* 6
# hours", "*each* week", "*per* day"), and words that make every duration of a text one
# ("the batch *interval* is 30 seconds"); words after one that make it a point in time
# ("30 days *before* expiry": when, neither how often nor how long); and a word that may
# say either ("the *rotation period*" is how often, "the *retention period*" how long).
_PERIOD_BEFORE = frozenset({"every", "each", "per"})
_PERIOD_NOUNS = frozenset({"interval", "intervals", "frequency", "cadence"})
_OFFSET_AFTER = frozenset({"before", "after", "ago", "earlier", "later", "prior"})
_EITHER_NOUNS = frozenset({"period", "periods"})


# A version after a name written in capitals ("Postgres 17.2", "Node 20", "Python 3.12"),
# and the words besides them that say only how a thing runs on a version or when it changed
# to it ("runs", "uses", "is on", "was upgraded to", "after the upgrade"), or what the thing
# holding the version is ("the auth *database*", "the billing *service*").
_NAMED_VERSION = re.compile(r"v?\d+(?:\.\d+){0,2}")
_HOW_IT_RUNS_ON_WORDS = """
    use uses used using run runs running ran what now currently today upgraded upgrade
    upgrades upgrading migrated migration moved switched bumped database db server service
    cluster instance version release target targets targeted build builds built building
    compile compiles compiled deploy deploys deployed install installs installed pin pins
    pinned base based rely relies relying back backs backed os"""
_HOW_IT_RUNS_ON = frozenset(_stem(word) for word in _HOW_IT_RUNS_ON_WORDS.split())

# Of those, the words one of the texts must have: a thing run or used at a version ("Sprint
# *12* starts on Monday", "Room *101*" are names with a number, no version).
_RUNS_ON_WORDS = """
    use uses used run runs upgraded upgrade migrated moved switched bumped version target
    targets targeted built compiled deployed installed pinned based relies backs"""
_RUNS_ON = frozenset(_stem(word) for word in _RUNS_ON_WORDS.split())


def _versions(one: Statement) -> dict[str, set[str]]:
    """Each name in capitals (not a function word) the text gives a version right after, with
    the versions given."""
    found: dict[str, set[str]] = {}
    for name, number in itertools.pairwise(one.tokens):
        if not name.text[:1].isupper() or name.lower in STOPWORDS:
            continue
        if _NAMED_VERSION.fullmatch(number.text.lower()):
            found.setdefault(name.norm, set()).add(number.norm)
    return found


def _capitals_besides(one: Statement, name: str) -> bool:
    """The text has a word in capitals besides `name` (a token's norm), one opening the
    sentence and acronyms (every letter a capital)."""
    return any(
        token.text[:1].isupper() and not token.first and not token.text.isupper()
        for token in one.tokens
        if token.norm != name
    )


def _only_these_changed(
    old: Statement, new: Statement, before: tuple[str, set[str]], after: tuple[str, set[str]]
) -> bool:
    """No value changed but a named thing and its versions (`before` in the old text, `after`
    in the new: a name and its versions, as _versions reads them)."""
    lost = old.values - new.values - before[1] - {before[0]}
    gained = new.values - old.values - after[1] - {after[0]}
    return not (lost or gained)


def _words_besides(one: Statement, named: tuple[str, set[str]], but: Set[str]) -> frozenset[str]:
    """The text's words but a named thing and its versions (`named`), numbers and `but`."""
    name, versions = named
    return frozenset(
        word for word in one.words - versions - {name} - but if not any(ch.isdigit() for ch in word)
    )


def another_version(existing: str, new: str) -> bool:
    """The same named thing at another version, however the sentence runs ("Postgres 17.2 is
    what auth uses now." / "The auth database is on Postgres 13.4 after the upgrade."): one
    name in capitals given one version in each text, not the same; the same other words in
    both (at least one: what runs it), but for how a thing runs on a version or what holds
    it (_HOW_IT_RUNS_ON), one of them saying it runs or uses the thing (_RUNS_ON); no other
    value changed. Where the version stands in the sentence says nothing: the name says which
    thing (changes_late reads a position)."""
    old, new_ = statement(existing), statement(new)
    before, after = _versions(old), _versions(new_)
    changed = [
        name
        for name in before.keys() & after.keys()
        if len(before[name]) == len(after[name]) == 1 and before[name] != after[name]
    ]
    if len(changed) != 1:
        return False
    name = changed[0]
    if not _only_these_changed(old, new_, (name, before[name]), (name, after[name])):
        return False
    said = _words_besides(old, (name, before[name]), _HOW_IT_RUNS_ON)
    runs = (old.words | new_.words) & _RUNS_ON - {name}  # not the name: "*Build* 4812 ..."
    if not (said and runs) or said != _words_besides(new_, (name, after[name]), _HOW_IT_RUNS_ON):
        return False
    # a text that names another thing in capitals may give the number to it: "*Screen* 2 at
    # *Lumen Hall* uses a *Barco* laser projector" / "Screen 3 ..." (not a capital opening
    # the sentence, nor an acronym: "The *API* runs on Node 20")
    return not any(_capitals_besides(one, name) for one in (old, new_))


# Verbs of a thing used beside others ("The Android build *uses* Gradle 8.5" / "*uses* JDK
# 17"), as against one that says what a thing is ("The primary database *is* MySQL 8").
_USED_BESIDE_WORDS = "use uses used run runs require requires required rely relies"
_USED_BESIDE = frozenset(_stem(word) for word in _USED_BESIDE_WORDS.split())


def another_tool(existing: str, new: str) -> bool:
    """Another named thing at its own version used by the same holder, not another value of
    one ("The faresync API uses Node 20." / "The faresync API uses Redis 7.", "The staging
    cluster runs Kubernetes 1.28." / "... runs Istio 1.20."): each text names one thing in
    capitals with a version, not the same thing, and the same other words (the holder); both
    say it is used, run or required (_USED_BESIDE), neither that it *is* the holder's one
    thing ("The primary database is MySQL 8." / "... is PostgreSQL 15." is a conflict);
    nothing else changed."""
    old, new_ = statement(existing), statement(new)
    before, after = _versions(old), _versions(new_)
    if len(before) != 1 or len(after) != 1 or before.keys() == after.keys():
        return False
    first, second = next(iter(before.items())), next(iter(after.items()))
    if not _only_these_changed(old, new_, first, second):
        return False
    if not (old.words & _USED_BESIDE and new_.words & _USED_BESIDE):
        return False
    if _words_besides(old, first, _USED_BESIDE) != _words_besides(new_, second, _USED_BESIDE):
        return False  # another holder too ("The API uses Node 20" / "The worker uses Redis 7")
    return not (_said_to_be(old, first[0]) or _said_to_be(new_, second[0]))


def _said_to_be(one: Statement, name: str) -> bool:
    """The named thing follows "is", "are" or a colon: what the holder is, not what it uses."""
    tokens = one.tokens
    return any(
        token.norm == name and i > 0 and tokens[i - 1].lower in ("is", "are", ":")
        for i, token in enumerate(tokens)
    )


def period_and_duration(existing: str, new: str) -> bool:
    """The durations that differ are a period in one text and a length of time in the other
    ("Backups are kept for *14 days*" / "Backups are now taken *every 6 hours*": how long
    they are kept, how often they are taken): two attributes of one thing, not one value
    changed. Never when a text says "period", which may be either."""
    lost = _durations(statement(existing))
    gained = _durations(statement(new))
    if lost is None or gained is None:
        return False
    old_kinds = {period for value, period in lost.items() if value not in gained}
    new_kinds = {period for value, period in gained.items() if value not in lost}
    return len(old_kinds) == 1 and len(new_kinds) == 1 and old_kinds != new_kinds


def _durations(one: Statement) -> dict[str, bool] | None:
    """The text's durations (their norms, in seconds) but points in time, each True when it
    is a period; None when the text says "period"."""
    words = {token.lower for token in one.tokens}
    if words & _EITHER_NOUNS:
        return None
    every = bool(words & _PERIOD_NOUNS)
    found: dict[str, bool] = {}
    tokens = one.tokens
    for i, token in enumerate(tokens):
        if not _AMOUNT_NORM.fullmatch(token.norm):
            continue
        if i + 1 < len(tokens) and tokens[i + 1].lower in _OFFSET_AFTER:
            continue  # "30 days before expiry": when
        period = i > 0 and tokens[i - 1].lower in _PERIOD_BEFORE
        found[token.norm] = found.get(token.norm, False) or every or period
    return found


# A word in capitals that may be the initials of words the other text spells out ("POC" /
# "point of contact", "TSDB" / "time-series database", "PRs" / "pull requests"), and the words
# of a text with where they stand.
_ACRONYM = re.compile(r"\b([A-Z]{2,6})(s?)\b")
_SPELLED = re.compile(r"[A-Za-z][A-Za-z']*(?:-[A-Za-z]+)*")


def spelled_out(existing: str, new: str) -> tuple[str, str]:
    """The two texts with the words one spells out written as the initials the other has
    ("Tobias is the *point of contact* for the invoicer DB" / "Tobias is the *POC* for ..."
    read as "Tobias is the *POC* for ..."; "the *time-series database*" / "a *TSDB*"): one
    term written two ways. Only words side by side, the first and the last no stopword, none
    of them the initials themselves; "database" gives "DB"; one word's capitals are its
    initials ("PagerDuty" / "PD")."""
    return _initials_for(existing, new), _initials_for(new, existing)


def _initials_for(text: str, other: str) -> str:
    """`text` with each run of its words that spells out a word in capitals of `other`
    replaced by that word (spelled_out)."""
    for found in _ACRONYM.finditer(other):
        letters, plural = found.group(1), found.group(2)
        unit = len(letters) == 2 and re.search(r"\d\s?$", other[: found.start()])
        if unit or re.search(rf"\b{letters}", text):
            continue  # (nor a unit after a number: "10 *AM*", "8 *GB*")
        words = list(_SPELLED.finditer(text))
        camel = next(
            (
                w
                for w in words
                if _capitals(w.group(0)) == letters
                and ALIASES.get(w.group(0).lower()) != letters.lower()  # "TypeScript" is "TS"
            ),
            None,
        )
        if camel is not None:  # one word's capitals ("*PagerDuty*" / "*PD*")
            text = text[: camel.start()] + letters + plural + text[camel.end() :]
            continue
        for start in range(len(words)):
            initials, end = "", start
            while end < len(words) and len(initials) < len(letters):
                if end > start and text[words[end - 1].end() : words[end].start()].strip():
                    break  # side by side only
                word = words[end].group(0).lower()
                parts = word.split("-")
                initials += "db" if word == "database" else "".join(p[0] for p in parts)
                end += 1
            run = [w.group(0).lower() for w in words[start:end]]
            if initials != letters.lower() or run[0] in STOPWORDS or run[-1] in STOPWORDS:
                continue
            if len(run) < 2 and "-" not in run[0] and run[0] != "database":
                continue
            spelled = text[words[start].start() : words[end - 1].end()]
            text = text.replace(spelled, letters + plural, 1)
            break
    return text


def _capitals(word: str) -> str:
    """The capitals of a word written in capitals and small letters, two or more of them
    ("PagerDuty": PD); else ""."""
    capitals = "".join(ch for ch in word if ch.isupper())
    return capitals if len(capitals) >= 2 and word[:1].isupper() and not word.isupper() else ""


# How often, said without a number ("*daily*", "*every* day", "*once a* day", "*twice a* day",
# "*3 times* daily"; not "every second Monday", "every other day", "four-weekly"), written
# as the period it is in seconds ("every 86400 seconds") where both texts give a period or a
# duration: "daily" / "every 24 hours", "once a minute" / "every 60 seconds", "daily" /
# "weekly".
_RATE_UNITS = {"minute": 60, "hour": 3600, "day": 86400, "week": 604800, "month": 2628000}
_RATE_UNITS |= {"year": 31536000}
_RATE_ADVERBS = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month"}
_RATE_ADVERBS |= {"yearly": "year", "annually": "year"}
_RATE_COUNTS = {"once": 1, "twice": 2, "two times": 2, "three times": 3, "four times": 4}
_RATE = re.compile(
    r"(?<![\w-])(?:(?P<count>once|twice|(?:two|three|four|\d{1,2}) times)\s+)?"
    r"(?:(?:a|an|per|every|each)\s+(?P<unit>minute|hour|day|week|month|year)"
    r"|(?P<adverb>hourly|daily|weekly|monthly|yearly|annually))\b",
    re.IGNORECASE,
)
_ANY_DURATION = re.compile(r"\d+(?:\.\d+)?s")


def _rate_seconds(match: re.Match[str]) -> int | None:
    """The period in seconds a _RATE match says, or None ("a day" alone is no rate)."""
    count = (match.group("count") or "").lower()
    unit = match.group("unit") or _RATE_ADVERBS.get((match.group("adverb") or "").lower())
    opening = match.group(0).split()[len(count.split()) if count else 0].lower()
    if unit is None or (not count and opening in ("a", "an", "per")):
        return None  # "a day", "per month": an amount's rate, not how often
    times = _RATE_COUNTS.get(count) or (int(count.split()[0]) if count else 1)
    if times == 0:
        return None  # "0 times a day": never, no period
    seconds, left = divmod(_RATE_UNITS[unit.lower()], times)
    return None if left else seconds


def _with_rates_written(text: str) -> str:
    def written(match: re.Match[str]) -> str:
        seconds = _rate_seconds(match)
        return match.group(0) if seconds is None else f"every {seconds} seconds"

    return _RATE.sub(written, text)


def rates_written_out(existing: str, new: str) -> tuple[str, str]:
    """The two texts with how often each says in words written as its period in seconds
    (see _RATE), when both give a period or a duration and one says it in words; else as
    they are ("The on-call rotation changes every Monday" / "On-call rotates weekly, on
    Mondays" says nothing of a period in the first)."""
    texts = (existing, new)
    said = [any(_rate_seconds(m) is not None for m in _RATE.finditer(t)) for t in texts]
    if not any(said):
        return existing, new
    for text, in_words in zip(texts, said, strict=True):
        if not in_words and not any(_ANY_DURATION.fullmatch(v) for v in statement(text).values):
            return existing, new
    return _with_rates_written(existing), _with_rates_written(new)


# A size as written: a number (with thousands' commas) and a unit of _SIZE_UNITS or bytes
# ("2,000 kB", "0.5 GB", "393,216 bytes").
_SIZE_UNIT = r"((?i:[kmgt]i?b|kilobytes?|megabytes?|gigabytes?|terabytes?|bytes?))\b"
_WRITTEN_SIZE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?" + _SIZE_UNIT)
_DECIMAL_SIZES = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def _size_readings(amount: str, unit: str) -> tuple[Decimal | None, frozenset[Decimal]]:
    """The bytes a size means as _SIZE_UNITS reads it (binary multiples; None for bytes,
    which it does not read), and all it may mean: in binary multiples and in decimal ones
    ("2 MB" is 2,097,152 or 2,000,000 bytes; "2 MiB" only the first); none for bits
    ("100Mb")."""
    if _bits(unit):
        return None, frozenset()
    number, lower = Decimal(amount.replace(",", "")), unit.lower()
    if lower.startswith("byte"):
        return None, frozenset({number})
    binary = number * _SIZE_UNITS[lower]
    if len(lower) == 3 and lower[1] == "i":  # KiB, MiB, GiB: binary only
        return binary, frozenset({binary})
    readings = {binary, number * _DECIMAL_SIZES[lower[0]]}
    if lower[0] == "t":  # read as 1,000 GiB, also 1,024 GiB ("2 TB" / "2048 GB")
        readings.add(number * 1024**4)
    return binary, frozenset(readings)


def sizes_as_the_other(existing: str, new: str) -> tuple[str, str]:
    """The new text with each size that means what a size of the existing text means, read in
    binary or in decimal multiples, written as the existing text writes it ("Max upload is
    2,000 kB" / "... 2 MB", "0.5 GB" / "500 MB", "393,216 bytes" / "384 KB"): one value
    written two ways, which _SIZE_UNITS' one reading (binary) does not see."""
    olds = [
        (match.group(0), *_size_readings(match.group(1), match.group(2)))
        for match in _WRITTEN_SIZE.finditer(existing)
    ]
    if not olds:
        return existing, new

    def as_old(match: re.Match[str]) -> str:
        read, readings = _size_readings(match.group(1), match.group(2))
        if read is not None and any(read == old_read for _, old_read, _ in olds):
            return match.group(0)  # read alike already ("2 GB" / "2048 MB")
        return next((written for written, _, means in olds if means & readings), match.group(0))

    return existing, _WRITTEN_SIZE.sub(as_old, new)


# A percentage ("80%", "99.9 percent") and a bare decimal under one (".75", "0.001"; not a
# version, a path or an amount: "v0.8", "$0.50").
_PERCENTAGE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(?:%|percent\b|per cent\b)", re.I)
# (and "1.0", the whole: "a sample rate of *1.0*" / "*100%*")
_SHARE = re.compile(r"(?<![\w.,/:$€£#+-])(0?\.\d+|1\.0+)(?![\w%]|[.,/:-]\d)(?:\s+([A-Za-z]+))?")


def values_as_the_other(existing: str, new: str) -> tuple[str, str]:
    """The two texts with a size written as the existing text writes it
    (sizes_as_the_other), an amount "per" a unit as the other writes it with a slash ("9p
    per kWh" / "9p/kWh"), and a bare decimal under one in either text (or 1.0 as a rate's
    value, "a sample rate of 1.0") written as the percentage the other text has for it
    ("Leak score cutoff is 0.75" / "... 75%", "aims for 80% coverage" / "aims for 0.8
    coverage"): one value written two ways. A decimal
    before a unit ("0.5 GB", "0.75 s") is a measure, not a share."""
    # (thousands grouped by points first: "3.000 MB" is the size "3 GB" says)
    existing, new = _grouped_for(existing, new), _grouped_for(new, existing)
    existing, new = sizes_as_the_other(existing, new)
    existing = _rate_for(existing, new)
    new = _rate_for(new, existing)  # (nothing left to write once the first is as the other)
    existing, new = _per_for(existing, new), _per_for(new, existing)
    existing, new = _words_shares_for(existing, new), _words_shares_for(new, existing)
    existing, new = _cents_for(existing, new), _cents_for(new, existing)
    existing, new = _spans_for(existing, new), _spans_for(new, existing)
    return _shares_for(existing, new), _shares_for(new, existing)


# A reference closing a text, where it was noted rather than what it says: "(note 614)",
# "(ticket 212)", "(see PR #412)", "(INFRA-212)", "(see INC-2291)"
_CITATION = re.compile(
    r"\s*\((?:see\s+|per\s+|from\s+)?(?:(?:note|ticket|issue|pr|mr|ref|incident|inc|bug|case)"
    r"\s*#?\s*\d+|#\d+|[A-Z][A-Z0-9]+-\d+)\)\s*\.?\s*$",
    re.IGNORECASE,
)


def citations_apart(existing: str, new: str) -> tuple[str, str]:
    """Both texts without the reference that closes each ("... on port 7794. (note 614)" /
    "... on port 3451. (note 704)"), when both close with one: where a fact was noted is no
    value of it; two references would read as one more value changed, and the same fact
    noted twice as another value."""
    one, other = _CITATION.search(existing), _CITATION.search(new)
    if one is None or other is None:
        return existing, new
    return existing[: one.start()].rstrip(), new[: other.start()].rstrip()


def crons_written_out(existing: str, new: str) -> tuple[str, str]:
    """The two texts with a cron schedule written in words where the other text has none
    (_cron_for)."""
    return _cron_for(existing, new), _cron_for(new, existing)


# A cron schedule of five fields, in back quotes or not ("`30 1 * * *`", "*/15 * * * *"):
# minute, hour, day of the month, month, day of the week.
_CRON = re.compile(
    r"`?(?<![\w*/,-])(\*/\d{1,2}|\d{1,2})\s+(\*|\d{1,2})\s+(\*|\d{1,2})\s+(\*)\s+"
    r"(\*|[0-7](?:-[0-7])?)(?![\w*/,-])`?"
)
# (cron's day 0 and 7 are both Sunday)
_CRON_DAYS = [day.title() for day in ("sunday", *_WEEKDAYS.split())]


def _cron_for(text: str, other: str) -> str:
    """`text` with each cron schedule (_CRON) written in words, when the other text has none
    ("`30 1 * * *`" / "every day at 01:30", "*/15 * * * *" / "every 15 minutes", "0 6 * * 1"
    / "every Monday at 06:00", "30 6 * * 1-5" / "every weekday at 06:30", "0 0 1 * *" / "on
    day 1 of every month at 00:00"): one schedule written two ways. A schedule of other
    fields (a list, a month, a step of hours) is left as written."""
    if _CRON.search(other):
        return text

    def in_words(found: re.Match[str]) -> str:
        minute, hour, day, _, weekday = found.groups()
        if minute.startswith("*/"):
            if (hour, day, weekday) != ("*", "*", "*"):
                return found.group(0)
            return f"every {int(minute[2:])} minutes"
        if hour == "*":
            if (day, weekday) != ("*", "*") or minute != "0":
                return found.group(0)
            return "every hour"
        at = f"at {int(hour):02d}:{int(minute):02d}"
        if day != "*":
            return f"on day {int(day)} of every month {at}" if weekday == "*" else found.group(0)
        if weekday == "*":
            return f"every day {at}"
        if weekday == "1-5":
            return f"every weekday {at}"
        if "-" in weekday:
            return found.group(0)
        return f"every {_CRON_DAYS[int(weekday)]} {at}"

    return _CRON.sub(in_words, text)


# A rate over a unit of time ("30 messages *per second*", "40 bags *a minute*", "10 req/s",
# "2k messages a day"): the amount, up to two words, how it is said per, the unit.
_AMOUNT_RATE = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(k\b)?((?:\s+[A-Za-z][\w-]*){0,2}?)"
    r"(\s+(?:per|a|an|each|every)\s+|\s*/\s*)"
    r"(seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|days?|weeks?)\b",
    re.IGNORECASE,
)
# (each unit by its first letter, as _AMOUNT_RATE writes it short or long: "s", "mins", "hour";
# no month: "m" is a minute)
_AMOUNT_RATE_SECONDS = {"s": 1} | {
    unit[0]: _RATE_UNITS[unit] for unit in ("minute", "hour", "day", "week")
}


def _per_seconds(unit: str) -> int:
    """The seconds of a unit of time as _AMOUNT_RATE writes it ("s", "mins", "hour")."""
    return _AMOUNT_RATE_SECONDS[unit.lower()[0]]


def _rate_for(text: str, other: str) -> str:
    """`text` with each rate over a unit of time written as the other text writes the same
    rate over another unit ("30 messages per second" / "1,800 messages a minute", "10
    requests per second" / "600 requests per minute"): one value written two ways."""
    rates = []
    for found in _AMOUNT_RATE.finditer(other):
        amount = Decimal(found.group(1).replace(",", "")) * (1000 if found.group(2) else 1)
        rates.append((amount / _per_seconds(found.group(5)), found))

    def as_other(found: re.Match[str]) -> str:
        amount = Decimal(found.group(1).replace(",", "")) * (1000 if found.group(2) else 1)
        mine = _per_seconds(found.group(5))
        for rate, said in rates:
            if rate == amount / mine and _per_seconds(said.group(5)) != mine:
                amount_written = said.group(1) + (said.group(2) or "")
                return f"{amount_written}{found.group(3)}{said.group(4)}{said.group(5)}"
        return found.group(0)

    return _AMOUNT_RATE.sub(as_other, text) if rates else text


# An amount "per" a unit, written apart ("9p *per* kWh", "€40 per month").
_PER = re.compile(r"(?<![\w/])(\S*\d\S*)\s+per\s+([A-Za-z]+)\b")


def _per_for(text: str, other: str) -> str:
    """`text` with each amount "per" a unit written with a slash when the other text writes
    it so ("9p per kWh" / "9p/kWh"): one value written two ways."""

    def as_slash(found: re.Match[str]) -> str:
        slashed = f"{found.group(1)}/{found.group(2)}"
        # (the whole amount: "9p per kWh" is no "19p/kWh")
        said = re.search(rf"(?<![\w.]){re.escape(slashed)}(?!\w)", other, re.IGNORECASE)
        return slashed if said else found.group(0)

    return _PER.sub(as_slash, text)


# A number in groups of three digits after a point, as most European languages group
# thousands ("10.000", "1.250.000"); not a version or a decimal beside more digits.
_POINT_GROUPED = re.compile(r"(?<![\w.,])(\d{1,3}(?:\.\d{3})+)(?![\w]|[.,]\d)")
# A size unit right after such a number ("3.000 *MB*").
_SIZE_AFTER = re.compile(r"\s?" + _SIZE_UNIT)


def _grouped_for(text: str, other: str) -> str:
    """`text` with each number grouped by points written with commas, when the other text
    has that whole number ("Limite: 10.000 per associazione" / "Limite: 10k per
    associazione"), or a size the other text states with that whole number before its unit
    ("crece unos 3.000 MB" / "crece unos 3 GB"); otherwise it stays a decimal ("10.000" is
    ten in English)."""
    numbers = statement(other).values
    sizes = [_size_readings(*found.groups())[1] for found in _WRITTEN_SIZE.finditer(other)]

    def as_thousands(found: re.Match[str]) -> str:
        grouped = found.group(1)
        whole = grouped.replace(".", "")
        if whole in numbers:
            return grouped.replace(".", ",")
        unit = _SIZE_AFTER.match(text, found.end())
        if unit is not None and sizes:
            means = _size_readings(whole, unit.group(1))[1]
            if any(means & said for said in sizes):
                return grouped.replace(".", ",")
        return grouped

    return _POINT_GROUPED.sub(as_thousands, text)


_RATE_BEFORE = frozenset({"of", "at", "is", "="})


def _shares_for(text: str, other: str) -> str:
    """`text` with each bare decimal under one (or 1.0 as a rate's value) written as
    `other`'s percentage of it."""
    percentages = {
        Decimal(found.group(1)) / 100: found.group(0) for found in _PERCENTAGE.finditer(other)
    }
    if not percentages:
        return text

    def as_percentage(found: re.Match[str]) -> str:
        unit = (found.group(2) or "").lower()
        written = percentages.get(Decimal(found.group(1)))
        units = (_SIZE_UNITS, _DURATION_UNITS, _MEASURE_UNITS)
        if written is None or any(unit in known for known in units):
            return found.group(0)
        # the whole only as a rate's value ("a sample rate *of* 1.0", "errors *at* 1.0", "of
        # 0.25 for traces *and* 1.0 for errors"; not "release 1.0")
        before = (text[: found.start()].split() or [""])[-1]
        earlier = _SHARE.finditer(text[: found.start()])
        listed = before == "and" and any(not share.group(1).startswith("1") for share in earlier)
        if found.group(1).startswith("1") and not (before in _RATE_BEFORE or listed):
            return found.group(0)
        return written + found.group(0)[len(found.group(1)) :]

    return _SHARE.sub(as_percentage, text)


# A share said in words: a count and a denominator ("one fifth", "a tenth", "four-fifths", "two
# thirds") or one in so many ("one in four", "1 out of 20").
_SHARE_PARTS = "half halves third thirds quarter quarters fifth fifths sixth sixths eighth"
_SHARE_PARTS += " eighths tenth tenths twentieth twentieths hundredth hundredths"
_SHARE_IN_WORDS = re.compile(
    r"(?<![\w-])(?:(a|an|one|two|three|four|five|six|seven|eight|nine|\d)[\s-]+"
    rf"({_SHARE_PARTS.replace(' ', '|')})"
    r"|(one|\d{1,3})\s+(?:in|out\s+of)\s+(\d{1,4}|a\s+hundred|a\s+thousand|"
    + "|".join(sorted({*_TENS_WORDS, *_TEEN_WORDS, *_UNIT_WORDS} - {"zero", "one"}, key=len)[::-1])
    + r"))\b",
    re.IGNORECASE,
)
_PART_SIZES = {"half": 2, "halve": 2, "third": 3, "quarter": 4, "fifth": 5, "sixth": 6}
_PART_SIZES |= {"eighth": 8, "tenth": 10, "twentieth": 20, "hundredth": 100}


def _share_in_words(found: re.Match[str]) -> Decimal | None:
    """The share a _SHARE_IN_WORDS match says (a fifth: 0.2), or None."""
    if found.group(2) is not None:
        count, part = found.group(1).lower(), found.group(2).lower()
        size = _PART_SIZES[part[:-1] if part.endswith("s") else part]
        whole = 1 if count in ("a", "an") else int(NUMBERS.get(count, count))
    else:
        count, part = found.group(3).lower(), found.group(4).lower().replace("-", " ")
        whole = 1 if count == "one" else int(count)
        size = int(part) if part.isdigit() else _SCALES.get(part.split()[-1]) or int(NUMBERS[part])
        if not size:
            return None
    share = Decimal(whole) / size
    return share if 0 < share < 1 else None


def _words_shares_for(text: str, other: str) -> str:
    """`text` with each share said in words written as the percentage the other text gives
    for it ("one fifth of the samples" / "20% of the samples", "one in four transactions" /
    "25% of transactions", "a third" / "33%"): one value written two ways."""
    percentages = [
        (Decimal(found.group(1)), found.group(0)) for found in _PERCENTAGE.finditer(other)
    ]
    if not percentages:
        return text

    def as_percentage(found: re.Match[str]) -> str:
        share = _share_in_words(found)
        if share is None:
            return found.group(0)
        for percent, written in percentages:
            if abs(percent - share * 100) < Decimal("0.5"):
                return written
        return found.group(0)

    return _SHARE_IN_WORDS.sub(as_percentage, text)


# An amount in cents ("240 euro cents", "4.5 cents", "4,5 ct") and an amount of money in
# the unit ("€2.40", "2.40 EUR", "19.50 euros", "$0.045")
_CENTS = re.compile(
    r"(?<![\w.,])(\d+(?:[.,]\d+)?)\s?(?:euro\s?cents?|eurocents?|cents?|ct)\b", re.I
)
_MONEY = re.compile(
    r"(?<![\w.,])(?:[€$£]\s?(\d+(?:\.\d+)?)|(\d+(?:[.,]\d+)?)\s?(?:€|EUR\b|euros?\b|USD\b"
    r"|dollars?\b|GBP\b|CHF\b))",
)


def _cents_for(text: str, other: str) -> str:
    """`text` with each amount in cents written as the other text writes that amount in its
    unit ("240 euro cents" / "€2.40", "4.5 cents per litre" / "€0.045 per litre")."""
    amounts = [
        (Decimal((found.group(1) or found.group(2)).replace(",", ".")), found.group(0))
        for found in _MONEY.finditer(other)
    ]
    if not amounts:
        return text

    def as_money(found: re.Match[str]) -> str:
        cents = Decimal(found.group(1).replace(",", "."))
        return next((said for amount, said in amounts if amount * 100 == cents), found.group(0))

    return _CENTS.sub(as_money, text)


# A span of months, decades or one unit said without a number ("3 months", "a decade", "a
# full day"), and a duration in digits ("90 days", "10 years", "24-hour")
_SPAN = re.compile(
    r"(?<![\w-])(a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})"
    r"\s+(?:full\s+)?(decades?|months?|years?|weeks?|days?|hours?|minutes?)\b",
    re.IGNORECASE,
)
_DURATION_IN_DIGITS = re.compile(
    r"(?<![\w.,])(\d+(?:\.\d+)?)[\s-](seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b",
    re.IGNORECASE,
)
_NOT_A_SPAN_AFTER = frozenset({"once", "twice", "times", "per", "every", "each", "of", "half"})


def _spans_for(text: str, other: str) -> str:
    """`text` with a span the tokens read otherwise written as the other text's duration of
    the same length: months as days of 30 ("3 months" / "90 days"), a decade as 10 years, one
    unit said with "a" ("a full day" / "a 24-hour soak"); not how often ("once a day")."""
    said = [
        (_in_seconds(found.group(1), found.group(2).lower()), found.group(0))
        for found in _DURATION_IN_DIGITS.finditer(other)
    ]
    if not said:
        return text

    def as_other(found: re.Match[str]) -> str:
        count, unit = found.group(1).lower(), found.group(2).lower().removesuffix("s")
        before = (text[: found.start()].split() or [""])[-1].lower()
        # (nor a unit a part is taken of: "a quarter *of an hour*", "*an hour* and a half")
        and_a_half = text[found.end() :].lower().lstrip().startswith("and a half")
        if before in _NOT_A_SPAN_AFTER or and_a_half:
            return found.group(0)
        number = Decimal(1 if count in ("a", "an") else NUMBERS.get(count, count))
        if unit == "decade":
            lengths = {_in_seconds(number * 10, "year")}
        elif unit == "month":
            lengths = {_in_seconds(number * 30, "day")}
        elif count in ("a", "an") or "full" in found.group(0).lower():
            lengths = {_in_seconds(number, unit)}
        else:
            return found.group(0)  # read as a duration already
        return next((written for length, written in said if length in lengths), found.group(0))

    return _SPAN.sub(as_other, text)


# A word of letters with a number on it ("SEV1", "P2", "ES2022").
_GLUED = re.compile(r"\b([^\W\d_]+)(\d+)\b")


def joined_as_the_other(existing: str, new: str) -> tuple[str, str]:
    """The two texts with a word and a number written apart in one ("Sev 1", "sev-1") written
    as the other writes them on one another ("SEV1"): one name written two ways."""
    return _joined_for(existing, new), _joined_for(new, existing)


def _joined_for(text: str, other: str) -> str:
    for found in _GLUED.finditer(other):
        apart = rf"\b{re.escape(found.group(1))}[ -]{found.group(2)}\b"
        text = re.sub(apart, found.group(0), text, flags=re.IGNORECASE)
    return text


_A_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")
# a number a text rejects: "..., not 68", "instead of 3", "rather than 5" (not "wait no, it's
# 24", where "no" takes back what the speaker said, nor "no. 9")
_REJECTING = r"\b(?:not|instead of|rather than)\s+"
_REJECTED_NUMBER = re.compile(_REJECTING + r"(-?\d+(?:[.,]\d+)?)(?![\w.,-]*\w)", re.IGNORECASE)


# a number rejected and what follows it up to the clause's end when it says why ("..., *not
# 6868 as assumed earlier*", "*instead of 3*"): what _REJECTED_NUMBER reads, as a phrase
_REJECTION_PHRASE = re.compile(
    r"\s*\(" + _REJECTING + r"-?\d[^()]*\)"  # "(not 3 GB as the ticket says)"
    r"|,?\s*"
    + _REJECTED_NUMBER.pattern
    # a unit: "not 3 GB", "not 40 min" (not a word that goes on: "not 3 on Sundays")
    + r"(?:\s*(?!(?:as|like|on|in|at|to|of|by|for|and|or|but|the|a|an)\b)[^\W\d_]{1,4}\b)?"
    r"(?:\s+(?:as|like)\b[^.;,()]*)?",  # why: "as assumed earlier", "like the PR said"
    re.IGNORECASE,
)


def _aside(existing: str, new: str) -> Comparison | None:
    """The pair as it reads without the numbers the new text rejects (and those the old one
    rejects), of a new text that rejects a number the old one never states (corrects_another,
    which the caller has read): what the new text says the value is, beside the old text."""
    # (of both texts: the old one may reject a number of its own, "... on port 7794, not
    # 6868 as assumed earlier" / "... on port 3451, not 4741 as assumed earlier")
    kept, before = (_REJECTION_PHRASE.sub("", text).strip() for text in (new, existing))
    if not (kept and before) or kept == new.strip() or _REJECTED_NUMBER.search(kept + before):
        return None
    return compare(before, kept)


def rejected_aside(existing: str, new: str) -> bool:
    """The new text rejects a number the old one never states (corrects_another: "The
    profiles service listens on port 7794, *not 6868 as assumed earlier*" beside "... on port
    3785"), and without that phrase it says one value of the old text's subject in place of
    the old one (Comparison.one_value_of_one_subject, of no other holder, scope, statement or
    occasion), or states a change of it (_states_a_change: "The staging DB *moved to* port
    5433, not 5434 as the wiki says"): whichever value it rejects, the old one is not the
    value either; a conflict, or, when a change is said, the change of this memory."""
    if not corrects_another(statement(existing), new, existing):
        return False
    return _another_value_aside(_aside(existing, new))


def _another_value_aside(pair: Comparison | None) -> bool:
    """What rejected_aside reads of the pair read aside (_aside)."""
    if pair is None:
        return False
    other = pair.other_holder or pair.other_scope or pair.scope_dropped or pair.other_statement
    if other or pair.other_occasion or pair.one_off or pair.opposite or pair.swapped:
        return False
    return pair.one_value_of_one_subject or _states_a_change(pair)


def corrects_another(old: Statement, new: str, existing: str) -> bool:
    """The new text rejects a number ("ladle serves 74 partner charities, *not 68*") that the
    old text does not state, in digits or in words: the value it corrects is another
    memory's, not this one's ("... capped ladle orders at 400 kg per partner charity")."""
    rejected = _REJECTED_NUMBER.findall(new)
    if not rejected:
        return False
    stated = {value.lstrip("-") for value in old.values | old.words}
    stated |= {number.lstrip("-") for number in _A_NUMBER.findall(existing)}
    return not any(number.lstrip("-") in stated for number in rejected)


@lru_cache(maxsize=256)
def compare(existing: str, new: str) -> Comparison:
    """Every feature of the pair the rule reads, computed once (of the texts with what one
    spells out written as the other's initials, spelled_out, a word and a number written
    apart as the other joins them, joined_as_the_other, and how often said in words as a
    period where the other gives one, rates_written_out, and a size that means what the
    other's does, or a share the other gives as a percentage, written as the other writes
    it, values_as_the_other; and a cron schedule in words where the other text has none,
    crons_written_out)."""
    existing, new = crons_written_out(*citations_apart(existing, new))
    existing, new = rates_written_out(*joined_as_the_other(*spelled_out(existing, new)))
    existing, new = values_as_the_other(existing, new)
    old, new_ = statement(existing), statement(new)
    # a text that rejects what the other states, or adds a verb that says no, is no rewording
    # of it, whatever else they share
    rejects = rejects_the_other(old, new_) or _leaves_out(old, new_)
    restated = _values_restated(existing, new)
    of_another = corrects_another(old, new, existing)  # a number the old text never states
    aside = _aside(existing, new) if of_another else None
    return Comparison(
        model_knows_both=model_knows(existing) and model_knows(new),
        same_unknown=old.unknown == new_.unknown,
        other_holder=relations_differ(existing, new) and not corrects_a_relation(existing, new),
        other_statement=labels_differ(existing, new)
        or kinds_differ(existing, new)
        or reacts_to(existing, new)
        or by_an_amount(existing, new)
        or participle_exchanged(existing, new)
        or adds_another(existing, new)
        or adds_a_fact(existing, new)
        or adds_alongside(existing, new)
        or speech(existing) != speech(new)
        or lesson_and_rule(existing, new)
        or plan_and_event(existing, new)
        or undoes(existing, new)
        or default_and_required(existing, new)
        or tells_apart(existing, new)
        or adds_an_exception(existing, new)
        or moves_a_party_aside(existing, new)
        or (
            (
                elaborates(existing, new)
                or narrows_a_noun(existing, new)
                or changes_direction(existing, new)
                or one_or_all(existing, new)
                or rules_out_both(existing, new)
                or opposite_of_another_thing(existing, new)
            )
            and not says_it_changed(existing, new)
        ),
        marked=says_it_changed(existing, new),
        changes=changed_values(existing, new),
        modifier_swapped=swaps_a_modifier(existing, new)
        and not swapped_after_a_change(existing, new),
        phrase_replaced=replaces_a_phrase(existing, new),
        restates=restates(existing, new) and not rejects,
        reworded=rewords(existing, new) and not rejects,
        same_values=restated is not None and not rejects,
        words_changed=restated or 0,
        names_the_change=names_the_change(existing, new),
        keeps_subject=keeps_the_subject(existing, new),
        same_subject=same_subject_words(existing, new),
        opening_name_replaced=replaces_an_opening_name(existing, new),
        object_replaced=replaces_the_object(existing, new),
        said_of_another=keeps_the_values(existing, new),
        history=tells_history(existing, new) or tells_history_before(existing, new),
        past_and_plan=past_and_plan(existing, new),
        other_occasion=another_occasion(existing, new),
        period_and_duration=period_and_duration(existing, new),
        one_off=one_off(existing, new)
        or event_of_a_habit(existing, new)
        or habit_of_an_event(existing, new),
        opposite=negates(existing, new),
        swapped=swapped(existing, new),
        reordered=old.words == new_.words and reorders(old, new_),
        labelled=_speaker(existing) and label(existing) == label(new),
        one_speaker=_one_speaker(existing, new),
        changed_late=changes_late(existing, new),
        change_word=bool(new_.markers - old.markers),
        strong_change=bool((new_.markers - old.markers) & STRONG_MARKERS),
        foreign=reads_foreign(existing) or reads_foreign(new),
        english=reads_english(existing) and reads_english(new),
        same_words=old.words == new_.words and old.negations == new_.negations,
        same_order=[t.norm for t in old.tokens] == [t.norm for t in new_.tokens],
        same_written=_as_written(old) == _as_written(new_),
        says_less=says_less(old, new_),
        bound_turned=_bound_turned(old, new_),
        item_added=adds_an_item(existing, new),
        extends_a_name=extends_a_name(old, new_),
        crosswise=_crosswise(existing, new),
        other_scope=scopes_differ(old, new_),
        scope_dropped=scope_dropped(existing, new),
        part_opened=part_opened(existing, new),
        role_holder_changed=role_holder_changed(existing, new),
        role_given=role_given_to_another(existing, new),
        role_restated=role_restated(existing, new),
        way_exchanged=exchanges_a_way(existing, new),
        acts_differ=acts_differ(existing, new),
        still_holds=still_holds(existing, new),
        during=changed_during(existing, new),
        two_events=two_events(existing, new),
        corrects_another=of_another,
        rejected_aside=_another_value_aside(aside),
        aside=aside,
        another_numbered=another_numbered(existing, new),
        another_version=another_version(existing, new),
        another_tool=another_tool(existing, new),
        narrows=narrows(existing, new),
        says_more=says_more(old, new_, terse=terse_note(existing)),
        tense_differs=tense_differs(old, new_),
        plan_done=plan_and_done(old, new_)
        or headed_as_a_plan(existing, new)
        or scheduled_and_done(old, new_),
        only_the_change=says_only_the_change(existing, new),
    )


def _crosswise(existing: str, new: str) -> bool:
    """Two things in each other's places, clause by clause (verify_features.exchange), read
    only when one text's words are all the other's: things swapped keep their words; or, in
    other words, two clauses' words said crosswise (_partners_exchanged) or what each text
    rejects chosen by the other (_rejections_exchanged)."""
    old, new_ = statement(existing), statement(new)
    if _partners_exchanged(old, new_) or _rejections_exchanged(old, new_):
        return True
    if not (old.words <= new_.words or new_.words <= old.words):
        return False
    # verify's clause-by-clause reading builds on this module, so it is imported here
    from emergent_memory.memory import verify_features

    return verify_features.exchange(existing, new) is not None


# Words that join two clauses of who does what ("Seun is the primary *and* Tomasz the
# secondary"), in English and in other languages ("o Kofi é o dono do pp-imaging *e* a Greta
# do pp-billing"): the list joiners that add, not those of a choice ("or", "oder", ...), and
# "but", "while", "whereas", "y", "e" ("y" and "e" are letters in English, "the x *and y*
# axes": a clause split there changes no partner).
_CHOOSING_WORDS = "or oder ou eller veya vagy sau или lub"
_CHOOSING = frozenset(_CHOOSING_WORDS.split())
_CLAUSE_JOINERS = (_LIST_JOINERS - _CHOOSING) | {"but", "while", "whereas"} | {"y", "e"}


def _clause_of_each(one: Statement) -> dict[str, int]:
    """The clause each content word said once in the text stands in, the clauses numbered
    in order: a mark after a word or a joining word (_CLAUSE_JOINERS) starts the next, but
    within a list ("flow, pressure and acoustic data": a clause of one word joins both its
    neighbours)."""
    clauses: list[list[_Token]] = [[]]
    for token in one.tokens:
        if token.lower in _CLAUSE_JOINERS:
            clauses.append([])
            continue
        clauses[-1].append(token)
        if token.pause:
            clauses.append([])
    merged: list[list[_Token]] = []
    lone = False  # the last clause was one word: the next one joins it too
    for clause in clauses:
        if len(clause) == 1 and merged:
            merged[-1].extend(clause)
            lone = True
        elif lone:
            merged[-1].extend(clause)
            lone = False
        else:
            merged.append(list(clause))
    at: dict[str, int] = {}
    twice: set[str] = set()
    for place, clause in enumerate(merged):
        for token in clause:
            if token.norm in one.words:
                if token.norm in at:
                    twice.add(token.norm)
                at[token.norm] = place
    return {word: place for word, place in at.items() if word not in twice}


def _rejections_exchanged(old: Statement, new: Statement) -> bool:
    """Each text rejects a word the other states plainly (rejects_the_other both ways: "the
    user wants raw SQL queries, *not an ORM*" / "... queries written through an ORM, *not raw
    SQL*"): the choice turned round. Not a verb negated ("*Do not run* npm audit fix
    automatically" / "npm audit fix should *never be run* automatically": one rule said
    twice)."""
    return bool(rejected_words(old) & stated_plainly(new)) and bool(
        rejected_words(new) & stated_plainly(old)
    )


def _things(one: Statement) -> set[str]:
    """The text's values and the words it writes in capitals inside a sentence (names)."""
    return set(one.values) | {t.norm for t in one.tokens if t.text[:1].isupper() and not t.first}


# The second rank of a rota or a role, however written ("Vada *secondary*" / "Vada as
# *backup*"), read as one word where two clauses' partners are compared
_SECOND_RANKS = frozenset({"backup", "deputy", "standby"})
# A role said as the one who does it or as the doing ("Pet is the *reviewer*" / "Pet
# *reviews*", "Oskar the *author*" / "Oskar *wrote* it"), read as one word there too
_ROLE_NOUN_VERBS = """
    reviewer:review author:wrote owner:owns maintainer:maintains approver:approves
    tester:tests writer:wrote presenter:presents organiser:organises organizer:organizes"""
_ROLE_AS_VERB = {
    _stem(noun): _stem(verb)
    for noun, verb in (pair.split(":") for pair in _ROLE_NOUN_VERBS.split())
}


# Words of a role one person holds for a thing at a time: who owns it, leads or heads it, or
# is on call for it ("*Ana* owns the authentication service" / "*Ben* owns ..."). Not roles
# several may share (maintainer, reviewer, member).
_ONE_HOLDER_ROLE_WORDS = """
    own owns owned owner ownership lead leads led heads on-call oncall"""
_ONE_HOLDER_ROLES = frozenset(_ONE_HOLDER_ROLE_WORDS.split())


# Words beside a role's word that say one of many ("owns *a* dog", "leads *two* teams", "is
# *a* code owner")
_ANY_OF_MANY = frozenset({"a", "an", "some", "several", "many", "few", "lots", "two", "three"})
# Words of a time that passes: who holds a role "this week" or "the week of 14 July" holds it
# on that occasion, and the next holds it on the next
_ROLE_OCCASIONS = frozenset(
    {"week", "weeks", "weekend", "quarter", "sprint", "month", "today", "tonight", "tomorrow"}
)
# Words that say a role is held with others ("Hamid can *also* approve", "*either*
# approver", "approval *rights*", the *backup* on call)
_SHARED_ROLE = frozenset({"also", "either", "both", "rights", "backup", "secondary", "deputy"})
# How far before its role's word a name stands ("*Ana* owns", "*Ana* is the tech lead")
_ROLE_REACH = 4


def _one_holder_role_at(one: Statement) -> int | None:
    """Where the text says a role of _ONE_HOLDER_ROLES of one thing ("on call" read as one
    word, written in small letters unless it opens the sentence: not "Splunk *On-Call*"),
    with no word of _ANY_OF_MANY or number beside it; None if it says none."""
    tokens = one.tokens
    for at, token in enumerate(tokens):
        word = token.lower
        role = word in _ONE_HOLDER_ROLES or (word == "call" and at and tokens[at - 1].lower == "on")
        start = at - 1 if word == "call" else at
        if not role or not (tokens[start].text.islower() or tokens[start].first):
            continue
        near = [t.lower for t in tokens[max(0, start - 2) : at + 2]]
        if set(near) & _ANY_OF_MANY or any(w[:1].isdigit() for w in near):
            return None
        return at
    return None


def _a_name(token: _Token) -> bool:
    """A word written in capitals that names someone: no word of the sentence's frame, of a
    part or of a holder."""
    text = token.text.replace("-", "")
    return (
        text[:1].isupper()
        and text.isalpha()
        and token.lower not in STOPWORDS
        and token.norm not in _HOLDER_WORDS
        and token.lower not in _ONE_HOLDER_ROLES
        and token.lower not in _PART_WORDS
    )


def _holds_the_role(one: Statement, start: int, end: int) -> bool:
    """The name at tokens[start:end] is who holds the text's role (_one_holder_role_at): it
    stands within _ROLE_REACH words before the role's word ("*Ana* owns ...", "*Ana* is on
    call ..."), or ends the text after it ("The primary on-call for tidegate is *Pilar*",
    "Tech lead of Marten: *Sofia*")."""
    role = _one_holder_role_at(one)
    if role is None:
        return False
    if end <= role:
        return role - end < _ROLE_REACH
    return start > role and end == len(one.tokens)


# The words of each role one person holds for a thing at a time, however said: on call
# ("on-call", "the X pager", "page X for ..."), the owner ("owns", "ownership of", "the
# product owner", "PO", "accountable for"), the lead ("leads", "heads", "the tech lead of",
# "tech-led by", "lead engineer"), someone's manager ("manages", "line manager", "boss";
# "reports to", _ROLE_FAMILY_PHRASES), whom to ask ("go-to"), who approves ("sign-off",
# "approval"; "signs off"), and roles of their own (scrum master, release captain, incident
# commander, editor-in-chief).
_ROLE_FAMILY_WORDS = {
    "on-call": "on-call oncall pager page paged",
    "owner": "owns own owned owner ownership dri po accountable",
    "lead": "lead leads led heads headed tl tech-led tech-lead",
    "manager": "manager manages managed boss",
    "contact": "contact ask go-to goto",
    "approver": "approver approves approved approval sign-off signoff",
    "scrum master": "scrum",
    "captain": "captain",
    "commander": "commander ic",
    "editor": "editor-in-chief eic",
}
_ROLE_FAMILY = {
    word: family for family, words in _ROLE_FAMILY_WORDS.items() for word in words.split()
}
# Two words that name a role's family together, of which neither does alone ("Ada *reports
# to* Ben": Ben is her manager; "Dee *signs off* on releases")
_ROLE_FAMILY_PHRASES = {
    ("reports", "to"): "manager",
    ("report", "to"): "manager",
    ("reporting", "to"): "manager",
    ("signs", "off"): "approver",
    ("sign", "off"): "approver",
    ("signed", "off"): "approver",
    ("on", "call"): "on-call",
}
# Words that say who holds a role without naming the thing or the role ("the analytics
# on-call *engineer*", "the ledger *service*", "this *rotation*", "*the new* owner", the
# *point of* contact, questions *about* a thing), and those of a change of holder ("*took
# over*", "*moved to*", "*handed* to")
_ROLE_FILLER_WORDS = """
    engineer engineers person service services team rotation rota incident incidents new
    current contact responsible tech technical took take takes taken over moved move handed
    hand passed pass now since from to is are was were the a an of for by on this that at
    its point about questions question person line product master chief need needs needed
    one who guy stuff anything"""
_ROLE_FILLERS = frozenset(_ROLE_FILLER_WORDS.split())
# How clauses are told apart for the role's reading: a semicolon, or a sentence's end
_CLAUSE_END = re.compile(r";|(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class RoleHeld:
    """Who holds a role of one holder for a thing, as one clause says it: the role's family
    (_ROLE_FAMILY), the thing's words and the names of who holds it."""

    family: str
    thing: frozenset[str]
    names: frozenset[str]


# One of a rota's members, not the one holder ("Bea is *on the* on-call *rotation* for
# stopwatch")
_ROTA_MEMBER = re.compile(r"\b(?:on|in)\s+(?:the|a|an)\b[^.;]*\brota(?:tion)?s?\b", re.IGNORECASE)


# Words after which a word in capitals names the thing, not who holds its role
_THING_BEFORE = frozenset({"for", "of", "on", "about"})
# What follows someone who holds a role, named first ("Ana *is* ...", "Ana *owns* ...", "Ana
# *took* over ..."; _ROLE_FAMILY's words too)
_HOLDER_NEXT = frozenset(
    {"is", "was", "will", "has", "had", "took", "takes", "now", "and", "can", "should", "must"}
    | {"who", "'s", "handed", *_ROLE_FAMILY}
)


def _whose_approval(token: _Token, after: _Token | None) -> bool:
    """The token is a name's possessive right before an approver's word ("*Isolde's*
    sign-off", "*Isolde's* approval")."""
    if after is None or _ROLE_FAMILY.get(after.lower) != "approver":
        return False
    name = re.sub(r"['\u2019]s?$", "", token.text)
    return name != token.text and name[:1].isupper() and name.isalpha()


def _role_held(clause: str) -> RoleHeld | None:
    """The role one clause says someone holds for a thing (the family of _ROLE_FAMILY it
    names first, one to three names, the thing in at least one word of its own), or None;
    not a role of many (_one_holder_role_at's words beside it), a rota's member or one held
    for a time that passes."""
    if _ROTA_MEMBER.search(clause):
        return None
    one = statement(clause)
    tokens = one.tokens
    lower = [t.lower for t in tokens]
    # (the role named first: "Winifred *owns* the loafpay on-call rotation", "The user's
    # team *lead* is Priya Raman, who ... approves vacation requests")
    phrases = {  # where a phrase of two words names a role's family, and which
        i: family
        for i, pair in enumerate(pairwise(lower))
        if (family := _ROLE_FAMILY_PHRASES.get(pair)) is not None
    }
    families = [
        phrases.get(i) or _ROLE_FAMILY[w]
        for i, w in enumerate(lower)
        if i in phrases or w in _ROLE_FAMILY
    ]
    if not families or set(lower) & (_ROLE_OCCASIONS | _ANY_OF_MANY | _SHARED_ROLE):
        return None
    if any(t.norm in CALENDAR for t in tokens):
        return None  # (held on given days: "on call Monday to Thursday", "in June")
    reports = [i for i, family in phrases.items() if family == "manager"]
    if not all(i > 0 and i + 2 < len(tokens) and _a_name(tokens[i + 2]) for i in reports):
        # (whom someone reports to, named: not "the ovens report to ovenwatch", "the
        # station reports to the SCADA bridge")
        return None
    # (a word that only leads in, "Update: ...", "Correction, ...", is neither; nor are the
    # words of a role's phrase, "reports to")
    phrased = {i + k for i in phrases for k in (0, 1)}
    kept = [
        i
        for i, t in enumerate(tokens)
        if t.lower not in _LEAD_INS and t.lower not in CHANGE_MARKERS and i not in phrased
    ]
    words = [tokens[i] for i in kept]
    if not words:
        return None
    named = [
        (
            _a_name(t)
            and not t.text.isupper()  # (an acronym names a thing: "GPU", "CLI")
            and t.lower not in _ROLE_FAMILY
            and t.lower not in _ROLE_FILLERS
            and t.lower not in _QUESTION_WORDS | {"call"}
            and t.norm not in CALENDAR  # ("on call from *Monday* through *Thursday*")
        )
        # (whose approval it needs: "the release needs *Isolde's* sign-off")
        or (families[0] == "approver" and _whose_approval(t, after))
        for t, after in zip(words, [*words[1:], None], strict=True)
    ]
    follows = kept[0] + 1  # (the word right after it as written: "Isolde *signs* off")
    if (
        named[0]
        and len(words) > 1
        and not (named[1] or follows in phrased or tokens[follows].lower in _HOLDER_NEXT)
    ):
        # a word in capitals because it opens the sentence, not followed as someone who
        # holds a role is: no name ("*Deploys* to prod require approval from the platform
        # team.")
        named[0] = False
    if named[0] and not (len(named) > 1 and named[1]) and sum(named) > 1:
        # a word in capitals because it opens the sentence, beside a name of its own, is
        # the thing ("*Payouts* schema migrations are approved by Kalani."); not a name of
        # two words ("*Ana Lima* owns ...")
        named[0] = False
    for i, before in enumerate(words[:-1]):
        if before.lower in _THING_BEFORE:
            # a word in capitals right after "for", "of", "on" or "about" names the thing
            # ("the product manager for *Onyx*", "the tech lead of *Marten*")
            named[i + 1] = False
    # (a name of two or three words side by side is one: "*Rhea Kapoor* reports to *Daniel
    # Osei*")
    # (side by side: no other word and no mark between them, "*Aiko*: *Priya* took over")
    at = [n for n, name in zip(kept, named, strict=True) if name]
    breaks = accumulate(
        (n != before + 1 or tokens[before].pause for before, n in pairwise([-2, *at])),
        initial=0,
    )
    runs = groupby(zip(at, list(breaks)[1:], strict=True), key=lambda place: place[1])
    spans = [[n for n, _ in run] for _, run in runs]
    groups = [" ".join(tokens[n].norm for n in span) for span in spans]
    subject = next(
        (" ".join(tokens[n].norm for n in span) for span in spans if span[-1] + 1 in reports),
        None,
    )
    named_words = {t.norm for t, name in zip(words, named, strict=True) if name}
    thing = frozenset(
        # (a word of each part of a pair written with a slash: "invoicer/billing")
        part
        for t in words
        for part in ([_stem(p) for p in t.norm.split("/") if p] if "/" in t.norm else [t.norm])
        if t.norm not in named_words
        and t.lower not in _ROLE_FAMILY
        and t.lower not in _ROLE_FILLERS
        and t.norm not in _ROLE_FILLERS
        and t.lower not in STOPWORDS
        and t.lower != "call"
    )
    if subject is not None:
        # who reports to someone is whose manager it is, the thing ("The user's teammate
        # *Maya* reports to Tom.")
        thing, groups = thing | {subject}, [g for g in groups if g != subject]
    elif not thing and named[0]:
        # a word in capitals because it opens the sentence, the thing ("*Billing* ownership
        # moved to Kofi."), or the one whose role it is, someone's ("*Tomás*: my manager is
        # Gulnara")
        thing, groups = frozenset({groups[0]}), groups[1:]
    if not thing or not 1 <= len(groups) <= 3:
        return None
    return RoleHeld(families[0], thing, frozenset(groups))


@lru_cache(maxsize=1024)
def roles_held(text: str) -> tuple[RoleHeld, ...]:
    """Each clause's role held (_role_held), in order (cached, as statement); a chat turn's
    as its speaker says it of themselves (_said_by_speaker)."""
    found = (_role_held(clause) for clause in _clauses(_said_by_speaker(text)))
    return tuple(role for role in found if role is not None)


# "I", "me", "my" of a chat turn's speaker, and "X's" that says "X is" before an article
_FIRST_PERSON = re.compile(r"\b(?:(I'm|I\u2019m|I am|I)|(me)|(my|mine))\b")
_IS_CONTRACTED = re.compile(r"\b([A-Z][^\W\d_]+)['\u2019]s (?=(?:the|a|an|our|my|your|their)\b)")


def _said_by_speaker(text: str) -> str:
    """A chat turn's text as its speaker (a label of one name: "Noor: ...") says it of
    themselves, the label set aside ("Noor: Leocadia is my line manager" as "Leocadia is
    Noor's line manager"; "Gideon: Cormac is the DRI ..." as "Cormac is the DRI ..."); and
    "Fenna's the tech lead" as "Fenna is the tech lead". Other texts as written."""
    text = _IS_CONTRACTED.sub(r"\1 is ", text)
    match = _LABEL.match(text)
    speaker = match.group(1).strip() if match else ""
    if not (speaker[:1].isupper() and speaker.isalpha()) or label(text) is None:
        return text
    if speaker.lower() in _ROLE_FAMILY or speaker.lower() in _ROLE_FILLERS | STOPWORDS:
        return text  # ("Owner: Hamid — stormwatch", "Contact: ...": no speaker)
    said = text[match.end() - 1 :]  # type: ignore[union-attr]

    def as_speaker(found: re.Match[str]) -> str:
        if found.group(1):
            return speaker if found.group(1) == "I" else f"{speaker} is"
        return speaker if found.group(2) else f"{speaker}'s"

    return _FIRST_PERSON.sub(as_speaker, said)


def role_given_to_another(existing: str, new: str) -> str | None:
    """A clause of each text says who holds one role of one holder for the same thing, and
    the two name different people ("The analytics on-call engineer is Nadia." / "Omar took
    over the analytics pager."; "Ownership of ledger moved to Rosa." / "Chen owns the
    ledger service now; Sven moved to auth."): another value of that thing's holder, however
    differently the two say the role. The role's family (_ROLE_FAMILY_WORDS), or None."""
    for old in roles_held(existing):
        for new_ in roles_held(new):
            # (a word in capitals both say is the thing's: "the reeltrim *GPU* cost work")
            common = old.names & new_.names
            if old.family != new_.family or old.thing | common != new_.thing | common:
                continue
            if _another_named(old.names, new_.names) and _another_named(new_.names, old.names):
                return old.family
    return None


def role_restated(existing: str, new: str) -> bool:
    """Each text is one clause that says who holds one role of one holder for a thing, the
    same role of the same thing held by the same people ("Isolde signs off on gradebook
    releases." / "Releases of gradebook need Isolde's sign-off."; "Ada reports to Ben." /
    "Ben is Ada's manager."; "Leilani" is "Leilani Kahale"), neither negated."""
    olds, news = roles_held(existing), roles_held(new)
    if len(olds) != 1 or len(news) != 1 or len(_clauses(existing)) + len(_clauses(new)) != 2:
        return False
    old, new_ = olds[0], news[0]
    if statement(existing).negations or statement(new).negations:
        return False
    return (
        old.family == new_.family
        and old.thing == new_.thing
        and not _another_named(old.names, new_.names)
        and not _another_named(new_.names, old.names)
    )


def role_guarded(pair: Comparison) -> bool:
    """What keeps the role's reading from a pair, as every other reading: a part dropped or
    opened, another statement or speaker, how things were, another occasion, one occasion
    of a habit, a plan and what came of it."""
    return (
        pair.scope_dropped
        or pair.part_opened
        or pair.other_statement
        or pair.history
        or pair.other_occasion
        or pair.one_off
        or pair.plan_done
    )


def role_given_of_one(pair: Comparison) -> bool:
    """Another person in the same role of the same thing (Comparison.role_given), not of
    another subject or holder; but someone's manager, whose thing is whose it is ("*Tomás's*
    line manager" / "*Tomás* reports to Gulnara")."""
    if pair.role_given is None or pair.other_scope:
        return False
    return not pair.other_holder or pair.role_given == "manager"


def _clauses(text: str) -> list[str]:
    """The clauses the role's reading reads apart (_CLAUSE_END)."""
    return [clause for clause in _CLAUSE_END.split(text) if clause.strip()]


def _another_named(names: frozenset[str], others: frozenset[str]) -> bool:
    """One of `names` is none of `others`, not even in part or whole ("Leilani" is
    "Leilani Kahale")."""
    return any(
        not any(
            set(name.split()) <= set(o.split()) or set(o.split()) <= set(name.split())
            for o in others
        )
        for name in names
    )


def role_holder_changed(existing: str, new: str) -> bool:
    """The two texts are one sentence but for a name in place of another, who holds in both a
    role one person holds for a thing at a time (_ONE_HOLDER_ROLES: "*Ana* owns the
    authentication service" / "*Ben* owns the authentication service", "On-call lead for
    billing-ledger: *Yusra Haldane*" / "... *Dmitri Quayle*"): the thing's holder of that role
    changed, a value of the thing, not another holder of a fact of their own. Not a role held
    for a time that passes ("... on call for gatekeeper *this week*": the next week's holder
    is another occasion)."""
    old, new_ = statement(existing), statement(new)
    replaced = one_replacement(existing, new)
    if replaced is None:
        return False
    i1, i2, j1, j2 = replaced
    gone, came = old.tokens[i1:i2], new_.tokens[j1:j2]
    if not (len(gone) <= 3 and len(came) <= 3):
        return False
    if not all(_a_name(token) for token in (*gone, *came)):
        return False
    if any(t.lower in _ROLE_OCCASIONS for t in (*old.tokens, *new_.tokens)):
        return False
    return _holds_the_role(old, i1, i2) and _holds_the_role(new_, j1, j2)


def _ranked(clauses: dict[str, int]) -> dict[str, int]:
    """_clause_of_each with the second rank (_SECOND_RANKS) written as "secondary" and a
    role noun as its verb (_ROLE_AS_VERB); said two ways in one text, it is left out, as
    _clause_of_each leaves out a word said twice."""
    places: dict[str, list[int]] = {}
    for word, at in clauses.items():
        read = "secondary" if word in _SECOND_RANKS else _ROLE_AS_VERB.get(word, word)
        places.setdefault(read, []).append(at)
    return {word: at[0] for word, at in places.items() if len(at) == 1}


def _partners_exchanged(old: Statement, new: Statement) -> bool:
    """Two clauses of one text whose words the other text says crosswise: of each, a thing
    (a value or a name: _things) alone in one of two clauses of the other and a word in the
    other ("*Seun* is the *primary* on-call and *Tomasz* the *secondary*" / "*Tomasz* is *primary*
    on-call, *Seun* *secondary*"; "*Staging* runs on port *8080* and *dev* on *8081*" /
    "*Dev* uses *8080*, *staging* uses *8081*"): the same things with each other's partners.
    Read of the words each text says once; a reworded sentence moves a clause whole, or one
    word of it."""
    first, second = _ranked(_clause_of_each(old)), _ranked(_clause_of_each(new))
    things = _things(old) | _things(new)
    # (the old text's subject, said first, goes with whichever clause names it: "*tilesmith*
    # uses Redis for caching and Postgres for job state" / "Job state for *tilesmith* lives
    # in Redis; caching is in Postgres")
    subject = next((t.norm for t in old.tokens if t.norm in old.words), None)
    things |= {subject} if subject is not None else set()
    cells: dict[tuple[int, int], set[str]] = {}
    for word in first.keys() & second.keys():
        cells.setdefault((first[word], second[word]), set()).add(word)

    def named(*places: tuple[int, int]) -> bool:
        # things alone: a thing that kept a partner of its own moved with it, no exchange
        # ("*Aiko* reviews the *backend* PRs and ..." / "..., and *Aiko* reviews the *backend*
        # ones")
        return all(cells[place] <= things for place in places)

    return any(
        (p, s) in cells
        and (q, r) in cells
        and (q, s) in cells
        and (named((p, r), (q, s)) or named((p, s), (q, r)))
        for p, r in cells
        for q, s in cells
        if p < q and r != s
    )


class SecondReading(Protocol):
    """A reading of a pair after the rules' (dedup_learned.LearnedReading): it returns their
    decision or another."""

    def decide(
        self, similarity: float, existing: str, new: str, pair: Comparison, decision: Decision
    ) -> Decision: ...


@dataclass(frozen=True, slots=True)
class DedupPolicy:
    """When a new memory supersedes its nearest existing one (see the module docstring).

    `threshold`: at or above this similarity a pair that states the same values supersedes.
    `text_rule_from`: None for a plain policy (models nobody calibrated: the threshold, the
    value and relation rules, nothing below the threshold); otherwise the band below the
    threshold where a change marker or every word kept is enough. `named_change_from`: lower
    still, where a change that names the old and new values is enough. `latin_only_model`:
    the model knows English text only (rule 1). `change_from`: lowest of all, where a text
    that says its value changed, replaces a value (or names the old one) and keeps the
    subject's words is kept beside the memory as a conflict (rule 5); nothing else is read
    there. `reworded_from`: within the text rule's band (never below `text_rule_from`), where a
    text that exchanges one word for another and keeps the rest (rewords) supersedes.
    `learned`: a second reading of a pair the rules keep for want of evidence
    (dedup_learned.LearnedReading: a model fitted on the labelled pairs), in `explain`.
    """

    threshold: float
    text_rule_from: float | None = None
    named_change_from: float | None = None
    latin_only_model: bool = False
    labelled_from: float | None = None
    change_from: float | None = None
    reworded_from: float | None = None
    role_from: float | None = None
    learned: SecondReading | None = None

    def __post_init__(self) -> None:
        if self.text_rule_from is not None and self.text_rule_from > self.threshold:
            raise ValueError("text_rule_from must not exceed threshold")
        if self.named_change_from is not None and (
            self.text_rule_from is None or self.named_change_from > self.text_rule_from
        ):
            raise ValueError("named_change_from needs text_rule_from, and must not exceed it")
        if self.reworded_from is not None and self.text_rule_from is None:
            raise ValueError("reworded_from needs text_rule_from")
        if self.change_from is not None and (
            self.text_rule_from is None or self.change_from > self._rules_from
        ):
            raise ValueError(
                "change_from needs text_rule_from, and must not exceed it or named_change_from"
            )
        if self.role_from is not None and (
            self.change_from is None or self.role_from > self.change_from
        ):
            raise ValueError("role_from needs change_from, and must not exceed it")

    @classmethod
    def plain(cls, threshold: float) -> DedupPolicy:
        """For models whose similarities nobody calibrated the bands on."""
        return cls(threshold=threshold)

    @property
    def _rules_from(self) -> float:
        """From here up every rule reads the pair; below it, only a stated change (rule 5)."""
        if self.named_change_from is not None:
            return self.named_change_from
        return self.text_rule_from if self.text_rule_from is not None else self.threshold

    @property
    def considered_from(self) -> float:
        """Below this similarity a pair is distinct: not even a possible duplicate."""
        return self._rules_from if self.change_from is None else self.change_from

    def _read(self, similarity: float, existing: str, new: str) -> bool:
        """Whether the pair is read at all: from `considered_from` up; below it, from
        `role_from`, when each text says who holds a role (roles_held), which
        role_given_to_another may find held by another."""
        if similarity >= self.considered_from:
            return True
        if self.role_from is None or similarity < self.role_from:
            return False
        return bool(roles_held(existing) and roles_held(new))

    @property
    def duplicates_from(self) -> float:
        """From here up, a pair that does not supersede is reported as a possible duplicate."""
        return self.text_rule_from if self.text_rule_from is not None else self.threshold

    def decide(
        self, similarity: float, existing: str, new: str, *, corrects: bool = False
    ) -> Verdict:
        """What to do with the nearest existing memory, given its similarity to the new one.
        `corrects`: the new memory says by itself that it corrects (its source is `corrected`
        or its category `correction`), as a change word would."""
        return self.explain(similarity, existing, new, corrects=corrects).verdict

    def explain(
        self, similarity: float, existing: str, new: str, *, corrects: bool = False
    ) -> Decision:
        if not self._read(similarity, existing, new):
            return Decision("distinct", "not similar")  # no need to read the texts
        pair = _compared(existing, new, corrects)
        decision = self.judge(similarity, pair)
        if self.learned is None:
            return decision
        return self.learned.decide(similarity, existing, new, pair, decision)

    def beside(
        self, similarity: float, existing: str, new: str, *, corrects: bool = False
    ) -> Decision | None:
        """The decision for one of the next nearest memories (after the nearest one, which
        `explain` decides): a conflict or nothing, never a supersession, which is for the
        nearest memory alone. A conflict only when the new text states a change of this
        memory's subject (_states_a_change, said of no other thing: "The *prod* DB listens on
        5433" / "The *test* DB now listens on 5440") and the rules would supersede it or
        keep it as a conflict were it the nearest: the nearest memory was then another
        thing's ("search moved to port 9539" / "*recommendations* moved to port 9539"), and
        this one holds the old value ("The recommendations service listens on port 4607").
        Another value with no change word (a conflict of the nearest memory) is not enough
        here: among the next nearest, it is as often another fact of the same shape; unless
        it is the same named thing at another version (another_version), or another holder
        of the thing's role (role_given_to_another), which name the thing."""
        if not self._read(similarity, existing, new):
            return None
        pair = _compared(existing, new, corrects)
        # (not the object replaced alone, which the nearest memory alone is read for below
        # the band: among the next nearest it links as many other facts as changes; unless
        # the text says nothing but the change of this memory, however it names the new
        # value: "Kofi's login shell is bash." / "Kofi switched his login shell to fish."
        # beside "Bea switched her login shell to fish.", says_only_the_change)
        changed = _states_a_change(pair) or (
            pair.only_the_change and _states_a_change(pair, far=True)
        )
        if pair.said_of_another or not (changed or pair.another_version or pair.role_given):
            return None
        decision = self.judge(similarity, pair)
        if not changed:
            # (but the same named thing at another version, its other words the same: the
            # name says which thing, "Postgres 17.2 is what auth uses now." / "The auth
            # database is on Postgres 13.4 after the upgrade.", another_version; or another
            # holder of the thing's role, said to have changed in other words)
            if pair.role_given and decision.reason == "keeps the subject":
                return Decision("possible_duplicate", "next nearest changed")
            return decision if decision.reason == "different value" else None
        if decision.verdict == "supersede" or decision.reason == "keeps the subject":
            return Decision("possible_duplicate", "next nearest changed")
        # (another holder of the thing's role, however said: the role names the thing)
        return decision if pair.role_given and decision.reason == "different value" else None

    def judge(self, similarity: float, pair: Comparison) -> Decision:
        """The decision for a pair already compared (the benchmark judges each pair under many
        policies with this)."""
        decision = self._judge(similarity, pair)
        if pair.aside is not None and decision.verdict != "supersede":
            # the old text said again, with a number rejected beside it ("alertd listens on
            # port 8443" / "alertd's port is 8443, not 8080"): a rewording of it
            again = self.judge(similarity, pair.aside)
            if again.verdict == "supersede" and again.reason in _AS_REWORDED:
                return again
        if decision.reason in _AS_REWORDED:
            # however close: two values in each other's places, a bound the other way, a
            # list with an item added
            if pair.crosswise:
                return Decision("possible_duplicate", "swapped values")
            if pair.bound_turned:
                return Decision("possible_duplicate", "opposite value")
            if pair.item_added:
                return Decision("possible_duplicate", "different value")
            if pair.way_exchanged:
                return Decision("possible_duplicate", "different phrase")
            if pair.acts_differ and not pair.marked:
                return Decision("possible_duplicate", "another statement")
            if pair.says_more and not (pair.marked or pair.names_the_change):
                return Decision("possible_duplicate", "says more")
            if pair.narrows and not (pair.marked or pair.names_the_change):
                return Decision("possible_duplicate", "narrower statement")
            if pair.tense_differs and not pair.marked:
                return Decision("possible_duplicate", "another occasion")  # was / is
        return decision

    def _judge(self, similarity: float, pair: Comparison) -> Decision:
        decision = self._judge_rules(similarity, pair)
        if (
            not (pair.role_given or pair.role_restated)
            or self.change_from is None
            or decision.verdict == "supersede"
            or similarity < (self.considered_from if self.role_from is None else self.role_from)
        ):
            return decision
        readable = not self.latin_only_model or (
            pair.model_knows_both and pair.same_unknown and not pair.foreign
        )
        if not readable or role_guarded(pair):
            return decision
        if pair.role_restated and decision.reason not in CONFLICT_REASONS:
            # the same holder of the same role of the same thing, said in other words ("Isolde
            # signs off on gradebook releases." / "Releases of gradebook need Isolde's
            # sign-off."; "Ada reports to Ben." / "Ben is Ada's manager."), within the text
            # rule's band: a rewording (whose fact it is, the role's reading names: the
            # holder and subject guards read words, not the role)
            if similarity >= self.duplicates_from and not (pair.marked or pair.tense_differs):
                return Decision("supersede", "same holder")
            return decision
        if not role_given_of_one(pair):
            return decision
        if decision.verdict == "possible_duplicate" and decision.reason in CONFLICT_REASONS:
            return decision  # (read already: "swapped values")
        # who holds one role of the thing, said in other words ("The analytics on-call
        # engineer is Nadia." / "Omar took over the analytics pager."): the new holder when
        # the new text says it changed, within the text rule's band; below it, a stated
        # change kept as a conflict; else another value, a conflict
        if pair.change_word:
            if similarity >= self.duplicates_from:
                return Decision("supersede", "says it changed")
            return Decision("possible_duplicate", "keeps the subject")
        return Decision("possible_duplicate", "different value")

    def _judge_rules(self, similarity: float, pair: Comparison) -> Decision:
        if similarity < self.considered_from:
            return Decision("distinct", "not similar")
        if similarity < self._rules_from:
            return self._stated_change(pair)
        close: Verdict = "possible_duplicate" if similarity >= self.duplicates_from else "distinct"
        if self.latin_only_model:
            if not pair.model_knows_both:
                return Decision("distinct", "unknown to the model")
            if not pair.same_unknown:
                return Decision(close, "unknown to the model")  # differs where it cannot see
            if pair.foreign:
                return Decision(close, "unknown to the model")  # another language
        if pair.other_holder:
            return Decision(close, "different holder")
        if pair.other_scope:
            return Decision(close, "different subject")
        if pair.other_statement:
            return Decision(close, "another statement")
        if pair.one_off or pair.plan_done:  # (a plan and what came of it: two occasions)
            return Decision(close, "another occasion")
        if pair.period_and_duration:  # how often / how long: two attributes
            return Decision(close, "different attribute")
        if pair.other_occasion and (not pair.marked or pair.history or pair.past_and_plan):
            return Decision(close, "another occasion")
        if pair.scope_dropped:
            # said of one part, then of what the speaker means now: another value is kept
            # beside it and linked, the newer first (never a replacement: the part would be
            # lost); the same values, kept, the new one wider
            if pair.changes and self.change_from is not None:
                return Decision("possible_duplicate", "different value")
            return Decision(close, "wider statement")
        if pair.part_opened:
            # said of all, then of one part: both hold, each of its own (a part's value,
            # linked and newer, would outrank what holds of the rest)
            return Decision(close, "narrower statement")
        if pair.opposite and not pair.marked:
            return Decision(close, "opposite value")
        if (pair.swapped or pair.reordered) and not pair.marked:
            return Decision(close, "swapped values")
        if pair.changes and not pair.marked:
            # one value said of the same subject is a conflict; a changed subject ("staging"
            # / "prod", "service A" / "B") or several values are another fact
            if pair.rejected_aside and self.change_from is not None:
                # another value of this subject, whichever number the new text rejects (the
                # numbers rejected aside, however many the two texts reject)
                return Decision("possible_duplicate", "different value")
            if pair.changes > 1:
                if pair.values_after_the_subject and self.change_from is not None:
                    return Decision("possible_duplicate", "different value")
                return Decision(close, "different values")
            if pair.value_after_the_subject and self.change_from is not None:
                # kept as a conflict from change_from up, as in the band below (a close pair
                # under duplicates_from is otherwise not even reported)
                return Decision("possible_duplicate", "different value")
            if pair.another_version and self.change_from is not None:
                # the name says which thing, wherever the version stands
                return Decision("possible_duplicate", "different value")
            if pair.role_holder_changed and self.change_from is not None:
                # who owns, leads or is on call for the thing: one at a time
                return Decision("possible_duplicate", "different value")
            # (another tool beside the first, "uses Node 20" / "uses Redis 7": both may hold)
            if (
                pair.modifier_swapped
                or pair.said_of_another
                or pair.another_tool
                or not pair.changed_late
            ):
                return Decision(close, "different subject")
            return Decision(close, "different value")
        # a correction changes one value ("service A, 9001" / "B, 9002 now" is another fact),
        # or up to three with a word that says the value changed ("moved to Wednesdays at 3pm")
        # (any change word, when the values all come after the same subject words: "Reporting
        # DB is *now* Postgres 16 on a t3.large")
        several = 3 if pair.strong_change or pair.values_after_the_subject else 1
        if pair.changes > several:
            return Decision(close, "different values")
        if pair.phrase_replaced and not pair.marked:
            return Decision(close, "different phrase")
        if pair.history:
            # how things were, said beside how they are: no change of them ("The user writes
            # tests first" / "At their previous job, the user *used to* write tests first")
            return Decision(close, "another occasion")
        if pair.labelled and self.labelled_from is not None and similarity < self.labelled_from:
            # chat turns of one speaker: similar topics, often not the same fact
            if pair.names_the_change:
                return Decision("supersede", "names the change")
            return Decision(close, "not enough evidence")
        # a text that says it changed is a correction however similar, and says so; unless
        # the change is said of another thing of the same kind ("The *production* API moved
        # to Node 22" / "The *staging* API was upgraded to Node 22")
        if similarity >= self.duplicates_from and pair.marked and pair.change_word:
            if pair.modifier_swapped or pair.another_numbered:  # (of another of the series)
                return Decision(close, "different subject")
            if pair.still_holds:  # another attribute changed; this one, it says, holds
                return Decision(close, "different attribute")
            if pair.during:  # it changed for a while; what the old text says holds
                return Decision(close, "another occasion")
            if pair.two_events:  # "rotated the key" / "revoked the old key": no state
                return Decision(close, "another occasion")
            # "..., not 68" of a memory that never said 68 (but a change of this one's
            # subject all the same: "moved to port 5433, not 5434 as the wiki says")
            if pair.corrects_another and not pair.rejected_aside:
                return Decision(close, "different subject")
            if pair.way_exchanged:  # the only word changed is the "change": "rounds *up* to"
                return Decision(close, "different phrase")  # / "rounds *down* to"
            return Decision("supersede", "says it changed")
        readable = pair.english or not self.latin_only_model
        if (
            similarity >= self.threshold
            and readable
            and not (pair.says_less or pair.extends_a_name or pair.narrows)
        ):
            # the similarity alone: of text the model reads, losing no value, negation or words
            return Decision("supersede", "similar")
        in_band = self.text_rule_from is not None and similarity >= self.text_rule_from
        # in a language the rule cannot read ("nicht" is no negation to it), every word kept
        # is evidence only when no word was added either, and none moved (it cannot tell
        # two names exchanged in a Chinese text: "Teodor 主值班 Astrid 副值班" / "Astrid 主值班
        # Teodor 副值班"), nor changed in form (its stems are not its grammar: "Henrik
        # *werkte* aan ..." / "Henrik *werkt* aan ...", the past and the present)
        readable = readable or (pair.same_words and pair.same_order and pair.same_written)
        if in_band and pair.restates and readable:
            return Decision("supersede", "keeps every word")
        # (never below the text rule's band: a lower threshold leaves reworded_from as it is)
        reworded_band = self.reworded_from is not None and similarity >= self.reworded_from
        if in_band and reworded_band and pair.reworded and readable:
            return Decision("supersede", "reworded")
        # the same values and terms in other words (not two chat turns of one speaker, whose
        # values recur in other facts); under the rewording band with at most one word added
        # or dropped, and not said by a speaker against no one ("Max upload size on Fennel is
        # 25 MB" / "Fennel caps uploads at 25 megabytes")
        terse = pair.words_changed <= TERSE_WORDS_CHANGED and not pair.one_speaker
        plain = pair.english and not pair.labelled
        if in_band and pair.same_values and plain and (reworded_band or terse):
            return Decision("supersede", "same values")
        # a value negated of another thing of the same kind is no change of it ("The *admin
        # panel* requires 2FA" / "The *customer portal* does not require 2FA")
        if pair.names_the_change and not (
            pair.changes and (pair.said_of_another or pair.modifier_swapped)
        ):
            return Decision("supersede", "names the change")
        # (below duplicates_from, as in the band below: the object replaced too)
        far = similarity < self.duplicates_from
        if self.change_from is not None and _states_a_change(pair, far=far):
            if pair.only_the_change:
                return Decision("supersede", "says it changed")
            return Decision("possible_duplicate", "keeps the subject")
        if pair.narrows and similarity >= self.duplicates_from:
            return Decision(close, "narrower statement")  # said why: of a part only
        return Decision(close, "not enough evidence")

    def _stated_change(self, pair: Comparison) -> Decision:
        """Below the other rules' band (from `change_from`): only a stated change of the same
        subject (_states_a_change) or one value after the same subject words in place of
        another (Comparison.value_after_the_subject), with the guards of script, holder, statement
        and speaker as above, is kept beside the memory as a conflict; anything else here is
        distinct, as no other rule reads a pair this far apart."""
        readable = not self.latin_only_model or (
            pair.model_knows_both and pair.same_unknown and not pair.foreign
        )
        if not readable or pair.other_holder or pair.other_statement or pair.labelled:
            return Decision("distinct", "not similar")
        if pair.other_scope or pair.scope_dropped or pair.part_opened:
            return Decision("distinct", "not similar")
        if pair.history or pair.period_and_duration:  # how things were; another attribute
            return Decision("distinct", "not similar")
        if _states_a_change(pair, far=True):
            if pair.only_the_change:  # the subject, a change word and the new value alone
                return Decision("supersede", "says it changed")
            return Decision("possible_duplicate", "keeps the subject")
        if pair.value_after_the_subject:
            return Decision("possible_duplicate", "different value")
        return Decision("distinct", "not similar")


_PAST_MARKERS = frozenset({"used to", "formerly", "previously"})


def replaces_the_object(existing: str, new: str) -> bool:
    """The new text has a change word the old one lacks, and one subject word of its own
    (_subject_words), after that change word, in place of one or two of the old text's:
    the thing it changed to ("The user formats gateway code with *prettier*" / "For gateway,
    the user switched to *yapf* for formatting"; "Tests run with *jest*" / "We migrated the
    tests to *vitest*"), a tool's name in lower case being no value to the rule. The two
    keep at least half of their other subject words, share no value nor word in capitals
    (the same value said again is no change of it: "Cron jobs are scheduled in *UTC*" /
    "Updated: the cron scheduler uses *UTC*") and open with the same label or none."""
    old, new_ = statement(existing), statement(new)
    # (not a word that tells how things were: what follows "used to" is the old value)
    added = new_.markers - old.markers - _PAST_MARKERS
    if not added or label(existing) != label(new):
        return False
    if (old.values | _acronyms(old)) & (new_.values | _acronyms(new_)):
        return False
    subject, other = _subject_words(old), _subject_words(new_)
    gained, lost = other - subject, subject - other
    if len(gained) != 1 or not 1 <= len(lost) <= 2:
        return False
    kept = subject & other
    if not kept or 2 * len(kept) < max(len(subject), len(other)) - 1:
        return False
    (word,) = gained
    lower = [t.lower for t in new_.tokens]
    # (a word the subject reading adds of its own, "unit:size", is written nowhere)
    at = next((i for i, t in enumerate(new_.tokens) if t.norm == word), None)
    if at is None:
        return False
    # a change word of its own before it, alone or opening a phrase ("*took over*")
    return any(lower[i] in added or " ".join(lower[i : i + 2]) in added for i in range(at))


def _opening_name(one: Statement) -> str | None:
    """The text's first word when it may be a name ("*Lena* owns the search service"): one
    word in capitals, not a stopword; the value reading leaves every first word out, as any
    word opens a sentence in capitals."""
    first = one.tokens[0] if one.tokens else None
    if first is None or not (first.text.isalpha() and first.text[1:].islower()):
        return None
    if not first.text[:1].isupper() or first.norm in STOPWORDS or first.lower in STOPWORDS:
        return None
    return first.norm


def replaces_an_opening_name(existing: str, new: str) -> bool:
    """The old text opens with a name the new one does not have, and the new one gains a
    name the old one does not ("*Lena* owns the search service" / "The search service is now
    owned by *Kofi*"): a person replaced in another sentence order."""
    old, new_ = statement(existing), statement(new)
    name = _opening_name(old)
    if name is None or name in new_.words:
        return False
    if any(_kind(value) == "name" for value in old.values & new_.words):
        return False  # another name of the old text is kept: the first word was none
    # a name inside the new text: its first word may be anything in capitals ("*Prod* now
    # runs on ...")
    gained = new_.values - old.words
    return any(_kind(value) == "name" and " " not in value for value in gained)


# Words with which a clause says that a value is as it was ("auth is *still* JWT", "host and
# user are *unchanged*"); not "stays", which states a rule as often ("PRs should *stay* below
# 400 lines").
_STILL = frozenset({"still", "remains", "remain", "unchanged", "unaffected", "untouched"})
# ... of them, those that say it without a value ("TTL *unchanged*")
_AS_IT_WAS = frozenset({"unchanged", "unaffected", "untouched"})


def _token_clauses(tokens: Sequence[_Token]) -> list[list[_Token]]:
    """The tokens cut into clauses where _opens_clause says one begins."""
    parts: list[list[_Token]] = []
    for i, token in enumerate(tokens):
        if not parts or _opens_clause(tokens, i):
            parts.append([])
        parts[-1].append(token)
    return parts


def changed_during(existing: str, new: str) -> bool:
    """The new text says a change of one occasion: "during" and a word the old text does not
    have ("Cache hit rate ... *dropped* to 60% *during the Black Friday sale*", "The status
    page *was updated* at 14:05 *during yesterday's outage*"), which the old one does not
    say: what the old text states held before and holds after."""
    old, new_ = statement(existing), statement(new)
    if "during" in {token.lower for token in old.tokens}:
        return False
    for i, token in enumerate(new_.tokens):
        if token.lower == "during":
            following = [t for t in new_.tokens[i + 1 : i + 5] if t.norm in new_.words]
            if not following or following[0].norm in old.words:
                return False
            # "during Q3", "during March": when the change was made, not an occasion
            return not _anchors_of(following[:1]) and not re.fullmatch(
                r"q[1-4]", following[0].lower
            )
    return False


def still_holds(existing: str, new: str) -> bool:
    """The new text changes another attribute and says in a clause of its own that what the
    old text states still holds ("The Heron API uses JWT auth" / "The Heron API switched its
    response format to JSON:API; auth is *still* JWT"; "Osprey tests run on Node 18" /
    "Switched Osprey CI from Jenkins to GitHub Actions; the test job *still* uses Node 18"):
    every value of the old text is in the new one, at least one word of the old text is in
    that clause and not in the others, and none is named as the old value in the others
    ("changed *from /status* to /healthz, still every 10 seconds", "built with Astro, *not
    Gatsby* anymore, and still deploys from main"). A value changed beside
    it ("moved to db-staging-*03*; the port is still 5432") is a correction as before."""
    old, new_ = statement(existing), statement(new)
    if not _STILL & {token.lower for token in new_.tokens}:
        return False
    parts = _token_clauses(new_.tokens)
    kept = [part for part in parts if any(token.lower in _STILL for token in part)]
    changed = [part for part in parts if not any(token.lower in _STILL for token in part)]
    if not changed:
        return False
    # every old value said again, or a clause that names the attribute as unchanged without
    # a value of its own ("... moved to a new cluster; *TTL unchanged*")
    as_it_was = any(
        {token.lower for token in part} & _AS_IT_WAS and not _values(list(part)) for part in kept
    )
    # (and no other clause giving a value of its own: "pool size was changed to *40*; host
    # and user are unchanged" corrects the pool size)
    gained = {value for part in changed for value in _values(list(part))} - old.values
    if not (old.values <= new_.words or (as_it_was and not gained)):
        return False
    still = {token.norm for part in kept for token in part}
    elsewhere = {token.norm for part in changed for token in part}
    # an old word the other clauses name as the value changed from: negated ("*not Gatsby*
    # anymore", "instead of", "no longer": Statement.negated) or after "from", ...
    named = (new_.negated & elsewhere) | {
        token.norm for part in changed for token in _named_as_old(part)
    }
    if old.words & named:
        return False
    return bool((old.words & still) - elsewhere)


# Words after which a clause names the value it changed from, up to the value it changed to
# ("*from* /status *to* /healthz"); a negation names one too (Statement.negated).
_OLD_VALUE_AFTER = frozenset({"from", "off", "replacing", "replaced"})
_NEW_VALUE_AFTER = frozenset({"to", "into", "with", "by", "for"})


def _named_as_old(part: Sequence[_Token]) -> list[_Token]:
    """The tokens of a clause after a word of _OLD_VALUE_AFTER, up to one of
    _NEW_VALUE_AFTER ("from */status* to /healthz")."""
    named: list[_Token] = []
    naming = False
    for token in part:
        if token.lower in _NEW_VALUE_AFTER:
            naming = False
        elif naming:
            named.append(token)
        naming = naming or token.lower in _OLD_VALUE_AFTER
    return named


def _compared(existing: str, new: str, corrects: bool) -> Comparison:
    """The pair compared; `corrects`: the new memory says by itself that it corrects (its
    source is `corrected` or its category `correction`), as a change word would: of the one
    value the rule reads as changed of the same subject (a conflict's reasons:
    CONFLICT_REASONS); one that changes nothing the rule reads ("Never push directly to main"
    / "Never force-push to main") or changes what the text is about ("Nadia owns *payments*"
    / "Farah owns *webhooks*") is no evidence; otherwise the other guards (another subject,
    occasion, value) still hold."""
    pair = compare(existing, new)
    if not corrects:
        return pair
    says_what = pair.one_value_of_one_subject
    return replace(pair, marked=pair.marked or says_what, change_word=pair.change_word or says_what)


def says_only_the_change(existing: str, new: str) -> bool:
    """The new text says nothing but the old one's subject, a word that says it changed and
    the new value ("Bea's login shell is zsh." / "Bea switched her login shell to fish.",
    "Issue tracking is in Jira." / "Issue tracking moved to Linear."): no content word of
    its own besides its values and change words (a name or a word in lower case in the
    place of the old one's counts as a value: _names_in_place, _word_in_place; so do the
    words of a value of several words), no word of the old text dropped before a
    noun both keep ("the project uses Vitest for *unit* tests" / "... switched its e2e
    tests ..."), and the old text not told in the past ("The user's onboarding buddy
    *was* Lena" / "The user is now the onboarding buddy for Tom": what was, not a value
    now)."""
    old, new_ = statement(existing), statement(new)
    if _past_told(old):
        return False
    written = {token.norm for token in new_.tokens}
    changing = {_stem(word) for marker in new_.markers for word in marker.split()}
    added = new_.words - old.words - new_.values - changing - _NO_DETAIL
    added -= _names_in_place(old, new_, existing, new, changing)
    # (the words of a value are the value: "Azure Service Bus")
    added -= {word for value in new_.values for word in value.split()}
    added -= _word_in_place(old, new_, added, changing)
    # (a word only inside a value is part of it: "worker-prod" has no word "worker")
    if any(word in written or not any(word in value for value in new_.values) for word in added):
        return False
    kept = {token.norm for token in old.tokens} & written
    return not any(
        _plain_slot(modifier)
        and modifier.norm not in written | _NO_DETAIL
        and _plain_slot(noun)
        and noun.norm in kept
        for modifier, noun in pairwise(old.tokens)
    )


def _word_in_place(old: Statement, new: Statement, added: Set[str], changing: Set[str]) -> set[str]:
    """The one word of its own `new` says after its change word, as its last word, when
    `old` says one word it lacks as its last ("Bea's login shell is *zsh*." / "Bea switched
    her login shell to *fish*."): the value, though a tool or a shell is written in lower
    case and read as a word; not a word before another value ("The user's terminal
    *emulator* is WezTerm." / "The user switched the terminal *font* to JetBrains Mono.")."""
    if len(added) != 1:
        return set()
    content = [t for t in old.tokens if _plain_slot(t) and t.norm not in _NO_DETAIL]
    gone = {t.norm for t in content} - {t.norm for t in new.tokens}
    if len(gone) != 1 or _last_said(old) not in gone:
        return set()
    (word,) = added
    norms = [t.norm for t in new.tokens]
    changed = [i for i, norm in enumerate(norms) if norm in changing]
    if not changed or _last_said(new) != word or norms.index(word) < changed[0]:
        return set()
    return {word}


def _last_said(one: Statement) -> str | None:
    """The norm of the text's last token that is no stopword, a value or a word ("... is
    *zsh*.")."""
    said = [t.norm for t in one.tokens if t.norm not in STOPWORDS]
    return said[-1] if said else None


def _names_in_place(
    old: Statement, new: Statement, existing: str, new_text: str, changing: Set[str]
) -> set[str]:
    """The names `new` writes in the place of one of `old`'s, one capitalised word for
    another ("*Yusra* is the tech lead" / "Update: *Henrike* is the tech lead"): the new
    value, though a name that opens a sentence is read as a word; none when another value
    of `old` is gone ("*Maya* is the release manager for *v4*" / "*Jun* took over as
    release manager for *v5*": two values)."""
    names: set[str] = set()
    replaced: set[str] = set()
    opcodes, _ = alignment(existing, new_text)
    for operation, i1, i2, j1, j2 in opcodes:
        if operation != "replace":
            continue
        gone = [t for t in old.tokens[i1:i2] if t.norm not in STOPWORDS | changing]
        came = [t for t in new.tokens[j1:j2] if t.norm not in STOPWORDS | changing]
        if (
            len(gone) == len(came) == 1
            and gone[0].text[:1].isupper()
            and came[0].text[:1].isupper()
        ):
            names.add(came[0].norm)
            replaced.add(gone[0].norm)
    if any(not any(name in value for name in replaced) for value in old.values - new.values):
        return set()
    return names


def _states_a_change(pair: Comparison, *, far: bool = False) -> bool:
    """The new text says that a value changed, replaces one value (up to three with a word
    that only says a change) or names the old one, and keeps the subject's words (rule 5), a
    thing of the same kind not swapped for another (swaps_a_modifier);
    `far` (below the text rules' band), also when it puts one word of its own after its
    change word in place of one or two of the old text's, the same values and subject
    words kept besides (replaces_the_object: "The user formats gateway code with
    *prettier*" / "For gateway, the user switched to *yapf* for formatting", 0.58)."""
    if pair.modifier_swapped:  # said of another thing of the same kind
        return False
    if pair.still_holds or pair.corrects_another:  # another attribute's, or memory's
        return False
    if far and pair.marked and pair.change_word and not pair.changes and pair.object_replaced:
        return True
    return (
        pair.marked
        and pair.change_word
        and pair.keeps_subject
        and bool(pair.changes or pair.names_the_change or pair.opening_name_replaced)
        and pair.changes <= (3 if pair.strong_change else 1)
    )
