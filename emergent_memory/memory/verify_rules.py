"""verify_memory's rules: what a memory is to a claim (confirms, conflicts, related) and the
verdict of the candidates, from save's duplicate rules and calibrated similarity bands.

The rules (`VerifyPolicy.relation`) read each candidate with save's duplicate rules
(memory/dedup.py's `compare`: values, holders, modifiers, change words) plus two of their own
that dedup leaves to supersession (two values of one setting, "tabs" / "spaces", and a
negated clause one text has and the other not, as dedup counts them), then the similarity bands
calibrated on benchmarks/data/verify_claims.json (benchmarks/verify.py; the thresholds are in
emergent_memory/app.py, per embedding model):

1. below `related_from` a memory is not about the claim's subject, unless from
   `shared_word_from` it shares a content word with the claim that no other candidate has
   (verify_features.common_words; not GENERIC_WORDS, "prefer", "use", ...): then it is related;
2. another holder ("the user" / "the user's manager") or another subject of the same kind (a
   modifier swapped before the same noun: "the *staging* database" / "the *production*
   database") is related, never a confirmation or a conflict;
3. a changed value, the other value of a setting, the same values in swapped places, or a
   negation one side has (verify_features.says_no: "not forbidden" permits) conflicts from
   `confirm_from`, and from `conflict_from` when the two keep at least `conflict_frame` of
   the longer one's words in order; so does, from `conflict_from` whatever the frame, a
   difference between a claim clause and the memory clause about the same thing
   (verify_features.clause_difference; with vectors only), and such a pair never confirms;
   so does, from `related_from`, one part of a longer memory restated with another number
   beside the same word; and each kind of difference (DIFFERENCE_KINDS) conflicts from its
   own threshold (`conflict_from_kind`, never below `related_from`, with vectors only;
   fitted by benchmarks/verify.py); a negation the claim has and the memory not (or a claim
   that says "still" of what the memory says ended) conflicts from `denies_from`, below
   `related_from` too; docs/memory.md ("How it decides") gives examples of each;
4. from `confirm_from` (or `keeps_words_from` when one text keeps every content word of the
   other), the same values confirm when the words show it (verify_features.restated),
   unless an opposite (VERIFY_OPPOSITES) stands in one text where the other has its pair:
   that conflicts from `conflict_from`, else is related; as close without such words is
   related (the model puts "spike" and "drop off" as close as two wordings of one fact);
5. anything else at or above `related_from` is related.

The verdict follows the closest memory that confirms or conflicts (a claim both confirmed and
contradicted takes the closer one's answer); else related when any memory is; else new.

With no vectors (the embedder is down), similarities are replaced by the share of content
words the texts have in common (`word_similarity`), judged with the `*_words` thresholds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from emergent_memory.memory import dedup, verify_features
from emergent_memory.memory.verify_features import GENERIC_WORDS, VERIFY_OPPOSITES, part_difference
from emergent_memory.memory.verify_result import Relation as Relation
from emergent_memory.memory.verify_result import Verdict as Verdict


@dataclass(frozen=True, slots=True)
class VerifyPolicy:
    """The similarity bands of the rules (see the module docstring), for one embedding model.

    `judge_bands`: the best candidate's similarity bands (from, below) in which the LLM judge
    (when configured) decides; none: never. The `*_words` thresholds replace the similarity
    ones when there are no vectors (the share of content words in common, Dice; they read no
    model, and their defaults were chosen on the labelled set's calibration split like the
    others, benchmarks/verify.py)."""

    related_from: float
    conflict_from: float
    confirm_from: float
    keeps_words_from: float
    shared_word_from: float = 1.0
    conflict_frame: float = 0.0
    judge_bands: tuple[tuple[float, float], ...] = ()
    related_from_words: float = 0.25
    conflict_from_words: float = 0.5
    confirm_from_words: float = 0.6
    # (kind, from): a difference of this kind (DIFFERENCE_KINDS) conflicts from this similarity
    # whatever the frame, with vectors; fitted on the development sets (calibrate_kinds)
    conflict_from_kind: tuple[tuple[str, float], ...] = ()
    # a claim that negates what the memory states (PairFeatures.claim_denies) conflicts from
    # this similarity, below `related_from` too; chosen on the spent held-out sets' replay
    # (benchmarks/README.md, section 10)
    denies_from: float = 1.0
    # a model fitted for this embedding model's similarities (memory/verify_learned.py), the
    # name of its file beside that module; empty: the rules alone
    learned_confirmation: str = ""

    def __post_init__(self) -> None:
        if not self.related_from <= min(self.conflict_from, self.keeps_words_from):
            raise ValueError("related_from must not exceed the other thresholds")
        if self.keeps_words_from > self.confirm_from:
            raise ValueError("keeps_words_from must not exceed confirm_from")
        if any(low >= high for low, high in self.judge_bands):
            raise ValueError("each judge band must go from a lower to a higher similarity")
        unknown = {kind for kind, _ in self.conflict_from_kind} - set(DIFFERENCE_KINDS)
        if unknown:
            raise ValueError(f"unknown difference kinds: {', '.join(sorted(unknown))}")

    def relation(
        self, similarity: float, memory: str, claim: str, *, words_only: bool = False
    ) -> tuple[Relation | None, str]:
        """What the memory is to the claim, and why; None when it is not about its subject.
        `words_only`: `similarity` is the share of words in common (no vectors)."""
        return self.judge(similarity, read_pair(memory, claim), words_only=words_only)

    def judge(
        self, similarity: float, features: PairFeatures, *, words_only: bool = False
    ) -> tuple[Relation | None, str]:
        """`relation` for a pair already read (the benchmark judges pairs with this)."""
        if words_only:
            related_from, conflict_from = self.related_from_words, self.conflict_from_words
            confirm_from, keeps_from = self.confirm_from_words, self.conflict_from_words
        else:
            related_from, conflict_from = self.related_from, self.conflict_from
            confirm_from, keeps_from = self.confirm_from, self.keeps_words_from
        if similarity < min(related_from, self.shared_word_from):
            return None, "not about the same subject"
        kind = features.difference_kind
        kind_from = dict(self.conflict_from_kind).get(kind or "")
        if (
            kind_from is not None
            and similarity >= max(kind_from, related_from)  # about the claim's subject
            and not words_only
            and not (features.other_holder or features.other_subject)
        ):
            if kind == "value" and features.part_difference is not None:
                return "conflicts", f"{_PART} {features.part_difference}"  # beside its word
            return "conflicts", features.difference or features.clause_difference or kind or ""
        if (
            features.in_place
            and similarity >= related_from
            and not (words_only or features.other_holder)
        ):
            # another value after the same subject words, however far apart the model puts
            # the two values ("Noor's manager is Callum *Reid*" / "*Reyes*")
            return "conflicts", features.difference or "another value for the same subject"
        if features.role_given and not words_only:
            # another person in a role one person holds for the same thing, however the
            # two say the role ("Omar is on call for analytics" / "The analytics on-call
            # engineer is Nadia"): the thing's words are in both, so from where a pair
            # shares the subject's words at all (save reads it from its role_from)
            return "conflicts", "another person holds the same role"
        if (
            features.claim_denies
            and features.english
            and not words_only
            and similarity >= self.denies_from
        ):
            # below the subject's threshold too: a claim that says no to what a memory
            # states of the same words contradicts it ("The build doesn't use ccache" / "CI
            # caches compiled objects with ccache between runs")
            return "conflicts", features.difference or ""
        if features.word_for_word and not words_only:
            # whatever the similarity: a long memory is far from a claim of one of its parts
            return "confirms", "one clause of the memory states it word for word"
        if features.same_holder and features.english and not words_only:
            # the same person in the same role of the same thing, said in other words
            # ("Isolde signs off on dockd releases" / "dockd releases need Isolde's sign-off")
            return "confirms", "the same person holds the same role"
        if similarity < related_from:
            if words_only or not features.shared_words:
                return None, "not about the same subject"
            shared = ", ".join(features.shared_words[:3])
            return "related", f"shares the subject's words ({shared})"
        if features.other_holder:
            return "related", "about someone else (another holder)"
        if features.other_subject:
            return "related", "about another thing of the same kind"
        part = features.part_difference
        difference = features.difference
        if difference is not None:
            if similarity >= conflict_from and (
                features.frame >= self.conflict_frame or similarity >= confirm_from
            ):
                return "conflicts", difference
            if part is not None and not words_only:
                return "conflicts", f"{_PART} {part}"
            return "related", f"same subject, not close enough to conflict ({difference})"
        clause = features.clause_difference
        if clause is not None:
            if similarity >= conflict_from and not words_only:
                return "conflicts", clause
            if part is None or words_only:
                return "related", f"same subject, not close enough to conflict ({clause})"
        if part is not None and not words_only and similarity < confirm_from:
            return "conflicts", f"{_PART} {part}"
        close = similarity >= confirm_from or (similarity >= keeps_from and features.keeps_words)
        if close and not (features.english or words_only):
            return "related", "close, but in a language the model does not read"
        if close and features.opposite_word is not None:  # the opposite said never confirms
            difference = f"the other value of one setting: {features.opposite_word}"
            return ("conflicts" if similarity >= conflict_from else "related"), difference
        if similarity >= confirm_from and features.restated:
            return "confirms", "states the same values"
        if similarity >= confirm_from:  # every word kept is no evidence this close (section 10)
            return "related", "close, but its words do not show the same fact: read it"
        if similarity >= keeps_from and features.keeps_words:
            return "confirms", "one text keeps every content word of the other"
        return "related", "same subject, neither confirmed nor contradicted"

    def in_judge_band(self, similarity: float | None) -> bool:
        """Whether the best candidate's similarity is where the LLM judge decides."""
        if similarity is None:
            return False
        return any(low <= similarity < high for low, high in self.judge_bands)


