"""verify_features: a claim clause read against the memory clause about the same thing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from emergent_memory.app import DEDUP_POLICIES
from emergent_memory.embeddings.local import LOCAL_MODEL_NAME
from emergent_memory.memory import dedup, verify_features
from emergent_memory.memory.dedup import STOPWORDS, statement
from emergent_memory.memory.verify_clauses import MAX_CLAUSES, closest_clauses
from emergent_memory.memory.verify_features import (
    ANTONYMS_PATH,
    VERIFY_OPPOSITES,
    clause_difference,
    clauses,
    exchange,
    numbers_exchanged,
    pairs_in,
)
from emergent_memory.memory.verify_rules import DIFFERENCE_KINDS, VerifyPolicy, read_pair
from tests.embedders import BagOfWordsEmbedder

POLICY = VerifyPolicy(
    related_from=0.53, conflict_from=0.65, confirm_from=0.74, keeps_words_from=0.7
)


def test_a_memory_is_split_into_clauses_and_an_opening_phrase_joins_the_next() -> None:
    assert clauses("Unit tests run locally; integration tests run in CI.") == (
        "Unit tests run locally",
        "integration tests run in CI",
    )
    assert clauses("In staging, new flags are on by default.") == (
        "In staging new flags are on by default",
    )
    # a thousands separator is no clause's end
    assert clauses("The limit is 1,000 requests a minute, and bursts go to 5,000.") == (
        "The limit is 1,000 requests a minute",
        "bursts go to 5,000",
    )
    # a label and its short value are one clause; a list after a colon is not a value
    assert clauses("Kiosk staging branch: develop; production branch: main.") == (
        "Kiosk staging branch is develop",
        "production branch is main",
    )
    assert clauses("Runtime: Node 20. Package manager: pnpm") == (
        "Runtime is Node 20",
        "Package manager is pnpm",
    )
    assert clauses("Six labs: Warsaw, Kraków, Gdańsk; Warsaw is the central one.")[:2] == (
        "Six labs",
        "Warsaw",
    )
    assert clauses("Lesson from the outage: the pool was too small.") == (
        "Lesson from the outage",
        "the pool was too small",
    )


@pytest.mark.parametrize(
    ("memory", "claim", "why"),
    [
        # a negation in the clause the claim restates, though the memory negates elsewhere
        (
            "Every exported function needs a docstring; private helpers don't need one.",
            "Exported functions don't need docstrings.",
            "the claim negates",
        ),
        # the other value of one setting, in one of two clauses that hold both values
        (
            "Caching is enabled for the web app but disabled for the admin app.",
            "Caching is disabled for the web app.",
            "the other value of one setting",
        ),
        # an antonym verify reads beyond save's list
        (
            "Uploads are rejected when the file is above 20 MB.",
            "Uploads are rejected when the file is below 20 MB.",
            "the other value of one setting: above / below",
        ),
        # two values that exchanged clauses
        (
            "The staging cache is redis-a.internal; the production cache is redis-b.internal.",
            "redis-b.internal is the staging cache.",
            "the same values in swapped places",
        ),
        # an order turned around with other connectives
        (
            "Run the migrations before restarting the workers.",
            "Restart the workers first, then run the migrations.",
            "in the other order",
        ),
        (
            "The team picked Flask over Django for the admin tool.",
            "For the admin tool the team went with Django rather than Flask.",
            "in the other order",
        ),
        # the claim negates the word one memory clause states, though another clause of the
        # memory negates something else
        (
            "Do not automatically run tests that hit the real Twilio sandbox; mock Twilio instead.",
            "Twilio should not be mocked in tests.",
            "the claim negates",
        ),
        (
            "Never deploy on Fridays; tag the release on Thursday instead.",
            "Releases are not tagged on Thursday.",
            "the claim negates",
        ),
    ],
)
def test_a_clause_difference_is_found(memory: str, claim: str, why: str) -> None:
    found = clause_difference(memory, claim)
    assert found is not None
    assert why in found, found


def test_an_order_turned_around_is_named_by_the_words_beside_its_connective() -> None:
    assert clause_difference(
        "The user prefers pnpm over npm.", "The user prefers npm over pnpm."
    ) == ("the same things in the other order: pnpm before npm")
    assert (
        clause_difference(
            "Run the database migrations before restarting the API workers.",
            "Restart the API workers first, then run the database migrations.",
        )
        == "the same things in the other order: run before workers"
    )
    # a comparison's things beyond the words it compares by ("catch far more bugs than")
    turned = clause_difference(
        "Integration tests against a real database container catch far more bugs than mocks.",
        "Mocks catch far more bugs than integration tests against a real database container.",
    )
    assert turned is not None
    assert turned.startswith("the same things in the other order: ")
    # "more than" a number is a bound, not two things compared, in digits or in words
    for number in ("200", "five", "~200"):
        assert (
            clause_difference(
                f"Subscribing to more than {number} items makes the watchdog restart the gateway.",
                f"The watchdog restarts the gateway when more than {number} items are subscribed.",
            )
            is None
        )


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("Run the migrations before restarting the workers.", "Migrations run before a restart."),
        (
            "Caching is enabled for the web app but disabled for the admin app.",
            "The web app has caching enabled.",
        ),
        # what another clause of the memory says (the qualifier moved to the front)
        (
            "New flags default to off in production and on in staging.",
            "In staging, new flags are on by default.",
        ),
        # a claim naming something the memory does not is not contradicted by it
        (
            "The team picked Flask over Django for the admin tool.",
            "Acme's team picked Django over Flask for its admin tool.",
        ),
        # a negation inside quoted text is no negation
        (
            "Jobs on the old runner fail about once a week.",
            "About once a week a job on the old runner fails with 'file not found'.",
        ),
    ],
)
def test_no_clause_difference_where_the_claim_says_the_same(memory: str, claim: str) -> None:
    assert clause_difference(memory, claim) is None


def test_a_clause_both_texts_share_does_not_hide_the_other_value_of_a_setting() -> None:
    # the shared opening clause says nothing of the setting: the pool's size still differs
    memory = (
        "Postmortem of the June outage: the Redis pool was too small at 20 connections; "
        "it is now 80."
    )
    claim = "Postmortem of the June outage: the Redis pool was too large at 20 connections."
    assert clause_difference(memory, claim) == "the other value of one setting: small / large"
    # a clause that says the claim's value still hides it (the claim may be that clause's)
    flags = "New flags default to off in production and on in staging."
    assert clause_difference(flags, "In staging, new flags are on by default.") is None


def test_a_short_quoted_value_stays_in_its_clause_and_what_someone_said_does_not() -> None:
    # a command or a name in quotes is a value of its clause ...
    memory = (
        "Always run `make seedcheck` before pushing and `make e2e-local` before tagging a "
        "release; seedcheck runs the linters, the unit tests and the fixture validation."
    )
    assert clauses(memory)[:2] == (
        "Always run `make seedcheck` before pushing",
        "`make e2e-local` before tagging a release",
    )
    claim = "Run `make e2e-local` before pushing and `make seedcheck` before tagging a release."
    found = clause_difference(memory, claim)
    assert found is not None
    assert found.startswith("the same values in swapped places")
    assert clause_difference(memory, "Run `make seedcheck` before pushing.") is None
    # ... while what someone said, clauses of its own, is left out
    said = 'Joa in chat: "honestly, I would rather ship fewer biomes than crunch again"'
    assert clauses(said) == ("Joa in chat",)


def test_two_values_said_in_each_other_s_roles_are_swapped() -> None:
    # names that open the claim's clauses are values of the memory's
    memory = (
        "Nadia is on secondary on-call during the first week of every month, with Gus as primary."
    )
    claim = "During the first week of every month, Nadia is primary on-call and Gus is secondary."
    found = clause_difference(memory, claim)
    assert found is not None
    assert found.startswith("the same values in swapped places")


def test_two_clauses_said_crosswise_are_swapped_in_a_longer_memory_too() -> None:
    # each claim clause about another memory clause, with a word of each in the other's
    memory = (
        "A booking bug came from time zones: the kiosk stored local time while the API "
        "stored UTC. All bookings are now stored in UTC and shown in the port's local time."
    )
    claim = "Bookings are now stored in the port's local time and shown in UTC."
    found = clause_difference(memory, claim)
    assert found is not None
    assert found.startswith("the same values in swapped places: UTC / ")
    # the same two clauses in the same places are no difference
    same = "Bookings are now stored in UTC and shown in the port's local time."
    assert clause_difference(memory, same) is None


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # dedup set 133's tk090: the moved words draw both claim clauses to the first memory
        # clause; each clause's subject says which is which
        (
            "Primary DB sits in the Ashby Road server room, the replica at the town hall.",
            "Primary DB sits at the town hall, the replica in the Ashby Road server room.",
        ),
        (
            "The web build runs on the large Hetzner runner, the docs build on a GitHub runner.",
            "The web build runs on a GitHub runner, the docs build on the large Hetzner runner.",
        ),
    ],
)
def test_two_clauses_said_crosswise_with_the_second_cut_short_are_swapped(
    memory: str, claim: str
) -> None:
    assert exchange(memory, claim) is not None
    assert dedup.compare(memory, claim).crosswise
    save_rule = DEDUP_POLICIES[LOCAL_MODEL_NAME]
    assert save_rule.explain(0.99, memory, claim).verdict != "supersede"
    # the same clauses in the same places, in other words: no exchange
    assert exchange(memory, memory.replace(" sits ", " is ").replace(" runs ", " is run ")) is None


def test_numbers_exchanged_across_a_because_or_so() -> None:
    memory = (
        "The kiosks run firmware 2.4, which freezes on receipts longer than 48 lines; as a "
        "workaround the printer service cuts receipts at 40 lines."
    )
    claim = "The printer service cuts receipts at 48 lines because firmware 2.4 freezes above 40."
    assert numbers_exchanged(memory, claim) == "40 cuts / 48 cuts"
    turned = "Firmware 2.4 freezes above 40 lines, so the printer service cuts receipts at 48."
    assert numbers_exchanged(memory, turned) is not None


def test_numbers_said_of_each_other_s_things_are_swapped_values() -> None:
    memory = "The search cluster has 5 data nodes and 3 master nodes, all in eu-west-1."
    claim = "The search cluster has 3 data nodes and 5 master nodes."
    assert numbers_exchanged(memory, claim) == "5 data / 3 data"
    pair = read_pair(memory, claim)
    assert pair.difference_kind == "exchange"
    relation, why = POLICY.judge(0.9, pair)
    assert relation == "conflicts"
    assert why == "the same values in swapped places: 5 data / 3 data"
    # a duration's number, and parts joined by "or"
    webhooks = "Failed webhooks are retried 3 times, waiting 30 seconds between attempts."
    swapped = "Failed webhooks are retried 30 times, waiting 3 seconds between attempts."
    assert numbers_exchanged(webhooks, swapped) == "3 times / 30 times"
    tanks = "Cold room alarms trigger above 8 °C for cheese or above 4 °C for fish."
    turned = "Cold room alarms trigger above 4 °C for cheese and above 8 °C for fish."
    assert numbers_exchanged(tanks, turned) == "8 cheese / 4 cheese"


def test_a_number_rejected_for_another_is_said_of_no_word_of_either() -> None:
    # "on 8443 rather than 8080": a part that rejects one number for the other tells which
    # is which by no word beside them
    memory = "Start the stack with `make up`; the gateway listens on port 8443, not 8080."
    claim = "Run `make up` first, since the gateway serves on port 8443 rather than 8080."
    assert numbers_exchanged(memory, claim) is None
    assert read_pair(memory, claim).difference_kind != "exchange"
    # each said in a part of its own, beside the other's word, is still an exchange
    apart = "The gateway listens on port 8443 and the admin UI on 8080."
    swapped = "The gateway listens on port 8080 and the admin UI on 8443."
    assert numbers_exchanged(apart, swapped) is not None
    # and so is a range or a change said in one part ("from 120 s to 30 s"): no rejection
    lowered = "After the outage the session timeout was lowered from 120 s to 30 s."
    raised = "After the outage the session timeout was raised from 30 s to 120 s."
    assert verify_features._rejected_for(lowered, "120", "30") is False
    assert verify_features._rejected_for(memory, "8443", "8080") is True
    assert read_pair(lowered, raised).difference is not None


def test_one_part_of_a_memory_restated_with_another_amount_of_the_same_unit() -> None:
    # a duration or a size is read beside its word as a number is ("kept for 35 days",
    # "16 GB of RAM"), against an amount of the same unit only
    dumps = (
        "A nightly pg_dump goes to the `wren-backups` bucket on Backblaze B2 at 02:30, and "
        "dumps are kept for 35 days."
    )
    found = verify_features.part_difference(
        statement(dumps), statement("Dumps are kept for 90 days.")
    )
    assert found == "kept 35 days / 90 days"
    laptop = "Her laptop is a 2022 ThinkPad X1 with 16 GB of RAM, running Fedora 40."
    ram = verify_features.part_difference(
        statement(laptop), statement("Her laptop has 32 GB of RAM.")
    )
    assert ram is not None
    assert ram.endswith("16 GB / 32 GB")
    # the word before a value is read within its part ("... *and a* 1 TB disk": no RAM)
    both = "Her laptop is a 2022 ThinkPad X1 with 16 GB of RAM and a 1 TB disk."
    found = verify_features.part_difference(
        statement(both), statement("Her laptop has 32 GB of RAM.")
    )
    assert found is not None
    assert found.endswith("16 GB / 32 GB")
    # the same amount said otherwise is no difference
    assert (
        verify_features.part_difference(statement(dumps), statement("Dumps are kept for 35 days."))
        is None
    )


def test_the_one_amount_of_its_unit_restated_with_another_wherever_it_stands() -> None:
    # a claim that says nothing the memory does not, with another amount of the unit the
    # memory states once: another value, whatever word stands beside it
    memory = "The planner syncs with the depot through a file drop every 6 hours."
    found = verify_features.part_difference(
        statement(memory), statement("The planner syncs with the depot every 2 hours.")
    )
    assert found == "6 hours / 2 hours"
    # not where the memory states two of that unit, or the claim says something it does not
    two = "The planner syncs every 6 hours and archives files after 30 days."
    assert (
        verify_features.part_difference(statement(two), statement("The planner runs every 2 days."))
        is None
    )
    assert (
        verify_features.part_difference(
            statement(memory), statement("The planner retries the depot after 2 hours.")
        )
        is None
    )
    # nor the same amount written otherwise
    assert (
        verify_features.part_difference(
            statement(memory), statement("The planner syncs with the depot every 360 minutes.")
        )
        is None
    )


def test_a_value_kept_beside_its_own_words_was_not_moved() -> None:
    # the claim's clauses align crosswise ("ping" in the first memory clause), but each value
    # stands beside the words the memory says it with: no swap
    memory = (
        "Buoy readings arrive every 10 seconds over LoRa (gateway 3.1, channel 868) and are "
        "ignored if they are older than 90 seconds."
    )
    claim = (
        "Buoys send readings to gateway 3.1 on channel 868 every ten seconds, and any reading "
        "more than 90 seconds old is thrown away."
    )
    assert clause_difference(memory, claim) is None
    # the two amounts in each other's clauses are still swapped
    swapped = (
        "Buoy readings arrive every 90 seconds over LoRa and are ignored if they are older "
        "than 10 seconds."
    )
    assert clause_difference(memory, swapped) == "the same values in swapped places: 10 / 90"


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # the same numbers beside the same things, a detail added
        (
            "The search cluster has 5 data nodes and 3 master nodes.",
            "The search cluster has 5 data nodes and 3 master nodes in eu-west-1.",
        ),
        # one number in common: nothing to exchange it with
        (
            "The image service runs 6 replicas in production and 2 in staging.",
            "The image service has six production replicas.",
        ),
        # numbers inside a date or a version are no numbers of their own
        (
            "API v1 is switched off on 30 June 2025; v2 shipped in May 2024.",
            "API v1 will be turned off on 2025-06-30.",
        ),
    ],
    ids=["detail-added", "one-number", "date-and-version"],
)
def test_no_numbers_exchanged_where_each_stays_beside_its_thing(memory: str, claim: str) -> None:
    assert numbers_exchanged(memory, claim) is None


@pytest.mark.parametrize(
    ("memory", "claim", "why"),
    [
        (
            "Staging deploys automatically from main; production deploys from v* tags.",
            "Production deploys from the main branch.",
            "main / production",
        ),
        (
            "Staging deploys automatically from main; production deploys from v* tags.",
            "Staging deploys from v* tags.",
            "Staging / tags",
        ),
        ("Alice owns billing and Bob owns search.", "Bob owns billing.", "billing / Bob"),
        ("Maya reviews the iOS code and Omar reviews Android.", "Omar reviews the iOS code.", ""),
    ],
    ids=["deploys-from", "deploys-from-other-way", "owners", "reviewers"],
)
def test_a_claim_joining_two_parallel_clauses_crosswise_is_a_difference(
    memory: str, claim: str, why: str
) -> None:
    found = clause_difference(memory, claim)
    assert found is not None
    assert found.startswith("joins what the memory says of two things")
    assert found.endswith(why)
    relation, reason = POLICY.judge(0.9, read_pair(memory, claim))
    assert relation == "conflicts", reason


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # each clause restated as it is
        ("Alice owns billing and Bob owns search.", "Alice owns billing."),
        (
            "Staging deploys automatically from main; production deploys from v* tags.",
            "Production deploys from v* tags.",
        ),
        # both clauses' words at one place: something else, not a swap
        (
            "Staging deploys automatically from main; production deploys from v* tags.",
            "Production deploys automatically from v* tags.",
        ),
        # the verb the second clause leaves out is no place of its own
        (
            "Daily backups are kept for 30 days and monthly backups for 12 months.",
            "Monthly backups are kept for a year.",
        ),
        # the claim is one of the memory's clauses
        (
            "Ana is the primary owner of ledger and the backup owner of audit; Raj is audit's "
            "primary owner.",
            "Raj is audit's primary owner.",
        ),
        # the claim says more that the memory does not: maybe another thing
        (
            "Adult cards can borrow 8 e-books at a time; junior cards are capped at 3.",
            "Junior cards can only borrow e-books from the children's collection.",
        ),
    ],
    ids=["restated", "restated-2", "both-sides", "elided-verb", "one-clause", "says-more"],
)
def test_no_crosswise_join_where_the_claim_keeps_each_clause(memory: str, claim: str) -> None:
    found = clause_difference(memory, claim)
    assert found is None or not found.startswith("joins"), found


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("Lena prefers Polars over pandas for new code.", "Lena avoids Polars in new code."),
        (
            "Django signals are avoided; side effects are triggered from services.py.",
            "Django signals are the preferred way to trigger side effects.",
        ),
        ("Kenji enjoys code reviews in the morning.", "Kenji hates morning code reviews."),
        ("The team prefers Terraform over Pulumi.", "The team avoids Terraform."),
    ],
    ids=["prefers-avoids", "avoided-preferred", "enjoys-hates", "prefers-over-avoids"],
)
def test_a_verb_of_the_opposite_liking_is_a_negation_never_a_confirmation(
    memory: str, claim: str
) -> None:
    pair = read_pair(memory, claim)
    assert pair.difference_kind == "negation"
    relation, why = POLICY.judge(0.9, pair)
    assert relation == "conflicts", why


def test_a_clause_difference_is_never_a_confirmation() -> None:
    memory = "Caching is enabled for the web app but disabled for the admin app."
    pair = read_pair(memory, "Caching is disabled for the web app.")
    assert pair.clause_difference is not None
    relation, why = POLICY.judge(0.95, pair)
    assert relation == "conflicts", why
    # below conflict_from it is related, never confirmed
    assert POLICY.judge(0.6, pair)[0] == "related"
    # without vectors (the share of words in common) a clause difference is only related
    assert POLICY.judge(0.95, pair, words_only=True)[0] == "related"


def test_an_apostrophe_is_no_quote() -> None:
    # two apostrophes do not make the words between them a quotation to leave out
    assert clauses("The team's CI doesn't run on Fridays; builds are cached.") == (
        "The team's CI doesn't run on Fridays",
        "builds are cached",
    )
    why = clause_difference(
        "The team's CI doesn't run on Fridays; builds are cached.", "The team's CI runs on Fridays."
    )
    assert why is not None
    assert "negates" in why
    # (a short quoted value stays in its clause: it is one value)
    assert clauses("Use 'main' as the default branch.") == ("Use 'main' as the default branch",)


def test_a_day_the_memory_names_too_is_no_other_thing() -> None:
    memory = "Deploys run before the standup on Friday; hotfixes run after it."
    assert clause_difference(memory, "Deploys run after the standup on Friday.") == (
        "the other value of one setting: before / after"
    )


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("Feature flags are off in production.", "Feature flags only exist in production."),
        ("Sort results in ascending order of price.", "Sort results with the lowest price first."),
        # "on" is a preposition as often as a setting's value
        (
            "Autoscaling is disabled for the batch cluster.",
            "The batch cluster runs on spot instances.",
        ),
        ("The limit is 1,000 requests a minute.", "The limit is 1,000 requests each minute."),
    ],
)
def test_words_that_only_look_opposite_are_no_conflict(memory: str, claim: str) -> None:
    assert clause_difference(memory, claim) is None


def test_a_changed_value_is_named_as_written() -> None:
    difference = read_pair(
        "The standup is on Thursday at 14:00.", "The standup is on Thursday at 15:00."
    ).difference
    assert difference == "another value: 14:00 / 15:00"
    moved = read_pair("Releases go out on Tuesday.", "Releases go out on Friday.").difference
    assert moved == "another value: tuesday / friday"
    # a name or a compound as the text writes it, not its stem
    named = read_pair(
        "The reports database runs Postgres on pytest-style fixtures.",
        "The reports database runs MySQL on pytest-style fixtures.",
    ).difference
    assert named == "another value: Postgres / MySQL"
    sized = read_pair("The log volume is 512000 MB.", "The log volume is 2 TB.").difference
    assert sized == "another value: 512000 MB / 2 TB"


def test_the_other_direction_of_an_exchange_is_related_not_confirmed() -> None:
    features = read_pair(
        "The API accepts timestamps with any UTC offset.", "The API returns timestamps in UTC."
    )
    assert features.other_subject
    assert POLICY.judge(0.9, features)[0] == "related"


@pytest.mark.parametrize(
    ("memory", "claim", "kind"),
    [
        (
            "The staging database listens on port 5432.",
            "Staging Postgres is on port 5433 now.",
            "value",
        ),
        (
            "Migrations run before the workers restart.",
            "The workers restart before migrations run.",
            "exchange",
        ),
        ("The user indents with tabs.", "The user indents with spaces.", "opposite"),
        # the same number as a bound the other way
        (
            "Ilse prefers small pull requests, under 400 changed lines.",
            "Ilse prefers pull requests of more than 400 changed lines.",
            "opposite",
        ),
        ("The user prefers pnpm over npm.", "The user prefers npm.", "rejected"),
        (
            "Production deploys need approval from the on-call engineer.",
            "Deploys to production don't need any approval.",
            "negation",
        ),
        (
            "Caching is enabled for the web app but disabled for the admin app.",
            "Caching is disabled for the web app.",
            "clause",
        ),
    ],
)
def test_each_difference_is_read_as_its_kind(memory: str, claim: str, kind: str) -> None:
    assert read_pair(memory, claim).difference_kind == kind
    assert kind in DIFFERENCE_KINDS


@pytest.mark.parametrize(
    ("memory", "claim", "rejects"),
    [
        ("Tests run in CI, not locally.", "Tests run locally.", "locally"),
        (
            "Tomasz uses docker compose v2.",
            "Tomasz uses docker-compose v1, not compose v2.",
            "compose",
        ),
        (
            "Drivers use a separate app.",
            "Drivers use the web portal rather than a separate app.",
            "separate",
        ),
        ("The user prefers pnpm over npm.", "The user prefers npm.", "npm"),
        # the memory rejects, the claim states it plainly
        (
            "Build logs are kept in the object store, not on the runners.",
            "Build logs are kept on the runners.",
            "memory rejects runners",
        ),
        (
            "Invoices are numbered per tenant, not globally.",
            "Invoices are numbered globally.",
            "globally",
        ),
    ],
)
def test_what_one_text_rejects_and_the_other_states_is_a_rejection(
    memory: str, claim: str, rejects: str
) -> None:
    features = read_pair(memory, claim)
    assert features.difference_kind == "rejected"
    assert features.difference is not None
    assert rejects in features.difference


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("Use pnpm, not npm.", "Use pnpm rather than npm."),
        ("The user prefers tabs over spaces.", "The user prefers tabs, not spaces."),
    ],
)
def test_a_rejection_said_two_ways_is_no_difference(memory: str, claim: str) -> None:
    assert read_pair(memory, claim).difference_kind is None


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # the memory does not choose what the claim rejects: disabled, negated, after "over"
        (
            "Dependabot is disabled; Renovate opens dependency update PRs every Monday.",
            "Renovate, not Dependabot, creates the dependency update PRs.",
        ),
        (
            "Never run the pipeline against production from a laptop; always submit through "
            "helix-submit on the login node.",
            "Pipeline runs against production go through helix-submit, never from a laptop.",
        ),
        (
            "Marta prefers squash merges over rebase merges for feature branches.",
            "For feature branches Marta would rather squash than rebase.",
        ),
        (
            "She likes pytest with plain assert statements and dislikes unittest-style classes.",
            "She writes plain pytest functions, not unittest classes.",
        ),
    ],
)
def test_what_both_texts_do_not_choose_is_no_rejection(memory: str, claim: str) -> None:
    assert verify_features.rejected(memory, claim) is None
    assert verify_features.rejected_by_memory(memory, claim) is None


@pytest.mark.parametrize(
    ("memory", "claim", "rejects"),
    [
        (
            "Dependabot opens the dependency update PRs.",
            "Renovate, not Dependabot, creates the dependency update PRs.",
            "the claim rejects Dependabot",
        ),
        (
            "Marta prefers squash merges over rebase merges for feature branches.",
            "For feature branches Marta rebases.",
            "another value to rebase",
        ),
        # a rejection in another language's words, read in the claim
        (
            "The team uses npm for the web app.",
            "Das Team nutzt pnpm anstelle von npm.",
            "the claim rejects npm",
        ),
    ],
)
def test_what_only_one_text_does_not_choose_is_still_a_rejection(
    memory: str, claim: str, rejects: str
) -> None:
    assert rejects in (verify_features.rejected(memory, claim) or "")


def test_no_kind_where_nothing_differs() -> None:
    features = read_pair("The CI pipeline runs on GitHub Actions.", "CI runs on GitHub Actions.")
    assert (features.difference, features.clause_difference, features.difference_kind) == (
        None,
        None,
        None,
    )


# A claim that negates the memory in other words: few of its words in the memory's order
# (frame 0.38), so the general rule wants the similarity of a confirmation to call it a
# conflict; the negation's own threshold (here 0.58) calls it one from there.
NEGATED = (
    "Production deploys need approval from the on-call engineer.",
    "Deploys to production don't need any approval.",
)
KINDS = replace(POLICY, conflict_frame=0.5, conflict_from_kind=(("negation", 0.58),))


def test_a_kind_conflicts_from_its_own_threshold_whatever_the_frame() -> None:
    features = read_pair(*NEGATED)
    assert features.frame < KINDS.conflict_frame
    general = replace(KINDS, conflict_from_kind=())
    assert general.judge(0.6, features)[0] == "related"
    relation, why = KINDS.judge(0.6, features)
    assert (relation, why) == ("conflicts", "the claim negates what the other states")
    # below its threshold, the general rule decides; and only kinds named have one
    assert KINDS.judge(0.55, features)[0] == "related"
    valued = read_pair("The staging database listens on port 5432.", "Staging Postgres is on 5433.")
    assert valued.difference_kind == "value"
    assert KINDS.judge(0.6, valued)[0] == general.judge(0.6, valued)[0] == "related"


def test_no_kind_conflicts_below_the_related_threshold() -> None:
    features = read_pair(*NEGATED)
    low = replace(KINDS, conflict_from_kind=(("negation", 0.4),))
    # 0.45: not about the claim's subject (below related_from 0.53), whatever its kind
    assert low.judge(0.45, features)[0] is None
    assert low.judge(0.53, features)[0] == "conflicts"


def test_a_kind_never_conflicts_across_holders_or_without_vectors() -> None:
    features = read_pair(*NEGATED)
    other = replace(features, other_holder=True)
    assert KINDS.judge(0.6, other) == ("related", "about someone else (another holder)")
    thing = replace(features, other_subject=True)
    assert KINDS.judge(0.6, thing) == ("related", "about another thing of the same kind")
    kind_only = replace(KINDS, conflict_from_words=0.9)
    assert kind_only.judge(0.6, features, words_only=True)[0] != "conflicts"


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown difference kinds: antonym"):
        replace(POLICY, conflict_from_kind=(("antonym", 0.5),))


@pytest.mark.parametrize(
    ("memory", "claim", "pair"),
    [
        # the two values of a setting, inflected in either text
        (
            "The nightly batch starts at 01:30 and usually finishes within 5 hours.",
            "The nightly batch finishes at 01:30.",
            "start / finish",
        ),
        ("The user likes fish shell.", "The user dislikes fish shell.", "like / dislike"),
        ("Noor joins the standup at nine.", "Noor leaves the standup at nine.", "join / leave"),
        (
            "The release job locked the registry.",
            "The release job unlocks the registry.",
            "lock / unlock",
        ),
        (
            "The deploy job enables the maintenance page.",
            "The deploy job disables the maintenance page.",
            "enable / disable",
        ),
        (
            "The exporter pushes metrics to the gateway.",
            "The gateway polls the exporter for metrics.",
            "push / poll",
        ),
        (
            "The render farm runs on 4 nodes and scales up to 12 during launches.",
            "The render farm scales down during launches.",
            "up / down",
        ),
        (
            "The loan row and its outbox event are written in the same transaction.",
            "The loan row and its outbox event are written in separate transactions.",
            "same / separate",
        ),
        (
            "The GeoLite2 attribution goes in the dashboard footer.",
            "The GeoLite2 attribution goes in the dashboard header.",
            "footer / header",
        ),
        # an irregular past ("kept"), and positions, scopes and duties of one setting
        (
            "Feature flags are managed in Unleash; a flag is removed within two sprints of "
            "its full rollout.",
            "Feature flags are kept permanently after full rollout.",
            "remove / keep",
        ),
        (
            "Remind Oksana to update the changelog whenever a change touches a public API.",
            "Remind Oksana to update the changelog only for internal API changes.",
            "public / internal",
        ),
        (
            "Always run the fixture suite locally before pushing.",
            "Running the fixture suite locally before pushing is optional.",
            "always / optional",
        ),
        # keeping against dropping, and a verb in a progressive form ("is adding")
        (
            "The booking app will drop the guest checkout in v4.",
            "The guest checkout stays in v4 of the booking app.",
            "drop / stay",
        ),
        (
            "The booking app will drop the guest checkout in v4.",
            "The booking app is adding a guest checkout in v4.",
            "drop / add",
        ),
        (
            "We keep the legacy XML export for the auditors.",
            "We are removing the legacy XML export for the auditors.",
            "keep / remove",
        ),
        # hiding against revealing or exposing, past tense or present
        (
            "Retrying the upload silently hid the checksum mismatch from the operators.",
            "Retrying the upload revealed the checksum mismatch to the operators.",
            "hide / reveal",
        ),
        (
            "The admin page conceals the API tokens after they are created.",
            "The admin page exposes the API tokens after they are created.",
            "conceal / expose",
        ),
        (
            "The log formatter masks card numbers in the payment service logs.",
            "The log formatter reveals card numbers in the payment service logs.",
            "mask / reveal",
        ),
    ],
)
def test_opposites_are_read_in_any_inflection(memory: str, claim: str, pair: str) -> None:
    difference = clause_difference(memory, claim)
    assert difference is not None
    assert difference.startswith("the other value of one setting: ")
    assert difference.endswith(pair)


@pytest.mark.parametrize(
    ("memory", "claim", "pair"),
    [
        # the antonyms of English adjectives and adverbs (antonyms.txt, from WordNet), beyond
        # verify's own list, and their comparatives and superlatives
        (
            "The integration suite is flaky on narrow terminals because of line wrapping.",
            "The integration suite is flaky on wide terminals.",
            "narrow / wide",
        ),
        (
            "The ingest workers are idle most of the night, so the batch jobs run then.",
            "The ingest workers are busy most of the night.",
            "idle / busy",
        ),
        (
            "The thickest cable in the rack carries the uplink; the patch leads are thin.",
            "The thinnest cable in the rack carries the uplink.",
            "thickest / thinnest",
        ),
        (
            "Release notes are written in a formal tone, and commit messages are terse.",
            "Release notes are written in an informal tone.",
            "formal / informal",
        ),
    ],
)
def test_the_antonyms_of_english_adjectives_are_other_values(
    memory: str, claim: str, pair: str
) -> None:
    difference = clause_difference(memory, claim)
    assert difference == f"the other value of one setting: {pair}"
    # the same word in both says nothing else
    assert clause_difference(memory, memory.split(";")[0].split(",")[0] + ".") is None


def test_the_antonym_list_is_data_of_one_word_pairs() -> None:
    pairs = pairs_in(ANTONYMS_PATH)
    assert len(pairs) > 2000
    assert all(len(pair) == 2 for pair in pairs)
    assert all(word.isalpha() and word.islower() for pair in pairs for word in pair)
    for pair in ({"large", "small"}, {"larger", "smaller"}, {"best", "worst"}):
        assert frozenset(pair) in pairs
        assert frozenset(pair) in VERIFY_OPPOSITES
    # no stopword ("all" / "some"): those of a setting are in verify's own list
    assert not any(pair & STOPWORDS for pair in pairs)


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # only verbs of one setting are read inflected: an ending stripped from another word
        # could make another listed word ("lasted": "last", "ones": "one"), and a gerund may
        # be a noun ("opening hours")
        ("The first sync takes about an hour.", "The sync lasted about an hour."),
        ("The cluster has several small nodes.", "The cluster uses the small ones."),
        ("The office closes early on Fridays.", "Office opening hours are shorter on Fridays."),
        # both values in the memory, in the clause the claim restates: nothing to compare
        ("Jobs start and finish within the window.", "Jobs finish within the window."),
    ],
)
def test_no_opposite_where_the_inflections_say_the_same(memory: str, claim: str) -> None:
    assert clause_difference(memory, claim) is None


def test_another_value_after_the_same_subject_words_conflicts_from_the_related_threshold() -> None:
    """The same subject words and one value after them in place of another (as the save rule
    reads it, dedup.same_subject_words): a conflict from related_from, however far apart the
    model puts the two values; not without vectors, nor when the value names which thing."""
    general = replace(KINDS, conflict_from_kind=())
    moved = read_pair("Noor's manager is Callum Reid.", "Noor's manager is Callum Reyes.")
    assert moved.in_place
    assert general.judge(POLICY.related_from, moved)[0] == "conflicts"
    assert general.judge(POLICY.related_from - 0.01, moved)[0] != "conflicts"
    assert general.judge(0.3, moved, words_only=True)[0] == "related"  # its own thresholds
    # one value only, and one holder
    two = read_pair(
        "Noor's manager is Callum Reid.", "Noor's manager is Callum Reyes, in Leeds since 2021."
    )
    assert not two.in_place
    other = read_pair("Noor's manager is Callum Reid.", "Sam's manager is Callum Reyes.")
    assert general.judge(0.6, other)[0] != "conflicts"
    # the value before the words said of it names another thing: not in place
    topic = read_pair(
        "Kafka topic orders.created has 12 partitions.",
        "Kafka topic orders.cancelled has 12 partitions.",
    )
    assert not topic.in_place
    assert general.judge(0.6, topic)[0] == "related"


def test_a_clause_that_ties_on_words_is_aligned_by_its_subject() -> None:
    # both clauses share two words with the claim; the one about the claim's subject (its
    # first content word) is the clause compared
    memory = (
        "Staging is deployed automatically on every merge; production is deployed manually "
        "from a tagged release."
    )
    difference = clause_difference(memory, "Staging is deployed manually.")
    assert difference is not None
    assert "automatically / manually" in difference
    assert clause_difference(memory, "Production is deployed manually.") is None


class _Recording(BagOfWordsEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.documents: list[list[str]] = []
        self.queries: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents.append(list(texts))
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)


def test_each_memory_s_closest_clause_is_found_in_two_calls() -> None:
    embedder = _Recording()
    claim = "Feature flags live in Unleash."
    long_memory = "; ".join(f"service {n} writes logs to bucket {n}" for n in range(40))
    contents = [
        "Feature flags live in LaunchDarkly.",  # one clause: nothing to find
        "",  # a memory not to read
        "The app ships every two weeks; feature flags live in LaunchDarkly.",
        long_memory + "; feature flags live in LaunchDarkly",
    ]
    found = closest_clauses(embedder, claim, contents)
    assert found[0] is None
    assert found[1] is None
    assert found[2] is not None
    assert found[2][2] == "feature flags live in LaunchDarkly"
    assert found[3] is not None
    assert found[3][2] == "feature flags live in LaunchDarkly"
    assert found[2][1].difference is not None  # the pair read: another value
    # the claim as a query, then every clause at once; of the long memory at most MAX_CLAUSES
    assert embedder.queries == [claim]
    assert len(embedder.documents) == 1
    assert len(embedder.documents[0]) <= 2 + MAX_CLAUSES
    # nothing to read: no call at all
    quiet = _Recording()
    assert closest_clauses(quiet, claim, ["One clause only.", ""]) == [None, None]
    assert quiet.queries == []
    assert quiet.documents == []


def test_a_difference_names_the_values_as_a_person_reads_them() -> None:
    # no internal kinds ("letter:", "q:") in what the agent and the dashboard show
    assert read_pair(
        "Service B listens on port 9001.", "Service C listens on port 9001."
    ).difference == ("another value: B / C")
    why = read_pair(
        "Run `make lint` before pushing.", "Run `make check` before pushing."
    ).difference
    assert why == 'another value: "make lint", lint / "make check", check'
    # a duration in its largest whole unit, as a person says it
    assert read_pair(
        "Database backups are kept for 14 days.", "Database backups are kept for 30 days."
    ).difference == ("another value: 14 days / 30 days")
    assert read_pair(
        "The API times out after 500ms.", "The API times out after 2 seconds."
    ).difference == ("another value: 500 ms / 2 seconds")


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        (
            "At the end of long debugging sessions, the user wants a short summary with the "
            "open questions listed last.",
            "The user wants open questions listed first in end-of-session summaries.",
        ),
        (
            "A leak alert fires when a meter shows continuous flow above 2 litres per hour "
            "for 48 consecutive hours.",
            "A leak alert fires when continuous flow stays below 2 litres per hour for 48 hours.",
        ),
        (
            "When a payroll run fails, Kofi checks the Temporal UI first, then the Sentry issue.",
            "Kofi checks the Temporal UI last when a payroll run fails.",
        ),
        (
            "Keep summaries for Marta short: at most five bullet points.",
            "Marta wants long, detailed summaries.",
        ),
    ],
)
def test_a_claim_that_says_the_opposite_never_confirms(memory: str, claim: str) -> None:
    """Where nothing else differs and the rules would confirm, an opposite anywhere in the two
    texts (one word in each only) is the other value: a conflict, or related when farther."""
    features = read_pair(memory, claim)
    # (a bound turned, "above 2 litres" / "below 2 litres", is read before: kind "opposite")
    assert features.opposite_word is not None or features.difference_kind == "opposite"
    assert POLICY.judge(0.8, features)[0] == "conflicts"
    assert POLICY.judge(POLICY.conflict_from - 0.01, features)[0] != "confirms"


def test_an_opposite_the_other_text_negates_still_confirms() -> None:
    features = read_pair("Never force-push to main.", "Don't ever force-push to the main branch.")
    assert features.opposite_word is None
    assert POLICY.judge(0.9, features)[0] == "confirms"


def test_an_opposite_verb_is_read_in_any_inflection_in_both_texts() -> None:
    # "dropped" is "drop": a memory that says both "stay" and "dropped" holds both values
    memory = (
        "Every migration must stay backward compatible for one release; columns are only "
        "dropped in a later release."
    )
    claim = "Keep each migration backward compatible for a release and drop columns later."
    assert read_pair(memory, claim).opposite_word is None
    # and a doubled consonant before "-ed" is read: "stopped", "dropped"
    stopped = read_pair(
        "The pipeline stopped using MetaPhlAn.", "The pipeline started using MetaPhlAn."
    )
    assert stopped.difference == "the other value of one setting: stop / start"
    dropped = read_pair(
        "MetaPhlAn was dropped in 2024 because of its database size.",
        "MetaPhlAn was added to the pipeline in 2024.",
    )
    assert dropped.clause_difference == "the other value of one setting: drop / add"


def test_more_before_an_adverb_is_its_comparative() -> None:
    memory = (
        "Lena learned that a worked example of the dedup rules convinces editors faster than "
        "links to documentation."
    )
    claim = "A worked example of the dedup rules convinces editors more slowly than doc links."
    features = read_pair(memory, claim)
    assert features.difference == "the other value of one setting: faster / slower"
    assert POLICY.judge(0.86, features)[0] == "conflicts"
    # "more" before a word that is no adverb in "-ly" adds nothing to the text's words (but
    # for a word in "-s", also read without it: "mornings" is "morning" too)
    assert verify_features._compared("The job needs more memory.") == {
        "the",
        "job",
        "needs",
        "need",
        "more",
        "memory",
    }
    assert "slower" in verify_features._compared("Builds run more slowly on Fridays.")


@pytest.mark.parametrize(
    ("memory", "claim", "opposite", "same"),
    [
        (
            "Door-fault telemetry alerts spike in winter, and most come from the rear doors.",
            "Door-fault telemetry alerts drop in winter.",
            "spike / drop",
            "Door-fault telemetry alerts spike in winter.",
        ),
        (
            "Odometer values from older buses must be divided by 10 before storage.",
            "Odometer values from older buses must be multiplied by 10 before storage.",
            None,  # (one word exchanged for another: another value, as save reads it)
            "Odometer values from older buses are divided by 10 before they are stored.",
        ),
    ],
)
def test_a_rise_against_a_fall_and_a_product_against_a_quotient_are_two_values(
    memory: str, claim: str, opposite: str | None, same: str
) -> None:
    """A close claim that keeps the memory's values but says the other direction of a change
    or of an operation never confirms it (set 29's conflicts answered confirmed); the same
    direction said again does."""
    relation, why = POLICY.relation(0.85, memory, claim)
    assert relation == "conflicts", why
    if opposite is not None:
        assert why == f"the other value of one setting: {opposite}"
    assert POLICY.relation(0.9, memory, same)[0] == "confirms"


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        (
            "Backups of the orders database run every 12 hours.",
            "Backups of the orders database run twice a day.",
        ),
        (
            "The scanner sends a heartbeat every 60 seconds.",
            "The scanner sends a heartbeat once a minute.",
        ),
    ],
)
def test_how_often_said_in_words_confirms_the_same_period(memory: str, claim: str) -> None:
    """verify reads how often said in words as save does (dedup.rates_written_out)."""
    assert verify_features.restated(memory, claim)
    assert POLICY.relation(0.9, memory, claim) == ("confirms", "states the same values")
    other = claim.replace("twice a day", "daily").replace("once a minute", "every hour")
    assert POLICY.relation(0.9, memory, other)[0] == "conflicts"


@pytest.mark.parametrize(
    ("memory", "claim", "negating"),
    [
        ("Noor works in the terminal all day.", "Noor dislikes working in the terminal.", "claim"),
        (
            "Tomasz uses pytest for every project.",
            "Tomasz doesn't like pytest for any project.",
            "claim",
        ),
        (
            "The team squashes commits on merge.",
            "The team avoids squashing commits on merge.",
            "claim",
        ),
        # a word that forbids, negated, says yes: against "never" the memory negates, never a
        # confirmation though both texts hold a negator
        (
            "Never run TRUNCATE on production ClickHouse tables; use the partition drop script.",
            "Running TRUNCATE on production ClickHouse tables is not forbidden.",
            "memory",
        ),
        (
            "Never restart the radar service during a storm warning.",
            "Restarting the radar service during a storm warning isn't a problem.",
            "memory",
        ),
        (
            "Don't force-push to release branches.",
            "Force-pushing to release branches is not prohibited.",
            "memory",
        ),
    ],
)
def test_a_verb_that_says_no_negates_as_a_negation_does(
    memory: str, claim: str, negating: str
) -> None:
    """ "dislikes", "avoids" (and "doesn't like", read as "dislikes") against a text that says
    yes is a negation one side has, nothing else differing; so is "never" against "not
    forbidden"."""
    features = read_pair(memory, claim)
    assert features.difference_kind == "negation"
    assert features.difference == f"the {negating} negates what the other states"
    assert POLICY.judge(0.8, features)[0] == "conflicts"


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("Lena doesn't like meetings before 10 am.", "Lena dislikes meetings before 10 am."),
        ("Never deploy on Fridays.", "Deploys are forbidden on Fridays."),
        # "to avoid" tells a purpose, not a no
        (
            "Bulk updates are split into chunks of 500 rows to avoid long table locks.",
            "Bulk updates run in chunks of 500 rows so table locks stay short.",
        ),
    ],
)
def test_two_ways_of_saying_no_and_a_purpose_are_no_negation(memory: str, claim: str) -> None:
    assert read_pair(memory, claim).difference_kind != "negation"


