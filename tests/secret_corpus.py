"""The corpora of the secret detector, as tests/test_secrets.py and benchmarks/secrets.py read
them, and the adversarial inputs both time.

`tests/data/secret_memories.txt` holds memories with a credential (every one must be refused),
`tests/data/benign_memories.txt` ordinary developer memories (none may be). The secret corpus
writes the random parts of its fake credentials as {fields}, filled here with seeded random
characters: the same text on every run, and no file that looks like it leaks credentials.
Only the standard library is used, so that the benchmark can import this without pytest.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parent / "data"

# "[kind] memory" or "[kind | kind | ...] memory": the kinds of the secrets the memory holds,
# in the order of their place in it.
LINE = re.compile(r"\[(?P<kinds>[^\]]+)\] (?P<template>.+)")
FIELD = re.compile(
    r"\{(?P<name>alnum|upper|lower|hex|digits|b64|b64url|bech32|base32|b32lower|basic|pemb64"
    r"|dockercfg|card|carddash|cardplain|bip39|ssn|ssnspace|ssnplain|ssnendash|itin|itinplain)"
    r":(?P<length>[0-9]+)\}"
    r"|\{jwt\}"
)
ALPHABETS = {
    "alnum": string.ascii_letters + string.digits,
    "upper": string.ascii_uppercase + string.digits,
    "lower": string.ascii_lowercase + string.digits,
    "hex": string.digits + "abcdef",
    "digits": string.digits,
    "b64": string.ascii_letters + string.digits + "+/",
    "b64url": string.ascii_letters + string.digits + "-_",
    "bech32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    "base32": string.ascii_uppercase + "234567",
    "b32lower": string.ascii_lowercase + "234567",
}
# Words of the BIP-39 English list, for fake wallet seed phrases ({bip39:12}).
BIP39_TEXT = """
    abandon ability absorb acoustic actress admit advice afford agent airport alarm album alley
    anchor angle ankle antique anxiety apology april arctic arena armor arrow artwork asthma
    atom auction autumn avocado bacon badge balcony bamboo banana barrel basket beach bench
    bicycle biology blanket blossom bounce bracket breeze broccoli bubble buffalo bunker cabbage
    cactus camera canyon carbon castle cattle celery cement chalk cherry chimney cinnamon circle
    clinic clutch coconut coffee comic copper coral cotton coyote cradle crater cricket crystal
    cushion dentist desert diamond dinosaur dolphin donkey dragon drum eagle elbow elephant
    engine ethics fiction fossil galaxy garlic giraffe ginger glimpse
    gorilla guitar hamster harbor hedgehog helmet honey hobby hockey island jaguar jelly
    kangaroo ketchup kidney kitten ladder laptop lava lemon lizard lobster lumber magnet mango
    marble meadow melody mirror monkey mosquito mushroom napkin noodle olive orchard ostrich
    oyster paddle panda parrot peanut pelican pepper piano pigeon pizza planet pottery pumpkin
    puzzle pyramid rabbit raccoon radar ribbon rocket saddle salmon sausage scorpion shrimp
"""
BIP39_WORDS = BIP39_TEXT.split()
# How card numbers are grouped when written: 4-4-4-4, Amex 4-6-5, Diners 4-6-4, 4-4-4-4-3.
CARD_GROUPS = {13: (4, 4, 5), 14: (4, 6, 4), 15: (4, 6, 5), 16: (4, 4, 4, 4), 19: (4, 4, 4, 4, 3)}


def pem(label: str, body: str, *, headers: str = "") -> str:
    return f"-----BEGIN {label}PRIVATE KEY-----\n{headers}{body}\n-----END {label}PRIVATE KEY-----"


def with_check_digit(body: str) -> str:
    """A card number: `body` and the Luhn check digit that makes it valid."""
    total = 0
    for position, char in enumerate(reversed(body)):
        digit = int(char) * (2 if position % 2 == 0 else 1)  # doubled: the check digit goes right
        total += digit - 9 if digit > 9 else digit
    return body + str(-total % 10)


def grouped(number: str, sizes: tuple[int, ...], separator: str = " ") -> str:
    """A number written in groups of `sizes` (4111 1111 1111 1111)."""
    starts = [sum(sizes[:n]) for n in range(len(sizes))]
    return separator.join(
        number[start : start + size] for start, size in zip(starts, sizes, strict=True)
    )


def card_number(rng: random.Random, length: int) -> str:
    """A fake card number of a scheme's prefix and length, with a valid Luhn check digit."""
    prefix = {13: "4", 14: "36", 15: rng.choice(["34", "37"]), 19: "4"}.get(
        length, rng.choice(["4", "51", "52", "53", "54", "55"])
    )
    return with_check_digit(
        prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    )


# The middle two digits of an ITIN: 50 to 65, 70 to 88, 90 to 92, 94 to 99.
ITIN_GROUPS = (*range(50, 66), *range(70, 89), 90, 91, 92, *range(94, 100))


