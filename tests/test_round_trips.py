"""Round trips to the database per save and per recall, counted on the wire by
benchmarks/roundtrips.py: a change that makes a save or a recall wait for the database more
often fails here (benchmarks/README.md, section 5, has the numbers before and after they were
reduced)."""

from __future__ import annotations

import uuid

from benchmarks import roundtrips
from emergent_memory.db.pool import create_pool
from emergent_memory.memory import MemoryConfig, MemoryService
from tests.embedders import BagOfWordsEmbedder

# A plain save: the pool's check of the connection, BEGIN, the principal, the save lock, the
# exact repeat (active or archived, one statement), the nearest memory (and its scan setting),
# the insert (SAVEPOINT, INSERT, RELEASE), its evidence row (kb.memory_evidence, migration 0013:
# one more than before), the record, COMMIT. Its validation against the pack costs none
# (packs.PackValidation).
PLAIN_SAVE = 13
# One more than before the issue of authority: the superseded memory's contexts are read even
# when the save names its own (the survivor is filed in both), in the statement that copies
# its evidence (store.INHERIT).
SAVE_WITH_A_CONTEXT_THAT_SUPERSEDES = 31  # 29 before the evidence row, 30 before that
# A recall: the pool's check, BEGIN, the principal, the recall (each memory's derived_from in the
# same statement), synchronous_commit off, the use log, COMMIT. (With a read replica, the use
# log is written in a transaction of its own on the primary.)
RECALL = 7


def test_a_save_waits_for_the_database_no_more_often_than_measured(app_database_url: str) -> None:
    scenarios = {scenario.name: scenario for scenario in roundtrips.SCENARIOS}
    chosen = [
        scenarios["plain save"],
        scenarios["save with a context that supersedes"],
        scenarios["recall"],
    ]
    pool = create_pool(app_database_url, min_size=1, max_size=1)
    try:
        with pool.connection() as conn:
            pass  # the pool's only connection, counted whoever holds it
        service = MemoryService(pool, BagOfWordsEmbedder(), MemoryConfig(dedup_threshold=0.8))
        counted = roundtrips.measure(service, conn, uuid.uuid4(), chosen, rounds=2)
    finally:
        pool.close()
    # every round counts, not their median (rounds of 12 and 13 have a median of 12.5)
    assert max(counted["plain save"]["round_trips_seen"]) <= PLAIN_SAVE
    assert (
        max(counted["save with a context that supersedes"]["round_trips_seen"])
        <= SAVE_WITH_A_CONTEXT_THAT_SUPERSEDES
    )
    assert max(counted["recall"]["round_trips_seen"]) <= RECALL