@pytest.mark.parametrize(
    ("memory", "claim", "negates"),
    [
        # a second clause negating something else denies nothing the first one states
        (
            "Invoices are stored as PDF files in S3, never on local disk.",
            "Invoices are kept as PDF files in S3.",
            False,
        ),
        ("Use ruff for linting; do not add flake8 plugins.", "ruff is used for linting.", False),
        # a verb that says no in a clause of its own
        (
            "Kofi wants Go code formatted with gofumpt, and he dislikes long import blocks.",
            "Kofi formats Go code with gofumpt.",
            False,
        ),
        # the clause that says no holds what the claim says: a negation
        (
            "Commit messages use the imperative mood and have no trailing period.",
            "Commit messages have a trailing period.",
            True,
        ),
        (
            "The importer skips archived rows and never retries failed ones.",
            "The importer retries failed rows.",
            True,
        ),
        ("The cron job never runs on weekends.", "The cron job runs on weekends.", True),
    ],
)
def test_a_negation_counts_in_the_clause_that_holds_the_other_texts_words(
    memory: str, claim: str, negates: bool
) -> None:
    assert verify_features.negates_the_other(statement(memory), statement(claim)) is negates
    assert (read_pair(memory, claim).difference_kind == "negation") is negates


@pytest.mark.parametrize(
    ("text", "says_no"),
    [
        ("Pushing to main is forbidden.", True),
        ("Pushing to main is not forbidden.", False),
        # a word that forbids says no of itself, "no" before it is no permission
        ("Pushing to main is prohibited.", True),
        ("Pushing to main is not prohibited.", False),
        # an adverb between is read through
        ("Running TRUNCATE on staging is not explicitly prohibited.", False),
        ("Force pushes are not strictly forbidden here.", False),
        ("No prohibited items in carry-on bags.", True),
        ("Friday deploys are off-limits.", True),
        ("Uploads are limited to 25 MB.", False),  # a limit is no ban
        ("It is not forbidden to avoid mocks.", False),  # "to avoid": a purpose
        ("It was not a problem.", False),
        ("It's not a problem to restart the job.", False),
        ("Pushing to main is not forbidden, but avoid force pushes.", True),  # a no elsewhere
        ("Restarting it is not a problem.", False),
        # a report that something had no trouble is a negation as written
        ("Firmware 4.2 has no problem with large item counts.", True),
        ("Java 21 worked without problems.", True),
        ("Never push to main.", True),
    ],
)
def test_only_a_negated_forbidding_word_turns_a_no_into_a_yes(text: str, says_no: bool) -> None:
    assert verify_features.says_no(statement(text)) is says_no