_PART = "one part of the memory gives another value:"


@dataclass(frozen=True, slots=True)
class PairFeatures:
    """What the rules read of a (memory, claim) pair."""

    other_holder: bool
    other_subject: bool  # one modifier swapped before the same noun, nothing else changed
    difference: str | None  # the changed value, opposite setting or negation, in words
    keeps_words: bool  # one text keeps every content word of the other
    frame: float  # the share of the longer text's words kept in order by the other
    shared_words: tuple[str, ...]  # content words both have (but GENERIC_WORDS)
    # another value beside the same word in one part of the memory ("PostgreSQL *14*" /
    # "PostgreSQL *16*", "every *30* days" / "every *60* days"), in words
    part_difference: str | None = None
    # a difference between a claim clause and the memory clause about the same thing, in words
    clause_difference: str | None = None
    # what `difference` (or else `clause_difference`) is, of DIFFERENCE_KINDS
    difference_kind: str | None = None
    # the same subject words in both, another value after them (dedup.same_subject_words)
    in_place: bool = False
    word_for_word: bool = False  # verify_features.stated_word_for_word
    english: bool = True  # both read as English (dedup.reads_english)
    # an opposite (VERIFY_OPPOSITES) in the two, one word in each ("*last*" / "*first*")
    opposite_word: str | None = None
    restated: bool = True  # dedup's rewording rules, read only where the rules may confirm
    # the claim says no to what the memory states (a negation the claim has, the memory not),
    # or still of what the memory says ended (verify_features.ended_in_memory)
    claim_denies: bool = False
    # who holds a role of one holder for the same thing: another person (save's
    # dedup.role_given_to_another), or the same said in other words (dedup.role_restated)
    role_given: bool = False
    same_holder: bool = False


