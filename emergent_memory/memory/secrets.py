"""Credential and secret detection, used to refuse saving secrets into the memory store.

`find_secrets` reports these kinds (the `kind` of a `SecretFinding`):

- private key block: PEM/OpenSSH/PGP `-----BEGIN ... PRIVATE KEY-----` with a body (RSA, EC,
  DSA, OPENSSH, PKCS#8, ENCRYPTED, PGP ... KEY BLOCK), also when the paste is truncated;
- AWS access key id (`AKIA...`, `ASIA...`) and AWS secret access key (40 characters assigned to
  `aws_secret_access_key`, `AWS_SECRET_ACCESS_KEY`, `SecretAccessKey`);
- GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`);
- GitLab token (`glpat-`, `gldt-`, `glrt-`, `glrtr-`, `glptt-`, `glcbt-`, `glft-`, `glimt-`,
  `glagent-`, `gloas-`, `glsoat-`, `glffct-`, and `GR1348941` runner registration tokens);
- Slack token (`xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xoxe-`, `xoxe.xoxp-`, `xapp-`)
  and Slack webhook URL (`https://hooks.slack.com/services/...`, `/workflows/`, `/triggers/`);
- Stripe secret key (`sk_live_`, `rk_live_`, and the test-mode `sk_test_`, `rk_test_`: test
  keys are credentials of a real account too, so they are refused; publishable `pk_` keys are
  public and allowed);
- Anthropic API key (`sk-ant-api03-...`, `sk-ant-admin01-...`);
- OpenAI API key (`sk-...`, `sk-proj-...`, `sk-svcacct-...`, `sk-admin-...`);
- Google API key (`AIza...`);
- JSON web token (three base64url parts, the header starting `eyJ`);
- bearer token (`Authorization: Bearer <long token>`);
- connection string with a password (`postgres://user:password@host`, any scheme);
- password assignment (`password=`, `passwd:`, `pwd=`, `"password": "..."`, `PASSWORD=`,
  `DB_PASSWORD: ...`, `passphrase`) and secret or token assignment (`api_key=`, `secret=`,
  `token=`, `client_secret:`, `access_token=`, `private_key=`, ...) with a concrete value;
- high-entropy token: any other long run of random-looking key material.

It favours precision: ordinary developer notes (UUIDs, commit SHAs, hex digests, `SHA256:` and
`h1:` fingerprints, paths, identifiers, versions, words like "password" or "token" in prose,
code such as `password=os.environ["DB_PASSWORD"]`) are not findings.

Placeholders are not secrets. An assigned value, URL password or token is a placeholder when it
is a template (`<your password>`, `[REDACTED]`, `{password}`, `${VAR}`, `$VAR`, `$(cmd)`,
`{{ var }}`, `%VAR%`, `%s`), masked or elided (`***`, `xxxx`, `...`, one repeated character),
a generic word (`password`, `secret`, `token`, `changeme`, `example`, `test`, `demo`, `none`,
...), or shaped like one (`your_api_key`, `insert_token_here`, `my-password`, `test-token`, any
value containing `example`, such as AWS's documented `AKIAIOSFODNN7EXAMPLE`).

`describe_secret` says what was found without ever repeating the secret itself.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

__all__ = ["SecretFinding", "describe_secret", "find_secrets"]


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A secret found in a text: what it looks like and where its value is (`text[start:end]`)."""

    kind: str
    start: int
    end: int


def describe_secret(finding: SecretFinding) -> str:
    """A short explanation for a refusal, naming the kind of secret but never its value."""
    article = "an" if finding.kind[:1].upper() in "AEIOU" else "a"
    return f"it contains what looks like {article} {finding.kind}"


_Span = tuple[int, int]

# Characters of tokens: a token is not found inside a longer run of these.
_BOUNDARY_BEFORE = r"(?<![A-Za-z0-9_-])"
_BOUNDARY_AFTER = r"(?![A-Za-z0-9_-])"

# --- placeholders -------------------------------------------------------------------------------

