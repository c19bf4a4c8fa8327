"""What a dashboard page may announce after a change: fixed texts chosen by a redirect's
?done= (never user input), some with a whole-number count (?n=), and the undo offered after a
bulk delete or archive (?change=)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

# What a redirect after a change may announce (?done=...): fixed texts, never user input.
NOTICES = {
    "updated": "Saved: the memory has a new version.",
    "deleted": "Deleted. It stays in the history and can be restored.",
    "archived": "Archived: recall and injection leave it out until it is restored.",
    "reinforced": "Evidence recorded.",
    "restored": "Restored: the memory is active again.",
    "signed_out": "You are signed out.",
    "decided": "Decision recorded.",
    "undone": "Decision undone: the pair waits for a decision again.",
    "context": "Context saved.",
    "project_named": "Saved: the project's name (or, left empty, its folder's when known).",
    # what adding a memory by hand did (dashboard/adding.py)
    "added": "Added: a new memory.",
    "added_similar": (
        "Added. A similar memory was kept beside it: the Duplicates page asks whether the two "
        "say the same."
    ),
    "added_conflict": (
        "Added beside a memory that states another value of the same subject: both are kept "
        "and linked as a conflict (below); the Duplicates page decides which one holds."
    ),
    "added_replaced": (
        "Added in place of a memory that said the same, or an older value of it: that one is "
        "superseded (linked below, and restorable from its page)."
    ),
    "added_unchanged": (
        "Already remembered: this memory says the same. Nothing new was added; the save "
        "counts as evidence for it."
    ),
    "added_restored": "Already remembered in an archived memory, which is active again.",
}
# What a redirect after a bulk change may announce with its count (?done=...&n=...): fixed
# texts for one memory and for several; the count must be a whole number (else no notice).
COUNTED_NOTICES = {
    "bulk_delete": ("Deleted {n} memory.", "Deleted {n} memories."),
    "bulk_archive": ("Archived {n} memory.", "Archived {n} memories."),
    "bulk_restore": ("Restored {n} memory.", "Restored {n} memories."),
    "bulk_undone": ("Undone: {n} memory restored.", "Undone: {n} memories restored."),
}
MAX_COUNTED = 1_000_000
UNDOABLE = {"bulk_delete": "delete", "bulk_archive": "archive"}  # changes offered an undo


def notice_of(params: Mapping[str, str]) -> str | None:
    """The notice a page's ?done= (and ?n=) asks for: one of the fixed texts, with a count."""
    done = params.get("done", "")
    if done in NOTICES:
        return NOTICES[done]
    if done not in COUNTED_NOTICES:
        return None
    raw = params.get("n", "")
    if not raw.isdigit() or len(raw) > 7 or int(raw) > MAX_COUNTED:
        return None
    n = int(raw)
    one, several = COUNTED_NOTICES[done]
    return (one if n == 1 else several).format(n=f"{n:,}")


def undo_of(params: Mapping[str, str]) -> dict[str, str] | None:
    """The undo a page offers after a bulk delete or archive (?done=, ?change=): the action
    and the change's id, a UUID (else none)."""
    action = UNDOABLE.get(params.get("done", ""))
    if action is None or notice_of(params) is None:
        return None
    try:
        change = str(uuid.UUID(params.get("change", "")))
    except ValueError:
        return None
    return {"action": action, "change": change}
