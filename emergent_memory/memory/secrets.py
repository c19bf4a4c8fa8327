"""Credential and secret detection, used to refuse saving secrets into the memory store.

`find_secrets` reports these kinds (the `kind` of a `SecretFinding`); where findings overlap,
the most specific kind wins (`GITHUB_TOKEN=ghp_...` is a "GitHub token", not an assignment):

- private key block: PEM/OpenSSH/PGP `-----BEGIN ... PRIVATE KEY-----` with a body (RSA, EC,
  DSA, OPENSSH, PKCS#8, ENCRYPTED, PGP ... KEY BLOCK, SSH2), also when the paste is truncated
  or sits in a JSON string with `\\n` escapes (a GCP service account's `"private_key"`), and
  the private lines of a PuTTY key file;
- provider keys recognised by their format: AWS access key id (`AKIA...`, `ASIA...`) and AWS
  secret access key (40 characters assigned to `aws_secret_access_key`, ..., or right after the
  key id: `AKIA... / <secret>`), GitHub, GitLab, Slack, Stripe (`sk_`/`rk_` live and test
  keys, `whsec_` webhook secrets; publishable `pk_` keys are public and allowed), Anthropic,
  OpenAI, Google API keys
  and OAuth client secrets (`GOCSPX-`), SendGrid (`SG.`), npm (`npm_`), PyPI (`pypi-`),
  Hugging Face (`hf_`), DigitalOcean (`dop_v1_`), Shopify (`shpat_`), Discord and Telegram bot
  tokens, Mailgun (`key-`), Mailchimp (`...-us21`), Square, Azure AD client secrets (`...8Q~`),
  Azure storage account keys and shared access keys (`AccountKey=`, `SharedAccessKey=`), Azure
  SAS tokens (`sig=`), HashiCorp Vault (`hvs.`), age (`AGE-SECRET-KEY-1`), Docker Hub, Databricks,
  Sentry, Grafana, Postman, Linear, Notion, New Relic, Doppler, Terraform Cloud, Pulumi,
  Supabase, Netlify, Atlassian, Bitbucket, Groq, Replicate, Perplexity, xAI, 1Password, Fly.io,
  PlanetScale, Airtable, Mapbox, Dynatrace, Contentful, Figma, Heroku (`HRKU-`), HubSpot
  (`pat-na1-`), LaunchDarkly (`sdk-`), Tailscale, Google OAuth access and refresh tokens
  (`ya29.`, `1//0`), Facebook (`EAA...`), CircleCI (`CCIPAT_`), Firebase Cloud Messaging server
  keys, Twitter bearer tokens and Asana personal access tokens (`2/<id>/<id>:<hex>`);
- webhook URLs whose path is the secret: Slack, Microsoft Teams (`webhook.office.com`,
  `outlook.office.com/webhook`, Power Automate's `logic.azure.com` URLs with `sig=`), Zapier
  (`hooks.zapier.com/hooks/catch/...`), Discord, and any URL with "hook" in it whose path after
  it has a random-looking piece (`https://chat.acme.io/hooks/k3v9xq...`; not
  `https://api.acme.io/hooks/github`);
- payment card number: 13 to 19 digits, together or grouped by spaces or dashes, Luhn-valid and
  with a card scheme's prefix and length (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay,
  Maestro, Mir), written with its security code or expiry date ("CVV 737", "exp 12/26", a
  `MM/YY` right after it), or stated as a card ("my Visa is ..."). The test card numbers that
  Stripe, Braintree and the schemes document (4242 4242 4242 4242, 4111 1111 1111 1111, ...)
  are public, and allowed alone; with an expiry date or a security code they are refused like
  any card, as a memory cannot tell where a full card came from. The last four digits alone,
  Luhn-invalid numbers, and numbers named as something else (an order, an IMEI, a tracking
  number) are not cards;
- card security code: the 3 or 4 digits after a name only card codes have ("CVV 737", "cvc:
  4417", "CVV2", "CVV/CVC", "CVC-koden", "card verification value", "the 3 digits on the
  back", `"cvv": "737"`, "cryptogramme visuel", "Kartenprüfnummer"), after a name other things
  share ("CID", "CSC", "security code", "código de seguridad", "beveiligingscode", "codice di
  sicurezza", "セキュリティコード", "安全码", ...) when a card is named within 80 characters
  or, for a name of a security code, with three digits ("Prüfziffer" and "the 4 digits on the
  front", Amex's code, only with a card), also with a phrase and "is" in the name's language
  between ("il codice CVV della mia carta è 821"); under a table column named "cvv", "cvc" or
  "security code"; and the digits right after a card number and its expiry date ("4111...
  09/27 737"). A security code is a finding
  of its own beside the card number, so that capture removes both. An expiry date is not a
  finding: without the number it identifies no card. "cvv" in code without a value
  (`card.cvv`, `cvv: str`), XML schema errors (`cvc-elt.1`) and three-digit numbers without
  the name (HTTP 404, port 443) are not codes;
- US social security number and US ITIN: 123-45-6789 with dashes (or en dashes) anywhere, and
  with spaces or as nine digits after its name ("SSN 123456789", "my social is ...", `"ssn":
  "..."`, `tax_id=`, "ITIN", "TIN", "tax id", "número de seguro social",
  "Sozialversicherungsnummer", "社会安全号码", with up to three words and "is" in the
  sentence's language between: "le SSN du client Martin est ...") or under a table column
  named "ssn", "tax_id" or "itin" (Markdown, CSV, TSV); the kind
  follows the number (an ITIN starts with 9, its middle digits 50-65, 70-88, 90-92 or 94-99).
  Numbers never issued (area 000, 666 or 9xx, group 00, serial 0000), the SSA's public
  examples (078-05-1120, 219-09-9999, 987-65-4320 to 4329), masked ones (`***-**-6789`), a
  dashed number named as something else (an order, a part, a lot, a phone, also in other
  languages: "Bestellnummer", "commande", "pedido", "订单号") or ending in a month and a year
  up to 2039 (202-11-2024), and phone numbers, ISBNs, dates, versions and nine
  digits without the name are not;
- 2FA material: recovery or backup code lists ("GitHub 2FA recovery codes: 4f2a1-9c8e3 ...",
  "backup codes: 8142 0937, ..."), TOTP seeds in base32, grouped by four or not, after "2FA
  secret", "TOTP", "MFA seed", "authenticator key", "setup key", and `otpauth://` URIs;
- session cookie: the value of a `Cookie:` or `Set-Cookie:` header (not of analytics or
  preference cookies) and of cookies named as sessions (`sessionid=`, `PHPSESSID=`,
  `JSESSIONID=`, `_app_session=`, `connect.sid=`), when it is random-looking;
- wallet seed phrase: 12, 15, 18, 21 or 24 BIP-39 style words (lower case, 3 to 8 letters, none
  of the function words of English prose) after "seed phrase", "recovery phrase", "mnemonic";
- JSON web token (three base64url parts, the header starting `eyJ`);
- bearer token (`Authorization: Bearer <long token>`) and authorization header token
  (`Authorization: Token ...`, `Bot ...`, `SSWS ...`);
- basic auth credentials: `curl -u user:password` (and `--user`, httpie's `-a`),
  `Authorization: Basic <base64 of user:password>`, `"auth"`/`_auth` entries of Docker and npm
  configuration, `auth=("user", "password")` in Python;
- connection string with a password: `postgres://user:password@host` (any scheme) and
  `key=value;` connection strings with `Password=`/`Pwd=` (ADO.NET, ODBC, SQL Server);
- password on a command line: `mysql -pSecret`, `--password Secret`, `sshpass -p`,
  `redis-cli -a`, `sqlcmd -P`, `ldapsearch -w`, `keytool -storepass`, `openssl -passin pass:`,
  `smbclient -U user%password`, ...;
- netrc password (`machine host login user password secret`) and pgpass password
  (`host:port:database:user:password` lines);
- password assignment (`password=`, `passwd:`, `pwd=`, `pw = `, `"password": "..."`,
  `PASSWORD=`, `DB_PASSWORD: ...`, `SMTP_PASS=`, `DB_PW=`, `passphrase`, LDAP's `bindpw` and
  `rootpw`, sssd's `ldap_default_authtok`, Wi-Fi's `psk=`, Dockerfile `ENV DB_PASSWORD x`,
  redis' `requirepass x`, "the password for X = V", a YAML `password: V` inside a sentence) and
  secret or token assignment (`api_key=`, `secret=`, `token=`, `JWT_SECRET=`, `client_secret:`,
  `access_token=`, `private_key=`, `MASTER_KEY=`, `secret_key_base:`, `X-Api-Key: ...`, ...)
  with a concrete value, in code, configuration, JSON, YAML, `.env`, XML
  (`<password>...</password>`), a URL query, or a call that takes the name and the value
  (`define('DB_PASSWORD', '...')`, `config.set('password', '...')`) or the value alone
  (`setPassword("...")`, `withApiKey("...")`) when the value looks like a password or a token;
- password in prose: "the password is hunter2", "my wifi password is sunflower42", "the root
  password for the NAS is Winter2024!", 'the password for the "Ops" vault is ...', "the vault
  password file contains: ...", "the Wi-Fi key is ...", "Password: Tr0ub4dor&3 (staging)", "the
  login is admin / S3cret!", "the basic auth for staging is user / S3cret!", "user admin, pass
  S3cret!", "login: admin  pw S3cret!", "u/p: admin / S3cret!", "U: admin P: S3cret!", "... and
  the pass is S3cret!", the same with the words of German, French, Spanish, Portuguese and Dutch
  ("Zugangsdaten: admin / S3cret!", "Benutzer admin, Kennwort S3cret!", "utilisateur admin, mdp
  S3cret!", "usuario admin clave S3cret!", "gebruiker admin wachtwoord S3cret!"), and with the
  words of Italian, Polish, Russian, Swedish, Danish, Norwegian, Finnish, Turkish, Japanese,
  Chinese and Korean ("utente X e chiave S3cret!", "логин: X, пароль: S3cret!", "账号 X
  密码 S3cret!"), with words and "is" between a login's name and the user and a link word
  before the password's name ("the login for the wifi page is admin, pass is S3cret!", "the
  Jenkins account is X with pw S3cret!"), with a value
  that looks like a password (letters with digits or symbols, six or more digits, or a quoted
  value); also one plain word ending the clause ("my password is letmein", "the guest wifi
  password is sunflower.") unless it is a word sentences say about passwords ("required",
  "incorrect", "there", anything ending in -ed, -ing, -able, ...) or a vendor's default ("the
  default password is admin"); and PIN or passcode ("my PIN is 4821", "the door code for the
  office is 4417#", "the alarm security code is 4821");
- a user and a password with no word for either: "admin / Winter2024!", "guest / guest2024",
  "ops@acme.dev / Gr4fana#Stg", "jdoe / Vend0r#Portal8", "admin/J3nk!ns2024", "root:Toor#123", a
  table row "| admin | Adm1n!Lobby |", "root and hunter2" (a system account, "and", a value
  with letters and digits that is not another account and no noun follows), a value under a
  table column named as a password or a secret ("| env | user | secret |"). After an account
  that comes with a system (admin, root, sa, guest, ...) or an email address and " / ", a value
  that looks like a password, of six characters or more; after another lower case name and
  " / ", or right after "/", ":" or a table's " | ", only a password with letters, digits and
  a symbol, of eight or more: so "admin / settings page", "yes / no", "read/write", "client /
  server", "linux/amd64", "ubuntu/jammy64", "postgres:16-alpine", "actions/checkout@v4",
  "acme/api#1234", "MySQL8 / PostgreSQL16", "admin/admin" and "admin / 100000 users" are not
  pairs. The kind is "password in prose";
- a provider's credential stated in prose: "Twilio auth token 8d3f...", "the Heroku API key
  is <uuid>", "the HMAC key is <hex>" (a UUID, 20 or more hex digits, a long mixed-case token,
  or letters of one case mixed with digits, `k3v9xq2m8w7z...`, after a credential noun); the
  kind names the provider and the noun ("Heroku API key") when the provider is named in the
  noun's phrase (right before the noun, with at most three modifiers between, or ending its
  qualifier: "the API key for Datadog"), else "secret or token in prose" (in "the Keycloak
  client secret for the grafana client", the secret is Keycloak's, not Grafana's);
- high-entropy token: any other long run of random-looking key material. A base64 token that
  decodes to text holding a secret is refused as that secret (a kubeconfig's
  `client-key-data` is a "private key block", a `.dockerconfigjson` holds "basic auth
  credentials").

It favours precision: ordinary developer notes (UUIDs, commit SHAs, hex digests, `SHA256:` and
`h1:` fingerprints, crypt hashes, a hash of a password ("the sha1 of the password is ..."),
paths, identifiers, versions, ids of apps, tenants, requests and traces, hex ids with a short
upper case prefix such as Twilio's `MG...`, `PN...` and `SK...` SIDs, words like "password" or
"token" in prose, descriptions such as "WPA2-protected", code such as
`password=os.environ["DB_PASSWORD"]`, flags without a value such as `mysql -p`, values that
say where the secret is: `password=@pw.txt`, `--secret id=npmrc,src=$HOME/.npmrc`,
`env:DB_PASSWORD`, a secret's name given to `--secret`) are not findings, and neither are
public values: SSH and WireGuard public keys, certificates and public key blocks, base64 of
JSON or of a certificate, Bitcoin addresses, IPFS CIDs, values a sentence calls a public key,
site key, client id or app id.

Placeholders are not secrets. An assigned value, URL password or token is a placeholder when it
is a template (`<your password>`, `[REDACTED]`, `{password}`, `${VAR}`, `$VAR`, `$(cmd)`,
`{{ var }}`, `%VAR%`, `%s`), masked or elided (`***`, `xxxx`, `...`, one repeated character),
a generic word (`password`, `secret`, `token`, `changeme`, `example`, `test`, `demo`, `none`,
...), shaped like one (`your_api_key`, `insert_token_here`, `my-password`, `test-token`,
`example_secret`), or says it is not real (`not-a-real-password`, `Not_A_Real_Pw_1`, anything
starting `fake-`, `dummy-` or `bogus-`, and `test-` or `mock-` followed by words:
`test-token-value`, but not `test-Xk9!mQ2v`). A value that merely contains "example" is not a
placeholder (`example-prod-pw` is a password); only the exact example keys of AWS's documentation
(`AKIAIOSFODNN7EXAMPLE`, `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, ...) are exempt.

`describe_secret` says what was found without ever repeating the secret itself: kinds come
from fixed lists, never from the text.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import html
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

__all__ = ["SecretFinding", "describe_secret", "find_secrets"]


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A secret found in a text: what it looks like and where its value is (`text[start:end]`)."""

    kind: str
    start: int
    end: int


# Kinds whose first letter is not pronounced as written ("an npm token").
_AN_BEFORE = ("npm ",)


def describe_secret(finding: SecretFinding) -> str:
    """A short explanation for a refusal, naming the kind of secret but never its value."""
    vowel = finding.kind[:1].upper() in "AEIOU" or finding.kind.startswith(_AN_BEFORE)
    return f"it contains what looks like {'an' if vowel else 'a'} {finding.kind}"


_Span = tuple[int, int]
# What a rule makes of a match: where the secret is and its kind (a name from a fixed list).
_Found = tuple[_Span, str]

# Characters of tokens: a token is not found inside a longer run of these.
_BOUNDARY_BEFORE = r"(?<![A-Za-z0-9_-])"
_BOUNDARY_AFTER = r"(?![A-Za-z0-9_-])"

# Patterns run on every save, on memories of up to a few thousand characters, so none may
# backtrack over a long run: runs of spaces are matched possessively (`[ \t]*+`), names and
# words have a bounded length or cannot contain what follows them, and the gap between a
# command and its flag may not hold the command again (a "tempered" gap). The tests time
# adversarial inputs of 2,000 and 10,000 characters.

# --- placeholders -------------------------------------------------------------------------------