@pytest.mark.parametrize(
    ("memory", "claim", "words"),
    [
        (
            "Teodor wants answers short and code first, with the explanation after the code.",
            "Teodor wants the explanation first, with the code after it.",
            "code / explanation",
        ),
        (
            "Kiosk updates go to the Majorstua branch first as a pilot, and to all other "
            "branches a week later.",
            "Kiosk updates go to all other branches first, and to the Majorstua branch a week "
            "later.",
            "majorstua / other",
        ),
        # a verb against its noun ("explain" / "explanation")
        (
            "Oksana prefers short answers with the code first and the explanation after it.",
            "Explain first, then show the code: that's how Oksana likes it.",
            "code / explain",
        ),
        (
            "Run the deployment first and the smoke tests after it.",
            "Smoke tests first, then deploy.",
            "deployment / tests",
        ),
    ],
)
def test_what_comes_first_exchanged_is_a_swap(memory: str, claim: str, words: str) -> None:
    assert verify_features.first_exchanged(memory, claim) == words
    assert read_pair(memory, claim).difference_kind == "exchange"


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        ("Run the linter first, then the tests.", "Run the linter first and the tests after."),
        ("Deploy staging first, then production.", "Deploy to staging first."),
        ("Teodor wants code first, then the explanation.", "Teodor wants the code first."),
    ],
)
def test_the_same_thing_first_is_no_swap(memory: str, claim: str) -> None:
    assert verify_features.first_exchanged(memory, claim) is None


