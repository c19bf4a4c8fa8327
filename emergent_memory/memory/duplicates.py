"""DuplicateService: the pairs of memories that save's (or update's) duplicate check found
close but did not supersede (kb.possible_duplicates, recorded in the save's transaction by
store.record_possible_duplicate), and a person's decision on each.

- keep_both: both stay; the pair is closed. For a conflict (the two linked by CONFLICTS_WITH:
  another value of the same subject), that says both are true: the link is removed, and
  neither is outranked any more.
- supersede: the other memory becomes superseded by `keep`, as save supersedes an old one.
- merge: `keep` gets the merged text as a new version (update's checks), then supersedes
  the other; without a text it keeps its own.

`undo` takes a keep_both or supersede decision back: the pair waits again, a conflict link
that keep_both removed is made again, and the memory a supersede replaced is restored (as
`restore` does). A merge is undone from the memories' pages (the kept memory's earlier text is
a version to restore; the other memory is restored like any superseded one).

The supersession and the new version are MemoryService.supersede's; the decision is
recorded in its transaction.
"""

from __future__ import annotations

from typing import Any, Literal, get_args
from uuid import UUID

from psycopg import Connection
from typing_extensions import TypedDict

from emergent_memory import graph
from emergent_memory.auth.principal import Principal
from emergent_memory.db.pool import DatabasePool
from emergent_memory.errors import InvalidInput, ObjectNotFound
from emergent_memory.memory import answers, browse_store, store, validation
from emergent_memory.memory.browse import (
    BrowsedMemory,
    as_uuid,
    browsed,
    decode_cursor,
    encode_cursor,
    require_read,
    require_write,
)
from emergent_memory.memory.models import MemoryRecord
from emergent_memory.memory.records import pair_why
from emergent_memory.memory.service import MemoryService, acting_for

Decision = Literal["keep_both", "supersede", "merge"]
DECISIONS: tuple[Decision, ...] = get_args(Decision)
OPEN_DEFAULT_LIMIT, OPEN_MAX_LIMIT = 50, 200
PAIRS_CURSOR = "possible_duplicates"
PAIRS_KEY = ("timestamptz", "uuid")


class DuplicatePair(TypedDict):
    """A pair waiting for a decision: `memory` (the newer, whose save or update found the
    other) and `duplicate_of`, both active, with their cosine similarity; `conflict`: the two
    state different values of the same subject (CONFLICTS_WITH), rather than maybe the same
    fact; `why`: why the save kept both and asks (pair_why)."""

    id: str
    memory: BrowsedMemory
    duplicate_of: BrowsedMemory
    similarity: float
    created_at: str
    conflict: bool
    why: str


class OpenPairs(TypedDict):
    pairs: list[DuplicatePair]
    next_cursor: str | None


class Decided(TypedDict):
    """The decision recorded; for supersede and merge, the memory that stays (`memory`) and
    the one it superseded."""

    id: str
    decision: Decision
    kept_id: str | None
    decided_at: str
    memory: MemoryRecord | None
    superseded_ids: list[str]


class Undone(TypedDict):
    """The decision taken back; `restored_id`: the memory a supersede had replaced, active
    again; `relinked`: a conflict link keep_both had removed was made again."""

    id: str
    undone: Decision
    restored_id: str | None
    relinked: bool