def us_taxpayer_number(rng: random.Random, name: str) -> str:
    """A fake US SSN of the ranges ever issued (area not 000, 666 or 9xx, group not 00, serial
    not 0000) or an ITIN (9xx, a group of ITIN_GROUPS), written with dashes (123-45-6789), with
    en dashes (`ssnendash`), with spaces (`ssnspace`) or as nine digits (`ssnplain`,
    `itinplain`)."""
    if name.startswith("itin"):
        area, group = 900 + rng.randrange(100), rng.choice(ITIN_GROUPS)
    else:
        area, group = rng.choice([n for n in range(1, 900) if n != 666]), rng.randrange(1, 100)
    parts = (f"{area:03d}", f"{group:02d}", f"{rng.randrange(1, 10_000):04d}")
    separator = {"ssnspace": " ", "ssnplain": "", "ssnendash": "\u2013", "itinplain": ""}.get(
        name, "-"
    )
    return separator.join(parts)


def random_text(rng: random.Random, name: str, length: int) -> str:
    """Random characters of an alphabet; letters-and-digits ones mix cases and digits."""
    if name in ("ssn", "ssnspace", "ssnplain", "ssnendash", "itin", "itinplain"):
        return us_taxpayer_number(rng, name)
    if name == "basic":  # base64 of "user:password", as in an Authorization: Basic header
        password = random_text(rng, "alnum", length)
        return base64.b64encode(f"svc-{rng.randrange(100)}:{password}".encode()).decode()
    if name == "pemb64":  # base64 of a private key block, as in a kubeconfig's client-key-data
        key = pem("RSA ", "MIIEowIBAAKCAQEA" + random_text(rng, "b64", length))
        return base64.b64encode(key.encode()).decode()
    if name == "dockercfg":  # base64 of a Docker config.json, as in a .dockerconfigjson secret
        auth = random_text(rng, "basic", length)
        config = json.dumps({"auths": {"registry.acme.dev": {"auth": auth}}})
        return base64.b64encode(config.encode()).decode()
    if name in ("card", "carddash", "cardplain"):  # a Luhn-valid number, grouped as printed
        number = card_number(rng, length)
        if name == "cardplain":
            return number
        return grouped(number, CARD_GROUPS[length], " " if name == "card" else "-")
    if name == "bip39":  # a wallet seed phrase of `length` words
        return " ".join(rng.choice(BIP39_WORDS) for _ in range(length))
    alphabet = ALPHABETS[name]
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(length))
        if name in ("hex", "digits", "upper", "bech32"):
            return value
        if name in ("base32", "b32lower") and re.search("[2-7]", value):
            return value
        if name == "lower" and re.search("[a-z]", value) and re.search("[0-9]", value):
            return value
        if re.search("[a-z]", value) and re.search("[A-Z]", value) and re.search("[0-9]", value):
            return value


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _base64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": str(rng.randrange(10**9)), "iat": 1714560000 + rng.randrange(10**6)}
    return ".".join(
        [header, _base64url(json.dumps(claims).encode()), random_text(rng, "b64url", 43)]
    )


def fill(template: str) -> tuple[str, list[str]]:
    """A memory from a corpus template, and the random values (fake credentials) put in it."""
    rng = random.Random(template)  # the same text on every run
    values: list[str] = []

    def value(field: re.Match[str]) -> str:
        name = field.group("name")
        text = _jwt(rng) if name is None else random_text(rng, name, int(field.group("length")))
        values.append(text)
        return text

    # in the corpus, a backslash and an n stand for a line break, two backslashes and an n
    # for a backslash and an n (a line break escaped inside a JSON string)
    text = template.replace("\\\\n", "\0").replace("\\n", "\n").replace("\0", "\\n")
    return FIELD.sub(value, text), values


