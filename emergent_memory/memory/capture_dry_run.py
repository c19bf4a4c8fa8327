"""Capture's dry run: what the gate and extractor make of a conversation, and what capture
would do with each proposal, with nothing stored (`emergent-memory capture --dry-run`).

The conversation is cleaned like received turns (memory/capture_text.py), cut into windows
of the configured size with the configured overlap, and each window goes through the same
models and the same rule (memory/extraction.py) as in the worker. Nothing is written: no
turn, window, Episode, memory or LLM call record; the result reports the tokens spent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from typing_extensions import TypedDict

from emergent_memory.errors import LLMFailed
from emergent_memory.llm import LLMError
from emergent_memory.memory.capture_store import CloseMemory
from emergent_memory.memory.capture_text import CleanTurn, Turn
from emergent_memory.memory.extraction import Extractor, review

# The memories close to a window's turns (CaptureService.close_memories, for one principal).
CloseMemories = Callable[[Sequence[Turn]], list[CloseMemory]]


class DryRunTarget(TypedDict):
    id: str
    content: str


class DryRunMemory(TypedDict):
    """A proposal and what capture would do with it: `verdict` add, reinforce or supersede
    (saved through save_memory's path), none or drop (nothing saved; `note` says why)."""

    verdict: str
    content: str
    category: str
    scope: str
    source: str
    target: DryRunTarget | None
    note: str | None


class DryRunWindow(TypedDict):
    first_turn: int
    end_turn: int
    worth_remembering: bool
    gate_reason: str
    summary: str | None
    memories: list[DryRunMemory]


class DryRunResult(TypedDict):
    turns: int
    secrets_removed: int
    windows: list[DryRunWindow]
    input_tokens: int
    output_tokens: int


def dry_run(
    extractor: Extractor,
    close_memories: CloseMemories,
    cleaned: Sequence[CleanTurn],
    *,
    window_turns: int,
    window_overlap: int,
) -> DryRunResult:
    """What capture would do with a conversation's cleaned turns, window by window. Raises
    LLMFailed when a model fails."""
    turns = [Turn(index, turn.role, turn.content) for index, turn in enumerate(cleaned)]
    result: DryRunResult = {
        "turns": len(turns),
        "secrets_removed": sum(turn.secrets_removed for turn in cleaned),
        "windows": [],
        "input_tokens": 0,
        "output_tokens": 0,
    }
    for first in range(0, len(turns), window_turns):
        end = min(first + window_turns, len(turns))
        shown = turns[max(0, first - window_overlap) : end]
        try:
            window, spent_in, spent_out = _window(extractor, close_memories, shown, first, end)
        except LLMError as error:
            raise LLMFailed(
                f"the capture models failed on turns {first}-{end - 1}: {error}"
            ) from None
        result["windows"].append(window)
        result["input_tokens"] += spent_in
        result["output_tokens"] += spent_out
    return result


def _window(
    extractor: Extractor,
    close_memories: CloseMemories,
    shown: Sequence[Turn],
    first: int,
    end: int,
) -> tuple[DryRunWindow, int, int]:
    """One window of a dry run, and the input and output tokens it cost."""
    verdict, usage = extractor.gate(shown, first)
    spent = [usage.input_tokens, usage.output_tokens]
    window: DryRunWindow = {
        "first_turn": first,
        "end_turn": end,
        "worth_remembering": verdict.worth_remembering,
        "gate_reason": verdict.reason,
        "summary": None,
        "memories": [],
    }
    if not verdict.worth_remembering:
        return window, spent[0], spent[1]
    close = close_memories(shown)
    extraction, usage = extractor.extract(shown, first, close)
    window["summary"] = extraction.summary
    for decision in review(extraction, shown, window_start=first, window_end=end, close=close):
        target = decision.target
        window["memories"].append(
            {
                "verdict": decision.verdict,
                "content": decision.content,
                "category": decision.category,
                "scope": decision.scope,
                "source": decision.source,
                "target": None
                if target is None
                else {"id": str(target.id), "content": target.content},
                "note": decision.note,
            }
        )
    return window, spent[0] + usage.input_tokens, spent[1] + usage.output_tokens