@pytest.mark.parametrize(
    ("memory", "claim", "pair"),
    [
        (
            "Reindexing in place during opening hours once took search down for 40 minutes.",
            "Reindexing in place outside opening hours once took search down for 40 minutes.",
            "during / outside",
        ),
        (
            "Owners can cancel an appointment free of charge up to 24 hours before it.",
            "Cancellations made up to 24 hours before the appointment are charged.",
            "free / charged",
        ),
        (
            "When reporting a failure, quote error messages to Ilse verbatim.",
            "When a failure is reported, Ilse wants the error messages paraphrased.",
            "verbatim / paraphrased",
        ),
        (
            "Type hints are written on every function, including the return type.",
            "Type hints are written on every function, excluding the return type.",
            "including / excluding",
        ),
    ],
)
def test_verify_s_own_opposites_are_two_values_of_one_setting(
    memory: str, claim: str, pair: str
) -> None:
    assert verify_features.opposite_in(VERIFY_OPPOSITES, memory, claim) == pair
    assert POLICY.judge(0.86, read_pair(memory, claim))[0] == "conflicts"


def test_every_against_only_is_the_other_value_of_one_setting() -> None:
    memory = "Teodor wants type hints on every new Python function, including the return type."
    claim = "Teodor wants type hints only on public Python functions."
    assert verify_features.every_or_only(memory, claim) == "every / only"
    features = read_pair(memory, claim)
    assert features.difference_kind == "opposite"
    assert POLICY.judge(0.92, features)[0] == "conflicts"
    # "every" said two ways, or "only" in both, is no such difference
    assert (
        verify_features.every_or_only(
            "Type hints go on every new function.", "Type hints go on all new functions."
        )
        is None
    )
    assert (
        verify_features.every_or_only(
            "Only admins can delete branches.", "Deleting branches is for admins only."
        )
        is None
    )