# The kinds of difference the rules read: another value for the same subject, the same
# values in swapped places (or numbers said of each other's things), the other value of one
# setting ("tabs" / "spaces"), a value one text rejects that the other states ("pnpm over
# npm" / "npm"), a negation one side has, and a difference between clauses about one thing.
DIFFERENCE_KINDS = ("value", "exchange", "opposite", "rejected", "negation", "clause")


def read_pair(memory: str, claim: str) -> PairFeatures:
    """The pair's features, from dedup.compare (the memory as the existing text, the claim as
    the new one) and the verify-only ones (opposites, negation)."""
    memory, claim = dedup.values_as_the_other(memory, claim)  # "2,000 kB" as "2 MB", "75%"
    compared = dedup.compare(memory, claim)
    old, new = dedup.statement(memory), dedup.statement(claim)
    keeps = dedup.keeps_every_word(memory, claim) or dedup.keeps_every_word(claim, memory)
    # a negator is no word of its own: keeping every word says the same only if both negate
    # the same words ("Marta isn't vegetarian" / "Marta is vegetarian and doesn't eat fish")
    keeps = keeps and dedup.negated_words(memory) == dedup.negated_words(claim)
    # another thing of the same kind, or the other direction of one exchange ("returns" /
    # "accepts", "reads" / "writes": dedup.changes_direction)
    other_subject = (compared.changes == 1 and compared.modifier_swapped) or (
        dedup.changes_direction(memory, claim)
    )
    difference: str | None = None
    kind: str | None = None
    denies = False  # the negation is the claim's (or it says still of what ended)
    # (a pattern's parts in another order: "rel-<year>-<build>" / "rel-<build>-<year>")
    reordered = dedup._parts_reordered(memory, claim) if compared.changes == 1 else None
    if reordered is not None and not other_subject:
        kind = "exchange"
        difference = f"the same values in swapped places: {reordered[0]} / {reordered[1]}"
    elif compared.changes and not other_subject:
        kind = "value"
        lost = _readable(old.values - new.words - new.values, old)
        gained = _readable(new.values - old.words - old.values, new)
        if lost and gained:
            difference = f"another value: {', '.join(lost)} / {', '.join(gained)}"
        else:
            difference = "another value for the same subject"
    else:
        opposite = verify_features.setting_exchanged(memory, claim)
        rejected = verify_features.rejected(memory, claim)
        exchanged = compared.swapped
        if exchanged is not None:
            kind = "exchange"
            difference = f"the same values in swapped places: {exchanged[0]} / {exchanged[1]}"
        elif opposite is not None:
            kind, difference = "opposite", f"the other value of one setting: {opposite}"
        elif rejected is not None:
            kind, difference = "rejected", rejected
        elif verify_features.negates_the_other(old, new):
            kind = "negation"
            # a clause saying no on one side only, holding the other's words (dedup's count:
            # "not only" and two in one clause are none), not save's negating_side
            denies = verify_features.says_no(new)
            one = "the claim" if denies else "the memory"
            difference = f"{one} negates what the other states"
        elif (numbers := verify_features.exchanged_in_place(memory, claim)) is not None:
            kind, difference = "exchange", f"the same values in swapped places: {numbers}"
        elif (by_memory := verify_features.rejected_by_memory(memory, claim)) is not None:
            kind, difference = "rejected", by_memory
    ended = verify_features.ended_in_memory(memory, claim)
    if ended is not None:
        # what the claim says still holds the memory says ended, whatever else differs
        kind, difference, denies = "negation", ended, True
    _, kept = dedup.alignment(memory, claim)
    frame = kept / max(len(old.tokens), len(new.tokens), 1)
    shared = tuple(sorted((old.words & new.words) - GENERIC_WORDS))
    other = compared.other_holder or other_subject
    part = None if other else part_difference(old, new)
    clause = None
    if difference is None and not other:
        clause = verify_features.clause_difference(memory, claim)
        kind = "clause" if clause is not None else None
    if kind is None and compared.opposite and not other:
        kind, difference = "negation", "one text says the opposite of the other"  # "avoids"
    in_place = kind == "value" and compared.changes == 1 and compared.same_subject
    plain = kind is None and part is None and not other
    word_for_word = plain and verify_features.stated_word_for_word(memory, claim)
    opposite_word = verify_features.opposite_in(VERIFY_OPPOSITES, memory, claim) if plain else None
    return PairFeatures(
        compared.other_holder,
        other_subject,
        difference,
        keeps,
        frame,
        shared,
        part,
        clause,
        kind,
        in_place,
        word_for_word,
        dedup.reads_english(memory) and dedup.reads_english(claim),
        opposite_word,
        difference is None and not other and verify_features.restated(memory, claim),
        denies and not other,
        # (as save reads them: not guarded by another part, statement or occasion; the same
        # holder only where nothing else differs, in the present, no change said)
        dedup.role_given_of_one(compared) and not (other_subject or dedup.role_guarded(compared)),
        compared.role_restated
        and kind is None
        and not (other_subject or dedup.role_guarded(compared))
        and not (compared.marked or compared.tense_differs),
    )


