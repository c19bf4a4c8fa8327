"""Recall's order, measured in the lifecycle simulation
(`python -m benchmarks.lifecycle_ordering [LIMIT]`; about two minutes, one world).

benchmarks/lifecycle.py simulates a year of one agent's saves and recalls; its timing varies
from run to run by about 0.02 in the share of questions whose current value comes first. To
compare orderings without that noise, every month's questions are ranked here four ways from
the same store in the same run (recall with `record_use` off, so the comparison itself uses
nothing), and the shipped way is the one the simulation's own recalls use:

- `before`: stop 84's order: the outranked side of a conflict moved right after the side that
  outranks it, when both were found;
- `place`: the current side takes the first place any side of its conflict was found in
  (records.current_first);
- `search order`: `place`, and the side that outranks a stale one found is brought along from
  recall's candidates (stop 85's, in the search's order: fused ranks);
- `shipped`: `search order`, the candidates most relevant first (service._relevant, since
  stop 88).

Each is scored twice: the changed facts as labelled now (lifecycle.answers: a background note
that states a planted subject's value is one of its values) and as labelled before stop 88
(`(planted only)`).

LIMIT is the `limit` of the questions' recalls (10, as in benchmarks/lifecycle.py).
"""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

from benchmarks import lifecycle
from emergent_memory.memory import authority, service
from emergent_memory.memory import store as store_module


def before_current_first(memories: list[Any]) -> list[Any]:
    ordered = list(memories)
    for memory in list(ordered):
        if memory["conflict"] != "outranked":
            continue
        mine = authority.rank_key(memory["source"], datetime.fromisoformat(memory["created_at"]))
        winners = [
            i
            for i, other in enumerate(ordered)
            if other["id"] in memory["conflicts_with"]
            and authority.rank_key(other["source"], datetime.fromisoformat(other["created_at"]))
            > mine
        ]
        position = ordered.index(memory)
        if winners and max(winners) > position:
            ordered.remove(memory)
            ordered.insert(max(winners), memory)
    return ordered


def before_relevant(
    rows: list[store_module.RecallRow], judged: list[float], floor: float, limit: int
) -> tuple[list[store_module.RecallRow], list[float]]:
    kept = [(r, v) for r, v in zip(rows[:limit], judged[:limit], strict=True) if v >= floor]
    return [r for r, _ in kept], [v for _, v in kept]


def search_order_relevant(
    rows: list[store_module.RecallRow], judged: list[float], floor: float, limit: int
) -> tuple[list[store_module.RecallRow], list[float]]:
    """service._relevant at stop 85: the first `limit` rows in the search's order."""
    return service._kept(list(zip(rows, judged, strict=True)), floor, limit)


WAYS = {
    "before": (before_current_first, before_relevant),
    "place": (service.current_first, before_relevant),
    "search order": (service.current_first, search_order_relevant),
    "shipped": (service.current_first, service._relevant),
}


# the changed facts as labelled before stop 88 (lifecycle.evaluate's "changed_planted_only")
LABELLED_BEFORE = " (planted only)"


def measure(limit: int = 10, **simulation: Any) -> list[dict[str, dict[str, Any]]]:
    """Each month's scores of changed facts (benchmarks.lifecycle.evaluate's "changed") for
    each of WAYS, from the same store; `simulation`: lifecycle.run's sizes (users, background,
    recalls_per_step, days). The modules are as they were afterwards."""
    evaluate, ranks, write_result = lifecycle.evaluate, lifecycle.ranks, lifecycle.write_result
    shipped = service.current_first, service._relevant
    months: list[dict[str, dict[str, Any]]] = []

    def ranked(*args: Any, **kwargs: Any) -> dict[str, Any]:
        month = {}
        for way, (order, keep) in WAYS.items():
            service.current_first, service._relevant = order, keep
            scored = evaluate(*args, **kwargs)
            month[way] = scored["changed"]
            month[way + LABELLED_BEFORE] = scored["changed_planted_only"]
        service.current_first, service._relevant = shipped
        months.append(month)
        return evaluate(*args, **kwargs)

    lifecycle.evaluate = ranked
    lifecycle.ranks = lambda svc, who, query, limit_=limit: ranks(svc, who, query, limit_)
    lifecycle.write_result = lambda *args, **kwargs: None
    try:
        lifecycle.run(variant=False, worlds=[("shipped", 0.05, 0.0)], **simulation)
    finally:
        lifecycle.evaluate, lifecycle.ranks, lifecycle.write_result = evaluate, ranks, write_result
        service.current_first, service._relevant = shipped
    return months


def main(limit: int = 10) -> None:
    months = measure(limit)
    print(f"changed facts, current value first (hit@1), recall limit {limit}")
    ways = [*WAYS, *(way + LABELLED_BEFORE for way in WAYS)]
    print("| month | " + " | ".join(ways) + " |")
    print("|---|" + "---|" * len(ways))
    for n, month in enumerate(months, start=1):
        cells = [str(month[way].get("hit@1", "-")) for way in ways]
        print(f"| {n} | " + " | ".join(cells) + " |")
    pooled = []
    for way in ways:
        asked = [(m[way]["hit@1"], m[way]["questions"]) for m in months if m[way]["questions"]]
        total = sum(q for _, q in asked)
        pooled.append(f"{sum(h * q for h, q in asked) / max(1, total):.3f} of {total}")
    print("| year, pooled | " + " | ".join(pooled) + " |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