def test_a_bound_turned_is_named_in_the_memory_s_order() -> None:
    memory = "Ilse prefers small pull requests, under 400 changed lines."
    claim = "Ilse prefers pull requests of more than 400 changed lines."
    assert verify_features.bound_turned(memory, claim) == "upper bound / lower bound"
    assert verify_features.bound_turned(claim, memory) == "lower bound / upper bound"
    assert read_pair(memory, claim).difference == (
        "the other value of one setting: upper bound / lower bound"
    )
    # the same bound in other words is none
    assert verify_features.bound_turned(memory, "PRs stay below 400 changed lines.") is None


def test_a_time_after_every_word_of_the_claim_adds_to_it() -> None:
    memory = "Idris joined the Skyledger team in September 2021 after 3 years on the archive."
    assert verify_features.stated_word_for_word(
        memory, "Idris joined the Skyledger team in September 2021."
    )
    # an ordering word among the claim's words is still the memory's own
    order = "Run the migrations before deploying the release"
    assert not verify_features.stated_word_for_word(
        order, "Run the migrations after deploying the release"
    )
    assert not verify_features.stated_word_for_word(
        "Standup moved from Monday to Friday", "Standup moved from Monday"
    )


def test_the_kind_of_a_value_both_say_is_no_word_of_the_claims_own() -> None:
    """ "the `orders.v2` queue" says of a clause's "`orders.v2`" only what kind it is, the
    noun before the value or after it."""
    clause = "the importer reads from `orders.v2`"
    assert verify_features.says_no_more("The importer reads from the `orders.v2` queue.", clause)
    assert verify_features.says_no_more("The importer reads from the queue `orders.v2`.", clause)
    # a word of its own, or the kind of a value the clause does not have
    assert not verify_features.says_no_more(
        "The importer reads from the `orders.v2` queue daily.", clause
    )
    assert not verify_features.says_no_more(
        "The importer reads from the `orders.v3` queue.", clause
    )