def _readable(values: frozenset[str], one: dedup.Statement) -> list[str]:
    """Values as a person reads them in `one` (dedup.bare_value), sorted; a quoted text whose
    words are also one of the values is left out ("refund-bot", not also '"refund-bot"')."""
    shown = {dedup.bare_value(v, one) for v in values}
    return sorted(v for v in shown if not (v[:1] == '"' and v.strip('"') in shown))


def word_similarity(memory: str, claim: str) -> float:
    """The share of content words the texts have in common (Dice), for when there are no
    vectors."""
    a, b = dedup.content_words(memory), dedup.content_words(claim)
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


# -- the rules' answer ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Judged:
    """One candidate as judged: its similarity (or word share), relation and why."""

    index: int  # in the candidates given
    similarity: float
    relation: Relation
    why: str


@dataclass(frozen=True, slots=True)
class Answer:
    verdict: Verdict
    why: str
    judged: list[Judged] = field(default_factory=list)


def aggregate(judged: Sequence[Judged]) -> tuple[Verdict, Judged | None]:
    """The verdict of judged candidates, and the one it follows: the closest that confirms
    or conflicts; else related when any is; else new."""
    decisive = [j for j in judged if j.relation != "related"]
    if decisive:
        best = max(decisive, key=lambda j: j.similarity)
        return ("confirmed" if best.relation == "confirms" else "conflict"), best
    if judged:
        return "related", max(judged, key=lambda j: j.similarity)
    return "new", None