# Values that stand for a secret rather than being one, e.g. "<password>", "${TOKEN}", "{{ x }}".
_TEMPLATE = re.compile(
    r"""
    ^<[^<>]*>$              # <password>, <redacted>
    | ^\[[^\[\]]*\]$        # [REDACTED]
    | ^\{[^{}]*\}$          # {password} (str.format)
    | \{\{ | \$\{ | \#\{    # {{ secrets.X }}, ${VAR}, #{var}
    | ^\$                   # $VAR, $(command), $1
    | ^%[A-Za-z_]\w*%$      # %VAR% (Windows)
    | ^%(?:\(\w+\))?[sd]$   # %s, %(password)s
    """,
    re.VERBOSE,
)
_PLACEHOLDER_WORD = re.compile(
    r"""
    password | passwd | pass | pwd | pw | passphrase | secret | token | key | api[_-]?key
    | change[_-]?me | changeit | example | sample | placeholder | redacted | removed | hidden
    | masked | censored | dummy | fake | foo | bar | baz | foobar | none | null | nil | undefined
    | true | false | yes | no | empty | blank | string | str | bytes | required | optional
    | todo | tbd | n/a | na | unknown | unset | notset | test | testing | demo | mock
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PLACEHOLDER_SHAPE = re.compile(
    r"""
    ^your[\W_]?                     # your_password, YOUR_API_KEY, your-token-here
    | [\W_]here$                    # token_here, insert-key-here
    | ^(?:my|the|some|a|an|new|old|test|fake|dummy|mock|demo|sample|local|dev)[\W_]?
      (?:passw(?:or)?d|pass|pwd|secret|token|(?:api[\W_]?)?key)s?$   # the-token, test_secret
    | example | placeholder | redacted | changeme
    | x{4,} | \*{3,} | \.{3}       # ghp_xxxxxxxx, ***, truncated...
    | (.)\1{5,}                     # 000000, aaaaaa
    """,
    re.VERBOSE | re.IGNORECASE,
)


def _is_placeholder(value: str) -> bool:
    """Whether a value is an obvious stand-in for a secret (never a real credential)."""
    value = value.strip()
    if not value or len(set(value)) == 1:
        return True
    if _PLACEHOLDER_WORD.fullmatch(value):
        return True
    return bool(_TEMPLATE.search(value) or _PLACEHOLDER_SHAPE.search(value))


def _has_mixed_classes(value: str) -> bool:
    """Upper case, lower case and digits all present: how random tokens (not words) look."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


# --- rules ----------------------------------------------------------------------------------------


def _whole_match(match: re.Match[str]) -> _Span | None:
    """The whole match is the secret, unless it is a placeholder such as `ghp_xxxxxxxx...`."""
    return None if _is_placeholder(match.group()) else match.span()


def _secret_group(match: re.Match[str]) -> _Span | None:
    """The `secret` group is the secret, unless it is a placeholder."""
    return None if _is_placeholder(match.group("secret")) else match.span("secret")


def _unchecked(match: re.Match[str]) -> _Span | None:
    """The whole match, as is: encoded key material may well contain runs like `AAAAAA`."""
    return match.span()


@dataclass(frozen=True, slots=True)
class _Rule:
    """A kind of secret: a pattern and how a match gives the span of the secret (or none)."""

    kind: str
    pattern: re.Pattern[str]
    secret: Callable[[re.Match[str]], _Span | None] = _whole_match


_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[ \t]*\r?\n[ \t]*[A-Za-z-]+:[^\n]*)*"  # RFC 1421 headers: Proc-Type, DEK-Info, Version
    r"\s*[A-Za-z0-9+/=]{16,}"  # a body, not just the header line quoted in prose
    r"(?:[A-Za-z0-9+/=\s]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?"
)
_AWS_ACCESS_KEY_ID = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_ACCESS_KEY = re.compile(
    r"(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]*[=:][ \t]*[\"']?"
    r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    re.IGNORECASE,
)
_GITHUB_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"
    r"(?![A-Za-z0-9_])"
)
# Personal, deploy, runner, pipeline trigger, CI job, feed, incoming mail, agent, OAuth app,
# SCIM and feature flag client tokens; GR1348941 starts runner registration tokens.
_GITLAB_TOKEN = re.compile(
    rf"{_BOUNDARY_BEFORE}"
    r"(?:gl(?:pat|dt|rtr?|ptt|cbt|ft|imt|agent|oas|soat|ffct)-|GR1348941)"
    rf"[A-Za-z0-9_-]{{20,}}(?:\.[A-Za-z0-9_-]+)*{_BOUNDARY_AFTER}"
)
# Bot, user, app, refresh, session, rotating (xoxe) and app-level (xapp) tokens.
_SLACK_TOKEN = re.compile(
    rf"{_BOUNDARY_BEFORE}(?:xoxe\.)?(?:xox[abeprs]|xapp)-[A-Za-z0-9-]{{10,}}{_BOUNDARY_AFTER}"
)
_SLACK_WEBHOOK = re.compile(
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_-]+/[A-Za-z0-9_/-]{8,}"
)
_STRIPE_KEY = re.compile(
    r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}(?![A-Za-z0-9_])"
)
_ANTHROPIC_KEY = re.compile(rf"{_BOUNDARY_BEFORE}sk-ant-[A-Za-z0-9_-]{{20,}}{_BOUNDARY_AFTER}")
_OPENAI_KEY = re.compile(
    rf"{_BOUNDARY_BEFORE}sk-(?:(?:proj|svcacct|admin)-)?(?P<body>[A-Za-z0-9_-]{{32,}})"
    rf"{_BOUNDARY_AFTER}"
)
_GOOGLE_API_KEY = re.compile(rf"{_BOUNDARY_BEFORE}AIza[A-Za-z0-9_-]{{35}}{_BOUNDARY_AFTER}")
_JWT = re.compile(
    rf"{_BOUNDARY_BEFORE}eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}}"
    rf"{_BOUNDARY_AFTER}"
)
_BEARER_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{19,}[A-Za-z0-9_~+/-]=*)"
    r"(?![A-Za-z0-9_~+/=-])",
    re.IGNORECASE,
)