@pytest.mark.parametrize(
    ("memory", "claim", "exchanged"),
    [
        (
            "Before a release, bump the version first and then tag the commit.",
            "Tag the commit first, then bump the version.",
            "bump version / tag commit",
        ),
        # the same order, or a step only one text says: no exchange
        (
            "Before a release, bump the version first and then tag the commit.",
            "Bump the version first, then tag the commit.",
            None,
        ),
        (
            "Warm the cache first, then switch traffic.",
            "Switch traffic first, then page on-call.",
            None,
        ),
        (
            "Warm the cache first and switch traffic after.",
            "Switch traffic first, then warm it.",
            None,
        ),
    ],
)
def test_two_steps_in_the_other_order_are_exchanged(
    memory: str, claim: str, exchanged: str | None
) -> None:
    assert verify_features.steps_exchanged(memory, claim) == exchanged
    if exchanged is not None:
        assert read_pair(memory, claim).difference_kind == "exchange"


def test_a_thing_of_the_holder_named_with_its_value_is_the_holder_own() -> None:
    # "X's editor is Neovim" states X's own setting, the same holder as "X uses Neovim"
    memory = "Ottoline uses Neovim with LazyVim and the Catppuccin Mocha theme."
    claim = "Ottoline's editor is Neovim, set up with LazyVim and themed Catppuccin Mocha."
    features = read_pair(memory, claim)
    assert not features.other_holder
    assert POLICY.judge(0.88, features) == ("confirms", "states the same values")
    # a person of X's is still someone else
    manager = read_pair("Ottoline works with Callum every day.", "Ottoline's manager is Callum.")
    assert manager.other_holder