class DuplicateService:
    def __init__(self, pool: DatabasePool, memory: MemoryService) -> None:
        self._pool = pool
        self._memory = memory

    def open(
        self, principal: Principal, cursor: str | None = None, limit: int | None = None
    ) -> OpenPairs:
        """The principal's pairs still waiting for a decision whose two memories are active
        and visible to it, newest first, a page at a time."""
        limit_ = validation.limit(limit, default=OPEN_DEFAULT_LIMIT, maximum=OPEN_MAX_LIMIT)
        after = None
        if cursor is not None:
            time, id_ = decode_cursor(cursor, PAIRS_CURSOR, "", PAIRS_KEY)
            after = (time, id_)
        require_read(principal)
        with acting_for(self._pool, principal) as conn:
            found = browse_store.open_pairs(conn, principal, after, limit_ + 1)
            shown = found[:limit_]
            ids = {i for pair in shown for i in (pair.memory_id, pair.duplicate_of)}
            rows = browse_store.rows(conn, principal, list(ids))
        pairs: list[DuplicatePair] = [
            {
                "id": str(pair.id),
                "memory": browsed(rows[pair.memory_id], self._memory.decay),
                "duplicate_of": browsed(rows[pair.duplicate_of], self._memory.decay),
                "similarity": round(pair.similarity, 4),
                "created_at": pair.created_at.isoformat(),
                "conflict": any(
                    str(other["id"]) == str(pair.duplicate_of)
                    for other in rows[pair.memory_id].conflicts_with or []
                ),
                "why": pair_why(pair.reason),
            }
            for pair in shown
            if pair.memory_id in rows and pair.duplicate_of in rows
        ]
        next_cursor = None
        if len(found) > limit_:
            last = shown[-1]
            next_cursor = encode_cursor(PAIRS_CURSOR, "", (last.created_at, last.id))
        return {"pairs": pairs, "next_cursor": next_cursor}

    def pending(self, principal: Principal) -> int:
        """How many pairs wait for the principal's decision (what `open` lists, all pages);
        0 for a credential that may not read memories."""
        if not principal.can_read:
            return 0
        with acting_for(self._pool, principal) as conn:
            return browse_store.count_open_pairs(conn, principal)

    def resolve_pair_id(self, principal: Principal, pair_id: str, field: str = "pair_id") -> str:
        """A pair id as the CLI takes it: a whole id, or the beginning of one as its table
        shows it (at least 8 hex digits) that names exactly one of the principal's pairs,
        decided or not. Another actor's pair answers like an unknown one."""
        prefix = store.id_prefix(pair_id)
        if prefix is None:
            try:
                return str(as_uuid(pair_id, field))
            except InvalidInput:
                raise InvalidInput(
                    f"{field} {pair_id!r:.60} is not a pair id: give the id `review` shows (at "
                    f"least {store.SHORTEST_ID_PREFIX} hex digits) or the whole id"
                ) from None
        require_read(principal)
        with acting_for(self._pool, principal) as conn:
            found = browse_store.pair_ids_with_prefix(conn, principal, prefix)
        missing = ObjectNotFound(f"possible duplicate {prefix} not found")
        whole_ids = "--json shows whole ids"
        return str(store.the_one(found, missing, prefix, field, "pairs", whole_ids))

    def decide(
        self,
        principal: Principal,
        pair_id: UUID | str,
        decision: str,
        keep: UUID | str | None = None,
        content: str | None = None,
    ) -> Decided:
        """Decide a pair: keep_both, supersede (`keep`, one of the pair, stays; the other is
        superseded by it) or merge (`keep` gets `content`, the merged text, if given, then
        supersedes the other). A pair is decided once."""
        id_ = as_uuid(pair_id, "pair_id")
        decision_ = validation.choice(decision, DECISIONS, "decision")
        if decision_ == "keep_both" and keep is not None:
            raise InvalidInput("keep_both keeps both memories; do not name one in keep")
        if decision_ != "merge" and content is not None:
            raise InvalidInput("content is the merged text of a merge; only merge takes it")
        kept = None if keep is None else as_uuid(keep, "keep")
        if decision_ != "keep_both" and kept is None:
            raise InvalidInput(f"{decision_} needs keep: the id of the memory that stays")
        require_write(principal)

        with acting_for(self._pool, principal) as conn:
            pair = self._open_pair(conn, principal, id_)
            if decision_ == "keep_both":
                # both true: a conflict between them is resolved
                store.settle_as_both_true(conn, pair.memory_id, pair.duplicate_of)
                decided_at = browse_store.decide_pair(conn, principal, id_, decision_, None)
                assert decided_at is not None  # locked and open
                both: Decided = {
                    "id": str(id_),
                    "decision": decision_,
                    "kept_id": None,
                    "decided_at": decided_at.isoformat(),
                    "memory": None,
                    "superseded_ids": [],
                }
                return answers.deliverable(both, "decide")  # before the commit
        if kept not in (pair.memory_id, pair.duplicate_of):
            raise InvalidInput(
                f"keep must be one of the pair: {pair.memory_id} or {pair.duplicate_of}"
            )
        other = pair.duplicate_of if kept == pair.memory_id else pair.memory_id
        recorded: list[Any] = []

        def record(conn: Connection[Any]) -> None:
            self._open_pair(conn, principal, id_)  # locked; decided meanwhile: refused
            recorded.append(browse_store.decide_pair(conn, principal, id_, decision_, kept))

        result = self._memory.supersede(
            principal, str(kept), str(other), content=content, within=record
        )
        return {
            "id": str(id_),
            "decision": decision_,
            "kept_id": str(kept),
            "decided_at": recorded[0].isoformat(),
            "memory": result["memory"],
            "superseded_ids": result["superseded_ids"],
        }

    def undo(self, principal: Principal, pair_id: UUID | str) -> Undone:
        """Take back the decision on a pair (see the module docstring): it waits again."""
        id_ = as_uuid(pair_id, "pair_id")
        require_write(principal)
        with acting_for(self._pool, principal) as conn:
            pair = self._decided_pair(conn, principal, id_)
            if pair.decision == "merge":
                raise InvalidInput(
                    f"possible duplicate {id_} was merged; a merge is undone on the memories' "
                    f"pages: restore the earlier version of {pair.kept_id}, and restore the "
                    "memory it superseded"
                )
            if pair.decision == "keep_both":
                removed = browse_store.kept_both_conflicts(
                    conn, pair.memory_id, pair.duplicate_of, store.KEPT_BOTH
                )
                if removed:  # both are still active: the queue lists only such pairs
                    graph.create_relationship(
                        conn,
                        project_id=principal.project_id,
                        type=store.CONFLICTS_WITH,
                        src_id=pair.memory_id,
                        dst_id=pair.duplicate_of,
                        actor_id=principal.actor_id,
                    )
                browse_store.reopen_pair(conn, principal, id_)
                both: Undone = {
                    "id": str(id_),
                    "undone": "keep_both",
                    "restored_id": None,
                    "relinked": bool(removed),
                }
                return answers.deliverable(both, "undo")
        other = pair.duplicate_of if pair.kept_id == pair.memory_id else pair.memory_id

        def reopen(conn: Connection[Any]) -> None:
            again = self._decided_pair(conn, principal, id_)  # locked; undone meanwhile?
            if again.decision != "supersede":
                raise InvalidInput(f"possible duplicate {id_} changed meanwhile; reload")
            browse_store.reopen_pair(conn, principal, id_)
            if again.kept_id is not None and again.decided_at is not None:
                # the kept memory gives back what it took from the other
                self._memory.give_back(conn, again.kept_id, other, again.decided_at)

        self._memory.restore(principal, str(other), within=reopen)
        return {"id": str(id_), "undone": "supersede", "restored_id": str(other), "relinked": False}

    @classmethod
    def _decided_pair(
        cls, conn: Connection[Any], principal: Principal, pair_id: UUID
    ) -> browse_store.PairRow:
        pair = cls._pair(conn, principal, pair_id)
        if pair.decision is None:
            raise InvalidInput(
                f"possible duplicate {pair_id} waits for a decision; there is nothing to undo"
            )
        return pair

    @staticmethod
    def _pair(conn: Connection[Any], principal: Principal, pair_id: UUID) -> browse_store.PairRow:
        """The principal's pair, locked until the transaction ends."""
        pair = browse_store.lock_pair(conn, principal, pair_id)
        if pair is None:
            raise ObjectNotFound(f"possible duplicate {pair_id} not found")
        return pair

    @classmethod
    def _open_pair(
        cls, conn: Connection[Any], principal: Principal, pair_id: UUID
    ) -> browse_store.PairRow:
        pair = cls._pair(conn, principal, pair_id)
        if pair.decision is not None:
            raise InvalidInput(
                f"possible duplicate {pair_id} was decided already ({pair.decision})"
            )
        return pair