def _openai_key(match: re.Match[str]) -> _Span | None:
    """An OpenAI key, if its body mixes upper case, lower case and digits (not `sk-some-name`)."""
    return _whole_match(match) if _has_mixed_classes(match.group("body")) else None


def _bearer_token(match: re.Match[str]) -> _Span | None:
    """A bearer token: long, with letters and digits (not "Bearer authentication" in prose)."""
    token = match.group("secret")
    if not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)):
        return None
    return _secret_group(match)


# scheme://user:password@host: the password ends at the last "@" before the host.
_URL_WITH_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://"
    r"[^\s:/?#@\"'`]*:(?P<secret>[^\s/?#\"'`]*)@[A-Za-z0-9.\[\]_%-]+"
)


def _url_password(match: re.Match[str]) -> _Span | None:
    """The inline password of a URL, unless it is empty or a placeholder like `${PASSWORD}`."""
    password = match.group("secret")
    if _is_placeholder(password) or password.lower() in {"user", "username", "login"}:
        return None
    if password.isdigit() and len(password) <= 5:  # host:port@... is a malformed URL, not a login
        return None
    return match.span("secret")


# --- assignments: password=..., api_key: "...", DB_PASSWORD: ... --------------------------------

_LOGIN_KEY_NAMES = r"passw(?:or)?d|pwd|passphrase"
_CREDENTIAL_KEY_NAMES = r"secret(?:[_-]?key)?|api[_-]?key|apikey|token|private[_-]?key"
# The key may end a longer name (DB_PASSWORD, PGPASSWORD, access_token) but not continue
# (password_hash, tokens, secretName); a quote and a bracket may close it (conf["password"] = ...).
# The separator is "=", ":", ":=", "=>" or a Python annotation ("password: str = ..."), never
# "==" or "::". A bare value in brackets may hold spaces (password=<your password>).
_ASSIGNMENT = r"""
    (?:{keys})(?![A-Za-z0-9_])["']?\]?[ \t]*
    (?: (?P<annotation>:[ \t]*[A-Za-z_][\w.\[\], |]{0,60}?[ \t]+=(?!=))
      | (?P<separator>=> | := | =(?!=) | :(?!:)) )
    [ \t]*
    (?: (?P<quote>["'`])(?P<quoted>[^\s"'`](?:[^\n]*?[^\s])?)(?P=quote)
      | (?P<bare> <[^<>\n]{1,80}> | \[[^\[\]\n]{1,80}\] | [^\s"'`,;&]+ ) )
"""
_PASSWORD_ASSIGNMENT = re.compile(
    _ASSIGNMENT.replace("{keys}", _LOGIN_KEY_NAMES), re.IGNORECASE | re.VERBOSE
)
_SECRET_ASSIGNMENT = re.compile(
    _ASSIGNMENT.replace("{keys}", _CREDENTIAL_KEY_NAMES), re.IGNORECASE | re.VERBOSE
)
# XML elements, as in Maven's settings.xml: <password>...</password>, <apiKey>...</apiKey>.
_ELEMENT = (
    r"<(?P<tag>[\w.:-]{0,40}?(?:{keys}))>[ \t]*(?P<secret>[^<\s][^<\n]{0,200}?)[ \t]*</(?P=tag)>"
)
_PASSWORD_ELEMENT = re.compile(_ELEMENT.replace("{keys}", _LOGIN_KEY_NAMES), re.IGNORECASE)
_SECRET_ELEMENT = re.compile(_ELEMENT.replace("{keys}", _CREDENTIAL_KEY_NAMES), re.IGNORECASE)