def test_a_bound_named_by_its_word_turns_against_the_other_way() -> None:
    """ "capped at 12 MB per file" / "at least 12 MB each": a bound named by a word ("capped
    at", "up to", "a maximum of", "a minimum of") is read as one, the other way is turned."""
    memory = "Uploads go to the media bucket, capped at 12 MB per file."
    assert verify_features.bound_turned(memory, "Uploads must be at least 12 MB each.") == (
        "upper bound / lower bound"
    )
    assert verify_features.bound_turned(memory, "Uploads may be up to 12 MB each.") is None
    assert verify_features.bound_turned(
        "Batches hold a minimum of 50 rows.", "Batches hold no more than 50 rows."
    ) == ("lower bound / upper bound")


def test_a_word_only_inside_a_path_of_another_clause_is_not_said_there() -> None:
    """ "built with Vite 5, served from `/srv/larkspur/web`": "larkspur" in the path is no
    word the memory says elsewhere, so "The Larkspur frontend is built with Vite 5" moved
    nothing between clauses; a host name still says its words."""
    memory = "The frontend is a React 18 app built with Vite 5, served from `/srv/larkspur/web`."
    assert (
        verify_features.clause_difference(memory, "The Larkspur frontend is built with Vite 5.")
        is None
    )
    assert read_pair(memory, "The Larkspur frontend is built with Vite 5.").difference is None