class Clause(NamedTuple):
    """A memory's clause closest to the claim (verify_clauses.closest_clauses)."""

    similarity: float  # to the claim
    features: PairFeatures  # the clause and the claim, read_pair
    text: str


def rules_answer(
    policy: VerifyPolicy,
    claim: str,
    candidates: Sequence[tuple[str, float | None]],
    features: Sequence[PairFeatures] | None = None,
    clauses: Sequence[Clause | None] | None = None,
) -> Answer:
    """The rules' answer for candidates given as (content, similarity; None: judged on the
    words shared). `features`: each one's read_pair, if read. `clauses`: each one's clause
    closest to the claim (verify_clauses.closest_clauses; None for one clause), judged alone
    too (a long memory is far from a claim of one of its clauses): conflicts when it does."""
    judged: list[Judged] = []
    common = verify_features.common_words([content for content, _ in candidates])
    for index, (content, similarity) in enumerate(candidates):
        words_only = similarity is None
        score = word_similarity(content, claim) if similarity is None else similarity
        pair = read_pair(content, claim) if features is None else features[index]
        shared = tuple(w for w in pair.shared_words if w not in common)
        if shared and not words_only and score < policy.related_from:  # a why names them
            shared = verify_features.as_written(claim, shared, content)
        pair = replace(pair, shared_words=shared)
        relation, why = policy.judge(score, pair, words_only=words_only)
        clause = None if clauses is None or words_only else clauses[index]
        # of a memory that confirms, only items its clause swaps ("A calls B; ..." / "B calls A")
        kind = None if clause is None else clause.features.difference_kind
        undecided = relation in (None, "related") or (relation == "confirms" and kind == "exchange")
        # a negation in a clause the claim does not restate: its own clause may confirm it
        undecided |= relation == "conflicts" and pair.difference_kind == "negation" and not kind
        if clause is not None and clause.similarity > score and undecided:
            alone, its_why = policy.judge(clause.similarity, clause.features)
            # (a clause confirms a claim that says nothing of its own: one part of the memory)
            says_it = alone == "confirms" and verify_features.says_no_more(claim, clause.text)
            if alone == "conflicts" or (says_it and relation != "confirms"):
                text = clause.text if len(clause.text) <= 80 else clause.text[:79] + "\u2026"
                relation, similar = alone, f"clause similarity {clause.similarity:.2f}"
                why = f'in its clause "{text}": {its_why} ({similar})'
        if relation is not None:
            judged.append(Judged(index, score, relation, why))
    verdict, best = aggregate(judged)
    if best is None:
        return Answer("new", "no visible memory is about this subject", judged)
    summary = {
        "confirmed": "a memory states the same fact",
        "conflict": "a memory states something else about the same subject",
        "related": "memories are about the same subject but neither confirm nor contradict it",
        "new": "",
    }[verdict]
    return Answer(verdict, f"{summary} ({best.why}, similarity {best.similarity:.2f})", judged)