# An unquoted value after a plain ":" (or an "=" spaced only after it) is a value only if its line
# ends, or a comment, a closing bracket or quote, or the next key follows; otherwise it starts
# prose ("password: see the vault", "the secret= option").
_END_OF_VALUE = re.compile(
    r"""[ \t]*(?: $ | [;)}\]|\#"'`] | ,[ \t]*(?: $ | ["']?[\w-]+["']?[ \t]*[:=] ))""",
    re.MULTILINE | re.VERBOSE,
)
# A quoted value that is only part of an expression: "ghp_" + suffix, "{}".format(password).
_EXPRESSION_CONTINUES = re.compile(r"[ \t]*(?:\+|%|\.[A-Za-z_])")
# Code, not a literal: os.environ["X"], get_token(), settings.api_key, db_password, dbPassword.
_CODE_REFERENCE = re.compile(
    r"""
    [(\[]
    | ^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$
    | ^(?=[A-Za-z_]\w*$)(?=.*(?:_|(?-i:[a-z][A-Z])))(?=.*(?:pass|pwd|secret|token|key|cred|auth))
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PATH_OR_URL = re.compile(r"^(?:~|\.{1,2})?/|^[A-Za-z]:\\|://")
_YAML_TAG = re.compile(r"^![A-Za-z]\w*$")  # password: !vault |
# What notes say about a credential rather than what it is ("token: revoked").
_STATUS_WORD = re.compile(
    r"""
    revoked | expired | rotated | invalid | valid | missing | set | reset | removed | deleted
    | updated | unchanged | provided | configured | generated | disabled | enabled | stored
    """,
    re.VERBOSE | re.IGNORECASE,
)


def _trim_bare_value(value: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets after an unquoted value."""
    openers = {")": "(", "]": "[", "}": "{", ">": "<"}
    while value:
        last = value[-1]
        unbalanced = last in openers and value.count(openers[last]) < value.count(last)
        if last not in ".:" and not unbalanced:
            break
        value = value[:-1]
    return value


def _is_concrete_value(value: str, *, quoted: bool) -> bool:
    """Whether an assigned value is a literal credential rather than a placeholder or code."""
    if len(value) < 4 or (value.isdigit() and len(value) < 6):
        return False
    if _is_placeholder(value) or _PATH_OR_URL.search(value):
        return False
    if quoted:
        return True
    return not (
        _CODE_REFERENCE.search(value) or _YAML_TAG.match(value) or _STATUS_WORD.fullmatch(value)
    )


def _introduces_prose(match: re.Match[str]) -> bool:
    """Whether the separator may end a sentence's word rather than assign a value: a plain ":"
    ("password: see the vault"), or an "=" spaced only after it ("the secret= option")."""
    separator = match.group("separator")
    if separator == ":":
        return True
    if separator != "=":
        return False
    before, after = match.start("separator") - 1, match.end("separator")
    return not match.string[before].isspace() and match.string[after : after + 1].isspace()


def _assigned_value(match: re.Match[str]) -> _Span | None:
    """The span of a concrete assigned value, or None for placeholders, code and prose."""
    if match.group("quoted") is not None:
        if _EXPRESSION_CONTINUES.match(match.string, match.end()):
            return None
        value, start = match.group("quoted"), match.start("quoted")
        return (start, start + len(value)) if _is_concrete_value(value, quoted=True) else None
    if match.group("annotation"):  # password: str = name: in Python, a bare name is code
        return None
    if _introduces_prose(match) and not _END_OF_VALUE.match(match.string, match.end()):
        return None
    value, start = _trim_bare_value(match.group("bare")), match.start("bare")
    return (start, start + len(value)) if _is_concrete_value(value, quoted=False) else None


def _element_value(match: re.Match[str]) -> _Span | None:
    """The text of a credential XML element, unless it is a placeholder such as `${env.X}`."""
    value = match.group("secret")
    return match.span("secret") if _is_concrete_value(value, quoted=True) else None


# --- long random-looking tokens -------------------------------------------------------------------

_TOKEN_CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_-])"
)
_HEX_OR_UUID = re.compile(r"^[0-9a-fA-F-]+$")
# Hashes named by their algorithm: SSH fingerprints (SHA256:...), go.sum lines (h1:...).
_HASH_LABEL = re.compile(r"(?:sha(?:1|224|256|384|512)|md5|h1):$", re.IGNORECASE)
# Subresource Integrity hashes (lockfiles) and Stripe publishable keys are meant to be public.
_PUBLIC_PREFIX = re.compile(r"^(?:sha(?:1|256|384|512)-|pk_(?:live|test)_)")
_MIN_ENTROPY_BITS = 4.0  # per character; random base64 of 32 characters has about 4.5
_MIN_CLASS_CHANGES = 0.4  # share of neighbours of different classes; random ~0.6, words ~0.3
_MAX_WORD_SHARE = 0.6  # share of characters in words ("Manager", "user"); random: below 0.5
_WORD = re.compile(r"[A-Z]?[a-z]{3,}")
_MIN_PATH_PIECE = 16  # a token with "/" needs a piece this long (paths have short pieces)