def corpus_lines(name: str) -> list[str]:
    """The lines of a corpus file, without comments and blank lines."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


@dataclass(frozen=True)
class SecretMemory:
    """A memory of the secret corpus: the kinds of its secrets in order, its text, the random
    values filled in, and its line as written (with {fields}, for reports)."""

    kinds: tuple[str, ...]
    text: str
    values: tuple[str, ...]
    template: str


def secret_memories() -> list[SecretMemory]:
    memories = []
    for line in corpus_lines("secret_memories.txt"):
        match = LINE.fullmatch(line)
        if match is None:
            raise ValueError(f"not a corpus line: {line!r}")
        text, values = fill(match.group("template"))
        kinds = tuple(kind.strip() for kind in match.group("kinds").split("|"))
        memories.append(SecretMemory(kinds, text, tuple(values), match.group("template")))
    return memories


def benign_memories() -> list[str]:
    """The benign corpus; as in the secret corpus, a backslash and an n stand for a line break
    (a table or a CSV file of several lines)."""
    return [line.replace("\\n", "\n") for line in corpus_lines("benign_memories.txt")]


# Inputs built to make a pattern backtrack: a rule's words followed by a long run of what its
# pattern scans (spaces after "password is", dots in a netrc host, URLs before "hook", ...), or
# repeated so that every occurrence starts a scan of the rest. `adversarial(n)` makes each of
# them `n` characters long; the tests and the benchmark time them at 2,000 characters (the
# longest memory the service takes by default) and at 10,000.
_ADVERSARIAL_SHAPES: tuple[tuple[str, str, str], ...] = (
    # (before, repeated, after)
    ("password is ", " ", ""),
    ("password is ", "\t", ""),
    ("api key", " ", ""),
    ("secret ", "\t", ""),
    ("token", " ", ""),
    ("accountkey", " ", ""),
    ("net user", " ", ""),
    ("user", " ", ""),
    ("password machine ", ".", ""),
    ("password machine ", ":", ""),
    ("password machine ", "a.", ""),
    ("password machine ", "a:", ""),
    ("password machine ", "a:b@", ""),
    ("the password for the ", ":a", ""),
    ("hook ", "http://", ""),
    ("", "http://", "hook"),
    ("", "?sv=1&sig=", ""),
    ("", "curl -u a ", ""),
    ("", "user+", ""),
    ("", "user@", ""),
    ("requirepass ", "a/", ""),
    ("pass: ", "a/", ""),
    ("", "pass: '", ""),
    ("", "pass:a/", ""),
    ("", "pw:", ""),
    ("", "password is>", ""),
    ("", "app password %", ""),
    ("", "password =", ""),
    ("", "the password for the ", ""),
    ("", "password is ", ""),
    ("", "a:", ""),
    ("", "machine h login u ", ""),
    ("curl -u ", "a", ""),
    ("Authorization: Basic ", "QUJD", ""),
    ("-----BEGIN PRIVATE KEY-----", " A", ""),
    ("The API key for the ", "x ", ""),
    ("", "=", ""),
    ("", "0", ""),
    ("", "Server=a;", ""),
    ("mysql ", "-p", ""),
    ("", "mysql ", "-pX"),
    ("", "x", ""),
    ("Cookie: ", "a", ""),
    ("", '"', "password"),
    ("", "4111 ", "card"),
    ("recovery codes: ", "1234 ", ""),
    ("seed phrase: ", "abc ", ""),
    ("", "the password for the x ", "is sunshine."),
    ("", "seed ", "phrase"),
    ("", "login:x/", ""),
    ("", "creds a ", ""),
    ("", "log in as ", ""),
    ("", "a/", " to log in"),
    ("", "echo a | ", ""),
    ("", "PIN ", ""),
    ("", "pin code ", ""),
    ("", "-----BEGIN CERTIFICATE-----", ""),
    # a pasted certificate: many long base64 lines in one public block
    (
        "-----BEGIN CERTIFICATE-----\n",
        "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTES\n",
        "",
    ),
    ("", "Zk3pQ9vR2mX7tL0wB5nY8cH1jF4gD6sA ", ""),
    ("", "a:b@c.de ", ""),
    ("", "htpasswd -b ", ""),
    ("", "IDENTIFIED BY ", ""),
    # issue 26: login pairs without a word for them, US SSNs and ITINs, card security codes
    ("", "admin / ", ""),
    ("", "root:", ""),
    ("", "a@b.co / ", ""),
    ("", "user a pass ", ""),
    ("", "the pass is ", ""),
    ("", "123-45-", ""),
    ("SSN ", " ", ""),
    ("", "ssn 123 ", ""),
    ("", "cvv ", ""),
    ("CVV of the ", "x ", ""),
    ("security code ", "(", ""),
    ("4111 1111 1111 1111 ", "12/27 ", ""),
    ("", "4539148803436467 12/27 ", ""),
    ("", "admin | ", ""),
    ("", "u: a p: ", ""),
    # issue 26, second round: words between a login's name and its user, other languages' names,
    # tables, "and" after an account, en dashes
    ("", "login for a ", ""),
    ("", "utente a e ", ""),
    ("账号：", "a ", ""),
    ("", "| pass ", "|"),
    ("| pass | user |\n", "| a | b |\n", ""),
    ("name,ssn\n", "a,123 45 6789\n", ""),
    ("password\n", "|", ""),
    ("", "root and ", ""),
    ("", "cvv della ", ""),
    ("", "安全码", ""),
    ("", "123\u201345\u2013", ""),
)


def adversarial(length: int) -> list[str]:
    """The adversarial inputs, each `length` characters long."""
    texts = []
    for before, repeated, after in _ADVERSARIAL_SHAPES:
        room = length - len(before) - len(after)
        texts.append(before + (repeated * (room // len(repeated) + 1))[:room] + after)
    return texts
