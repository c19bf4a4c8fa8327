"""Validity in time and the other lifecycle properties of a memory (migration 0013): their
checked, stored form (importance, valid_from, valid_until as ISO 8601 in UTC, rationale),
the order of the bounds, and where a supersession ends a memory's validity (and what restore
gives back), and the moment recall's as_of names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from emergent_memory.graph.models import GraphObject
from emergent_memory.memory import validation


def lifecycle_properties(values: Mapping[str, object], *, removable: bool) -> dict[str, Any]:
    """The checked importance, valid_from, valid_until and rationale among `values`, as
    stored (dates as ISO 8601 in UTC): a None value is left out, or, when `removable` (an
    update), kept as None (the property is removed)."""
    checked: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            if removable:
                checked[name] = None
            continue
        if name == "importance":
            checked[name] = validation.importance(value)
        elif name in ("valid_from", "valid_until"):
            checked[name] = validation.iso_utc(validation.moment(value, name))
        else:
            checked[name] = validation.note(value, name, validation.MAX_RATIONALE)
    if checked.get("valid_from") is not None and checked.get("valid_until") is not None:
        validation.validity(
            validation.moment(checked["valid_from"], "valid_from"),
            validation.moment(checked["valid_until"], "valid_until"),
        )
    return checked


def as_of(value: object) -> datetime:
    """The moment recall's `as_of` names, in UTC: a date-time as given (without a zone: UTC);
    a date alone (YYYY-MM-DD) the end of that day in UTC (its last microsecond), so that it
    answers what was believed true on that day, changes made during the day included."""
    moment_ = validation.moment(value, "as_of")
    if isinstance(value, str) and len(value.strip()) == 10:  # a date, as validation.moment reads it
        return moment_ + timedelta(days=1, microseconds=-1)
    return moment_


def check_validity(properties: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
    """valid_until after valid_from once `patch` is applied to a memory's `properties`."""
    if "valid_from" not in patch and "valid_until" not in patch:
        return
    start = patch["valid_from"] if "valid_from" in patch else properties.get("valid_from")
    end = patch["valid_until"] if "valid_until" in patch else properties.get("valid_until")
    if start is not None and end is not None:
        validation.validity(
            validation.moment(start, "valid_from"), validation.moment(end, "valid_until")
        )


def validity_end(properties: Mapping[str, Any], end: str) -> str | None:
    """Where a superseded memory's validity ends: at `end`, unless it already ends earlier
    (None: keep it); never before it begins (then it ends where it begins: it never held)."""
    current = properties.get("valid_until")
    end_at = validation.moment(end, "valid_until")
    if current is not None and validation.moment(current, "valid_until") <= end_at:
        return None
    start = properties.get("valid_from")
    if start is not None and end_at < validation.moment(start, "valid_from"):
        return str(start)
    return end


def validity_before_supersession(versions: Sequence[GraphObject]) -> str | None:
    """valid_until as it was before the latest supersession ended it: the newest version that
    was not superseded (None: the memory had no end)."""
    for version in reversed(versions):
        if "superseded_by" not in version.properties:
            value = version.properties.get("valid_until")
            return None if value is None else str(value)
    return None
