"""Look-alike text is an exact repeat (migration 0015, kb.memory_fingerprint's skeleton).

A copy of a memory with a Cyrillic or Greek letter for a Latin one, in full-width letters, struck
through or underlined with a combining mark looks the same to a person (zero-width and other
invisible characters are refused by validation before this: memory/validation.py); it is a
repeat of the memory (status unchanged, evidence recorded), never a second memory nor one that
supersedes it. What is stored stays as written. Differences a reader sees (accents that tell
words apart, another letter of the same script) still make another memory.
"""

from __future__ import annotations

import random
import string

import pytest

from emergent_memory.auth.principal import Principal
from emergent_memory.memory import MemoryService

CYRILLIC_A, CYRILLIC_O, GREEK_OMICRON = "\u0430", "\u043e", "\u03bf"
STRIKE, UNDERLINE = "\u0336", "\u0332"


def full_width(text: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text)


@pytest.fixture
def instruction() -> str:
    name = "".join(random.choices(string.ascii_lowercase, k=8))
    return f"Never push directly to main in the {name} repository"


LOOKALIKES = {
    "cyrillic-a": lambda t: t.replace("a", CYRILLIC_A),
    "cyrillic-o": lambda t: t.replace("o", CYRILLIC_O, 1),
    "greek-omicron": lambda t: t.replace("o", GREEK_OMICRON),
    "full-width": full_width,
    "struck-through": lambda t: "".join(ch + STRIKE for ch in t[:5]) + t[5:],
    "underlined": lambda t: "".join(ch + UNDERLINE for ch in t),
    "upper-cyrillic": lambda t: t.replace("a", CYRILLIC_A).upper(),
}


@pytest.mark.parametrize("make", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_lookalike_copy_is_a_repeat_and_the_text_stays_as_written(
    service: MemoryService, principal: Principal, instruction: str, make: object
) -> None:
    assert callable(make)
    original = service.save(principal, instruction, "instruction", source="explicit")
    copy = make(instruction)
    assert copy != instruction
    repeat = service.save(principal, copy, "instruction", source="explicit", evidence="again")
    assert repeat["status"] == "unchanged"
    assert repeat["memory"]["id"] == original["memory"]["id"]
    assert repeat["superseded_ids"] == []
    assert repeat["memory"]["content"] == instruction  # as first written
    assert repeat["memory"]["evidence_count"] == original["memory"]["evidence_count"] + 1
    ids = {m["id"] for m in service.list_memories(principal, limit=100)["memories"]}
    assert original["memory"]["id"] in ids
    assert len([m for m in service.list_memories(principal, limit=100)["memories"]
                if m["content"] in (instruction, copy)]) == 1  # fmt: skip


def test_a_lookalike_first_is_kept_as_written(service: MemoryService, principal: Principal) -> None:
    name = "".join(random.choices(string.ascii_lowercase, k=8))
    written = full_width(f"Deploys of {name} happen on Fridays")
    saved = service.save(principal, written, "fact")
    assert saved["memory"]["content"] == written
    again = service.save(principal, f"Deploys of {name} happen on Fridays", "fact")
    assert again["status"] == "unchanged"
    assert again["memory"]["content"] == written


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Bà ấy nói ma {x}", "Bà ấy nói má {x}"),  # Vietnamese tones tell words apart
        ("Le résumé de {x} est prêt", "Le résume de {x} est prêt"),
        ("Книга {x} на столе", "Книги {x} на столе"),  # another Cyrillic letter
    ],
    ids=["vietnamese-tone", "french-accent", "cyrillic-letter"],
)
def test_what_a_reader_tells_apart_stays_two_memories(
    service: MemoryService, principal: Principal, one: str, other: str
) -> None:
    x = "".join(random.choices(string.ascii_lowercase, k=8))
    first = service.save(principal, one.format(x=x), "fact")
    second = service.save(principal, other.format(x=x), "fact")
    assert second["status"] != "unchanged"
    assert second["memory"]["id"] != first["memory"]["id"]