def _shannon_entropy(value: str) -> float:
    counts = Counter(value).values()
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts)


def _class_change_ratio(value: str) -> float:
    """How often neighbouring characters differ in class (upper case, lower case, digit)."""

    def kind(c: str) -> int:
        return 0 if c.isupper() else 1 if c.islower() else 2

    changes = sum(kind(a) != kind(b) for a, b in pairwise(value))
    return changes / (len(value) - 1)


def _word_share(value: str) -> float:
    """How much of a value is made of words, as in camelCase and snake_case identifiers."""
    return sum(len(word) for word in _WORD.findall(value)) / len(value)


def _looks_random(token: str) -> bool:
    """Whether a long run of token characters looks like random key material, not an identifier,
    a path, a hex digest or a UUID."""
    if _HEX_OR_UUID.match(token) or _PUBLIC_PREFIX.match(token):
        return False
    if "/" in token and max(len(piece) for piece in token.split("/")) < _MIN_PATH_PIECE:
        return False
    alphanumeric = re.sub(r"[^A-Za-z0-9]", "", token)  # snake_case and kebab-case words joined
    return (
        _has_mixed_classes(alphanumeric)
        and _shannon_entropy(token.rstrip("=")) >= _MIN_ENTROPY_BITS
        and _class_change_ratio(alphanumeric) >= _MIN_CLASS_CHANGES
        and _word_share(alphanumeric) < _MAX_WORD_SHARE
        and not _is_placeholder(token)
    )


def _high_entropy_token(match: re.Match[str]) -> _Span | None:
    """A long random-looking token, unless it is inline data (`data:...;base64,`) or a hash
    named by its algorithm (`SHA256:...`)."""
    before = match.string[max(0, match.start() - 7) : match.start()]
    if before.lower() == "base64," or _HASH_LABEL.search(before):
        return None
    return match.span() if _looks_random(match.group()) else None


# In priority order: where findings overlap, the earlier rule's finding is kept.
_RULES = (
    _Rule("private key block", _PRIVATE_KEY, _unchecked),
    _Rule("AWS access key id", _AWS_ACCESS_KEY_ID),
    _Rule("AWS secret access key", _AWS_SECRET_ACCESS_KEY, _secret_group),
    _Rule("GitHub token", _GITHUB_TOKEN),
    _Rule("GitLab token", _GITLAB_TOKEN),
    _Rule("Slack token", _SLACK_TOKEN),
    _Rule("Slack webhook URL", _SLACK_WEBHOOK),
    _Rule("Stripe secret key", _STRIPE_KEY),
    _Rule("Anthropic API key", _ANTHROPIC_KEY),
    _Rule("OpenAI API key", _OPENAI_KEY, _openai_key),
    _Rule("Google API key", _GOOGLE_API_KEY),
    _Rule("JSON web token", _JWT, _unchecked),
    _Rule("bearer token", _BEARER_TOKEN, _bearer_token),
    _Rule("connection string with a password", _URL_WITH_PASSWORD, _url_password),
    _Rule("password assignment", _PASSWORD_ASSIGNMENT, _assigned_value),
    _Rule("secret or token assignment", _SECRET_ASSIGNMENT, _assigned_value),
    _Rule("password assignment", _PASSWORD_ELEMENT, _element_value),
    _Rule("secret or token assignment", _SECRET_ELEMENT, _element_value),
    _Rule("high-entropy token", _TOKEN_CANDIDATE, _high_entropy_token),
)


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in `text`, ordered by start; empty when the text is safe to store.

    Each finding's span covers the secret value itself (the token, the password of a URL, the
    assigned value, the whole private key block), so `text[start:end]` is what to redact.
    """
    findings: list[SecretFinding] = []
    for rule in _RULES:
        for match in rule.pattern.finditer(text):
            span = rule.secret(match)
            if span is None or any(_overlap(span, found) for found in findings):
                continue
            findings.append(SecretFinding(rule.kind, *span))
    return sorted(findings, key=lambda finding: (finding.start, finding.end))


def _overlap(span: _Span, finding: SecretFinding) -> bool:
    return span[0] < finding.end and finding.start < span[1]