@pytest.mark.parametrize(
    ("memory", "claim", "words"),
    [
        # the thing named after the word that ends it, up to the new one or a time
        (
            "We retired the Nagios box in May; monitoring runs on Prometheus now.",
            "Monitoring still runs on the Nagios box.",
            "box, nagios",
        ),
        (
            "In April the cron jobs moved off Heroku Scheduler to GitHub Actions.",
            "The cron jobs still run on Heroku Scheduler.",
            "heroku, scheduler",
        ),
        (
            "Kai stopped using tmux last year and splits panes in WezTerm now.",
            "Kai still uses tmux for split panes.",
            "tmux",
        ),
        # before it, after a form of "be"
        (
            "Saved searches were removed from the admin panel in 3.2.",
            "The admin panel still has saved searches.",
            "saved, searches",
        ),
    ],
)
def test_a_thing_said_to_still_hold_that_the_memory_says_ended_is_denied(
    memory: str, claim: str, words: str
) -> None:
    ended = verify_features.ended_in_memory(memory, claim)
    assert ended == f"the memory says it ended: {words}"
    assert POLICY.relation(0.7, memory, claim) == ("conflicts", ended)


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        # the new thing, not the ended one
        (
            "We replaced Travis with CircleCI for the mobile builds.",
            "Mobile builds still run on CircleCI.",
        ),
        # a clause that says what is left of the ended thing
        (
            "Webpack was replaced by Vite for the docs; webpack is kept only for the widget.",
            "Webpack is still kept for the widget.",
        ),
        # the memory says it still holds itself
        (
            "The old VPN was dropped for staff but is still up for the warehouse scanners.",
            "The old VPN is still up for the warehouse scanners.",
        ),
        # no "still": nothing said to hold on
        ("We retired the Nagios box in May.", "Monitoring ran on the Nagios box until May."),
    ],
)
def test_a_thing_still_said_that_the_memory_did_not_end_is_no_denial(
    memory: str, claim: str
) -> None:
    assert verify_features.ended_in_memory(memory, claim) is None


@pytest.mark.parametrize(
    ("memory", "claim"),
    [
        (
            "Each CI job may use at most 4 GB of memory.",
            "A CI job can use no more than 4 GB of memory.",
        ),
        (
            "Security advisories must reach customers at least 10 days before disclosure.",
            "Security advisories reach customers no less than 10 days before disclosure.",
        ),
    ],
)
def test_a_bound_said_with_a_negator_is_no_negation(memory: str, claim: str) -> None:
    features = read_pair(memory, claim)
    assert features.difference_kind is None
    assert POLICY.relation(0.8, memory, claim)[0] != "conflicts"
    # the other way round it is the bound turned
    turned = claim.replace("no more than", "more than").replace("no less than", "less than")
    assert POLICY.relation(0.8, memory, turned)[0] == "conflicts"


def test_a_claim_that_says_no_to_what_a_memory_states_conflicts_from_its_own_similarity() -> None:
    policy = replace(POLICY, denies_from=0.45, shared_word_from=0.3)
    memory = "CI caches compiled objects with ccache between runs."
    denial = "The build does not use ccache."
    assert read_pair(memory, denial).claim_denies
    # below the subject's threshold (related_from 0.53), from denies_from
    assert policy.relation(0.47, memory, denial) == (
        "conflicts",
        "the claim negates what the other states",
    )
    assert policy.relation(0.4, memory, denial)[0] == "related"
    off = replace(policy, denies_from=1.0)  # the default: off
    assert off.relation(0.47, memory, denial)[0] == "related"
    # a still said of what the memory says ended is the claim's denial too
    ended = "The team dropped Celery for background jobs in March."
    assert policy.relation(0.47, ended, "Background jobs still run on Celery.")[0] == "conflicts"
    # the memory's negation is not the claim's: related below the subject's threshold
    negated = "CI does not cache compiled objects with ccache."
    assert not read_pair(negated, "CI caches compiled objects with ccache.").claim_denies
    assert policy.relation(0.47, negated, "CI caches compiled objects with ccache.")[0] == (
        "related"
    )
    # nor in a language the rules do not read, whatever its negation
    read = replace(read_pair(memory, denial), english=False)
    assert policy.judge(0.47, read)[0] == "related"
    assert policy.judge(0.47, replace(read, english=True)) == policy.relation(0.47, memory, denial)


@pytest.mark.parametrize(
    ("memory", "claim", "opposite"),
    [
        # "on" / "off" as a switch's value
        ("The beta flag is on for 5% of riders.", "The beta flag is off for 5% of riders.", True),
        ("Dock sensors default to off.", "Dock sensors default to on.", True),
        ("The kiosk screen saver is switched on, always.", "The kiosk screen saver is off.", True),
        ("Marek takes Mondays off.", "Marek works on Mondays.", True),
        # a preposition or a verb's particle is no switch
        (
            "Verbose logging is disabled on staging.",
            "Staging runs with verbose logging off.",
            False,
        ),
        ("The rebalancing job starts at 04:00.", "The rebalancing job kicks off at 4 am.", False),
        ("Depot vans work on weekdays.", "Depot vans sign off at 18:00.", False),
        # "before" / "after" of the same thing, not one order said both ways
        ("Firmware updates run after 22:00.", "Firmware updates run before 22:00.", True),
        (
            "Invoices go out after the monthly close.",
            "Invoices go out before the monthly close.",
            True,
        ),
        (
            "Only merge after the battery tests pass.",
            "Run the battery tests before merging anything.",
            False,
        ),
        (
            "Vans restock docks after the morning peak.",
            "Before restocking, vans check the app.",
            False,
        ),
    ],
)
def test_on_off_and_before_after_are_values_only_where_they_stand_so(
    memory: str, claim: str, opposite: bool
) -> None:
    found = verify_features.opposite_in(dedup.OPPOSITES, memory, claim)
    assert (found is not None) == opposite, found


# A reason names the words as the texts write them, never the rules' stems or value keys
# (the dashboard and the tool show it to a person): (memory, claim, similarity, shown, not shown)
READABLE_REASONS = [
    (
        "Le client Château Lestrade, à Pauillac, utilise encore l'API v1.",
        "Château Lestrade is located in Margaux.",
        0.6,
        "Château Lestrade",
        "chateau lestrad",
    ),
    (
        "The Kraków Zabłocie gym, opened in 2016, is our oldest customer.",
        "Our newest customer gym is in Prague.",
        0.6,
        "Kraków Zabłocie",
        "krakow",
    ),
    (
        "Die Proben lagern im -80 °C Gefrierschrank in Raum 3.04.",
        "Die Proben lagern bei -20 °C.",
        0.6,
        "-20",
        "minus:",
    ),
    (
        "In March 2024 the team chose Celery with Redis over RabbitMQ for background jobs.",
        "The team chose Celery with Redis for background jobs in March 2023.",
        0.3,
        "chose",
        "choo",
    ),
    (
        "Kofi: I'm on leave, Sanne covers backend decisions while I'm out",
        "Sanne handles backend decisions while Kofi is away.",
        0.3,
        "decisions",
        "decid",
    ),
    (
        "Harbour masters confirm walk-in guest boats in the dashboard, and the mobile app is "
        "used mostly by boat owners.",
        "Boat owners confirm walk-in guests in the dashboard, while harbour masters mostly use "
        "the mobile app.",
        0.6,
        "owners",
        "None",
    ),
    (
        "Prefiero que los scripts de análisis usen R para la estadística y Python.",
        "Lena prefers R for the statistics in analysis scripts and Python for data processing.",
        0.3,
        "python",
        "letter:",
    ),
]


@pytest.mark.parametrize(("memory", "claim", "similarity", "shown", "hidden"), READABLE_REASONS)
def test_a_reason_names_words_as_written(
    memory: str, claim: str, similarity: float, shown: str, hidden: str
) -> None:
    from emergent_memory.app import VERIFY_POLICIES
    from emergent_memory.memory.verify_rules import rules_answer

    why = rules_answer(VERIFY_POLICIES[LOCAL_MODEL_NAME], claim, [(memory, similarity)]).why
    assert shown in why, why
    assert hidden not in why.replace(shown, ""), why