# The example keys of AWS's documentation: public, and the only values exempt for what they are.
_DOCUMENTED_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "ASIAIOSFODNN7EXAMPLE",
        "AKIAI44QH8DHBEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    }
)
# Values that stand for a secret rather than being one, e.g. "<password>", "${TOKEN}", "{{ x }}".
_TEMPLATE = re.compile(
    r"""
    ^<[^<>]*>$              # <password>, <redacted>
    | ^\[[^\[\]]*\]$        # [REDACTED]
    | ^\{[^{}]*\}$          # {password} (str.format)
    | ^[<\[{][A-Za-z][^<>\[\]{}]*$   # the first word of "<API key from the console>"
    | \{\{ | \$\{ | \#\{    # {{ secrets.X }}, ${VAR}, #{var}
    | ^\$                   # $VAR, $(command), $1
    | ^%[A-Za-z_]\w*%$      # %VAR% (Windows)
    | ^%(?:\(\w+\))?[sd]$   # %s, %(password)s
    """,
    re.VERBOSE,
)
_PLACEHOLDER_WORD = re.compile(
    r"""
    password | passwd | pass | pwd | pw | passphrase | passcode | pin | secret | secrets | token
    | key | api[_-]?key | credentials? | change[_-]?me | changeit | example | sample | placeholder
    | redacted | removed | hidden | masked | censored | dummy | fake | foo | bar | baz | foobar
    | none | null | nil | undefined | true | false | yes | no | empty | blank | string | str
    | bytes | required | optional | todo | tbd | n/a | na | unknown | unset | notset | test
    | testing | demo | mock
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PLACEHOLDER_SHAPE = re.compile(
    r"""
    ^your[\W_]?                     # your_password, YOUR_API_KEY, your-token-here
    | [\W_]here$                    # token_here, insert-key-here
    | ^(?:my|the|some|a|an|new|old|current|test|fake|dummy|mock|demo|sample|example|local|dev)[\W_]?
      (?:passw(?:or)?d|pass|pwd|secret|token|(?:api[\W_]?)?key)s?$   # the-token, example_secret
    | placeholder | redacted | changeme
    | x{4,} | \*{3,} | \.{3} | …         # ghp_xxxxxxxx, ***, truncated...
    | (.)\1{5,}                     # 000000, aaaaaa
    """,
    re.VERBOSE | re.IGNORECASE,
)


# Values that say they are not real: not-a-real-password, fake-token-for-tests, dummy_secret_2.
_SELF_DESCRIBED_FAKE = re.compile(
    r"^(?:not[\W_]?an?[\W_]?real|fake|dummy|bogus)(?:[\W_]|$)", re.IGNORECASE
)
# test-/mock- followed by words (and short numbers) only: test-password-1, mock_api_token. Not
# test-Xk9!mQ2, whose rest is a password of its own.
_TEST_WORDS = re.compile(
    r"^(?:test|testing|mock)(?:[\W_](?:[A-Za-z]+|[0-9]{1,4}))+$", re.IGNORECASE
)


def _is_placeholder(value: str) -> bool:
    """Whether a value is an obvious stand-in for a secret (never a real credential), also
    when written with HTML entities (`&lt;hidden&gt;`)."""
    value = value.strip()
    if not value or len(set(value)) == 1 or value in _DOCUMENTED_EXAMPLES:
        return True
    if _PLACEHOLDER_WORD.fullmatch(value):
        return True
    if _SELF_DESCRIBED_FAKE.match(value) or _TEST_WORDS.match(value):
        return True
    if _TEMPLATE.search(value) or _PLACEHOLDER_SHAPE.search(value):
        return True
    unescaped = html.unescape(value) if "&" in value else value
    return unescaped != value and _is_placeholder(unescaped)


def _has_mixed_classes(value: str) -> bool:
    """Upper case, lower case and digits all present: how random tokens (not words) look."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


# --- rules ----------------------------------------------------------------------------------------


class _Finder(Protocol):
    """What a rule runs over a text: a compiled pattern, or a finder of table cells."""

    def finditer(self, string: str, /) -> Iterator[re.Match[str]]: ...


@dataclass(frozen=True, slots=True)
class _Rule:
    """A kind of secret: a pattern, and a judge that gives the span of the secret in a match
    and its kind, or None when the match holds no secret. Kinds are names from fixed lists (a
    provider's token format, a provider named in a sentence), never text of the match."""

    pattern: _Finder
    judge: Callable[[re.Match[str]], _Found | None]
    # The rule runs only on texts holding one of these (in lower case), and for which `gate`
    # (a test cheaper than the pattern, such as "13 digits in a row" for cards) holds: quick
    # filters, so that a typical memory is scanned in well under a millisecond.
    needs: tuple[str, ...] = ()
    gate: Callable[[str], object] | None = None


def _rule(
    kind: str,
    pattern: _Finder,
    secret: Callable[[re.Match[str]], _Span | None] | None = None,
    *,
    needs: tuple[str, ...] = (),
    gate: Callable[[str], object] | None = None,
) -> _Rule:
    """A rule of one kind, whose `secret` gives the span of the secret (the whole match,
    unless it is a placeholder, by default)."""
    span_of = _whole_match if secret is None else secret

    def judge(match: re.Match[str]) -> _Found | None:
        span = span_of(match)
        return None if span is None else (span, kind)

    return _Rule(pattern, judge, needs, gate)


def _span(start: int, value: str) -> _Span:
    """The span of `value`, found at `start`."""
    return start, start + len(value)


def _chosen(match: re.Match[str], *names: str) -> tuple[str, int]:
    """The value of the first of the groups `names` that took part in the match, and where it
    starts (patterns with alternatives name their secret `secret`, `secret2`, ...)."""
    for name in names:
        value = match.group(name)
        if value is not None:
            return value, match.start(name)
    raise ValueError(f"none of the groups {names} took part in the match")


def _unquote(value: str) -> tuple[str, int, bool]:
    """The value without its quotes, the offset of its text, and whether it was quoted."""
    if len(value) >= 2 and value[0] in "\"'`“" and value[-1] in "\"'`”":
        return value[1:-1], 1, True
    return value, 0, False


_OPENERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim_bare_value(value: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets after an unquoted value."""
    counts = Counter(c for c in value if c in "()[]{}<>")
    end = len(value)
    while end:
        last = value[end - 1]
        opener = _OPENERS.get(last)
        if last in ".:" or (opener is not None and counts[opener] < counts[last]):
            counts[last] -= 1
            end -= 1
        else:
            break
    return value[:end]


def _whole_match(match: re.Match[str]) -> _Span | None:
    """The whole match is the secret, unless it is a placeholder such as `ghp_xxxxxxxx...`."""
    return None if _is_placeholder(match.group()) else match.span()


def _secret_group(match: re.Match[str]) -> _Span | None:
    """The `secret` group is the secret, unless it is a placeholder."""
    return None if _is_placeholder(match.group("secret")) else match.span("secret")


def _unchecked(match: re.Match[str]) -> _Span | None:
    """The whole match, as is: encoded key material may well contain runs like `AAAAAA`."""
    return match.span()


# --- provider formats -----------------------------------------------------------------------------

# A line break in a pasted key, or its escape in a JSON string ("-----BEGIN ...-----\nMIIE...").
_KEY_BREAK = r"(?:\s|\\[rn])"
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[ \t]*+(?:\r?\n|\\n)[ \t]*+[A-Za-z-]++:[^\n\\]*+)*+"  # RFC 1421 headers: DEK-Info, ...
    rf"{_KEY_BREAK}*+[A-Za-z0-9+/=]{{16,}}"  # a body, not just the header line quoted in prose
    rf"(?:(?:[A-Za-z0-9+/=]|{_KEY_BREAK})*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    # a truncated paste: the lines of the body there are
    r"|(?:[ \t]*+(?:\r?\n|\\n)[ \t]*+[A-Za-z0-9+/=]{16,}+)*+)"
    # SSH2 (RFC 4716) and PuTTY key files
    r"|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----(?:\s*+[A-Za-z-]++:[^\n]*+)*+\s*+"
    r"[A-Za-z0-9+/=]{16,}(?:[A-Za-z0-9+/=\s]*?---- END SSH2 ENCRYPTED PRIVATE KEY ----)?"
    r"|(?:PuTTY-User-Key-File-[0-9]:[^\n]*+(?:\r?\n[^\n]*+){0,40}?\r?\n)?"
    r"Private-Lines:[ \t]*+[0-9]++[ \t]*+\r?\n[A-Za-z0-9+/=]{16,}(?:\r?\n[A-Za-z0-9+/=]{4,})*+"
)
_AWS_ACCESS_KEY_ID = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_ACCESS_KEY = re.compile(
    r"(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?(?:[ \t]*+[=:]|[ \t])[ \t]*+"
    r"[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    re.IGNORECASE,
)
# An AWS secret access key right after its key id: "AKIA... / <40 characters>".
_AWS_KEY_PAIR = re.compile(
    r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"(?:[ \t]*+[/:,;|][ \t]*+|[ \t]++(?:and|with)[ \t]++)"
    r"(?:(?:the[ \t]++)?secret(?:[ \t]++(?:access[ \t]++)?key)?[ \t]*+(?:is|:|=)?[ \t]*+)?"
    r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
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
# "Authorization: Bearer <token>", also "Bearer: <token>".
_BEARER_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])bearer(?:[ \t]*+:[ \t]*+|[ \t]++)"
    r"(?P<secret>[A-Za-z0-9._~+/-]{19,}[A-Za-z0-9_~+/-]=*)(?![A-Za-z0-9_~+/=-])",
    re.IGNORECASE,
)
# Other schemes of the Authorization header: DRF and GitHub's "token", Discord's "Bot", Okta's
# "SSWS", "ApiKey"; the header name is required (a bare "Token abc..." is prose).
_AUTHORIZATION_TOKEN = re.compile(
    r"authorization[\"']?[ \t]*+[:=][ \t]*+[\"']?(?:token|bot|ssws|api-?key|key|apikey)[ \t]++"
    r"(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9_~+/=-])",
    re.IGNORECASE,
)
# Telegram bot tokens follow "bot" in API URLs (https://api.telegram.org/bot123:AA.../getMe).
_TELEGRAM_BOT_TOKEN = re.compile(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")


def _openai_key(match: re.Match[str]) -> _Span | None:
    """An OpenAI key, if its body mixes upper case, lower case and digits (not `sk-some-name`)."""
    return _whole_match(match) if _has_mixed_classes(match.group("body")) else None


def _bearer_token(match: re.Match[str]) -> _Span | None:
    """A bearer token: long, with letters and digits (not "Bearer authentication" in prose)."""
    token = match.group("secret")
    if not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)):
        return None
    return _secret_group(match)


def _aws_key_pair(match: re.Match[str]) -> _Span | None:
    secret = match.group("secret")
    if _HEX.match(secret) or not _has_mixed_classes(secret) or _is_placeholder(secret):
        return None
    return match.span("secret")


def _b64decode(value: str) -> str | None:
    """The text a base64 (or base64url) value encodes, or None if it encodes no UTF-8 text."""
    value = value.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _discord_bot_token(match: re.Match[str]) -> _Span | None:
    """Its first part is the bot's numeric id in base64."""
    decoded = _b64decode(match.group().split(".", 1)[0])
    return _whole_match(match) if decoded is not None and decoded.isdigit() else None


def _twitter_bearer_token(match: re.Match[str]) -> _Span | None:
    """Its run of "A"s is no placeholder; the rest may be."""
    return None if _is_placeholder(match.group().lstrip("A")) else match.span()


def _facebook_access_token(match: re.Match[str]) -> _Span | None:
    return _whole_match(match) if _has_mixed_classes(match.group()[3:]) else None


_UUID_BODY = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# Provider tokens recognised by a documented prefix or shape (most after the formats gitleaks
# and detect-secrets know), each with what a text must hold (in lower case) for it to run.
# Each is found as a whole token: not inside a longer run of token characters.
_PREFIXED_TOKENS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("SendGrid API key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", ("sg.",)),
    ("npm token", r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    ("PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,}", ("pypi-age",)),
    (
        "Hugging Face token",
        r"hf_(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{30,40}",
        ("hf_",),
    ),
    ("DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}", ("_v1_",)),
    ("Shopify access token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ("shp",)),
    ("Mailgun API key", r"key-(?=[0-9a-z]*[0-9])(?=[0-9a-z]*[a-z])[0-9a-z]{32}", ("key-",)),
    ("Mailchimp API key", r"[0-9a-f]{32}-us[0-9]{1,2}", ("-us",)),
    (
        "Square access token",
        r"sq0atp-[A-Za-z0-9_-]{22}|sq0csp-[A-Za-z0-9_-]{43}|EAAA[A-Za-z0-9_-]{60}",
        ("sq0", "eaaa"),
    ),
    ("Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{28}", ("gocspx-",)),
    ("Azure AD client secret", r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}", ("q~",)),
    ("Stripe webhook secret", r"whsec_[A-Za-z0-9+/]{32,}={0,2}", ("whsec_",)),
    ("Vault token", r"hv[sb]\.[A-Za-z0-9_-]{24,}", ("hvs.", "hvb.")),
    ("age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", ("age-",)),
    ("Docker Hub token", r"dckr_pat_[A-Za-z0-9_-]{27,}", ("dckr_",)),
    ("Databricks token", r"dapi[a-f0-9]{32}(?:-[0-9])?", ("dapi",)),
    ("Sentry auth token", r"sntrys_eyJ[A-Za-z0-9+/=_-]{60,}|sntryu_[a-f0-9]{64}", ("sntry",)),
    ("Grafana token", r"glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_eyJ[A-Za-z0-9+/=_-]{32,}", ("gl",)),
    ("Postman API key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("pmak-",)),
    ("Linear API key", r"lin_api_[A-Za-z0-9]{40}", ("lin_api_",)),
    ("Notion token", r"secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35}", ("secret_", "ntn_")),
    ("New Relic API key", r"NRAK-[A-Z0-9]{27}", ("nrak-",)),
    ("Doppler token", r"dp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_.-]{40,64}", ("dp.",)),
    ("Terraform Cloud token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", (".atlasv1.",)),
    ("Pulumi access token", r"pul-[a-f0-9]{40}", ("pul-",)),
    ("Supabase access token", r"sbp_[a-f0-9]{40}", ("sbp_",)),
    ("Netlify token", r"nfp_[A-Za-z0-9]{36}", ("nfp_",)),
    ("Atlassian API token", r"ATATT3[A-Za-z0-9_=-]{150,}", ("atatt3",)),
    ("Bitbucket app password", r"ATBB[A-Za-z0-9_=.-]{28,}", ("atbb",)),
    ("Groq API key", r"gsk_[A-Za-z0-9]{52}", ("gsk_",)),
    ("Replicate API token", r"r8_[A-Za-z0-9]{37}", ("r8_",)),
    ("Perplexity API key", r"pplx-[A-Za-z0-9]{48}", ("pplx-",)),
    ("xAI API key", r"xai-[A-Za-z0-9]{80}", ("xai-",)),
    ("1Password service account token", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}", ("ops_eyj",)),
    ("Fly.io token", r"fo1_[A-Za-z0-9_-]{43}", ("fo1_",)),
    ("PlanetScale token", r"pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_.-]{32,64}", ("pscale_",)),
    ("Airtable personal access token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", ("pat",)),
    ("Mapbox secret token", r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}", ("sk.eyj",)),
    ("Dynatrace token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}", ("dt0c01.",)),
    ("Contentful token", r"CFPAT-[A-Za-z0-9_-]{43}", ("cfpat-",)),
    ("Figma token", r"figd_[A-Za-z0-9_-]{40,}", ("figd_",)),
    ("Heroku API key", r"HRKU-[A-Za-z0-9_-]{40,}", ("hrku-",)),
    ("HubSpot private app token", rf"pat-(?:na|eu)[0-9]-{_UUID_BODY}", ("pat-",)),
    ("LaunchDarkly SDK key", rf"sdk-{_UUID_BODY}", ("sdk-",)),
    (
        "Tailscale key",
        r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]+-[A-Za-z0-9]{20,}",
        ("tskey-",),
    ),
    ("Google OAuth access token", r"ya29\.[A-Za-z0-9_-]{30,}", ("ya29.",)),
    ("Google OAuth refresh token", r"1//0[A-Za-z0-9_-]{40,}", ("1//0",)),
    ("Facebook access token", r"EAA[A-Za-z0-9]{30,}", ("eaa",)),
    ("CircleCI token", r"CCI(?:PAT|PRJ)_[A-Za-z0-9]{22}_[a-f0-9]{40}", ("cci",)),
    (
        "Firebase Cloud Messaging server key",
        r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}",
        ("apa91b",),
    ),
    ("Twitter bearer token", r"A{21}[A-Za-z0-9%]{30,}", ("a" * 21,)),
    # Asana: 2/<user id>/<token id>:<32 hex> (or 1/<id>:<hex>, 0/<hex>), not inside a path
    (
        "Asana personal access token",
        r"(?<![/.])(?:[0-9]/[0-9]{10,20}(?:/[0-9]{10,20})?[/:]|0/)[0-9a-f]{32}",
        ("/",),
    ),
    # Discord: the first part is the bot's numeric id in base64 (checked by _discord_bot_token)
    (
        "Discord bot token",
        r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
        (".",),
    ),
)
_PREFIXED_CHECKS: dict[str, Callable[[re.Match[str]], _Span | None]] = {
    "Discord bot token": _discord_bot_token,
    "Twitter bearer token": _twitter_bearer_token,
    "Facebook access token": _facebook_access_token,
}
_PREFIXED_RULES = tuple(
    _rule(
        kind,
        re.compile(f"{_BOUNDARY_BEFORE}(?:{pattern}){_BOUNDARY_AFTER}"),
        _PREFIXED_CHECKS.get(kind),
        needs=needs,
    )
    for kind, pattern, needs in _PREFIXED_TOKENS
)


# --- basic auth -----------------------------------------------------------------------------------


def _command(tools: str) -> str:
    """A command of `tools` (a regex alternation) and the rest of its command line up to a flag:
    a gap without a line break, a pipe, a ";" or another of the tools, so that a line holding
    a tool many times is scanned once."""
    tool = rf"(?<![\w-])(?:{tools})(?![\w-])"
    return rf"{tool}(?:(?!{tool})[^\n|;])*?"


# curl -u user:password, curl --user user:password, http -a user:password (httpie): on the line
# of an HTTP client, so that `docker run -u 1000:1000` (a user and a group) is not one.
_CLIENT_BASIC_AUTH = re.compile(
    _command("curl|https?|xh|httpie|grpcurl|wget")
    + r"[ \t](?:-u|--user|-a|--auth|--proxy-user|-U)(?:[ \t]++|=)"
    r"(?P<quote>[\"'`]?)[^\s:\"'`@/]++:(?P<secret>[^\s\"'`]++)(?P=quote)"
)
_BASIC_AUTHORIZATION = re.compile(
    r"\bbasic[ \t]++(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", re.IGNORECASE
)
# "auth": "<base64 of user:password>" in ~/.docker/config.json, _auth=<base64> in .npmrc.
_ENCODED_AUTH_ENTRY = re.compile(
    r"(?:[\"']auth[\"'][ \t]*+:[ \t]*+[\"']|(?<![\w-])_auth[ \t]*+=[ \t]*+[\"']?)"
    r"(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"
)
# Python: requests.get(url, auth=("admin", "S3cret")), HTTPBasicAuth("admin", "S3cret").
_PYTHON_BASIC_AUTH = re.compile(
    r"(?:\bauth[ \t]*+=[ \t]*+\(|BasicAuth\()[ \t]*+(?P<q1>[\"'])[^\"'\n]++(?P=q1)[ \t]*+,"
    r"[ \t]*+(?P<q2>[\"'])(?P<secret>[^\"'\n]++)(?P=q2)"
)


def _client_basic_auth(match: re.Match[str]) -> _Span | None:
    password = _trim_bare_value(match.group("secret").rstrip(",;"))
    if password.isdigit() and len(password) < 6:  # a port or a group id
        return None
    if not password or _is_placeholder(password):
        return None
    return _span(match.start("secret"), password)


def _encoded_basic_auth(match: re.Match[str]) -> _Span | None:
    """Base64 of `user:password` with a non-empty, concrete password."""
    decoded = _b64decode(match.group("secret"))
    if decoded is None or ":" not in decoded or not decoded.isprintable():
        return None
    user, password = decoded.split(":", 1)
    if not user or not password or _is_placeholder(password):
        return None
    return match.span("secret")


# --- connection strings -------------------------------------------------------------------------

# scheme://user:password@host: the password ends at the last "@" before the host.
_URL_WITH_PASSWORD = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*+://"
    r"[^\s:/?#@\"'`]*+:(?P<secret>[^\s/?#\"'`]*)@[A-Za-z0-9.\[\]_%-]+"
)
# user:password@host without a scheme (a proxy setting, an FTP login): the host is a domain
# name or an IPv4 address, so that `image:tag@sha256:...` and `npm:pkg@1.2.3` are not one.
_LOGIN_AT_HOST = re.compile(
    r"(?<![\w.+%/:@-])(?P<user>[A-Za-z][A-Za-z0-9._%+-]{0,63}+):(?P<secret>[^\s:/?#@\"'`]{1,128}+)"
    r"@(?:(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}|[0-9]{1,3}(?:\.[0-9]{1,3}){3})"
    r"(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
)
# URI schemes without "//" whose "scheme:name@host" is an address, not a login.
_ADDRESS_SCHEMES = frozenset(
    {"mailto", "sip", "sips", "tel", "xmpp", "im", "pres", "acct", "urn", "news", "git", "ssh"}
)


def _url_password(match: re.Match[str]) -> _Span | None:
    """The inline password of a URL, unless it is empty or a placeholder like `${PASSWORD}`."""
    password = match.group("secret")
    if _is_placeholder(password) or password.lower() in {"user", "username", "login"}:
        return None
    if password.isdigit() and len(password) <= 5:  # host:port@... is a malformed URL, not a login
        return None
    return match.span("secret")


def _login_at_host(match: re.Match[str]) -> _Span | None:
    if match.group("user").lower() in _ADDRESS_SCHEMES:
        return None
    return match.span("secret") if _is_password_like(match.group("secret"), quoted=False) else None


# Key=value; connection strings (ADO.NET, ODBC, JDBC for SQL Server, Azure): the credential is
# a pair next to a ";", as in "Server=db;User ID=app;Password=S3cret!;" or
# "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=...;".
_KEY_VALUE_CREDENTIAL = re.compile(
    r"(?:(?<=;)|(?<=;[ \t])|(?<![\w.-]))"
    r"(?P<key>password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)[ \t]*+=[ \t]*+"
    r"(?P<secret>\"[^\"\n]*+\"|'[^'\n]*+'|\{[^{}\n]*+\}|[^;\s\"'`]++)"
    r"(?P<after>;?)",
    re.IGNORECASE,
)
_CONNECTION_KINDS = {
    "password": "connection string with a password",
    "pwd": "connection string with a password",
    "accountkey": "Azure storage account key",
    "sharedaccesskey": "Azure shared access key",
    "sharedaccesssignature": "Azure SAS token",
}


def _key_value_credential(match: re.Match[str]) -> _Found | None:
    """A credential pair of a `;`-separated connection string, unless it is a placeholder."""
    before = match.string[max(0, match.start() - 2) : match.start()]
    if ";" not in before and not match.group("after"):
        return None  # not in a ";" list: an ordinary assignment, found by the rules below
    raw = match.group("secret")
    if raw[:1] == "{" and raw[-1:] == "}":
        value, offset = raw[1:-1], 1
    else:
        value, offset, _ = _unquote(raw)
    if len(value) < 3 or _is_placeholder(value):
        return None
    return _span(match.start("secret") + offset, value), _CONNECTION_KINDS[
        match.group("key").lower()
    ]


# Azure shared access signatures in URLs: ?sv=2022-11-02&...&sig=<base64, URL-encoded>; the
# signature is found first, then the query string it ends is checked for a version (sv=).
_AZURE_SAS = re.compile(r"(?<=[?&])sig=(?P<secret>[A-Za-z0-9%+/=]{30,})", re.IGNORECASE)
_SAS_VERSION = re.compile(r"[?&]sv=[0-9-]+&", re.IGNORECASE)


def _azure_sas(match: re.Match[str]) -> _Span | None:
    text = match.string
    query = text.rfind("?", 0, match.start())
    before = text[query : match.start()] if query >= 0 else ""
    if not _SAS_VERSION.search(before):
        return None
    return _secret_group(match)


# --- other credential files and command lines --------------------------------------------------

# .netrc: "machine host login user password secret" (on one line or several); also "default".
# The host has a dot or a colon (or a login follows it), so that "machine learning password
# ..." is prose.
_NETRC = re.compile(
    r"(?<![\w-])(?:machine[ \t]++(?:(?=\S*[.:])\S++|\S++(?=\s++login\s))|default(?=\s++login\s))"
    r"(?:\s++(?:login|account)\s++\S++)*+"
    r"\s++password\s++(?P<secret>\S++)"
)
# .pgpass: hostname:port:database:username:password, as a whole word (the host has a letter
# or a dot: "10:00:00:UTC:daily" is not one; matched without backtracking into the host).
_PGPASS = re.compile(
    r"(?<![^\s\"'`(])(?:(?=[A-Za-z0-9]*+[A-Za-z.])[\w.-]++|\*):(?:[0-9]{2,5}|\*):[\w*$.-]++:"
    r"[\w*$.@-]++:(?P<secret>(?:\\[:\\]|[^\s:\\\"'`])++)(?=[\s\"'`)]|$)"
)


def _pgpass_password(match: re.Match[str]) -> _Span | None:
    value = _trim_bare_value(match.group("secret"))
    if len(value) < 3 or _is_placeholder(value) or (value.isdigit() and len(value) < 6):
        return None
    return _span(match.start("secret"), value)


def _netrc_password(match: re.Match[str]) -> _Span | None:
    value = _trim_bare_value(match.group("secret"))
    if _is_placeholder(value) or _PATH_OR_URL.search(value) or len(value) < 3:
        return None
    return _span(match.start("secret"), value)


_COMMAND_VALUE = r"(?P<secret>\"[^\"\n]++\"|'[^'\n]++'|[^\s\"'|;&<>-][^\s\"'|;&<>]*+)"
# mysql's -p takes the password attached (-pS3cret); "-p S3cret" prompts, S3cret is a database.
_MYSQL_PASSWORD = re.compile(
    _command(
        "mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump"
        "|mariadb-admin|7z|7za|unrar"
    )
    + r"[ \t]-p(?P<secret>\"[^\"\n]++\"|'[^'\n]++'|[^\s\"'|;&<>]{3,})"
)
# Tools whose short flag takes a password as the next argument.
_PASSWORD_FLAG = re.compile(
    r"(?:(?<![\w-])sshpass[ \t]++-p"
    r"|" + _command("mongo(?:sh|dump|restore|import|export)?|cqlsh|cypher-shell") + r"[ \t]-p"
    r"|"
    + _command(r"(?:docker|podman|nerdctl|helm[ \t]++registry|oras|skopeo|buildah|az)[ \t]++login")
    + r"[ \t]-p"
    r"|" + _command("sqlcmd|bcp|zip|mosquitto_(?:pub|sub|rr)") + r"[ \t]-P"
    r"|" + _command("redis-cli") + r"[ \t]-a"
    r"|" + _command("ldap(?:search|add|modify|delete|whoami|passwd)") + r"[ \t]-w"
    r"|" + _command("keytool") + r"[ \t]-(?:store|key|srcstore|deststore|new)pass"
    r")[ \t]++" + _COMMAND_VALUE
)
# --password Secret, --db-password "Secret", --api-token Secret (the "=" form is an assignment).
_LONG_PASSWORD_FLAG = re.compile(
    r"(?<![\w-])--(?P<flag>(?:[a-z0-9]+-){0,6}(?:password|passwd|pass|passphrase|secret|token"
    r"|api-key|apikey|access-key|secret-key|private-key|client-secret))[ \t]++" + _COMMAND_VALUE
)
# openssl -passin pass:Secret, smbclient -U user%Secret.
_INLINE_PASSWORD_ARGUMENT = re.compile(
    r"(?<![\w-])-pass(?:in|out|word)?[ \t]++pass:(?P<secret>[^\s\"']++)"
    r"|" + _command("smbclient") + r"[ \t]-U[ \t]++[\"']?[\w.\\-]++%(?P<secret2>[^\s\"']++)"
)
# htpasswd -b[c] file user password, htpasswd -nb user password (and mosquitto_passwd -b).
_BATCH_PASSWORD_FILE = re.compile(
    r"(?<![\w-])(?:htpasswd|mosquitto_passwd)(?P<flags>(?:[ \t]++-[A-Za-z]++){1,4})"
    r"[ \t]++(?P<first>\"[^\"\n]++\"|[^\s\"']++)[ \t]++(?P<second>\"[^\"\n]++\"|[^\s\"']++)"
    r"(?:[ \t]++(?P<third>\"[^\"\n]++\"|'[^'\n]++'|[^\s\"'|;&<>]++))?"
)
# Windows: net user <name> <password> [/add]; "*" prompts for it.
_NET_USER = re.compile(
    r"(?<![\w-])net[ \t]++user[ \t]++(?:\"[^\"\n]++\"|[^\s\"/]++)[ \t]++"
    r"(?P<secret>\"[^\"\n]++\"|[^\s\"/*][^\s]*+)",
    re.IGNORECASE,
)
# A password echoed into a command that reads it from standard input: sudo -S, passwd --stdin,
# chpasswd (user:password), docker login --password-stdin.
_ECHOED_PASSWORD = re.compile(
    r"(?<![\w-])(?:echo|printf)(?:[ \t]++-[ne]++)?[ \t]++"
    r"(?P<secret>\"[^\"\n]++\"|'[^'\n]++'|[^\s\"'|;&<>]++)[ \t]*+\|[ \t]*+"
    r"(?P<reader>sudo(?:[ \t]++[^\s|;]++){0,4}?[ \t]++-[A-Za-z]*S"
    r"|passwd(?:[ \t]++\S++)?[ \t]++--stdin|chpasswd"
    r"|(?:docker|podman|nerdctl|helm[ \t]++registry|oras)[ \t]++login"
    r"(?:[ \t]++[^\s|;]++){0,8}?[ \t]++--password-stdin)(?![\w-])"
)


def _command_password(match: re.Match[str]) -> _Span | None:
    """A password given on a command line, unless it is a placeholder, a variable or a port."""
    value, offset, quoted = _unquote(match.group("secret"))
    if not _is_secret_like(value, quoted=quoted):
        return None
    # `--secret` of docker, podman and buildah names a secret (--secret db_pass_v2); only a
    # random-looking value is one
    if match.groupdict().get("flag") == "secret" and not _is_token_like(value):
        return None
    return _span(match.start("secret") + offset, value)


def _inline_password_argument(match: re.Match[str]) -> _Span | None:
    value, start = _chosen(match, "secret", "secret2")
    return _span(start, value) if _is_secret_like(value, quoted=False) else None


def _batch_password_file(match: re.Match[str]) -> _Span | None:
    """The password of `htpasswd -b`: the third argument, or the second with -n (no file)."""
    flags = match.group("flags")
    if "b" not in flags:
        return None
    group = "second" if "n" in flags else "third"
    raw = match.group(group)
    if raw is None:
        return None
    value, offset, quoted = _unquote(raw)
    if not _is_secret_like(value, quoted=quoted):
        return None
    return _span(match.start(group) + offset, value)


def _echoed_password(match: re.Match[str]) -> _Span | None:
    value, offset, quoted = _unquote(match.group("secret"))
    start = match.start("secret") + offset
    if match.group("reader") == "chpasswd":  # user:password
        if ":" not in value:
            return None
        user, value = value.split(":", 1)
        start += len(user) + 1
    return _span(start, value) if _is_secret_like(value, quoted=quoted) else None


# --- assignments: password=..., api_key: "...", DB_PASSWORD: ... --------------------------------

# The key may end a longer name (DB_PASSWORD, PGPASSWORD, access_token, SMTP_PASS, DB_PW) but not
# continue (password_hash, tokens, secretName); a quote and a bracket may close it
# (conf["password"] = ...). "pass" and "pw" are keys as words of their own or at the end of a
# longer name ("first pass: done" is prose: a key this short needs a value that looks like a
# password, see _is_short_key). LDAP's bindpw and rootpw, sssd's ldap_default_authtok and
# Wi-Fi's psk are passwords too.
_LOGIN_KEY_NAMES = (
    r"passw(?:or)?d|pwd|passphrase|passcode|(?<![A-Za-z0-9])pass"
    r"|(?<![A-Za-z0-9])(?:bind|root)?pw|(?<=[_.-])pw|authtok|(?<![A-Za-z0-9_])(?:wpa[_-]?)?psk"
)
_CREDENTIAL_KEY_NAMES = (
    r"secret(?:[_-]?key)?(?:[_-]?base)?|api[_-]?key|apikey|token|private[_-]?key"
    r"|(?:access|auth|master|signing|encryption|app|account|client|service|admin|server|webhook"
    r"|hmac|jwt|subscription|functions|shared[_-]?access)[_-]?key"
)
# The separator is "=", ":", ":=", "=>" or a Python annotation ("password: str = ..."), never
# "==" or "::". A bare value in brackets may hold spaces (password=<your password>).
_ASSIGNMENT = r"""
    (?P<key>{keys})(?![A-Za-z0-9_])["']?\]?[ \t]*+
    (?: (?P<annotation>:[ \t]*+[A-Za-z_][\w.\[\], |]{0,60}?[ \t]+=(?!=))
      | (?P<separator>=> | := | =(?!=) | :(?!:)) )
    [ \t]*+
    (?: (?P<quote>["'`])(?P<quoted>[^\s"'`](?:(?:(?!(?P=quote))[^\n])*?[^\s])?)(?P=quote)
      | (?P<bare> <[^<>\n]{1,80}> | \[[^\[\]\n]{1,80}\] | [^\s"'`,;]++ ) )
"""
_PASSWORD_ASSIGNMENT = re.compile(
    _ASSIGNMENT.replace("{keys}", _LOGIN_KEY_NAMES), re.IGNORECASE | re.VERBOSE
)
_SECRET_ASSIGNMENT = re.compile(
    _ASSIGNMENT.replace("{keys}", _CREDENTIAL_KEY_NAMES), re.IGNORECASE | re.VERBOSE
)
# Keys short enough to be variable names in code (pw, psk, pass) when they are the whole name:
# their unquoted value must look like a password ("ph, pw = ph_up, pw_up" are pixel widths).
_SHORT_KEYS = frozenset({"pw", "psk", "pass", "wpa_psk", "wpa-psk", "wpapsk"})
# XML elements, as in Maven's settings.xml: <password>...</password>, <apiKey>...</apiKey>.
_ELEMENT = (
    r"<(?P<tag>[\w.:-]{0,40}?(?:{keys}))>[ \t]*+(?P<secret>[^<\s][^<\n]{0,200}?)[ \t]*</(?P=tag)>"
)
_PASSWORD_ELEMENT = re.compile(_ELEMENT.replace("{keys}", _LOGIN_KEY_NAMES), re.IGNORECASE)
_SECRET_ELEMENT = re.compile(_ELEMENT.replace("{keys}", _CREDENTIAL_KEY_NAMES), re.IGNORECASE)
# Dockerfile: ENV DB_PASSWORD S3cret (the legacy form without "=").
_DOCKERFILE_ENV = re.compile(
    r"(?<![\w-])(?:ENV|ARG)[ \t]++(?P<name>[A-Za-z_][A-Za-z0-9_]*+)[ \t]++"
    r"(?P<secret>[^\s=\"'][^\s]*+|\"[^\"\n]++\"|'[^'\n]++')(?P<end>[ \t]*+$)?",
    re.MULTILINE,
)
_DOCKERFILE_INSTRUCTION = re.compile(r"(?<![\w-])(?:ENV|ARG)[ \t]")
# Space-separated configuration directives: redis.conf's requirepass and masterauth.
_PASSWORD_DIRECTIVE = re.compile(
    r"(?<![\w-])(?:requirepass|masterauth)[ \t]++(?P<secret>[^\s\"'#]++|\"[^\"\n]++\")"
)
# nslcd.conf's and slapd.conf's bindpw and rootpw, sssd's ldap_default_authtok, also in a
# sentence ("with bindpw S3rv1ce!Ld4p"): the value must look like a password.
_PASSWORD_KEYWORD = re.compile(
    r"(?<![\w-])(?:bindpw|rootpw|ldap_default_authtok|wpa_passphrase|psk)[ \t]++"
    r"(?P<secret>\"[^\"\n]++\"|'[^'\n]++'|[^\s\"'=:#][^\s]*+)"
)
# SQL: CREATE USER ... IDENTIFIED BY 'S3cret!' (MySQL, Oracle), also IDENTIFIED WITH <plugin>
# BY; not IDENTIFIED BY PASSWORD '<hash>' or BY VALUES '<hash>', which give a hash.
_SQL_IDENTIFIED_BY = re.compile(
    r"(?<![\w-])identified(?:[ \t]++with[ \t]++[\w$]++)?[ \t]++by[ \t]++"
    r"(?!(?:password|values)[ \t])(?P<secret>'[^'\n]++'|\"[^\"\n]++\"|[^\s;'\"]++)",
    re.IGNORECASE,
)
# A credential's name and its value as the arguments of a call: PHP's define('DB_PASSWORD',
# '...'), config.set('password', '...'), os.environ.setdefault("API_TOKEN", "..."); and a
# setter given the value: setPassword("..."), user.set_password('...'), withApiKey("...").
_CALL_ARGUMENTS = r"""
    (?P<q1>["'])(?=[\w.-]{{1,48}}(?P=q1)[ \t]*+,)  # a quoted name and a comma: then the keys
    (?P<key>[\w.-]{{0,40}}?(?:{keys}))(?P=q1)[ \t]*+,[ \t]*+
    (?P<q2>["'])(?P<secret>[^"'\n]{{1,200}})(?P=q2)
  | (?<![A-Za-z0-9])(?:set|with|use|update|change)_?(?P<setter>{keys})[ \t]*+\([ \t]*+
    (?P<q3>["'])(?P<secret2>[^"'\n]{{1,200}})(?P=q3)[ \t]*+\)
"""
_CALL_CREDENTIAL = re.compile(
    _CALL_ARGUMENTS.format(keys=f"{_LOGIN_KEY_NAMES}|{_CREDENTIAL_KEY_NAMES}"),
    re.VERBOSE | re.IGNORECASE,
)
_LOGIN_NAME = re.compile(rf"(?:{_LOGIN_KEY_NAMES})$", re.IGNORECASE)
_CREDENTIAL_NAME = re.compile(rf"(?:{_CREDENTIAL_KEY_NAMES})$", re.IGNORECASE)

# An unquoted value after a plain ":" (or an "=" spaced only after it) is a value only if its line
# ends, or a comment, a closing bracket or quote, or the next key follows; otherwise it starts
# prose ("password: see the vault", "the secret= option").
_END_OF_VALUE = re.compile(
    r"""[ \t]*+(?: $ | [;)}\]|\#"'`] | ,[ \t]*+(?: $ | ["']?[\w-]++["']?[ \t]*+[:=] ))""",
    re.MULTILINE | re.VERBOSE,
)
# A quoted value that is only part of an expression: "ghp_" + suffix, "{}".format(password).
_EXPRESSION_CONTINUES = re.compile(r"[ \t]*+(?:\+|%|\.[A-Za-z_])")
# Code, not a literal: os.environ["X"], get_token(), settings.api_key, db_password, dbPassword.
_CALL_OR_INDEX = re.compile(r"[(\[]")
_DOTTED_NAME = re.compile(r"^[A-Za-z_$][\w$]*+(?:\.[A-Za-z_$][\w$]*+)+$")
_CREDENTIAL_IDENTIFIER = re.compile(
    r"^(?=[A-Za-z_]\w*$)(?=.*(?:_|(?-i:[a-z][A-Z])))(?=.*(?:pass|pwd|secret|token|key|cred|auth))",
    re.IGNORECASE,
)
# A digit inside a word ("S3cret", "passw0rd") is how passwords are spelled, not identifiers.
_LEET = re.compile(r"[A-Za-z][0-9]+[a-z]")
# An identifier of code: snake_case in lower case (user_input, pw_hash) or camelCase with
# digits at most at its end (userInput, jwtString, dbPass2024).
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$|^[a-z]+(?:[A-Z][a-z]+)+[0-9]*$")
_PATH_OR_URL = re.compile(r"^(?:~|\.{1,2})?/|^[A-Za-z]:\\|://")
# A file holding the secret, not the secret: client.key, sa.json, ./creds.env.
_FILE_NAME = re.compile(
    r"^[\w.-]+\.(?:key|pem|crt|cer|der|p12|pfx|jks|keystore|json|ya?ml|toml|env|txt|ini|conf)$",
    re.IGNORECASE,
)
_YAML_TAG = re.compile(r"^!!?[A-Za-z]\w*$")  # password: !vault |, password: !!str 0123
# A value that says where the secret is rather than being it: a file given with "@"
# (password=@pw.txt), a typed reference (env:DB_PASSWORD, file:/run/secrets/db, arn:aws:...),
# BuildKit's secret spec (--secret id=npmrc,src=$HOME/.npmrc).
_REFERENCE_VALUE = re.compile(
    r"""^@(?:[~./$]|[\w.-]*\.[A-Za-z]{1,5}$)
    | ^(?:file|env|fd|stdin|keychain|keyring|arn|ssm|secretsmanager|vault|op|sops)(?::|$)
    | (?:^|,)(?:id|src|source|env|target|dst|type|required|mode|uid|gid)=""",
    re.VERBOSE | re.IGNORECASE,
)
# Where a secret is kept, named by words: secret/db:password, kv/data/prod/api (a Vault path).
_WORDY_PATH = re.compile(r"^(?=[^/]*/)[a-z_-]++(?:[/:][a-z_-]++)*+$")
# What notes say about a credential rather than what it is ("token: revoked").
_STATUS_WORD = re.compile(
    r"""
    revoked | expired | rotated | invalid | valid | missing | set | reset | removed | deleted
    | updated | unchanged | provided | configured | generated | disabled | enabled | stored
    """,
    re.VERBOSE | re.IGNORECASE,
)
# "the default password is admin", `POSTGRES_PASSWORD=postgres (the image default)`: a
# vendor's default, documented for everyone, when the memory says it is one.
_DOCUMENTED_DEFAULT = re.compile(
    r"(?:default|factory|initial|example|sample|demo|documented)[ \t]++(?:[\w-]++[ \t]++)?$",
    re.IGNORECASE,
)
_DEFAULT_AFTER = re.compile(
    r"[ \t]*+[(,;#-][ \t]*+(?:(?:the|a|its|their)[ \t]++)?(?:\w++[ \t]++)?default", re.IGNORECASE
)


def _is_code_reference(value: str) -> bool:
    """Whether an unquoted value is code naming the secret: a call, an index, an attribute
    (`settings.api_key`) or a variable (`db_password`, `dbPassword`), not a literal."""
    if _CALL_OR_INDEX.search(value):
        return True
    if _DOTTED_NAME.match(value):
        # settings.api_key is code; SG.<random>.<random> is a key with dots
        return not any(len(part) >= 16 and _has_mixed_classes(part) for part in value.split("."))
    return bool(_CREDENTIAL_IDENTIFIER.match(value)) and not _LEET.search(value)


def _is_concrete_value(value: str, *, quoted: bool, literal: bool = False) -> bool:
    """Whether an assigned value is a literal credential rather than a placeholder or code.
    `literal`: the assignment is shell or .env style (`DB_PASSWORD=S3cretPass`), where a bare
    word is a value, never a variable."""
    if len(value) < 4 or (value.isdigit() and len(value) < 6):
        return False
    if _is_placeholder(value) or _PATH_OR_URL.search(value) or _FILE_NAME.match(value):
        return False
    if _WORDY_PATH.match(value) or _REFERENCE_VALUE.search(value):
        return False
    if quoted:
        return True
    if _YAML_TAG.match(value) or _STATUS_WORD.fullmatch(value):
        return False
    if literal:
        return not _CALL_OR_INDEX.search(value)
    return not _is_code_reference(value)


def _is_code_literal(value: str) -> bool:
    """Whether an unquoted value in code (`token = <value>`, `pw = <value>`) is a literal: it
    looks like a password or a token; a word or an identifier is a variable."""
    if _IDENTIFIER.match(value):
        return False
    return _is_password_like(value, quoted=False) or _is_token_like(value)


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


def _name_start(match: re.Match[str]) -> tuple[int, str]:
    """Where the whole name of an assignment's key starts (DB_PASSWORD for the key PASSWORD),
    and the character before it."""
    start, text = match.start("key"), match.string
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    return start, text[start - 1 : start]


def _is_environment_style(match: re.Match[str]) -> bool:
    """`DB_PASSWORD=...`, `POSTGRES_PASSWORD: ...`: a name in capitals, directly followed by
    "=" or ":" (a shell variable, .env line, compose file), whose bare value is a literal."""
    name = match.string[_name_start(match)[0] : match.end("key")]
    separator = match.group("separator")
    return (
        name.isupper() and separator in ("=", ":") and match.start("separator") == match.end("key")
    )


def _is_code_style(match: re.Match[str]) -> bool:
    """`token = value`, `token := value`, `token => value`, `f(a, token=value)`: an assignment
    in code, whose unquoted value is an expression (`await getToken()`) or a variable
    (`payload`, `userInput`) unless it looks like a password or a token."""
    separator, text = match.group("separator"), match.string
    if separator in (":=", "=>"):
        return True
    if separator != "=":
        return False
    if text[match.start("separator") - 1].isspace():
        return True
    start = before = _name_start(match)[0]
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    opener = text[before - 1 : before]
    return opener == "(" or (opener == "," and before < start)  # a keyword argument


def _is_short_key(match: re.Match[str]) -> bool:
    """The key is a short word of its own (pw, psk, pass), not the end of a longer name."""
    return match.group("key").lower() in _SHORT_KEYS and _name_start(match)[0] == match.start("key")


def _is_psql_variable(match: re.Match[str], group: str) -> bool:
    """psql's `PASSWORD :'reporting_password'`: a ":" after a space and stuck to a quote or a
    name interpolates a psql variable; it is not a separator."""
    if match.group(group) != ":":
        return False
    at, text = match.start(group), match.string
    return text[at - 1 : at].isspace() and not text[at + 1 : at + 2].isspace()


def _said_to_be_default(text: str, start: int, end: int) -> bool:
    """Whether the text calls the value between `start` and `end` a default."""
    return bool(
        _DOCUMENTED_DEFAULT.search(text, max(0, start - 40), start)
        or _DEFAULT_AFTER.match(text, end)
    )


# A "&" ends a value where the next query parameter starts (?user=app&password=x&ssl=true).
_NEXT_PARAMETER = re.compile(r"&(?:&|[\w.-]+=)")


def _assigned_value(match: re.Match[str]) -> _Span | None:
    """The span of a concrete assigned value, or None for placeholders, code and prose."""
    text = match.string
    if _is_psql_variable(match, "separator"):
        return None
    if match.group("quoted") is not None:
        if _EXPRESSION_CONTINUES.match(text, match.end()):
            return None
        if match.group("quote") == "`" and _name_start(match)[1] == "`":
            return None  # `psk=` in a Markdown code span: the backtick ends the span
        value, start = match.group("quoted"), match.start("quoted")
        if not _is_concrete_value(value, quoted=True):
            return None
    else:
        if match.group("annotation"):  # password: str = name: in Python, a bare name is code
            return None
        bare, start = match.group("bare"), match.start("bare")
        following = _NEXT_PARAMETER.search(bare)
        ends = following is not None or bool(_END_OF_VALUE.match(text, match.end()))
        if following:
            bare = bare[: following.start()]
        elif _introduces_prose(match) and not ends:
            return None
        value = _trim_bare_value(bare)
        literal = _is_environment_style(match)
        if not _is_concrete_value(value, quoted=False, literal=literal):
            return None
        code = not literal and _is_code_style(match)
        if (code or _is_short_key(match)) and not _is_code_literal(value):
            return None
        if code and not ends and not _is_token_like(value):
            return None  # token = await getToken(), password = hunter2 if ok else x: code
    if value.isalpha() and _said_to_be_default(text, _name_start(match)[0], match.end()):
        return None
    return _span(start, value)


def _element_value(match: re.Match[str]) -> _Span | None:
    """The text of a credential XML element, unless it is a placeholder such as `${env.X}`."""
    value = match.group("secret")
    return match.span("secret") if _is_concrete_value(value, quoted=True) else None


def _assignment_kind(name: str) -> str:
    return "password assignment" if _LOGIN_NAME.search(name) else "secret or token assignment"


def _dockerfile_env(match: re.Match[str]) -> _Found | None:
    name = match.group("name")
    if not (_LOGIN_NAME.search(name) or _CREDENTIAL_NAME.search(name)):
        return None
    value, offset, quoted = _unquote(match.group("secret"))
    # a Dockerfile line holds a literal; in a sentence, only what looks like a secret counts
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    whole_line = (
        match.group("end") is not None and not match.string[line_start : match.start()].strip()
    )
    if whole_line:
        concrete = _is_concrete_value(value, quoted=quoted, literal=True)
    else:
        concrete = _is_secret_like(value, quoted=quoted)
    if not concrete:
        return None
    return _span(match.start("secret") + offset, value), _assignment_kind(name)


def _call_credential(match: re.Match[str]) -> _Found | None:
    """The value given with a credential's name to a call, if it looks like a password or a
    token (not a label such as t("password", "Enter your password"))."""
    value, start = _chosen(match, "secret", "secret2")
    if not _is_secret_like(value, quoted=False) or _is_code_reference(value):
        return None
    key, _ = _chosen(match, "key", "setter")
    return _span(start, value), _assignment_kind(key)


def _password_directive(match: re.Match[str]) -> _Span | None:
    value, offset, _ = _unquote(match.group("secret"))
    if not _is_concrete_value(value, quoted=True):
        return None
    return _span(match.start("secret") + offset, value)


# --- prose: "the password is hunter2", "the Heroku API key is <uuid>" ---------------------------

# What a sentence may put between a credential's noun and its verb: "password for the NAS",
# "API key of the staging account on Datadog". Its words are matched possessively: the first
# may hold a ":" only before more of itself (db:5432, not the verb of "password for db: x").
_QUALIFIER = r"""
    (?:[ \t]++\([^()\n]{1,40}\))?
    (?:[ \t]++(?:for|of|on|to|at|in|from|für|pour|para|voor)[ \t]++
       (?:(?:the|my|our|your|this|that|a|an|den|die|das|der|le|la|les|el|mon|mi|mein|meine)
          [ \t]++)?
       (?:[\w.@/"'“”\u2018\u2019-]|:(?=[\w/]))++(?:[ \t]++[\w.@/"'“”\u2018\u2019-]++){0,5}?)?
"""
_QUOTED_VALUE = r"\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|`[^`\n]{1,100}`|“[^”\n]{1,100}”"
# An unquoted word that may be a password: it holds a digit or a symbol (checked further by
# _is_password_like); a plain word ("stored", "the") fails here, so that the pattern tries the
# sentence's other readings ("the password for the QA account was changed to ..."). A password
# has at most 100 characters: a longer run of them is not scanned again from each start in it.
_WORD_WITH_DIGIT_OR_SYMBOL = (
    r"(?=[^\s\"'`“0-9!@#$%^&*+=?~|\\<>\[\]{}]{0,100}+[0-9!@#$%^&*+=?~|\\<>\[\]{}])"
    r"[^\s\"'`“]{1,101}+"
)
# An unquoted password after a user name: as long, at most, as _is_password_like takes.
_BARE_VALUE = r"[^\s\"'`]{1,101}+"
# The noun of a password: in English, and the word for it in German, French, Spanish,
# Portuguese and Dutch (with "is" in those languages); other forms are English only.
_LOGIN_NOUN = r"""
    password|passwd|passphrase|pass[ \t]phrase|pass[ \t]?word|pw|pwd
    |(?:wi-?fi|wlan|wpa[23]?|wireless)[ \t]++(?:key|passphrase|code)
    |passwort|kennwort|mot[ \t]de[ \t]passe|contrase(?:ñ|n)a|senha|wachtwoord
"""
_PROSE_PASSWORD = re.compile(
    rf"""
    (?<![\w-])(?P<noun>{_LOGIN_NOUN})
    (?:[ \t]++(?:file|field|value|itself))?
    {_QUALIFIER}
    [ \t]*+
    (?P<verb> (?:(?:has[ \t]++been|was|is|got)[ \t]++)?(?:set|changed|reset|updated|rotated)
          [ \t]++to(?![\w-])
      | (?:is|was|are|ist|est|es|é)(?![\w-])(?:[ \t]++(?:now|still|currently|just|simply|always))?
          [ \t]*+:?
      | (?:contains|holds|reads|says|equals)(?![\w-])[ \t]*+:?
      | :(?!:) | =(?!=) | -> | → | (?<=[ \t])[-\u2013\u2014](?=[ \t]) | \?(?=[ \t])
    )
    [ \t]*+
    (?P<secret>{_QUOTED_VALUE}|{_WORD_WITH_DIGIT_OR_SYMBOL})
    """,
    re.VERBOSE | re.IGNORECASE,
)
# "my password is letmein": one plain word ending the clause, that is not a word a sentence
# says about a password ("required", "weak", "there"; checked in _plain_word_password).
_PLAIN_WORD_PASSWORD = re.compile(
    rf"""
    (?<![\w-])(?:password|passwd|passphrase|pw|pwd|(?:wi-?fi|wlan)[ \t]++key)
    {_QUALIFIER}
    [ \t]++(?:is|was)(?![\w-])(?:[ \t]++(?:now|still|just|simply))?[ \t]*+:?[ \t]*+
    (?P<secret>[A-Za-z][a-z]{{4,31}})
    (?=[ \t]*+(?:[.!,;)\n]|$|\()|[ \t]++(?:for|until|and|but|so|since)(?![\w-]))
    """,
    re.VERBOSE | re.IGNORECASE,
)
# "log in with password hunter2", "use the password S3cret!", "user admin / password S3cret!"
_PASSWORD_WITHOUT_VERB = re.compile(
    rf"(?<![\w-])(?:password|passwd|passphrase)[ \t]++"
    rf"(?P<secret>{_QUOTED_VALUE}|{_WORD_WITH_DIGIT_OR_SYMBOL})",
    re.IGNORECASE,
)
# A user name in prose: bounded, so that a run of names is not scanned again from each.
_USER = r"[\w.@+-]{1,64}+"
# Letters of the languages written without spaces between words (Japanese kana, Chinese and
# Japanese ideographs, Korean hangul): a word of theirs starts and ends where it is written
# ("数据库账号", "カードのセキュリティコードは"), not where a letter of \w stops.
_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
_WORD_START = rf"(?:(?<![\w-])|(?=[{_CJK}]))"
_WORD_END = rf"(?:(?![\w-])|(?<=[{_CJK}]))"
# A colon as ASCII and CJK text write it.
_COLON = ":\uff1a"
# Words that name a login and password pair, in the languages of _LOGIN_NOUN and others:
# "login", "credentials", "Zugangsdaten", "identifiants", "credenciales", "inloggegevens",
# "u/p", an access ("Zugang", "accès", "acceso", "доступ").
_PAIR_WORD = r"""
    login|credentials?|creds|(?:u|user|login)[ \t]*+/[ \t]*+p(?:ass(?:word)?|w|wd)?
    |(?:basic|http|htaccess)[ \t]++auth(?:entication)?|htpasswd|wi-?fi|wlan
    |zugangsdaten|anmeldedaten|identifiants|credenciales|credenciais|inloggegevens|inlog
    |zugang|acc(?:è|e)s|acceso|accesso|acesso|toegang|dost(?:ę|e)p|доступ|(?:å|a)tkomst
    |eri(?:ş|s)im|credenziali|dane[ \t]++logowania|inloggning|учётные[ \t]++данные
"""
# The word for a user before its name ("user admin", "Benutzer admin", "usuario admin",
# "utente", "użytkownik", "логин", "användare", Turkish "kullanici adi", "ユーザー名", "账号")
# and the word for its password after it ("pass", "pw", "Kennwort", "mdp", "clave", "chiave",
# "hasło", "пароль", "lösen", "şifre", "パス", "密码", "비밀번호").
_USER_WORD = r"""
    user(?:name)?|login|account|benutzer(?:name)?|nutzer|utilisateur|identifiant|usuario
    |usu(?:á|a)rio|utilizador|gebruiker(?:snaam)?|inlog|(?:nome[ \t]++)?utente
    |u(?:ż|z)ytkownik|логин|пользователь|учётная[ \t]++запись|anv(?:ä|a)ndar(?:e|namn)
    |kullan(?:\u0131|i)c(?:\u0131|i)(?:[ \t]++ad(?:\u0131|i))?|brugernavn|brukernavn
    |k(?:ä|a)ytt(?:ä|a)j(?:ä|a)tunnus
    |ユーザー(?:名|ID|id)?|ログインID|用户名?|用戶名?|账号|帳號|账户|帳戶|아이디|계정|사용자
"""
_LOGIN_NOUN_AFTER_USER = r"""
    pass|pw|pwd|password|passwort|kennwort|mdp|mot[ \t]de[ \t]passe|contrase(?:ñ|n)a|clave
    |senha|wachtwoord|chiave|has(?:ł|l)o|пароль|l(?:ö|o)sen(?:ord)?|(?:ş|s)ifre|parola
    |adgangskode|passord|salasana|heslo|パスワード|パス|密码|密碼|口令|비밀번호|암호
"""
# What may stand between a user and its password: "utente X e chiave Y", "account X with pw Y".
_LINK_WORD = r"""
    and|with|und|mit|et|avec|e|con|y|com|en|met|och|med|og|i|ve|ile|и
"""
# "is" before a user or a password, in the languages of the words above.
_PAIR_VERB = r"""
    (?:is|was|are|ist|est|es|(?:è|é)|(?:ä|a)r|er|jest|zijn|sind|sont|son|são)(?![\w-])|是|は
"""
# Words between the name of a login and its verb: "login for the wifi admin page is ...",
# "inlog voor de NAS is ...", "Accès FTP du client : ...". At most four, each possessive.
_PAIR_QUALIFIER = r"(?:[ \t]++[\w.@'\u2019()-]{1,40}+){0,4}?"
# An unquoted password after a user name in CJK text, which ends at CJK punctuation.
_PAIR_VALUE = r"[^\s\"'`\u3001\u3002\uff0c\uff1a\uff1b\uff08\uff09\u300c\u300d]{1,101}+"
# "the staging login is admin / S3cret!", "credentials: admin:S3cret!", "Wi-Fi: Guest / S3cret!"
_LOGIN_PAIR = re.compile(
    rf"""
    (?<![\w-])(?:{_PAIR_WORD})
    {_PAIR_QUALIFIER}
    [ \t]*+(?:{_PAIR_VERB}|[{_COLON}]|=|->|→)[ \t]*+["'`]?
    {_USER}(?:[ \t]*+/[ \t]*+|:)(?P<secret>{_BARE_VALUE})
    """
    # "user admin, pass S3cret!", "user=report pw S3cret!", "Benutzer admin, Kennwort S3cret!",
    # "utente X e chiave Y", "login for the wifi page is admin, pass is Y", "账号 X 密码 Y"
    rf"""
    | {_WORD_START}(?:{_USER_WORD})
      (?:[ \t]++(?:for|of|on|to|at|in|für|zum|zur|pour|du|de|para|del|per|voor|van|för|для|do|dla)
         {_PAIR_QUALIFIER}[ \t]++(?:{_PAIR_VERB}))?
      (?:[ \t]++(?:{_PAIR_VERB}))?
      [ \t]*+[=:{_COLON}]?[ \t]*+{_USER}[ \t]*+[,;/\u3001\uff0c]?[ \t]*+
      (?:(?:{_LINK_WORD})[ \t]++)?
      {_WORD_START}(?:{_LOGIN_NOUN_AFTER_USER}){_WORD_END}
      (?:[ \t]++(?:{_PAIR_VERB}))?
      (?:[ \t]*+[=:{_COLON}][ \t]*+|[ \t]++)(?P<secret2>{_PAIR_VALUE})
    """
    # "U: admin P: S3cret!"
    rf"""
    | (?<![\w-])u[ \t]*+:[ \t]*+{_USER}[ \t]*+[,;/]?[ \t]*+p[ \t]*+:[ \t]*+
      (?P<secret5>{_BARE_VALUE})
    """
    # "basic auth staging:S3cret!"
    rf"""
    | (?<![\w-])(?:basic|http)[ \t]++auth(?:entication)?[ \t]++(?:with[ \t]++)?["'`]?
      {_USER}:(?P<secret3>{_BARE_VALUE})
    """
    # "creds admin S3cret!" (the user and the password end the clause)
    rf"""
    | (?<![\w-])(?:creds|credentials|login)(?:[ \t]*+:)?[ \t]++{_USER}[ \t]++
      (?P<secret4>{_BARE_VALUE})(?=[ \t]*+(?:$|[.,;)(\n]))
    """,
    re.VERBOSE | re.IGNORECASE,
)
# "... and the pass is S3cret!": "pass" as a noun, after a determiner.
_THE_PASS_IS = re.compile(
    rf"(?<![\w-])(?:the|my|its|his|her|their|our|your)[ \t]++pass[ \t]++(?:is|was)(?![\w-])"
    rf"[ \t]*+:?[ \t]*+(?P<secret>{_BARE_VALUE})",
    re.IGNORECASE,
)
# A user and a password with no word for either: "admin / Winter2024!", "root:Toor#123",
# "ops@acme.dev / Gr4fana#Stg", "| admin | Adm1n!Lobby |"; judged in _bare_login_pair.
_BARE_LOGIN_PAIR = re.compile(
    r"(?<![\w./:@+#*-])(?P<user>[A-Za-z][\w.@+-]{0,63}+)"
    # the value is looked ahead at, not taken: it may be the user of the next pair (a table's
    # "| router | admin | Rtr#2291x |")
    r"(?P<separator>[ \t]++[/|][ \t]++|/|:)(?=(?P<secret>[^\s\"'`/|]{4,101}+))"
)
# Names of accounts that come with a system (and "user"): after one of them, "/" or ":" and a
# value that looks like a password are a login pair.
_ACCOUNT_NAMES_TEXT = """
    admin administrator root sa guest user superuser sysadmin operator
"""
_ACCOUNT_NAMES = frozenset(_ACCOUNT_NAMES_TEXT.split())
# "root and hunter2 for the box": a system account (not "user", which sentences join to
# "group"), "and", and a password of letters with digits or symbols; judged in
# _account_and_password.
_ACCOUNT_AND_PASSWORD = re.compile(
    r"(?<![\w./:@+#*-])(?P<user>admin|administrator|root|sa|guest|superuser|sysadmin|operator)"
    r"[ \t]++and[ \t]++(?P<secret>[^\s\"'`/|]{6,101}+)",
    re.IGNORECASE,
)
# A user name as people write one: lower case letters first, at most 32 characters.
_USER_NAME_SHAPE = re.compile(r"^[a-z][a-z0-9._-]{0,31}$")
_MIN_PAIR_PASSWORD = 6  # after a system account and " / ": "guest / guest2024"
_MIN_STRONG_PASSWORD = 8  # after any other name, or right after "/" or ":"
# A word after a number that makes it a count ("100000 users"), not a password ("123456 for").
_NOUN_AFTER_NUMBER = re.compile(r"[ \t]++(?!(?:for|to|on|at|in|and|or|but|until)(?![\w-]))[A-Za-z]")
# What a value with a symbol may be instead of a password: an issue (acme/api#1234), a pinned
# version (actions/checkout@v4).
_REFERENCE_WITH_SYMBOL = re.compile(r"^[A-Za-z][\w.-]*(?:#[0-9]+|@v?[0-9][\w.]*)$")


# "log in as root with S3cret!", "log in with admin/S3cret!", "use admin/S3cret! to log in".
_LOG_IN_WITH = re.compile(
    rf"""
    (?<![\w-])(?:log|sign)[ \t-]?(?:in|on)(?:[ \t]++to[ \t]++\S{{1,64}}+)?
    (?: [ \t]++as[ \t]++{_USER}[ \t]++(?:with|using)[ \t]++(?:(?:the[ \t]++)?password[ \t]++)?
      | [ \t]++(?:with|using)[ \t]++{_USER}[ \t]*+/[ \t]*+ )
    (?P<secret>[^\s"'`/]++)
    | (?<![\w./:-]){_USER}[ \t]*+/[ \t]*+(?P<secret2>[^\s"'`/]{{4,100}}+)
      [ \t]++to[ \t]++(?:log|sign)[ \t-]?(?:in|on)(?![\w-])
    """,
    re.VERBOSE | re.IGNORECASE,
)
# "wifi password: Sunflower Meadow 42": a Wi-Fi passphrase of capitalised words and numbers.
_WIFI_PASSPHRASE = re.compile(
    r"(?<![\w-])(?i:(?:wi-?fi|wlan|wpa[23]?|wireless|guest[ \t]++network)[ \t]++"
    r"(?:password|passphrase|key|code)[ \t]*+(?:(?:is|was)(?![\w-])[ \t]*+:?|[:=]))[ \t]*+"
    r"(?P<secret>(?:[A-Z][a-z]++|[0-9]++)(?:[ \t](?:[A-Z][a-z]++|[0-9]++)){1,5}+)"
    r"(?=[ \t]*+(?:$|[.,;!)\n]))"
)
# App passwords: Google's 16 letters in groups of four ("xmqz kbtw plrf vwhd"), Apple's
# app-specific passwords ("hqzt-vwkp-rmxd-bcfy").
_APP_PASSWORD = re.compile(
    rf"""
    (?<![\w-])app(?:[ \t-]specific)?[ \t-]password
    {_QUALIFIER}
    [ \t]*+(?:(?:is|was)(?![\w-])[ \t]*+:?|[:=])[ \t]*+
    (?P<quote>["'`]?)
    (?P<secret>(?-i:[a-z]{{4}}(?P<separator>[ -])[a-z]{{4}}(?P=separator)[a-z]{{4}}
       (?P=separator)[a-z]{{4}}|[a-z]{{16}}))(?P=quote)(?![\w-])
    """,
    re.VERBOSE | re.IGNORECASE,
)
# Hashing schemes, encodings, protocols and products that a sentence about passwords names
# ("the password is argon2id-hashed", "stored in 1Password"): never a password.
_TECH_WORD = re.compile(
    r"""^(?:argon2(?:id|i|d)?|pbkdf2|sha-?[0-9]*|md[45]|bcrypt|scrypt|yescrypt|crc-?[0-9]+
    |base(?:32|58|64)(?:url)?|utf-?(?:8|16|32)|ascii|aes-?[0-9]*|rsa-?[0-9]*|ecdsa|ed25519
    |x25519|x\.?509|hmac|tls(?:v?1\.?[0-3])?|ssl|ssh|ipv[46]|https?[23]?|oauth2?|oidc|saml2?
    |ldaps?|kerberos|ntlm(?:v2)?|fido2?|u2f|webauthn|2fa|mfa|totp|hotp|otp|1password|bitwarden
    |lastpass|keepass(?:xc)?|dashlane|vault|k8s|s3|ec2|rfc[0-9]+|iso[0-9]+|soc2?|nist|pci
    |v[0-9]+|python[0-9.]*|node[0-9.]*|java[0-9]*|go[0-9.]+|gpt-?[0-9.]*|wpa[23]?|wep|wps)
    (?=$|[-_.,;:!?)'/\s])""",
    re.VERBOSE | re.IGNORECASE,
)
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_VERSION_OR_DATE = re.compile(r"^v?[0-9]+(?:[.:/-][0-9]+)+[a-z]?$", re.IGNORECASE)
# A number and a unit: 12chars, 16-character, 90days, 2.4GHz.
_NUMBER_AND_UNIT = re.compile(r"^[0-9]+(?:[.,][0-9]+)?[+-]?[A-Za-z]+$")
_ENVIRONMENT_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")  # DB_PASSWORD
# An attribute or option with its value: type=password, autocomplete=current-password.
_ATTRIBUTE = re.compile(r"^[a-z][a-z0-9_-]*=(?P<value>.+)$")
_PASSWORD_SYMBOLS = frozenset("!@#$%^&*+=?~|\\<>[]{}")
# What a password is said to be, in one hyphenated word: "WPA2-protected", "bcrypt-hashed".
_DESCRIPTOR = re.compile(
    r"""^[\w.]+-(?:protected|encrypted|hashed|salted|based|only|enabled|secured|compatible
    |compliant|capable|style|length|long|free|safe|aware|ready|managed|generated|derived|bound
    |specific|wide|level|grade|strength|character|characters|digit|digits|protocol)$""",
    re.VERBOSE | re.IGNORECASE,
)
# "the sha1 of the password is <hex>": a hash of the password is not the password.
_HASH_OF = re.compile(
    r"""(?:hash|hashes|digest|sha-?[0-9]*|md5|checksum|fingerprint|bcrypt|argon2\w*|scrypt|salt
    |length|entropy|strength)[ \t]++(?:of|for)[ \t]++
    (?:(?:the|my|your|our|this|that|a|an|his|her|their)[ \t]++)?(?:[\w-]++[ \t]++)?$""",
    re.VERBOSE | re.IGNORECASE,
)
# Words a sentence says about a password, which are not one: "the password is required". Words
# ending as participles and adjectives do ("rotated", "expiring", "usable", "useless", ...) are
# caught by _DESCRIPTIVE_ENDING; a plain word that is neither ("crystal", "elephant", "magic") is
# taken for the password.
_DESCRIPTIVE_WORDS = """
    there where which about above below again still never always often usually known shown
    given taken written hidden broken stolen forgotten gone weak strong short long wrong right
    correct incorrect invalid valid empty blank secret private public unique random simple
    complex secure insecure unsafe stale fresh unset same different shared static default
    generic optional required mandatory temporary permanent plain plaintext cleartext unknown
    obvious trivial enough great good better worse fine perfect missing absent present
    available unused active inactive locked unlocked fixed elsewhere everywhere somewhere
    nowhere anywhere mine yours theirs ours longer shorter stronger weaker minimum maximum
    tricky complicated either neither numeric lowercase uppercase ascii unicode literally
    actually basically really probably definitely exactly clearly simply currently nothing
    something anything everything whatever irrelevant okay alright set reset needed case new
    old standard personal individual separate identical similar specific common rare easy hard
    difficult impossible possible here this that what who whom whose these those their then
    them they such very also only just even later today tomorrow yesterday soon tonight inside
    outside done ok none null nil true false yes no daily weekly monthly yearly quarterly
    hourly likely unlikely early friendly ugly silly mostly partly nearly certainly obsolete
    legacy outdated small large tiny huge three seven eight twelve fifteen sixteen twenty
    thirty forty fifty hundred dozen keychain keeper nordpass enpass passbolt onelogin
    nonsense garbage gibberish rubbish pending ready global local internal external manual
    normal typical usual unusual final initial minimal original special universal digital
    numerical alphabetical alphanumeric critical crucial vital essential additional
    conditional sequential partial total ideal literal logical formal informal legal illegal
    automatic dynamic basic symmetric asymmetric cryptographic problematic important
    significant relevant redundant constant compliant resistant instant distant current recent
    consistent inconsistent persistent transparent apparent sufficient insufficient efficient
    convenient equivalent independent dependent frequent urgent evident excellent necessary
    unnecessary arbitrary primary secondary ordinary contrary satisfactory compulsory
    """
_NOT_A_PLAIN_PASSWORD = frozenset(_DESCRIPTIVE_WORDS.split())
_DESCRIPTIVE_ENDING = re.compile(r"(?:ed|ing|able|ible|less|ous|ive|ful)$", re.IGNORECASE)


def _is_password_like(value: str, *, quoted: bool) -> bool:
    """Whether a word of a sentence is a password rather than prose: quoted, or letters with a
    digit or a symbol inside ("hunter2", "Winter2024!", "P@ss&word"), or six digits or more."""
    if len(value) < 4 or len(value) > 100 or _is_placeholder(value):
        return False
    if _PATH_OR_URL.search(value) or _EMAIL.match(value) or _ENVIRONMENT_NAME.match(value):
        return False
    if quoted:
        return True
    if " " in value or _TECH_WORD.match(value) or _CALL_OR_INDEX.search(value):
        return False
    if _YAML_TAG.match(value) or _WORDY_PATH.match(value):
        return False
    if _VERSION_OR_DATE.match(value) or _NUMBER_AND_UNIT.match(value) or _FILE_NAME.match(value):
        return False
    if _DESCRIPTOR.match(value):
        return False
    attribute = _ATTRIBUTE.match(value)
    if attribute:  # type=password: an option, unless its value is a password itself
        return _is_password_like(attribute.group("value"), quoted=False)
    if value.isdigit():
        return len(value) >= 6
    core = value.rstrip("!?")  # a sentence's "!" is not a symbol of the password
    if not any(c.isalpha() for c in core):
        return False
    return any(c.isdigit() for c in core) or any(c in _PASSWORD_SYMBOLS for c in core)


def _is_secret_like(value: str, *, quoted: bool) -> bool:
    """A value given to a password or token flag: password-like, or a long random token."""
    if _REFERENCE_VALUE.search(value):
        return False
    if quoted:
        return _is_concrete_value(value, quoted=True) and not _ENVIRONMENT_NAME.match(value)
    if _is_password_like(value, quoted=False):
        return True
    return len(value) >= 16 and _is_token_like(value)


def _prose_password(match: re.Match[str]) -> _Found | None:
    """A password stated in a sentence. Its kind is "password assignment" for `password: V`
    written as a key (in lower case, the ":" right after it) and for "the password for X = V";
    "password in prose" otherwise."""
    value, offset, quoted = _unquote(match.group("secret"))
    if not quoted:
        value = _trim_bare_value(value.rstrip(",;)"))
    if not _is_password_like(value, quoted=quoted):
        return None
    if _HASH_OF.search(match.string, max(0, match.start() - 40), match.start()):
        return None
    verb = match.groupdict().get("verb")
    if verb == ":" and _is_psql_variable(match, "verb"):
        return None
    if verb in ("=", ":") and not quoted:
        if _is_code_reference(value) or _REFERENCE_VALUE.search(value):
            return None
        between = match.string[match.end("noun") : match.start("verb")]
        if verb == "=" and (not between.strip() or not between[-1:].isspace()):
            return None  # "password = x" is an assignment, judged by its own rule; so is x="y"
    span = _span(match.start("secret") + offset, value)
    if verb is None:
        return span, "password in prose"
    noun = match.group("noun")
    key = verb == ":" and match.end("noun") == match.start("verb") and noun.islower()
    return span, "password assignment" if verb == "=" or key else "password in prose"


def _plain_word_password(match: re.Match[str]) -> _Span | None:
    """A plain word stated as the password ("my password is letmein"), unless it is a word a
    sentence says about a password, a placeholder, a product or a vendor's default."""
    value = match.group("secret")
    lowered = value.lower()
    if lowered in _NOT_A_PLAIN_PASSWORD or _DESCRIPTIVE_ENDING.search(lowered):
        return None
    if _is_placeholder(value) or _TECH_WORD.match(value):
        return None
    text, start = match.string, match.start()
    if _HASH_OF.search(text, max(0, start - 40), start):
        return None
    if _said_to_be_default(text, start, match.end()):
        return None  # "the default password is admin", "the password is postgres (the default)"
    return match.span("secret")


def _password_in_prose(match: re.Match[str]) -> _Span | None:
    """The first of the `secret` groups that took part, if it looks like a password."""
    names = [name for name in match.re.groupindex if name.startswith("secret")]
    raw, start = _chosen(match, *names)
    value = _trim_bare_value(raw.rstrip(",;)"))
    return _span(start, value) if _is_password_like(value, quoted=False) else None


def _is_strong_password(value: str) -> bool:
    """A password that no other word of a sentence looks like: at least eight characters, with
    letters, digits and a symbol ("Winter2024!", "Toor#123")."""
    return (
        len(value) >= _MIN_STRONG_PASSWORD
        and any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
        and any(c in _PASSWORD_SYMBOLS or c == "!" for c in value)
    )


def _bare_login_pair(match: re.Match[str]) -> _Span | None:
    """A user and a password with no word for either. After a system account ("admin",
    "root", "guest", ...) or an email address and " / ", a value that looks like a password
    and has six characters or more ("guest / guest2024"); right after such a user and "/" or
    ":" or in a table's next cell, or after any other lower case user name and " / ", only a
    strong password ("admin/J3nk!ns2024", "root:Toor#123", "| admin | Adm1n!Lobby |", "jdoe /
    Vend0r#Portal8"). So "linux/amd64", "postgres:16-alpine", "actions/checkout@v4", "acme /
    api#1234", "MySQL8 / PostgreSQL16" and "admin / settings" are not pairs."""
    user, separator = match.group("user"), match.group("separator")
    value = _trim_bare_value(match.group("secret").rstrip(",;)"))
    if not _is_password_like(value, quoted=False):
        return None
    known = user.lower() in _ACCOUNT_NAMES or _EMAIL.match(user) is not None
    span = _span(match.start("secret"), value)
    if separator == "/" or separator.strip() != "/":  # "admin/pw", "admin:pw", "| admin | pw |"
        return span if known and _is_strong_password(value) else None
    if known:
        if value.isdigit() and _NOUN_AFTER_NUMBER.match(match.string, span[1]):
            return None  # "admin / 100000 users": a ratio
        return span if len(value) >= _MIN_PAIR_PASSWORD else None
    if not _USER_NAME_SHAPE.match(user):
        return None
    if _REFERENCE_WITH_SYMBOL.match(value) and not value[0].isupper():
        return None  # "acme / api#1234" is an issue; "hbecker / Apfelbaum#77" a password
    return span if _is_strong_password(value) else None


def _account_and_password(match: re.Match[str]) -> _Span | None:
    """A system account, "and" and a password ("root and hunter2 for the box"): letters with
    digits or symbols, not another account ("root and admin2") nor a word a noun follows
    ("admin and node18 images")."""
    value = _trim_bare_value(match.group("secret").rstrip(",;)"))
    if not _is_password_like(value, quoted=False) or value.isdigit():
        return None
    if value.rstrip("0123456789").lower() in _ACCOUNT_NAMES:
        return None
    span = _span(match.start("secret"), value)
    if _NOUN_AFTER_NUMBER.match(match.string, span[1]):
        return None
    return span


def _wifi_passphrase(match: re.Match[str]) -> _Span | None:
    value = match.group("secret")
    return match.span("secret") if any(c.isdigit() for c in value) else None


# "my PIN is 4821", "the door code for the office is 4417#", "phone passcode: 284619", "card
# pin: 4821"; a PIN in capitals also without a verb ("PIN 4821 for the corporate card").
_PIN_NOUN = r"""(?:pin(?:[ \t]++(?:code|number))?|pass[ \t]?code
    |(?:door|gate|alarm|lock|safe|locker|garage|entry|keypad|unlock|building|security)[ \t]++code
    )"""
_PIN_VALUE = r"""
    (?P<quote>["'`]?)(?P<secret>[0-9]{4,8}\#?)(?P=quote)
    (?![0-9A-Za-z.,:/-][0-9A-Za-z])
    (?![ \t]*+(?:digits?|characters?|chars?|numbers?|attempts?|tries|times|minutes?|seconds?|%))
"""
_PIN = re.compile(
    rf"""
    (?<![\w-]){_PIN_NOUN}
    (?:[ \t]++(?:for|of|on|to|at|in)[ \t]++(?:(?:the|my|our)[ \t]++)?[\w.-]{{1,40}}+
       (?:[ \t]++[\w.-]{{1,40}}+){{0,2}})?
    [ \t]*+(?:(?:is|was)(?![\w-])|:|=)(?:[ \t]++(?:now|still))?[ \t]*+:?[ \t]*+
    {_PIN_VALUE}
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PIN_WITHOUT_VERB = re.compile(
    rf"(?<![\w-])(?:PIN(?:[ \t]++(?i:code|number))?|(?i:pin[ \t]++code))[ \t]++{_PIN_VALUE}",
    re.VERBOSE,
)
# Pins that are not personal identification numbers: of a chip or a board, a version, a
# certificate.
_NOT_A_PIN_BEFORE = re.compile(
    r"(?:gpio|header|chip|board|pcb|connector|jumper|version|dependency|certificate|cert|ssl|tls"
    r"|hpkp)[ \t]*+$",
    re.IGNORECASE,
)


def _pin(match: re.Match[str]) -> _Span | None:
    if _NOT_A_PIN_BEFORE.search(match.string, max(0, match.start() - 20), match.start()):
        return None
    return _secret_group(match)


# A credential's noun: "API key", "auth token", "client secret", "TWILIO_AUTH_TOKEN", "token".
_CREDENTIAL_NOUN = r"""
    (?:(?:personal[ _-]access|access|auth(?:entication)?|api|bot|deploy|refresh|session|admin
        |service|write|ingest(?:ion)?|integration|registration|runner|management|app(?:lication)?
        |master|root|bearer|oauth)[ _-]?)?token
    | (?:api|access|secret|private|signing|master|admin|server|service|app(?:lication)?|account
        |auth|encryption|ingest(?:ion)?|write|license|subscription|integration|routing|hmac
        |cookie)[ _-]?key
    | (?:client|app(?:lication)?|api|webhook|signing|consumer|shared|oauth|token|hmac|cookie
        |session)[ _-]?secret
    | secret
"""
_PROSE_CREDENTIAL = re.compile(
    rf"""
    (?<![A-Za-z0-9])(?P<noun>{_CREDENTIAL_NOUN})(?![A-Za-z0-9_-])
    {_QUALIFIER}
    [ \t]*+(?:(?:is|was)(?![\w-])(?:[ \t]++(?:now|still|currently))?[ \t]*+:?|[:=]
       |[-\u2013\u2014(])?[ \t]*+
    (?P<secret>{_QUOTED_VALUE}|[A-Za-z0-9_+/-][A-Za-z0-9_+/=.~:-]{{15,}})
    """,
    re.VERBOSE | re.IGNORECASE,
)
# Words before a noun that make it something other than a credential: a pagination token, a
# request's idempotency key, a public (site, publishable) key.
_NOT_A_CREDENTIAL_BEFORE = re.compile(
    r"""(?<![A-Za-z])(?:page|pagination|continuation|cursor|next|sync|resume|idempotency|request|trace|span
    |correlation|csrf|xsrf|nonce|lock|fencing|cancellation|change|etag|public|publishable|site
    |search|cache|partition|sort|primary|foreign|object|row|shard|dedup|deduplication|message
    |event|recaptcha|captcha|verification|confirmation|unsubscribe|invite|tracking|analytics
    |measurement|deployment|idempotent|upload|download|share|sharing|magic|cancel|delegation)
    [ \t_-]*$""",
    re.VERBOSE | re.IGNORECASE,
)
# Values named as hashes of something else: a GPG fingerprint, a digest, a commit.
_HASH_CONTEXT = re.compile(
    r"gpg|pgp|fingerprint|(?<!hmac)(?<!hmac[ _-])sha-?[0-9]|md5|hash|digest|checksum|commit",
    re.IGNORECASE,
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_MIN_HEX_CREDENTIAL = 20  # Pusher's secrets have 20 hex digits; short commit SHAs up to 12
# Providers a sentence may name before a credential's noun (or after it: "the API key for
# Datadog"), with how the kind spells them.
_PROVIDERS = {
    "twilio": "Twilio",
    "heroku": "Heroku",
    "datadog": "Datadog",
    "mailgun": "Mailgun",
    "sendgrid": "SendGrid",
    "mailchimp": "Mailchimp",
    "pagerduty": "PagerDuty",
    "cloudflare": "Cloudflare",
    "algolia": "Algolia",
    "sentry": "Sentry",
    "new relic": "New Relic",
    "newrelic": "New Relic",
    "okta": "Okta",
    "auth0": "Auth0",
    "vercel": "Vercel",
    "netlify": "Netlify",
    "digitalocean": "DigitalOcean",
    "linode": "Linode",
    "hetzner": "Hetzner",
    "fastly": "Fastly",
    "circleci": "CircleCI",
    "bitbucket": "Bitbucket",
    "atlassian": "Atlassian",
    "jira": "Jira",
    "github": "GitHub",
    "gitlab": "GitLab",
    "slack": "Slack",
    "stripe": "Stripe",
    "braintree": "Braintree",
    "paypal": "PayPal",
    "shopify": "Shopify",
    "discord": "Discord",
    "telegram": "Telegram",
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "azure": "Azure",
    "aws": "AWS",
    "gcp": "Google Cloud",
    "google": "Google",
    "firebase": "Firebase",
    "segment": "Segment",
    "mixpanel": "Mixpanel",
    "amplitude": "Amplitude",
    "intercom": "Intercom",
    "zendesk": "Zendesk",
    "hubspot": "HubSpot",
    "salesforce": "Salesforce",
    "airtable": "Airtable",
    "notion": "Notion",
    "asana": "Asana",
    "trello": "Trello",
    "dropbox": "Dropbox",
    "postmark": "Postmark",
    "mailjet": "Mailjet",
    "sparkpost": "SparkPost",
    "pusher": "Pusher",
    "contentful": "Contentful",
    "supabase": "Supabase",
    "pinecone": "Pinecone",
    "cohere": "Cohere",
    "mistral": "Mistral",
    "replicate": "Replicate",
    "hugging face": "Hugging Face",
    "huggingface": "Hugging Face",
    "elevenlabs": "ElevenLabs",
    "deepgram": "Deepgram",
    "mapbox": "Mapbox",
    "rollbar": "Rollbar",
    "bugsnag": "Bugsnag",
    "honeycomb": "Honeycomb",
    "grafana": "Grafana",
    "splunk": "Splunk",
    "snyk": "Snyk",
    "sonarcloud": "SonarCloud",
    "sonarqube": "SonarQube",
    "npm": "npm",
    "pypi": "PyPI",
    "docker hub": "Docker Hub",
    "dockerhub": "Docker Hub",
    "cloudinary": "Cloudinary",
    "plaid": "Plaid",
    "coinbase": "Coinbase",
    "infura": "Infura",
    "etherscan": "Etherscan",
    "ngrok": "ngrok",
    "tailscale": "Tailscale",
    "doppler": "Doppler",
    "terraform cloud": "Terraform Cloud",
    "buildkite": "Buildkite",
    "launchdarkly": "LaunchDarkly",
    "posthog": "PostHog",
    "openweathermap": "OpenWeatherMap",
    "twitch": "Twitch",
    "zoom": "Zoom",
    "spotify": "Spotify",
    "mongodb atlas": "MongoDB Atlas",
    "elastic": "Elastic",
    "logz.io": "Logz.io",
    "opsgenie": "Opsgenie",
    "statuspage": "Statuspage",
    "box": "Box",
    "keycloak": "Keycloak",
    "jenkins": "Jenkins",
    "confluent": "Confluent",
    "snowflake": "Snowflake",
}
_PROVIDER_NAMES = "|".join(re.escape(name) for name in sorted(_PROVIDERS, key=len, reverse=True))
# The provider is named in the credential's noun phrase: right before the noun, or with at most
# three modifiers between ("Mailgun private API key", "TWILIO_AUTH_TOKEN"), never across a
# preposition or a verb ("Twilio account AC... with auth token" names an account, not the token).
_PROVIDER_BEFORE_NOUN = re.compile(
    rf"""(?<![A-Za-z0-9])({_PROVIDER_NAMES})(?:['\u2019]s)?
    (?:[ \t_-]++(?!(?:for|of|with|and|or|to|in|on|at|by|from|is|was|are|uses?|using|via|into|as
       |but|the|a|an|this|that|its|their|has|have)(?![\w-]))[\w.-]{{1,40}}+){{0,3}}[ \t_-]*+$""",
    re.VERBOSE | re.IGNORECASE,
)
# ... or it is what the qualifier ends with ("the API key for Datadog", "the token of our Sentry
# org"), not a modifier in it ("the client secret for the grafana client").
_PROVIDER_ENDS_QUALIFIER = re.compile(
    rf"""(?<![A-Za-z0-9])({_PROVIDER_NAMES})
    (?:[ \t]++(?:account|org|organi[sz]ation|workspace|project|tenant|instance|team|app|api
       |integration|cloud|dashboard|console|stack|site|space|server|bot))?
    [ \t]*+(?:\([^()\n]*+\))?[ \t]*+
    (?:(?:is|was)(?:[ \t]++(?:now|still|currently))?[ \t]*+:?|[:=]|[-\u2013\u2014(])?[ \t]*+$""",
    re.VERBOSE | re.IGNORECASE,
)
_NOUN_SPELLING = {"api": "API", "oauth": "OAuth", "apikey": "API key"}
_NOUN_WORD_BREAK = re.compile(r"[ _-]+")
_SENTENCE_END = re.compile(r"[.!?;\n](?:\s|$)")


def _clause_before(text: str, end: int, width: int) -> str:
    """The last `width` characters before `end`, from the end of the last sentence in them."""
    window = text[max(0, end - width) : end]
    ends = [sentence_end.end() for sentence_end in _SENTENCE_END.finditer(window)]
    return window[ends[-1] :] if ends else window


def _prose_credential_kind(match: re.Match[str]) -> str:
    """ "Twilio auth token", "Heroku API key": the provider named in the credential's noun
    phrase (before the noun, or ending its qualifier) and the noun; "secret or token in prose"
    when it names none."""
    text = match.string
    named = _PROVIDER_BEFORE_NOUN.search(
        _clause_before(text, match.start("noun"), 60)
    ) or _PROVIDER_ENDS_QUALIFIER.search(text[match.end("noun") : match.start("secret")])
    if not named:
        return "secret or token in prose"
    provider = _PROVIDERS[named.group(1).lower()]
    words = _NOUN_WORD_BREAK.split(match.group("noun").lower())
    noun = " ".join(_NOUN_SPELLING.get(word, word) for word in words)
    return f"{provider} {noun}"


_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")


def _is_token_like(value: str) -> bool:
    """A long run of mixed letters and digits that is not made of words (a token, not a name)."""
    alphanumeric = _NOT_ALPHANUMERIC.sub("", value)
    if len(alphanumeric) < 16:
        return False
    return _has_mixed_classes(alphanumeric) and _word_share(alphanumeric) < _MAX_WORD_SHARE


_LOWER_PREFIX = re.compile(r"^[a-z]{2,8}_(?=[a-z0-9]{16})")


def _is_single_case_random(value: str) -> bool:
    """Letters of one case mixed with digits, as random tokens of an alphabet without upper
    (or lower) case are: "k3v9xq2m8w7z4t1p...", "QW7XKRZ2M4PLV9NE"; not "deploybot20240501"
    (a name and a date), not hex (judged as such)."""
    value = _LOWER_PREFIX.sub("", value)  # rnd_k3v9xq2m...: a provider's prefix
    if not 16 <= len(value) <= 100 or not (value.isascii() and value.isalnum()):
        return False
    if not (value.islower() or value.isupper()) or _HEX.match(value):
        return False
    digits = sum(c.isdigit() for c in value)
    if digits < 2 or len(value) - digits < 4:
        return False
    changes = sum(a.isdigit() != b.isdigit() for a, b in pairwise(value))
    return changes >= 4 and _shannon_entropy(value) >= _MIN_SINGLE_CASE_ENTROPY


def _prose_credential(match: re.Match[str]) -> _Found | None:
    """The value after a credential's noun, if it looks like one: a UUID, 24 or more hex
    digits, a long mixed-case token or one of a single case with digits, or a quoted value;
    not a pagination token, a digest or a resource id (Twilio's SK... is an API key's id)."""
    before = match.string[max(0, match.start() - 30) : match.start()]
    if _NOT_A_CREDENTIAL_BEFORE.search(before):
        return None
    raw, start = match.group("secret"), match.start("secret")
    value, offset, quoted = _unquote(raw)
    if not quoted:
        value = _trim_bare_value(value)
    if _is_placeholder(value) or _PATH_OR_URL.search(value) or _EMAIL.match(value):
        return None
    if quoted:
        credential = (
            len(value) >= 8
            and " " not in value
            and not _ENVIRONMENT_NAME.match(value)
            and not _is_code_reference(value)
        )
    elif _UUID.match(value) or (_HEX.match(value) and len(value) >= _MIN_HEX_CREDENTIAL):
        sentence = match.string[max(0, match.start() - 60) : match.end()]
        credential = not _HASH_CONTEXT.search(sentence)
    elif _PREFIXED_HEX_ID.match(value):
        credential = False
    else:
        credential = (
            _is_token_like(value) or _is_single_case_random(value)
        ) and not _is_code_reference(value)
    if not credential:
        return None
    return _span(start + offset, value), _prose_credential_kind(match)


# --- payment cards, 2FA material, session cookies, seed phrases, webhook URLs --------------------

# A card number: 13 to 19 digits, together or in groups of 3 to 6 separated by a space or a dash
# (4111 1111 1111 1111, 3782 822463 10005); checked further in _card_number.
_CARD_NUMBER = re.compile(r"(?<![\w.+/-])[0-9]{4,19}(?:[ -][0-9]{3,6}){0,5}(?![\w-]|[.,][0-9])")
# What every card number holds: 13 digits, each pair at most a space or a dash apart.
_THIRTEEN_DIGITS = re.compile(r"[0-9](?:[ -]?[0-9]){12}")
_CARD_GROUP_BREAK = re.compile("[ -]")
# What makes a number a usable card: its security code or its expiry date.
_CARD_SECURITY = re.compile(
    r"""(?<![a-z])(?:cvv2?|cvc2?|cid|csc|cvn|security[ \t]+code)(?![a-z])
        [ \t]*+(?:is|:|=|-|\#)?[ \t]*+[0-9]{3,4}(?![0-9])
    | (?<![a-z])(?:exp(?:iry|ires|iration)?|valid[ \t]+(?:thru|through|until)|good[ \t]+thru)
        (?:[ \t]++date)?(?![a-z])[ \t]*+(?:is|on|:|=|-)?[ \t]*+(?:0?[1-9]|1[0-2])[ \t]*+/[ \t]*+
        (?:20)?[0-9]{2}(?![0-9])""",
    re.VERBOSE | re.IGNORECASE,
)
_EXPIRY_RIGHT_AFTER = re.compile(r"[ \t,]*+(?:0[1-9]|1[0-2])/(?:20)?[0-9]{2}(?![0-9/])")
# Words of a sentence about a payment card.
_CARD_WORD = re.compile(
    r"""(?<![a-z])(?:cards?|credit|debit|visa|master[ \t]?card|amex|american[ \t]+express
    |discover|jcb|diners|maestro|unionpay|pan|cc|ccn|billing|payment)(?![a-z])""",
    re.VERBOSE | re.IGNORECASE,
)
# Numbers that are something else, named right before them: an IMEI or an ICCID (checked with
# Luhn too), an order, an invoice, a tracking number.
_NOT_A_CARD_BEFORE = re.compile(
    r"""(?<![a-z])(?:imei|iccid|meid|sim|isbn|iban|ean|upc|gtin|tracking|order|invoice|account
    |ticket|case|reference|ref|booking|confirmation|serial|phone|tel|fax|id|customer|member)
    (?:[ \t]++(?:number|no\.?|num|\#|id))?[ \t]*+[:#=]?[ \t]*+(?:is[ \t]++)?$""",
    re.VERBOSE | re.IGNORECASE,
)
# Test card numbers that Stripe, Braintree, Adyen and the card schemes document for everyone.
_TEST_CARD_NUMBERS_TEXT = """
    4242424242424242 4000056655665556 5555555555554444 2223003122003222 5200828282828210
    5105105105105100 378282246310005 371449635398431 6011111111111117 6011000990139424
    3056930009020004 36227206271667 3566002020360505 6200000000000005 4111111111111111
    4012888888881881 4222222222222 5454545454545454 378734493671000 3530111333300000
    30569309025904 38520000023237 4000000000000002 4000000000000077 4000000000009995
    4000002500003155 4000000000003220 4917610000000000 4988438843884305 5425233430109903
    2222400070000005 4005519200000004 4009348888881881 4000002760003184 4000000000003063
    4000008400001629 4000000000000341 4000000000009979 4000000000000069 4000000000000127
    4000000000000119 4100000000000019 4000000000003055 4000000760000002
"""
_TEST_CARD_NUMBERS = frozenset(_TEST_CARD_NUMBERS_TEXT.split())


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = int(char)
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _is_card_scheme(digits: str) -> bool:
    """Whether a number has the prefix and the length of a card scheme's cards."""
    length, two, four = len(digits), int(digits[:2]), int(digits[:4])
    if digits[0] == "4":  # Visa
        return length in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720:  # Mastercard
        return length == 16
    if two in (34, 37):  # American Express
        return length == 15
    if 3528 <= four <= 3589 or 2200 <= four <= 2204:  # JCB, Mir
        return 16 <= length <= 19
    if 300 <= int(digits[:3]) <= 305 or four == 3095 or two in (36, 38, 39):  # Diners Club
        return 14 <= length <= 19
    if two == 50 or 56 <= two <= 69:  # Discover, UnionPay, Maestro, RuPay
        return 13 <= length <= 19
    return False


def _card_number(match: re.Match[str]) -> _Span | None:
    """A card number (Luhn-valid, of a card scheme) stated as a card: with its security code or
    expiry date, or in a sentence about a card (then not one of the documented test numbers,
    which are public). Not the last four digits, not an order or tracking number."""
    groups = _CARD_GROUP_BREAK.split(match.group())
    if len(groups) > 1 and len(groups[0]) != 4:
        return None
    for count in range(len(groups), 0, -1):
        digits = "".join(groups[:count])
        if 13 <= len(digits) <= 19 and _is_card_scheme(digits) and _luhn(digits):
            break
    else:
        return None
    text, start = match.string, match.start()
    end = start + len(" ".join(groups[:count]))
    around = text[max(0, start - 60) : end + 80]
    usable = bool(_CARD_SECURITY.search(around) or _EXPIRY_RIGHT_AFTER.match(text, end))
    if usable:
        return start, end
    if digits in _TEST_CARD_NUMBERS or _NOT_A_CARD_BEFORE.search(text, max(0, start - 30), start):
        return None
    return (start, end) if _CARD_WORD.search(around) else None


# A card's security code (CVV, CVC, CID, ...): after its name, or right after a card number and
# its expiry date ("4111... 09/27 737"). Names only cards have ("CVV", "CVC-koden", "CVV-код",
# "card verification value", "cryptogramme visuel", "Kartenprüfnummer", "the 3 digits on the
# back") are enough alone; names other things share ("CID" is also a customer or a content id,
# "CSC", "security code", "codice di sicurezza", "セキュリティコード", "安全码") need a card in the
# sentence, or three digits after a name of a security code; "Prüfziffer" (also an ISBN's or an
# IBAN's check digit) and the digits "on the front" (Amex's four) need a card. Between the name
# and the value, a phrase ("on the back", "della mia carta", "auf der Rückseite") and "is" in
# the languages of the names ("è", "c'est", "är", "to", "是", "は").
_CARD_CODE_NAME = r"""
    (?:cvv2?|cvc2?|cvn2?|cav2|cvd)
      (?:[ \t]++(?:code|number|no\.?)|-(?:code|kod|koden|kode|koodi|код|nummer))?
    |(?:cvv2?|cvc2?)(?:码|碼|コード)
    |card[ \t]++(?:verification|validation|security)[ \t]++(?:value|code|number)|card[ \t]++code
    |kartenpr(?:ü|ue)f(?:nummer|ziffer|code)
    |cryptogramme(?:[ \t]++visuel)?|(?:[34]|three|four)[ \t-]digits?(?:[ \t]++(?:code|number))?
      [ \t]++on[ \t]++the[ \t]++back|code[ \t]++on[ \t]++the[ \t]++back
"""
_SHARED_CODE_NAME = r"""
    cid|csc|(?:card[ \t]++)?security[ \t]++code|sec\.?[ \t]++code|sicherheitscode|pr(?:ü|ue)fnummer
    |c(?:ó|o)digo[ \t]++de[ \t]++(?:seguridad|seguran(?:ç|c)a|verificaci(?:ó|o)n)
    |code[ \t]++de[ \t]++s(?:é|e)curit(?:é|e)|beveiligingscode|verificatiecode
    |codice[ \t]++di[ \t]++sicurezza|s(?:ä|a)kerhetskod(?:en)?|sikkerheds?kode(?:n)?
    |g(?:ü|u)venlik[ \t]++kodu|kod[ \t]++zabezpieczaj(?:ą|a)cy|код[ \t]++безопасности|turvakoodi
    |セキュリティー?・?コード|安全码|安全碼|보안[ \t]?코드
    |pr(?:ü|ue)fziffer|(?:[34]|four|three)[ \t-]digits?(?:[ \t]++(?:code|number))?
      [ \t]++on[ \t]++the[ \t]++front|code[ \t]++on[ \t]++the[ \t]++front
"""
# Shared names after which a code is taken only with a card in the sentence.
_CODE_NAME_NEEDING_A_CARD = re.compile(r"cid|csc|pr(?:ü|ue)fziffer|.*front", re.IGNORECASE)
_CARD_SECURITY_CODE = re.compile(
    rf"""
    {_WORD_START}(?:(?P<card_name>{_CARD_CODE_NAME})|(?P<shared_name>{_SHARED_CODE_NAME})){_WORD_END}
    (?:[ \t]*+/[ \t]*+(?:cvv2?|cvc2?|cid|csc)(?![\w-]))?     # CVV/CVC
    (?:[ \t]*+\([^()\n]{{1,20}}\))?                          # security code (CVV)
    (?:[ \t]++(?:of|for|on|van|de|do|da|del|della|di|der|des|du|für|auf|op|sur|sul|na|на|på|w|i)
       [ \t]++(?:(?:the|my|our|this|that|la|le|el|de|het|der|die|das|mia|mio|ma|mon|mein|meiner
          |mijn|min|mitt)[ \t]++)?
       [\w'\u2019-]{{1,20}}+(?:[ \t]++[\w'\u2019-]{{1,20}}+)?)?       # of the corporate card
    ["']?[ \t]*+
    (?:(?:is|was|are|were|es|est|c['\u2019]est|ist|lautet|(?:é|è)|(?:ä|a)r|er|jest|to)(?![\w-])
         [ \t]*+:?
      |是|为|為|は|[:=\#\uff1a]|->|→|-(?=[ \t]))?
    [ \t]*+(?P<quote>["'`]?)(?P<secret>[0-9]{{3,4}})(?P=quote)
    (?![0-9A-Za-z]|[.,:/-][0-9])
    (?![ \t]*+(?:digits?|characters?|chars?|numbers?|attempts?|tries|times|transactions?|ms|%))
    """,
    re.VERBOSE | re.IGNORECASE,
)
_CODE_AFTER_EXPIRY = re.compile(
    r"(?<![\w/])(?:0[1-9]|1[0-2])/(?:20)?[0-9]{2}[ \t]*+,?[ \t]*+(?P<secret>[0-9]{3,4})"
    r"(?![0-9A-Za-z]|[.,:/-][0-9])"
)
# A card named in a sentence, in the languages of _LOGIN_NOUN and of the code names.
_CARD_IN_SENTENCE = re.compile(
    r"""(?<![a-z])(?:credit|kredit|debit|creditcard)
    | (?<![a-z])(?:cards?|visa|master[ \t]?card|amex|american[ \t]+express|jcb|diners|maestro
      |unionpay|tarjeta|carte|karte|cart(?:ão|ao)|kaart|payment|billing|checkout|carta|karta
      |karty|kort|kortet|kart|kart\u0131n?|карта|карты|карте|карту)(?![a-z])
    | 卡|カード|카드""",
    re.VERBOSE | re.IGNORECASE,
)
_CARD_NUMBER_BEFORE = re.compile(r"[0-9](?:[ -]?[0-9]){12,18}[ \t]*+,?[ \t]*+$")


def _card_security_code(match: re.Match[str]) -> _Span | None:
    """The code after a card's name for it; after a name other things share, only with a card
    within 80 characters or, for a name of a security code, three digits."""
    if match.group("shared_name") is not None:
        name = match.group("shared_name")
        text, start, end = match.string, match.start(), match.end()
        around = text[max(0, start - 80) : end + 80]
        card = _CARD_IN_SENTENCE.search(around) or _THIRTEEN_DIGITS.search(around)
        three_digits = len(match.group("secret")) == 3 and not _CODE_NAME_NEEDING_A_CARD.fullmatch(
            name
        )
        if not (card or three_digits):
            return None
    return match.span("secret")


def _code_after_expiry(match: re.Match[str]) -> _Span | None:
    """Three or four digits after a card number and its expiry date ("4111... 09/27 737")."""
    start = match.start()
    if _CARD_NUMBER_BEFORE.search(match.string, max(0, start - 30), start) is None:
        return None
    return match.span("secret")


# A US social security number (123-45-6789) or ITIN (9xx-7x-xxxx): written with dashes (or en
# dashes, as word processors print them) anywhere; with spaces or as nine digits only after its
# name ("SSN 123456789", "my social is 123 45 6789", `"ssn": "123456789"`, `tax_id=`, "le SSN
# du client X est ...", "社会安全号码 ..."). Numbers never issued are not one: area 000, 666 or
# 9xx (ITINs start with 9, their middle digits 50-65, 70-88, 90-92 or 94-99), group 00, serial
# 0000; nor are the numbers the SSA made public (the Woolworth wallet's 078-05-1120, 219-09-9999,
# 987-65-4320 to 4329 for advertising), or a number named as something else ("order
# 123-45-6789", "part number", "lot", "Bestellnummer", "commande", "pedido", "订单号").
_TAXPAYER_DASHES = r"\-\u2010\u2011\u2012\u2013"  # a dash, as typed and as word processors print it
_US_TAXPAYER_NUMBER = re.compile(
    rf"(?<![\w.+/:#*{_TAXPAYER_DASHES}])(?P<area>[0-9]{{3}})(?P<separator>[ {_TAXPAYER_DASHES}]?)"
    rf"(?P<group>[0-9]{{2}})(?P=separator)(?P<serial>[0-9]{{4}})"
    rf"(?![0-9A-Za-z*_{_TAXPAYER_DASHES}]|[.,:/][0-9])"
)
_TAXPAYER_NUMBER_NAME = re.compile(
    r"""
    (?<![A-Za-z0-9])(?:ssns?|ss\#|ss[ \t]++no\.?|soc(?:ial)?[ \t_-]++sec(?:urity)?|social
      |i?tins?|tax(?:payer)?[ \t_-]*+id(?:entification)?|taxpayer[ \t]++identification
      |n(?:ú|u)mero[ \t]++de[ \t]++(?:seguro|seguran(?:ç|c)a)[ \t]++social|seguro[ \t]++social
      |num(?:é|e)ro[ \t]++de[ \t]++s(?:é|e)curit(?:é|e)[ \t]++sociale(?:[ \t]++am(?:é|e)ricain)?
      |(?:us-?)?sozialversicherungsnummer|numero[ \t]++di[ \t]++previdenza[ \t]++sociale
      |numer[ \t]++ubezpieczenia[ \t]++spo(?:ł|l)ecznego|номер[ \t]++социального[ \t]++страхования
      |sosyal[ \t]++g(?:ü|u)venlik[ \t]++numaras(?:\u0131|i)
      |社会安全号码?|社會安全號碼?|社会保障番号
      |ソーシャル・?セキュリティ・?(?:ナンバー|番号)|사회보장번호)
    (?:[ \t_-]*+(?:number|no\.?|num|nr\.?|\#))?
    (?:[ \t]*+\([^()\n]{1,20}\))?
    (?:[ \t]++(?:for|of|von|de|du|del|della|di|da|do|van|des|dla|для|för)[ \t]++
       [\w.'\u2019-]{1,30}+(?:[ \t]++[\w.'\u2019-]{1,30}+){0,2})?
    ["']?[ \t]*+
    (?:(?:is|was|are|es|est|c['\u2019]est|ist|lautet|(?:é|è)|(?:ä|a)r|er|jest)(?![\w-])[ \t]*+:?
      |[:=\#\uff1a]|是|为|は|->|-)?
    [ \t]*+["']?$
    """,
    re.VERBOSE | re.IGNORECASE,
)
_NOT_A_TAXPAYER_NUMBER_BEFORE = re.compile(
    r"""(?<![a-z])(?:order|invoice|ticket|case|ref|reference|part|sku|model|serial|isbn|lot
    |batch|build|version|po|issue|bug|zip|postal|phone|tel|fax|mobile|cell|call|hotline|booking
    |confirmation|tracking|account|acct|routing|customer|member|policy|claim|id|item|product
    |room|flight|train|license|licence|permit|badge|employee
    |bestell(?:nummer|ung)|auftrag(?:snummer)?|rechnung(?:snummer)?|kundennummer|artikelnummer
    |sendungsnummer|lieferschein(?:nummer)?|commande|facture|r(?:é|e)f(?:(?:é|e)rence)?|colis
    |pedido|factura|fatura|referencia|encomenda|albar(?:á|a)n|ordine|fattura|riferimento
    |spedizione|ordernummer|bestelnummer|bestelling|factuur|zam(?:ó|o)wieni[ae]|faktura
    |przesy(?:ł|l)ka|заказ\w*|сч(?:ё|\u0435)т\w*|накладн\w*|best(?:ä|a)llning|sipari(?:ş|s)
    |订单编?号?|訂單編?號?|单号|單號|发票|發票|运单号|注文番号|注文|伝票番号|請求書番号|주문번호|송장번호)
    (?:[ \t]*+(?:number|no\.?|num|\#|id|nr\.?|n[°º.]|numéro|número|numero|numer|номер
       |numaras(?:\u0131|i)))?
    [ \t]*+[:#=\uff1a]?[ \t]*+(?:is[ \t]++)?$""",
    re.VERBOSE | re.IGNORECASE,
)
_ITIN_GROUPS = frozenset((*range(50, 66), *range(70, 89), 90, 91, 92, *range(94, 100)))
_PUBLIC_SSNS = frozenset({"078051120", "219099999", *(f"98765432{n}" for n in range(10))})


def _taxpayer_kind(area: str, group: str, serial: str) -> str | None:
    """The kind, "US ITIN" or "US social security number", of a number of the ranges ever
    issued and not made public; None for any other."""
    if int(group) == 0 or int(serial) == 0 or area + group + serial in _PUBLIC_SSNS:
        return None
    if int(area) >= 900:
        return "US ITIN" if int(group) in _ITIN_GROUPS else None
    return "US social security number" if int(area) not in (0, 666) else None


def _us_taxpayer_number(match: re.Match[str]) -> _Found | None:
    """An SSN or an ITIN, as its digits say, of the ranges ever issued; with spaces or none
    only after its name, and with dashes unless it is named as something else or ends in a
    month and a year."""
    group, serial = int(match.group("group")), int(match.group("serial"))
    kind = _taxpayer_kind(match.group("area"), match.group("group"), match.group("serial"))
    if kind is None:
        return None
    text, start = match.string, match.start()
    named = _TAXPAYER_NUMBER_NAME.search(text, max(0, start - 60), start)
    if named is None and (
        not match.group("separator")
        or match.group("separator") == " "
        or (group <= 12 and 1900 <= serial <= 2039)  # 202-11-2024: ends in a month and a year
        or _NOT_A_TAXPAYER_NUMBER_BEFORE.search(text, max(0, start - 30), start)
    ):
        return None
    return match.span(), kind


# --- tables: a column named as a password, an SSN or a card's code ------------------------------

# A table of lines: Markdown ("| user | password |"), CSV, TSV or ";"-separated. A line whose
# cells name a column (the whole cell) heads a table; the lines after it with as many cells are
# its rows (a Markdown rule line "|---|---|" is skipped), and their cells in the named column
# are values of that name: "| prod | app_rw | Marigold$8812 |" under "| env | user | secret |",
# "Marsh,Colin,448 19 7702,43215" under "last,first,ssn,zip".
_TABLE_DELIMITERS = ("|", "\t", ";", ",")
_TABLE_RULE_LINE = re.compile(r"^[ \t]*+\|?(?:[ \t]*+:?-++:?[ \t]*+\|?)++[ \t]*+$")
# A cell's value (matched over the cell without its spaces).
_CELL = re.compile(r"[^\n]++")
_PASSWORD_COLUMN = re.compile(
    r"""password|passwort|pass|passwd|pw|pwd|secret|kennwort|mot[ ]de[ ]passe|mdp
    |contrase(?:ñ|n)a|senha|wachtwoord|has(?:ł|l)o|пароль|密码|密碼|パスワード|l(?:ö|o)senord
    |(?:ş|s)ifre|parola|clave|chiave|adgangskode|passord|salasana|비밀번호""",
    re.VERBOSE | re.IGNORECASE,
)
_TAXPAYER_NUMBER_COLUMN = re.compile(
    r"""ssns?|ssn[ _-]?(?:number|no\.?)|social[ _-]security(?:[ _-](?:number|no\.?))?|i?tin
    |tax[ _-]?id|taxpayer[ _-]?id|ssn/itin""",
    re.VERBOSE | re.IGNORECASE,
)
_CARD_CODE_COLUMN = re.compile(
    r"cvv2?|cvc2?|cvn|(?:card[ _-])?security[ _-]code|card[ _-]code", re.IGNORECASE
)


def _cells(line: str, delimiter: str) -> list[tuple[int, int]]:
    """The spans of a line's cells (a Markdown line's outer "|" open and close no cell)."""
    start, end = 0, len(line)
    if delimiter == "|":
        stripped = line.strip()
        if not (stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1):
            return []
        start, end = line.index("|") + 1, line.rindex("|")
    spans, cell_start = [], start
    for at in range(start, end + 1):
        if at == end or line[at] == delimiter:
            spans.append((cell_start, at))
            cell_start = at + 1
    return spans


@dataclass(frozen=True, slots=True)
class _NamedColumn:
    """The cells of the columns a table's header names by `name` (a whole cell), each as a match
    of _CELL over the cell's text without its spaces, for a rule's judge."""

    name: re.Pattern[str]

    def finditer(self, string: str, /) -> Iterator[re.Match[str]]:
        lines: list[tuple[int, str]] = []  # each line and where it starts
        offset = 0
        for line in string.split("\n"):
            lines.append((offset, line))
            offset += len(line) + 1
        index = 0
        while index < len(lines):
            found: list[re.Match[str]] = []
            index = self._table(string, lines, index, found)
            yield from found

    def _table(
        self, text: str, lines: list[tuple[int, str]], index: int, found: list[re.Match[str]]
    ) -> int:
        """The named cells of the table headed by line `index`, if it heads one, into `found`;
        the index of the line after the table (or after line `index`)."""
        _, header = lines[index]
        for delimiter in _TABLE_DELIMITERS:
            if delimiter not in header:
                continue
            cells = _cells(header, delimiter)
            columns = [
                n for n, (a, b) in enumerate(cells) if self.name.fullmatch(header[a:b].strip())
            ]
            if len(cells) < 2 or not columns:
                continue
            row = index + 1
            while row < len(lines):
                start, line = lines[row]
                if delimiter == "|" and _TABLE_RULE_LINE.match(line):
                    row += 1
                    continue
                spans = _cells(line, delimiter)
                if len(spans) != len(cells):
                    break
                for column in columns:
                    a, b = spans[column]
                    value = line[a:b].strip()
                    if value:
                        at = start + a + line[a:b].index(value)
                        cell = _CELL.match(text, at, at + len(value))
                        if cell is not None:
                            found.append(cell)
                row += 1
            return row
        return index + 1


def _password_cell(match: re.Match[str]) -> _Span | None:
    """A password under a column named as one: it looks like a password, and is not a name of
    words joined by dashes ("db-credentials-2", a Kubernetes secret's name) unless strong."""
    value, offset, quoted = _unquote(match.group())
    if not _is_password_like(value, quoted=quoted) or _REFERENCE_VALUE.search(value):
        return None
    if not quoted and _JOINED_WORDS.match(value) and not _is_strong_password(value):
        return None
    return _span(match.start() + offset, value)


# Lower case words and numbers joined by "-", "_" or ".": a name, not a password.
_JOINED_WORDS = re.compile(r"^[a-z0-9]++(?:[-_.][a-z0-9]++)++$")
_TAXPAYER_CELL = re.compile(
    rf"(?P<area>[0-9]{{3}})(?P<separator>[ {_TAXPAYER_DASHES}]?)(?P<group>[0-9]{{2}})"
    rf"(?P=separator)(?P<serial>[0-9]{{4}})"
)


def _taxpayer_number_cell(match: re.Match[str]) -> _Found | None:
    """An SSN or an ITIN under a column named as one, with dashes, spaces or none."""
    value, offset, _ = _unquote(match.group())
    number = _TAXPAYER_CELL.fullmatch(value)
    if number is None:
        return None
    kind = _taxpayer_kind(number.group("area"), number.group("group"), number.group("serial"))
    return None if kind is None else (_span(match.start() + offset, value), kind)


def _card_code_cell(match: re.Match[str]) -> _Span | None:
    """Three or four digits under a column named as a card's security code."""
    value, offset, _ = _unquote(match.group())
    if not (value.isdigit() and len(value) in (3, 4)):
        return None
    return _span(match.start() + offset, value)


# "GitHub 2FA recovery codes: 4f2a1-9c8e3 7b6d0-e15f4 ...", "backup codes: 8142 0937, ..."
_RECOVERY_CODES = re.compile(
    r"""
    (?<![\w-])(?:recovery|backup|scratch|emergency|one[ -]time|2fa|mfa|otp|two[ -]factor)
    (?:[ \t]++(?:recovery|backup|login|sign-?in))?[ \t]++codes?
    (?:[ \t]++[^\s:=]++){0,6}?
    [ \t]*+(?:(?:are|were|is)(?![\w-])[ \t]*+:?|:|=|->|→|-)[ \t]*+
    (?P<secret>[0-9A-Za-z]{4,12}(?:(?:[ \t]*+[,;][ \t]*+|[ \t]++|-)[0-9A-Za-z]{3,12}){1,60})
    """,
    re.VERBOSE | re.IGNORECASE,
)
_CODE_PIECE = re.compile(r"[0-9A-Za-z]+")


def _recovery_codes(match: re.Match[str]) -> _Span | None:
    """A list of one-time codes: pieces with digits (or hex), at least two with digits."""
    last_end, with_digits = None, 0
    for piece in _CODE_PIECE.finditer(match.group("secret")):
        code = piece.group()
        if any(c.isdigit() for c in code):
            with_digits += 1
            last_end = piece.end()
        elif not _HEX.match(code):
            break  # a word: the list has ended (or never started)
    if with_digits < 2 or last_end is None:
        return None
    start = match.start("secret")
    return start, start + last_end


# A TOTP seed in base32, grouped by four or not: "the 2FA secret key was ZDUR I55B HK2I SDFA".
_TOTP_SECRET = re.compile(
    r"""
    (?<![\w-])(?i:(?:2fa|mfa|totp|hotp|otp|two[ -]factor|authenticator(?:[ \t]+app)?|authy)
       (?:[ \t]++(?:secret(?:[ \t]++(?:key|seed))?|seed|key|setup[ \t]++key|shared[ \t]++secret))?
      |setup[ \t]++key)
    (?:[ \t]++[^\s:=]++){0,6}?
    [ \t]*+(?i:(?:is|was)(?![\w-])[ \t]*+:?|:|=|->|→)[ \t]*+
    (?P<quote>["'`]?)
    (?P<secret>[A-Z2-7]{4}(?:[ ][A-Z2-7]{4}){3,15}|[a-z2-7]{4}(?:[ ][a-z2-7]{4}){3,15}
      |[A-Z2-7]{16,64}|[a-z2-7]{16,64})=*(?P=quote)(?![A-Za-z0-9])
    """,
    re.VERBOSE,
)


# The key URI of authenticator apps (the QR code's text): otpauth://totp/Acme:me?secret=...
_OTPAUTH_URI = re.compile(
    r"otpauth://[a-z]otp/[^\s?#]*\?(?:[^\s#]*?&)?secret=(?P<secret>[A-Za-z2-7]{16,}=*)",
    re.IGNORECASE,
)


def _totp_secret(match: re.Match[str]) -> _Span | None:
    """Base32 with digits (words in capitals are not a seed)."""
    value = match.group("secret")
    if not any(c in "234567" for c in value) or _is_placeholder(value.replace(" ", "")):
        return None
    return match.span("secret")


# "the wallet seed phrase is: witch collapse practice ..." (12, 15, 18, 21 or 24 words of the
# BIP-39 English word list).
_SEED_PHRASE = re.compile(
    r"""
    (?<![\w-])(?i:(?:(?:wallet|bip-?39|secret|recovery|seed|backup|mnemonic)[ \t]++){1,3}
       (?:phrase|words)|mnemonic|wallet[ \t]++seed)
    (?:[ \t]++[^\s:=]++){0,6}?
    [ \t]*+(?i:(?:is|was|are|were)(?![\w-])[ \t]*+:?|:|=|->|→)[ \t]*+
    (?P<quote>["'`]?)
    (?P<secret>(?:[0-9]{1,2}[.)][ \t]*+)?[a-z]{3,8}
      (?:(?:[ \t]*+,[ \t]*+|[ \t]++)(?:[0-9]{1,2}[.)][ \t]*+)?[a-z]{3,8}){11,24})
    """,
    re.VERBOSE,
)
_SEED_PHRASE_LENGTHS = frozenset({12, 15, 18, 21, 24})
_SEED_WORD = re.compile("[a-z]+")
_MORE_WORDS = re.compile(r"[ \t]*+,?[ \t]*+[a-z]")
# The BIP-39 English word list (bip-0039/english.txt of bitcoin/bips; sha256 2f5eed53...).
_BIP39_ENGLISH_TEXT = """
    abandon ability able about above absent absorb abstract absurd abuse access accident account
    accuse achieve acid acoustic acquire across act action actor actress actual adapt add addict
    address adjust admit adult advance advice aerobic affair afford afraid again age agent agree
    ahead aim air airport aisle alarm album alcohol alert alien all alley allow almost alone alpha
    already also alter always amateur amazing among amount amused analyst anchor ancient anger
    angle angry animal ankle announce annual another answer antenna antique anxiety any apart
    apology appear apple approve april arch arctic area arena argue arm armed armor army around
    arrange arrest arrive arrow art artefact artist artwork ask aspect assault asset assist assume
    asthma athlete atom attack attend attitude attract auction audit august aunt author auto autumn
    average avocado avoid awake aware away awesome awful awkward axis baby bachelor bacon badge bag
    balance balcony ball bamboo banana banner bar barely bargain barrel base basic basket battle
    beach bean beauty because become beef before begin behave behind believe below belt bench
    benefit best betray better between beyond bicycle bid bike bind biology bird birth bitter black
    blade blame blanket blast bleak bless blind blood blossom blouse blue blur blush board boat
    body boil bomb bone bonus book boost border boring borrow boss bottom bounce box boy bracket
    brain brand brass brave bread breeze brick bridge brief bright bring brisk broccoli broken
    bronze broom brother brown brush bubble buddy budget buffalo build bulb bulk bullet bundle
    bunker burden burger burst bus business busy butter buyer buzz cabbage cabin cable cactus cage
    cake call calm camera camp can canal cancel candy cannon canoe canvas canyon capable capital
    captain car carbon card cargo carpet carry cart case cash casino castle casual cat catalog
    catch category cattle caught cause caution cave ceiling celery cement census century cereal
    certain chair chalk champion change chaos chapter charge chase chat cheap check cheese chef
    cherry chest chicken chief child chimney choice choose chronic chuckle chunk churn cigar
    cinnamon circle citizen city civil claim clap clarify claw clay clean clerk clever click client
    cliff climb clinic clip clock clog close cloth cloud clown club clump cluster clutch coach
    coast coconut code coffee coil coin collect color column combine come comfort comic common
    company concert conduct confirm congress connect consider control convince cook cool copper
    copy coral core corn correct cost cotton couch country couple course cousin cover coyote crack
    cradle craft cram crane crash crater crawl crazy cream credit creek crew cricket crime crisp
    critic crop cross crouch crowd crucial cruel cruise crumble crunch crush cry crystal cube
    culture cup cupboard curious current curtain curve cushion custom cute cycle dad damage damp
    dance danger daring dash daughter dawn day deal debate debris decade december decide decline
    decorate decrease deer defense define defy degree delay deliver demand demise denial dentist
    deny depart depend deposit depth deputy derive describe desert design desk despair destroy
    detail detect develop device devote diagram dial diamond diary dice diesel diet differ digital
    dignity dilemma dinner dinosaur direct dirt disagree discover disease dish dismiss disorder
    display distance divert divide divorce dizzy doctor document dog doll dolphin domain donate
    donkey donor door dose double dove draft dragon drama drastic draw dream dress drift drill
    drink drip drive drop drum dry duck dumb dune during dust dutch duty dwarf dynamic eager eagle
    early earn earth easily east easy echo ecology economy edge edit educate effort egg eight
    either elbow elder electric elegant element elephant elevator elite else embark embody embrace
    emerge emotion employ empower empty enable enact end endless endorse enemy energy enforce
    engage engine enhance enjoy enlist enough enrich enroll ensure enter entire entry envelope
    episode equal equip era erase erode erosion error erupt escape essay essence estate eternal
    ethics evidence evil evoke evolve exact example excess exchange excite exclude excuse execute
    exercise exhaust exhibit exile exist exit exotic expand expect expire explain expose express
    extend extra eye eyebrow fabric face faculty fade faint faith fall false fame family famous fan
    fancy fantasy farm fashion fat fatal father fatigue fault favorite feature february federal fee
    feed feel female fence festival fetch fever few fiber fiction field figure file film filter
    final find fine finger finish fire firm first fiscal fish fit fitness fix flag flame flash flat
    flavor flee flight flip float flock floor flower fluid flush fly foam focus fog foil fold
    follow food foot force forest forget fork fortune forum forward fossil foster found fox fragile
    frame frequent fresh friend fringe frog front frost frown frozen fruit fuel fun funny furnace
    fury future gadget gain galaxy gallery game gap garage garbage garden garlic garment gas gasp
    gate gather gauge gaze general genius genre gentle genuine gesture ghost giant gift giggle
    ginger giraffe girl give glad glance glare glass glide glimpse globe gloom glory glove glow
    glue goat goddess gold good goose gorilla gospel gossip govern gown grab grace grain grant
    grape grass gravity great green grid grief grit grocery group grow grunt guard guess guide
    guilt guitar gun gym habit hair half hammer hamster hand happy harbor hard harsh harvest hat
    have hawk hazard head health heart heavy hedgehog height hello helmet help hen hero hidden high
    hill hint hip hire history hobby hockey hold hole holiday hollow home honey hood hope horn
    horror horse hospital host hotel hour hover hub huge human humble humor hundred hungry hunt
    hurdle hurry hurt husband hybrid ice icon idea identify idle ignore ill illegal illness image
    imitate immense immune impact impose improve impulse inch include income increase index
    indicate indoor industry infant inflict inform inhale inherit initial inject injury inmate
    inner innocent input inquiry insane insect inside inspire install intact interest into invest
    invite involve iron island isolate issue item ivory jacket jaguar jar jazz jealous jeans jelly
    jewel job join joke journey joy judge juice jump jungle junior junk just kangaroo keen keep
    ketchup key kick kid kidney kind kingdom kiss kit kitchen kite kitten kiwi knee knife knock
    know lab label labor ladder lady lake lamp language laptop large later latin laugh laundry lava
    law lawn lawsuit layer lazy leader leaf learn leave lecture left leg legal legend leisure lemon
    lend length lens leopard lesson letter level liar liberty library license life lift light like
    limb limit link lion liquid list little live lizard load loan lobster local lock logic lonely
    long loop lottery loud lounge love loyal lucky luggage lumber lunar lunch luxury lyrics machine
    mad magic magnet maid mail main major make mammal man manage mandate mango mansion manual maple
    marble march margin marine market marriage mask mass master match material math matrix matter
    maximum maze meadow mean measure meat mechanic medal media melody melt member memory mention
    menu mercy merge merit merry mesh message metal method middle midnight milk million mimic mind
    minimum minor minute miracle mirror misery miss mistake mix mixed mixture mobile model modify
    mom moment monitor monkey monster month moon moral more morning mosquito mother motion motor
    mountain mouse move movie much muffin mule multiply muscle museum mushroom music must mutual
    myself mystery myth naive name napkin narrow nasty nation nature near neck need negative
    neglect neither nephew nerve nest net network neutral never news next nice night noble noise
    nominee noodle normal north nose notable note nothing notice novel now nuclear number nurse nut
    oak obey object oblige obscure observe obtain obvious occur ocean october odor off offer office
    often oil okay old olive olympic omit once one onion online only open opera opinion oppose
    option orange orbit orchard order ordinary organ orient original orphan ostrich other outdoor
    outer output outside oval oven over own owner oxygen oyster ozone pact paddle page pair palace
    palm panda panel panic panther paper parade parent park parrot party pass patch path patient
    patrol pattern pause pave payment peace peanut pear peasant pelican pen penalty pencil people
    pepper perfect permit person pet phone photo phrase physical piano picnic picture piece pig
    pigeon pill pilot pink pioneer pipe pistol pitch pizza place planet plastic plate play please
    pledge pluck plug plunge poem poet point polar pole police pond pony pool popular portion
    position possible post potato pottery poverty powder power practice praise predict prefer
    prepare present pretty prevent price pride primary print priority prison private prize problem
    process produce profit program project promote proof property prosper protect proud provide
    public pudding pull pulp pulse pumpkin punch pupil puppy purchase purity purpose purse push put
    puzzle pyramid quality quantum quarter question quick quit quiz quote rabbit raccoon race rack
    radar radio rail rain raise rally ramp ranch random range rapid rare rate rather raven raw
    razor ready real reason rebel rebuild recall receive recipe record recycle reduce reflect
    reform refuse region regret regular reject relax release relief rely remain remember remind
    remove render renew rent reopen repair repeat replace report require rescue resemble resist
    resource response result retire retreat return reunion reveal review reward rhythm rib ribbon
    rice rich ride ridge rifle right rigid ring riot ripple risk ritual rival river road roast
    robot robust rocket romance roof rookie room rose rotate rough round route royal rubber rude
    rug rule run runway rural sad saddle sadness safe sail salad salmon salon salt salute same
    sample sand satisfy satoshi sauce sausage save say scale scan scare scatter scene scheme school
    science scissors scorpion scout scrap screen script scrub sea search season seat second secret
    section security seed seek segment select sell seminar senior sense sentence series service
    session settle setup seven shadow shaft shallow share shed shell sheriff shield shift shine
    ship shiver shock shoe shoot shop short shoulder shove shrimp shrug shuffle shy sibling sick
    side siege sight sign silent silk silly silver similar simple since sing siren sister situate
    six size skate sketch ski skill skin skirt skull slab slam sleep slender slice slide slight
    slim slogan slot slow slush small smart smile smoke smooth snack snake snap sniff snow soap
    soccer social sock soda soft solar soldier solid solution solve someone song soon sorry sort
    soul sound soup source south space spare spatial spawn speak special speed spell spend sphere
    spice spider spike spin spirit split spoil sponsor spoon sport spot spray spread spring spy
    square squeeze squirrel stable stadium staff stage stairs stamp stand start state stay steak
    steel stem step stereo stick still sting stock stomach stone stool story stove strategy street
    strike strong struggle student stuff stumble style subject submit subway success such sudden
    suffer sugar suggest suit summer sun sunny sunset super supply supreme sure surface surge
    surprise surround survey suspect sustain swallow swamp swap swarm swear sweet swift swim swing
    switch sword symbol symptom syrup system table tackle tag tail talent talk tank tape target
    task taste tattoo taxi teach team tell ten tenant tennis tent term test text thank that theme
    then theory there they thing this thought three thrive throw thumb thunder ticket tide tiger
    tilt timber time tiny tip tired tissue title toast tobacco today toddler toe together toilet
    token tomato tomorrow tone tongue tonight tool tooth top topic topple torch tornado tortoise
    toss total tourist toward tower town toy track trade traffic tragic train transfer trap trash
    travel tray treat tree trend trial tribe trick trigger trim trip trophy trouble truck true
    truly trumpet trust truth try tube tuition tumble tuna tunnel turkey turn turtle twelve twenty
    twice twin twist two type typical ugly umbrella unable unaware uncle uncover under undo unfair
    unfold unhappy uniform unique unit universe unknown unlock until unusual unveil update upgrade
    uphold upon upper upset urban urge usage use used useful useless usual utility vacant vacuum
    vague valid valley valve van vanish vapor various vast vault vehicle velvet vendor venture
    venue verb verify version very vessel veteran viable vibrant vicious victory video view village
    vintage violin virtual virus visa visit visual vital vivid vocal voice void volcano volume vote
    voyage wage wagon wait walk wall walnut want warfare warm warrior wash wasp waste water wave
    way wealth weapon wear weasel weather web wedding weekend weird welcome west wet whale what
    wheat wheel when where whip whisper wide width wife wild will win window wine wing wink winner
    winter wire wisdom wise wish witness wolf woman wonder wood wool word work world worry worth
    wrap wreck wrestle wrist write wrong yard year yellow you young youth zebra zero zone zoo"""
_BIP39_ENGLISH = frozenset(_BIP39_ENGLISH_TEXT.split())


def _seed_phrase(match: re.Match[str]) -> _Span | None:
    """Words of the BIP-39 list, as many as a seed phrase has, in no alphabetical order (the
    start of the list itself, "abandon ability able ...", is documentation)."""
    words = _SEED_WORD.findall(match.group("secret"))
    if len(words) not in _SEED_PHRASE_LENGTHS or not _BIP39_ENGLISH.issuperset(words):
        return None
    if words == sorted(words):
        return None
    if _MORE_WORDS.match(match.string, match.end("secret")):
        return None  # the words go on: a sentence, not a phrase of 12, 18 or 24
    return match.span("secret")


# Cookie and Set-Cookie headers ("Cookie: _gh_sess=...; logged_in=yes"), and session cookies
# named as such (sessionid=..., PHPSESSID=..., _myapp_session=...).
_COOKIE_HEADER = re.compile(
    r"(?<![\w-])(?:set-)?cookie[\"']?[ \t]*+:[ \t]*+(?P<pairs>[^\n]+)", re.IGNORECASE
)
_COOKIE_PAIR = re.compile(
    r"(?:^|;)[ \t]*+(?P<name>[^\s;=,\"']++)=(?P<value>\"[^\"\n]*+\"|[^\s;,\"']*+)"
)
_SESSION_COOKIE = re.compile(
    r"""(?<![\w.$-])(?P<name>sessionid|session|sid|PHPSESSID|JSESSIONID|connect\.sid
    |ASP\.NET_SessionId|[A-Za-z0-9]*_sess(?:ion)?(?:_id)?|__(?:Host|Secure)-[\w-]+
    |remember_(?:user_)?token|laravel_session)=(?P<value>[^\s;,\"'&<>]{16,})""",
    re.VERBOSE | re.IGNORECASE,
)
# Cookies of analytics and preferences, which hold no credential.
_PUBLIC_COOKIE = re.compile(
    r"^(?:_ga|_gid|_gat|_gcl|_fbp|_fbc|_hj|ajs_|mp_|amplitude|optimizely|_clck|_clsk|consent"
    r"|cookieconsent|optanon|theme|lang|locale|tz|_pk_|__utm|intercom-id)",
    re.IGNORECASE,
)
# Names of session cookies whose hex or UUID value is the session itself.
_SESSION_COOKIE_NAME = re.compile(
    r"^(?:PHPSESSID|JSESSIONID|connect\.sid|ASP\.NET_SessionId|sessionid|.*_sess(?:ion)?)$",
    re.IGNORECASE,
)


def _is_cookie_secret(name: str, value: str, *, header: bool) -> bool:
    """A cookie's value that is a session or a token: random-looking, at least 16 characters."""
    value = value.strip('"')
    if len(value) < 16 or _is_placeholder(value) or _PUBLIC_COOKIE.match(name):
        return False
    if _UUID.match(value) or _HEX.match(value):
        return len(value) >= 24 and (header or bool(_SESSION_COOKIE_NAME.match(name)))
    return _is_token_like(value) or _is_single_case_random(value) or _looks_random(value)


def _cookie_header(match: re.Match[str]) -> _Span | None:
    offset = match.start("pairs")
    for pair in _COOKIE_PAIR.finditer(match.group("pairs")):
        if _is_cookie_secret(pair.group("name"), pair.group("value"), header=True):
            return offset + pair.start("value"), offset + pair.end("value")
    return None


def _session_cookie(match: re.Match[str]) -> _Span | None:
    value = _trim_bare_value(match.group("value"))
    if not _is_cookie_secret(match.group("name"), value, header=False):
        return None
    return _span(match.start("value"), value)


# Webhook URLs whose path is the secret: Microsoft Teams (Office 365 connectors and Power
# Automate workflows), Zapier, Discord, and any URL with "hook" in it and a random path piece.
# Every URL is matched whole, then checked for "hook".
_URL = re.compile(r"https?://[^\s\"'<>`]++", re.IGNORECASE)
_WEBHOOK_KINDS = (
    (re.compile(r"^https://[\w.-]*\bwebhook\.office\.com/webhookb2/", re.I), "Microsoft Teams"),
    (re.compile(r"^https://outlook\.office(?:365)?\.com/webhook/", re.I), "Microsoft Teams"),
    (re.compile(r"^https://hooks\.zapier\.com/hooks/catch/[0-9]+/[A-Za-z0-9]{5,}", re.I), "Zapier"),
    (
        re.compile(r"^https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[\w-]{20,}"),
        "Discord",
    ),
)
_POWER_AUTOMATE = re.compile(
    r"https://[\w.-]+\.logic\.azure\.com(?::443)?/workflows/[^\s\"'<>`]*?[?&]sig=[\w%-]{20,}",
    re.IGNORECASE,
)


def _webhook_url(match: re.Match[str]) -> _Found | None:
    """A webhook URL of a known provider, or one whose path after "hook" has a random piece
    (not https://api.acme.io/hooks/github)."""
    url = _trim_bare_value(match.group().rstrip(",;)"))
    path = url.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
    hook = path.lower().find("hook")
    if hook < 0:
        return None
    pieces = [piece for piece in path.split("/")[1:] if piece]
    if any(_TEMPLATE.search(piece) or _PLACEHOLDER_SHAPE.search(piece) for piece in pieces):
        return None
    span = _span(match.start(), url)
    for pattern, provider in _WEBHOOK_KINDS:
        if pattern.match(url):
            return span, f"{provider} webhook URL"
    if not any(
        (_HEX.match(piece) and len(piece) >= 24)
        or _is_token_like(piece)
        or _is_single_case_random(piece)
        for piece in path[hook:].split("/")[1:]
    ):
        return None
    return span, "webhook URL"


# A BitLocker recovery key: 48 digits in eight groups of six.
_BITLOCKER_RECOVERY_KEY = re.compile(r"(?<![0-9-])[0-9]{6}(?:-[0-9]{6}){7}(?![0-9-])")


# --- long random-looking tokens -------------------------------------------------------------------

_TOKEN_CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_-])"
)
_HEX_OR_UUID = re.compile(r"^[0-9a-fA-F-]+$")
# A short upper case prefix on lower case hex: resource ids such as Twilio's SIDs (MG..., PN...,
# and SK..., an API key's id, whose secret is another value), not key material.
_PREFIXED_HEX_ID = re.compile(r"^[A-Z]{1,4}[0-9a-f]{24,}$")
# Hashes named by their algorithm: SSH fingerprints (SHA256:...), go.sum lines (h1:...).
_HASH_LABEL = re.compile(r"(?:sha(?:1|224|256|384|512)|md5|h1):$", re.IGNORECASE)
# Subresource Integrity hashes (lockfiles) and Stripe publishable keys are meant to be public.
_PUBLIC_PREFIX = re.compile(r"^(?:sha(?:1|256|384|512)-|pk_(?:live|test)_)")
_MIN_ENTROPY_BITS = 4.0  # per character; random base64 of 32 characters has about 4.5
_MIN_SINGLE_CASE_ENTROPY = 3.3  # 16 random characters of 36 have about 3.7
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
    if _HEX_OR_UUID.match(token) or _PUBLIC_PREFIX.match(token) or _PREFIXED_HEX_ID.match(token):
        return False
    if "/" in token:  # a path: only short pieces, or ids (a UUID in an Azure resource id)
        pieces = [piece for piece in token.split("/") if not _HEX_OR_UUID.match(piece)]
        if max(map(len, pieces), default=0) < _MIN_PATH_PIECE:
            return False
    alphanumeric = _NOT_ALPHANUMERIC.sub("", token)  # snake_case and kebab-case words joined
    return (
        _has_mixed_classes(alphanumeric)
        and _shannon_entropy(token.rstrip("=")) >= _MIN_ENTROPY_BITS
        and _class_change_ratio(alphanumeric) >= _MIN_CLASS_CHANGES
        and _word_share(alphanumeric) < _MAX_WORD_SHARE
        and not _is_placeholder(token)
    )


# Public key material: certificates and public keys pasted as PEM blocks.
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*(?:CERTIFICATE(?: REQUEST)?|PUBLIC KEY(?: BLOCK)?|X509 CRL)-----"
    r".*?(?:-----END [A-Z0-9 ]+-----|$)",
    re.DOTALL,
)
# What a sentence says just before a public value: "public key", "site key", "client id", the
# modulus and coordinates of a JWK ("n": "..."), Mapbox's public "pk." tokens.
_PUBLIC_CONTEXT = re.compile(
    r"""(?:public|publishable|site|pub)[ _-]?(?:[A-Za-z0-9]+[ _-]?){0,2}key|publickey|pubkey
    |client[ _-]?id|app[ _-]?id|"[nexy]"[ \t]*:[ \t]*"$|(?<![A-Za-z])pk\.$""",
    re.VERBOSE | re.IGNORECASE,
)
_PRIVATE_CONTEXT = re.compile(r"private|secret", re.IGNORECASE)
# An SSH public key blob: base64 of a length-prefixed key type ("ssh-rsa", "ssh-ed25519",
# "ecdsa-sha2-nistp256", "sk-ssh-ed25519@openssh.com").
_SSH_KEY_TYPES = (b"ssh-", b"ecdsa-", b"sk-")


def _is_ssh_public_key(token: str) -> bool:
    if not token.startswith("AAAA"):
        return False
    try:
        head = base64.b64decode(token[:16], validate=True)
    except binascii.Error:
        return False
    return head[4:].startswith(_SSH_KEY_TYPES)


_IPFS_CID = re.compile(r"^Qm[1-9A-HJ-NP-Za-km-z]{44}$")
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _is_bitcoin_address(token: str) -> bool:
    """A legacy Bitcoin address (`1...`, `3...`): base58 with a valid double-SHA-256 checksum."""
    if token[:1] not in "13" or not 25 <= len(token) <= 35:
        return False
    number = 0
    for char in token:
        digit = _BASE58.find(char)
        if digit < 0:
            return False
        number = number * 58 + digit
    raw = number.to_bytes(25, "big") if number.bit_length() <= 200 else b""
    if len(raw) != 25:
        return False
    check = hashlib.sha256(hashlib.sha256(raw[:21]).digest()).digest()[:4]
    return raw[21:] == check


def _decoded_text(token: str) -> tuple[str | None, bool]:
    """What a base64 token encodes, when it is text: the kind of a secret inside it (a
    Kubernetes `client-key-data` holds a private key, a `.dockerconfigjson` basic auth), and
    whether it is structured or written text (JSON, a PEM block, a sentence) rather than a
    bare value. Random key material decodes to no text: (None, False)."""
    body = token.rstrip("=")
    body = body[: len(body) - len(body) % 4]
    decoded = _b64decode(body)
    if decoded is None or not decoded.replace("\n", "").isprintable():
        return None, False
    inner = [finding.kind for finding in _find(decoded, nested=True)]
    structured = decoded.lstrip()[:1] in ("{", "[") or decoded.startswith("-----") or " " in decoded
    return (inner[0] if inner else None), structured


# The public key blocks of each text of the scan in progress (find_secrets), found once: a
# pasted certificate is many long tokens, each of which asks. Nothing outlives the scan.
_scan_blocks: ContextVar[dict[str, list[tuple[int, int]]] | None] = ContextVar(
    "_scan_blocks", default=None
)


def _public_block_spans(text: str) -> list[tuple[int, int]]:
    blocks = _scan_blocks.get()
    spans = None if blocks is None else blocks.get(text)
    if spans is None:
        spans = [block.span() for block in _PUBLIC_BLOCK.finditer(text)]
        if blocks is not None:
            blocks[text] = spans
    return spans


def _is_public_value(match: re.Match[str]) -> bool:
    """A long token that is public by what it is or what the sentence says it is: an SSH public
    key, a Bitcoin address, an IPFS CID, a value in a certificate or public key block, or one
    named a public key, site key, client id or app id."""
    token = match.group()
    if _is_ssh_public_key(token) or _IPFS_CID.match(token) or _is_bitcoin_address(token):
        return True
    text = match.string
    spans = _public_block_spans(text)  # found once per scan, in order, not overlapping
    at = bisect.bisect_left(spans, (match.start(),)) - 1
    if at >= 0 and spans[at][0] < match.start() < spans[at][1]:
        return True
    window = _clause_before(text, match.start(), 40)
    public = list(_PUBLIC_CONTEXT.finditer(window))
    return bool(public) and not _PRIVATE_CONTEXT.search(window, public[-1].end())


def _high_entropy_token(match: re.Match[str]) -> _Found | None:
    """A long random-looking token, unless it is inline data (`data:...;base64,`), a hash
    named by its algorithm (`SHA256:...`) or part of a crypt hash (`$2b$12$...`), public key
    material, or base64 of text holding no secret (a JWT header, a certificate)."""
    before = match.string[max(0, match.start() - 7) : match.start()]
    if before.lower() == "base64," or _HASH_LABEL.search(before) or before.endswith("$"):
        return None
    token = match.group()
    inner, structured = _decoded_text(token)
    if inner:
        return match.span(), inner  # base64 of a private key block, of a Docker config's auth
    if structured or _is_public_value(match) or not _looks_random(token):
        return None
    return match.span(), "high-entropy token"


_TOTP_NEEDS = (
    "2fa",
    "mfa",
    "otp",
    "two-factor",
    "two factor",
    "authenticator",
    "authy",
    "setup key",
)
_PROSE_PASSWORD_NEEDS = (
    "pass",
    "pw",
    "wi-fi",
    "wifi",
    "wlan",
    "wpa",
    "wireless",
    "kennwort",
    "contrase",
    "senha",
    "wachtwoord",
)
_COMMAND_NEEDS = (
    "sshpass",
    "mongo",
    "cqlsh",
    "cypher-shell",
    "login",
    "sqlcmd",
    "bcp",
    "zip",
    "mosquitto_",
    "redis-cli",
    "ldap",
    "keytool",
)


_CARD_CODE_NEEDS = (
    "cvv",
    "cvc",
    "cvn",
    "cav2",
    "cvd",
    "card",
    "cid",
    "csc",
    "security",
    "sec code",
    "sec. code",
    "on the back",
    "kartenpr",
    "cryptogramme",
    "prüfnummer",
    "pruefnummer",
    "sicherheitscode",
    "digo de",
    "code de",
    "beveiligingscode",
    "verificatiecode",
    "prüfziffer",
    "pruefziffer",
    "front",
    "sicurezza",
    "säkerhetskod",
    "sakerhetskod",
    "sikkerhe",
    "güvenlik",
    "guvenlik",
    "zabezpiecz",
    "безопасност",
    "turvakoodi",
    "セキュリティ",
    "安全码",
    "安全碼",
    "보안",
)
# What every US SSN or ITIN holds: nine digits, in groups of three, two and four.
_NINE_DIGITS = re.compile(
    rf"[0-9]{{3}}[ {_TAXPAYER_DASHES}]?[0-9]{{2}}[ {_TAXPAYER_DASHES}]?[0-9]{{4}}"
)
_LOGIN_PAIR_NEEDS = (
    "login",
    "cred",
    "user",
    "auth",
    "htpasswd",
    "wi-fi",
    "wifi",
    "wlan",
    "account",
    "benutzer",
    "nutzer",
    "utilisateur",
    "identifiant",
    "usuario",
    "usuário",
    "utilizador",
    "gebruiker",
    "zugangsdaten",
    "anmeldedaten",
    "inloggegevens",
    "u/p",
    "u:",
    "inlog",
    "zugang",
    "accè",
    "acces",
    "acceso",
    "accesso",
    "acesso",
    "toegang",
    "dostęp",
    "dostep",
    "доступ",
    "åtkomst",
    "atkomst",
    "erişim",
    "erisim",
    "credenziali",
    "logowania",
    "utente",
    "użytkownik",
    "uzytkownik",
    "логин",
    "пользовател",
    "учётн",
    "använd",
    "anvand",
    "kullan\u0131c\u0131",
    "kullanici",
    "brugernavn",
    "brukernavn",
    "käyttäjä",
    "kayttaja",
    "ユーザー",
    "ログイン",
    "用户",
    "用戶",
    "账号",
    "帳號",
    "账户",
    "帳戶",
    "아이디",
    "계정",
    "사용자",
)


_PASSWORD_COLUMN_NEEDS = (
    "pass",
    "pw",
    "secret",
    "kennwort",
    "mdp",
    "contrase",
    "senha",
    "wachtwoord",
    "hasło",
    "haslo",
    "пароль",
    "密码",
    "密碼",
    "パスワード",
    "lösenord",
    "losenord",
    "şifre",
    "sifre",
    "parola",
    "clave",
    "chiave",
    "adgangskode",
    "salasana",
    "비밀번호",
)


def _lines(text: str) -> bool:
    return "\n" in text  # a table has a header and a row


def _table_with_nine_digits(text: str) -> bool:
    return "\n" in text and _NINE_DIGITS.search(text) is not None


def _colons(text: str) -> bool:
    return text.count(":") >= 4  # host:port:database:user:password


def _dashes(text: str) -> bool:
    return text.count("-") >= 7  # eight groups of six digits


# In priority order: where findings overlap, the earlier rule's finding is kept.
_RULES: tuple[_Rule, ...] = (
    _rule("private key block", _PRIVATE_KEY, _unchecked, needs=("private",)),
    _rule("AWS access key id", _AWS_ACCESS_KEY_ID, needs=("akia", "asia")),
    _rule("AWS secret access key", _AWS_KEY_PAIR, _aws_key_pair, needs=("akia", "asia")),
    _rule("AWS secret access key", _AWS_SECRET_ACCESS_KEY, _secret_group, needs=("secret",)),
    _rule("GitHub token", _GITHUB_TOKEN, needs=("gh", "github_pat_")),
    _rule("GitLab token", _GITLAB_TOKEN, needs=("gl", "gr1348941")),
    _rule("Slack token", _SLACK_TOKEN, needs=("xox", "xapp-")),
    _rule("Slack webhook URL", _SLACK_WEBHOOK, needs=("hooks.slack.com",)),
    _Rule(_URL, _webhook_url, needs=("hook",)),
    _rule("Power Automate webhook URL", _POWER_AUTOMATE, needs=("logic.azure.com",)),
    _rule("Stripe secret key", _STRIPE_KEY, needs=("k_live_", "k_test_")),
    _rule("Anthropic API key", _ANTHROPIC_KEY, needs=("sk-ant-",)),
    _rule("OpenAI API key", _OPENAI_KEY, _openai_key, needs=("sk-",)),
    _rule("Google API key", _GOOGLE_API_KEY, needs=("aiza",)),
    *_PREFIXED_RULES,
    _rule("Telegram bot token", _TELEGRAM_BOT_TOKEN, needs=(":aa",)),
    _rule("JSON web token", _JWT, _unchecked, needs=("eyj",)),
    _rule("payment card number", _CARD_NUMBER, _card_number, gate=_THIRTEEN_DIGITS.search),
    _rule("BitLocker recovery key", _BITLOCKER_RECOVERY_KEY, _unchecked, gate=_dashes),
    _rule("card security code", _CARD_SECURITY_CODE, _card_security_code, needs=_CARD_CODE_NEEDS),
    _rule(
        "card security code",
        _CODE_AFTER_EXPIRY,
        _code_after_expiry,
        needs=("/",),
        gate=_THIRTEEN_DIGITS.search,
    ),
    _Rule(_US_TAXPAYER_NUMBER, _us_taxpayer_number, gate=_NINE_DIGITS.search),
    _Rule(
        _NamedColumn(_TAXPAYER_NUMBER_COLUMN),
        _taxpayer_number_cell,
        needs=("ssn", "tin", "tax", "social"),
        gate=_table_with_nine_digits,
    ),
    _rule(
        "card security code",
        _NamedColumn(_CARD_CODE_COLUMN),
        _card_code_cell,
        needs=("cvv", "cvc", "cvn", "security", "card"),
        gate=_lines,
    ),
    _rule("2FA recovery code list", _RECOVERY_CODES, _recovery_codes, needs=("code",)),
    _rule("TOTP secret", _TOTP_SECRET, _totp_secret, needs=_TOTP_NEEDS),
    _rule("TOTP secret", _OTPAUTH_URI, _secret_group, needs=("otpauth:",)),
    _rule(
        "wallet seed phrase",
        _SEED_PHRASE,
        _seed_phrase,
        needs=("phrase", "words", "mnemonic", "seed"),
    ),
    _rule("session cookie", _COOKIE_HEADER, _cookie_header, needs=("cookie",)),
    _rule(
        "session cookie",
        _SESSION_COOKIE,
        _session_cookie,
        needs=("sess", "sid", "remember_", "__host-", "__secure-"),
    ),
    _rule("bearer token", _BEARER_TOKEN, _bearer_token, needs=("bearer",)),
    _rule(
        "authorization header token", _AUTHORIZATION_TOKEN, _bearer_token, needs=("authorization",)
    ),
    _rule("basic auth credentials", _BASIC_AUTHORIZATION, _encoded_basic_auth, needs=("basic",)),
    _rule("basic auth credentials", _ENCODED_AUTH_ENTRY, _encoded_basic_auth, needs=("auth",)),
    _rule(
        "basic auth credentials",
        _CLIENT_BASIC_AUTH,
        _client_basic_auth,
        needs=("curl", "http", "xh", "wget"),
    ),
    _rule("basic auth credentials", _PYTHON_BASIC_AUTH, _secret_group, needs=("auth",)),
    _rule("Azure SAS token", _AZURE_SAS, _azure_sas, needs=("sig=",)),
    _rule("connection string with a password", _URL_WITH_PASSWORD, _url_password, needs=("://",)),
    _rule("connection string with a password", _LOGIN_AT_HOST, _login_at_host, needs=("@",)),
    _Rule(
        _KEY_VALUE_CREDENTIAL,
        _key_value_credential,
        needs=("password", "pwd", "accountkey", "sharedaccess"),
    ),
    _rule("netrc password", _NETRC, _netrc_password, needs=("password",)),
    _rule("pgpass password", _PGPASS, _pgpass_password, gate=_colons),
    _rule(
        "password on a command line",
        _MYSQL_PASSWORD,
        _command_password,
        needs=("mysql", "mariadb", "7z", "unrar"),
    ),
    _rule("password on a command line", _PASSWORD_FLAG, _command_password, needs=_COMMAND_NEEDS),
    _rule(
        "password on a command line",
        _INLINE_PASSWORD_ARGUMENT,
        _inline_password_argument,
        needs=("pass:", "smbclient"),
    ),
    _rule(
        "password on a command line",
        _BATCH_PASSWORD_FILE,
        _batch_password_file,
        needs=("htpasswd", "mosquitto_passwd"),
    ),
    _rule("password on a command line", _NET_USER, _command_password, needs=("net user",)),
    _rule("password on a command line", _ECHOED_PASSWORD, _echoed_password, needs=("|",)),
    _rule(
        "password assignment",
        _PASSWORD_ASSIGNMENT,
        _assigned_value,
        needs=("pass", "pw", "authtok", "psk"),
    ),
    _rule(
        "secret or token assignment",
        _SECRET_ASSIGNMENT,
        _assigned_value,
        needs=("secret", "key", "token"),
    ),
    _rule("password assignment", _PASSWORD_ELEMENT, _element_value, needs=("pass", "pw")),
    _rule(
        "secret or token assignment",
        _SECRET_ELEMENT,
        _element_value,
        needs=("secret", "key", "token"),
    ),
    _Rule(_DOCKERFILE_ENV, _dockerfile_env, gate=_DOCKERFILE_INSTRUCTION.search),
    _rule(
        "password assignment",
        _PASSWORD_DIRECTIVE,
        _password_directive,
        needs=("requirepass", "masterauth"),
    ),
    _rule(
        "password assignment",
        _PASSWORD_KEYWORD,
        _command_password,
        needs=("bindpw", "rootpw", "authtok", "passphrase", "psk"),
    ),
    _rule(
        "password in a SQL statement", _SQL_IDENTIFIED_BY, _command_password, needs=("identified",)
    ),
    _Rule(
        _CALL_CREDENTIAL,
        _call_credential,
        needs=("pass", "pw", "secret", "key", "token", "authtok", "psk"),
    ),
    _rule("password on a command line", _LONG_PASSWORD_FLAG, _command_password, needs=("--",)),
    _rule("app password", _APP_PASSWORD, _secret_group, needs=("app",)),
    _Rule(_PROSE_PASSWORD, _prose_password, needs=_PROSE_PASSWORD_NEEDS),
    _rule("password in prose", _WIFI_PASSPHRASE, _wifi_passphrase, needs=_PROSE_PASSWORD_NEEDS),
    _rule(
        "password in prose",
        _LOGIN_PAIR,
        _password_in_prose,
        needs=_LOGIN_PAIR_NEEDS,
    ),
    _rule("password in prose", _LOG_IN_WITH, _password_in_prose, needs=("log", "sign")),
    _rule("password in prose", _THE_PASS_IS, _password_in_prose, needs=(" pass is", " pass was")),
    _rule("password in prose", _BARE_LOGIN_PAIR, _bare_login_pair, needs=("/", ":", " | ")),
    _rule("password in prose", _ACCOUNT_AND_PASSWORD, _account_and_password, needs=(" and ",)),
    _rule(
        "password in prose",
        _NamedColumn(_PASSWORD_COLUMN),
        _password_cell,
        needs=_PASSWORD_COLUMN_NEEDS,
        gate=_lines,
    ),
    _Rule(_PASSWORD_WITHOUT_VERB, _prose_password, needs=("pass",)),
    _rule(
        "password in prose", _PLAIN_WORD_PASSWORD, _plain_word_password, needs=_PROSE_PASSWORD_NEEDS
    ),
    _rule("PIN or passcode", _PIN, _pin, needs=("pin", "code")),
    _rule("PIN or passcode", _PIN_WITHOUT_VERB, _pin, needs=("pin",)),
    _Rule(_PROSE_CREDENTIAL, _prose_credential, needs=("token", "key", "secret")),
    _Rule(_TOKEN_CANDIDATE, _high_entropy_token),
)
# In text decoded from a token, every rule but the last (which decodes).
_NESTED_RULES = _RULES[:-1]
# Every word some rule needs: a scan looks each up once, not once per rule.
_ALL_NEEDS = tuple(sorted({word for rule in _RULES for word in rule.needs}))


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in `text`, ordered by start; empty when the text is safe to store.

    Each finding's span covers the secret value itself (the token, the password of a URL, the
    assigned value, the whole private key block), so `text[start:end]` is what to redact.
    """
    scan = _scan_blocks.set({})
    try:
        return _find(text, nested=False)
    finally:
        _scan_blocks.reset(scan)


def _find(text: str, *, nested: bool) -> list[SecretFinding]:
    """The findings of every rule, none overlapping an earlier one; `nested`: in text decoded
    from a token, where the high-entropy rule (which decodes) does not run again."""
    findings: list[SecretFinding] = []
    taken: list[_Span] = []  # the spans found so far, sorted (they do not overlap)
    lowered = text.lower()
    present = {word for word in _ALL_NEEDS if word in lowered}
    for rule in _NESTED_RULES if nested else _RULES:
        if rule.needs and present.isdisjoint(rule.needs):
            continue
        if rule.gate is not None and not rule.gate(text):
            continue
        for match in rule.pattern.finditer(text):
            found = rule.judge(match)
            if found is None:
                continue
            (start, end), kind = found
            at = bisect.bisect_left(taken, (start, end))
            if (at and taken[at - 1][1] > start) or (at < len(taken) and taken[at][0] < end):
                continue  # it overlaps a finding of an earlier, more specific rule
            taken.insert(at, (start, end))
            findings.append(SecretFinding(kind, start, end))
    return sorted(findings, key=lambda finding: (finding.start, finding.end))
