"""Credential and secret detection, used to refuse saving secrets into the memory store.

`find_secrets` reports these kinds (the `kind` of a `SecretFinding`); where findings overlap,
the most specific kind wins (`GITHUB_TOKEN=ghp_...` is a "GitHub token", not an assignment):

- private key block: PEM/OpenSSH/PGP `-----BEGIN ... PRIVATE KEY-----` with a body (RSA, EC,
  DSA, OPENSSH, PKCS#8, ENCRYPTED, PGP ... KEY BLOCK, SSH2), also when the paste is truncated
  or sits in a JSON string with `\\n` escapes (a GCP service account's `"private_key"`), and
  the private lines of a PuTTY key file;
- provider keys recognised by their format: AWS access key id (`AKIA...`, `ASIA...`) and AWS
  secret access key (40 characters assigned to `aws_secret_access_key`, ...), GitHub, GitLab,
  Slack (and Slack webhook URLs), Stripe (`sk_`/`rk_` live and test keys, `whsec_` webhook
  secrets; publishable `pk_` keys are public and allowed), Anthropic, OpenAI, Google API keys
  and OAuth client secrets (`GOCSPX-`), SendGrid (`SG.`), npm (`npm_`), PyPI (`pypi-`),
  Hugging Face (`hf_`), DigitalOcean (`dop_v1_`), Shopify (`shpat_`), Discord and Telegram bot
  tokens, Mailgun (`key-`), Mailchimp (`...-us21`), Square, Azure AD client secrets (`...8Q~`),
  Azure storage account keys and shared access keys (`AccountKey=`, `SharedAccessKey=`), Azure
  SAS tokens (`sig=`), HashiCorp Vault (`hvs.`), age (`AGE-SECRET-KEY-1`), Docker Hub, Databricks,
  Sentry, Grafana, Postman, Linear, Notion, New Relic, Doppler, Terraform Cloud, Pulumi,
  Supabase, Netlify, Atlassian, Bitbucket, Groq, Replicate, Perplexity, xAI, 1Password, Fly.io,
  PlanetScale, Airtable, Mapbox, Dynatrace, Contentful, Figma, Heroku (`HRKU-`), HubSpot
  (`pat-na1-`), LaunchDarkly (`sdk-`) and Tailscale tokens;
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
- password assignment (`password=`, `passwd:`, `pwd=`, `"password": "..."`, `PASSWORD=`,
  `DB_PASSWORD: ...`, `SMTP_PASS=`, `DB_PW=`, `passphrase`, Dockerfile `ENV DB_PASSWORD x`,
  redis' `requirepass x`) and
  secret or token assignment (`api_key=`, `secret=`, `token=`, `JWT_SECRET=`, `client_secret:`,
  `access_token=`, `private_key=`, `MASTER_KEY=`, `X-Api-Key: ...`, ...) with a concrete
  value, in code, configuration, JSON, YAML, `.env`, XML (`<password>...</password>`) or a URL
  query;
- password in prose: "the password is hunter2", "my wifi password is sunflower42", "the root
  password for the NAS is Winter2024!", "password: Tr0ub4dor&3 (staging)", "the login is
  admin / S3cret!", "user admin, pass S3cret!", with a value that looks like a password
  (letters with digits or symbols, six or more digits, or a quoted value), and PIN or
  passcode ("my PIN is 4821", "the door code for the office is 4417#");
- a provider's credential stated in prose: "Twilio auth token 8d3f...", "the Heroku API key
  is <uuid>" (a UUID, 20 or more hex digits, or a long mixed-case token after a credential
  noun); the kind names the provider and the noun ("Heroku API key") when the sentence names
  one, else "secret or token in prose";
- high-entropy token: any other long run of random-looking key material. A base64 token that
  decodes to text holding a secret is refused as that secret (a kubeconfig's
  `client-key-data` is a "private key block", a `.dockerconfigjson` holds "basic auth
  credentials").

It favours precision: ordinary developer notes (UUIDs, commit SHAs, hex digests, `SHA256:` and
`h1:` fingerprints, crypt hashes, paths, identifiers, versions, ids of apps, tenants, requests
and traces, words like "password" or "token" in prose, code such as
`password=os.environ["DB_PASSWORD"]`, flags without a value such as `mysql -p`) are not
findings, and neither are public values: SSH and WireGuard public keys, certificates and
public key blocks, base64 of JSON or of a certificate, Bitcoin addresses, IPFS CIDs, values a
sentence calls a public key, site key, client id or app id.

Placeholders are not secrets. An assigned value, URL password or token is a placeholder when it
is a template (`<your password>`, `[REDACTED]`, `{password}`, `${VAR}`, `$VAR`, `$(cmd)`,
`{{ var }}`, `%VAR%`, `%s`), masked or elided (`***`, `xxxx`, `...`, one repeated character),
a generic word (`password`, `secret`, `token`, `changeme`, `example`, `test`, `demo`, `none`,
...), or shaped like one (`your_api_key`, `insert_token_here`, `my-password`, `test-token`,
`example_secret`). A value that merely contains "example" is not a placeholder
(`example-prod-pw` is a password); only the exact example keys of AWS's documentation
(`AKIAIOSFODNN7EXAMPLE`, `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, ...) are exempt.

`describe_secret` says what was found without ever repeating the secret itself: kinds come
from fixed lists, never from the text.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
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


# Kinds whose first letter is not pronounced as written ("an npm token").
_AN_BEFORE = ("npm ",)


def describe_secret(finding: SecretFinding) -> str:
    """A short explanation for a refusal, naming the kind of secret but never its value."""
    vowel = finding.kind[:1].upper() in "AEIOU" or finding.kind.startswith(_AN_BEFORE)
    return f"it contains what looks like {'an' if vowel else 'a'} {finding.kind}"


_Span = tuple[int, int]

# Characters of tokens: a token is not found inside a longer run of these.
_BOUNDARY_BEFORE = r"(?<![A-Za-z0-9_-])"
_BOUNDARY_AFTER = r"(?![A-Za-z0-9_-])"

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
    | ^(?:my|the|some|a|an|new|old|test|fake|dummy|mock|demo|sample|example|local|dev)[\W_]?
      (?:passw(?:or)?d|pass|pwd|secret|token|(?:api[\W_]?)?key)s?$   # the-token, example_secret
    | placeholder | redacted | changeme
    | x{4,} | \*{3,} | \.{3} | …         # ghp_xxxxxxxx, ***, truncated...
    | (.)\1{5,}                     # 000000, aaaaaa
    """,
    re.VERBOSE | re.IGNORECASE,
)


def _is_placeholder(value: str) -> bool:
    """Whether a value is an obvious stand-in for a secret (never a real credential)."""
    value = value.strip()
    if not value or len(set(value)) == 1 or value in _DOCUMENTED_EXAMPLES:
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
    """A kind of secret: a pattern and how a match gives the span of the secret (or none).

    `kind` is a name, or a function of the match choosing among fixed names (a provider's
    token format, a provider named in a sentence); never text of the match itself."""

    kind: str | Callable[[re.Match[str]], str]
    pattern: re.Pattern[str]
    secret: Callable[[re.Match[str]], _Span | None] = _whole_match
    # The rule runs only on texts holding one of these (in lower case): a quick filter, so that
    # a typical memory is scanned in well under a millisecond.
    needs: tuple[str, ...] = ()

    def kind_of(self, match: re.Match[str]) -> str:
        return self.kind if isinstance(self.kind, str) else self.kind(match)


# A line break in a pasted key, or its escape in a JSON string ("-----BEGIN ...-----\nMIIE...").
_KEY_BREAK = r"(?:\s|\\[rn])"
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    rf"(?:[ \t]*(?:\r?\n|\\n)[ \t]*[A-Za-z-]+:[^\n\\]*)*"  # RFC 1421 headers: Proc-Type, DEK-Info
    rf"{_KEY_BREAK}*[A-Za-z0-9+/=]{{16,}}"  # a body, not just the header line quoted in prose
    rf"(?:(?:[A-Za-z0-9+/=]|{_KEY_BREAK})*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?"
    # SSH2 (RFC 4716) and PuTTY key files
    r"|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----(?:\s*[A-Za-z-]+:[^\n]*)*\s*[A-Za-z0-9+/=]{16,}"
    r"(?:[A-Za-z0-9+/=\s]*?---- END SSH2 ENCRYPTED PRIVATE KEY ----)?"
    r"|(?:PuTTY-User-Key-File-[0-9]:[^\n]*(?:\r?\n[^\n]*){0,40}?\r?\n)?"
    r"Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n[A-Za-z0-9+/=]{16,}(?:\r?\n[A-Za-z0-9+/=]{4,})*"
)
_AWS_ACCESS_KEY_ID = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_ACCESS_KEY = re.compile(
    r"(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]*(?:[=:]|[ \t])[ \t]*"
    r"[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
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
# Other schemes of the Authorization header: DRF and GitHub's "token", Discord's "Bot", Okta's
# "SSWS", "ApiKey"; the header name is required (a bare "Token abc..." is prose).
_AUTHORIZATION_TOKEN = re.compile(
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:token|bot|ssws|api-?key|key|apikey)[ \t]+"
    r"(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9_~+/=-])",
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


_UUID_BODY = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# Provider tokens recognised by a documented prefix or shape (most after the formats gitleaks
# and detect-secrets know). Each is found as a whole token: not inside a longer run of token
# characters.
_PREFIXED_TOKENS: tuple[tuple[str, str], ...] = (
    ("SendGrid API key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("npm token", r"npm_[A-Za-z0-9]{36}"),
    ("PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("Hugging Face token", r"hf_(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{30,40}"),
    ("DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("Shopify access token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("Mailgun API key", r"key-(?=[0-9a-z]*[0-9])(?=[0-9a-z]*[a-z])[0-9a-z]{32}"),
    ("Mailchimp API key", r"[0-9a-f]{32}-us[0-9]{1,2}"),
    (
        "Square access token",
        r"sq0atp-[A-Za-z0-9_-]{22}|sq0csp-[A-Za-z0-9_-]{43}|EAAA[A-Za-z0-9_-]{60}",
    ),
    ("Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{28}"),
    ("Azure AD client secret", r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}"),
    ("Stripe webhook secret", r"whsec_[A-Za-z0-9+/]{32,}={0,2}"),
    ("Vault token", r"hv[sb]\.[A-Za-z0-9_-]{24,}"),
    ("age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("Docker Hub token", r"dckr_pat_[A-Za-z0-9_-]{27,}"),
    ("Databricks token", r"dapi[a-f0-9]{32}(?:-[0-9])?"),
    ("Sentry auth token", r"sntrys_eyJ[A-Za-z0-9+/=_-]{60,}|sntryu_[a-f0-9]{64}"),
    ("Grafana token", r"glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_eyJ[A-Za-z0-9+/=_-]{32,}"),
    ("Postman API key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("Linear API key", r"lin_api_[A-Za-z0-9]{40}"),
    ("Notion token", r"secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35}"),
    ("New Relic API key", r"NRAK-[A-Z0-9]{27}"),
    ("Doppler token", r"dp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_.-]{40,64}"),
    ("Terraform Cloud token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}"),
    ("Pulumi access token", r"pul-[a-f0-9]{40}"),
    ("Supabase access token", r"sbp_[a-f0-9]{40}"),
    ("Netlify token", r"nfp_[A-Za-z0-9]{36}"),
    ("Atlassian API token", r"ATATT3[A-Za-z0-9_=-]{150,}"),
    ("Bitbucket app password", r"ATBB[A-Za-z0-9_=.-]{28,}"),
    ("Groq API key", r"gsk_[A-Za-z0-9]{52}"),
    ("Replicate API token", r"r8_[A-Za-z0-9]{37}"),
    ("Perplexity API key", r"pplx-[A-Za-z0-9]{48}"),
    ("xAI API key", r"xai-[A-Za-z0-9]{80}"),
    ("1Password service account token", r"ops_eyJ[A-Za-z0-9+/=_-]{100,}"),
    ("Fly.io token", r"fo1_[A-Za-z0-9_-]{43}"),
    ("PlanetScale token", r"pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_.-]{32,64}"),
    ("Airtable personal access token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("Mapbox secret token", r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}"),
    ("Dynatrace token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    ("Contentful token", r"CFPAT-[A-Za-z0-9_-]{43}"),
    ("Figma token", r"figd_[A-Za-z0-9_-]{40,}"),
    ("Heroku API key", r"HRKU-[A-Za-z0-9_-]{40,}"),
    ("HubSpot private app token", rf"pat-(?:na|eu)[0-9]-{_UUID_BODY}"),
    ("LaunchDarkly SDK key", rf"sdk-{_UUID_BODY}"),
    ("Tailscale key", r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]+-[A-Za-z0-9]{20,}"),
    # Discord: the first part is the bot's numeric id in base64 (checked in _prefixed_token)
    ("Discord bot token", r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"),
)
_PREFIXED_KINDS = {f"t{n}": kind for n, (kind, _) in enumerate(_PREFIXED_TOKENS)}
_PREFIXED_TOKEN = re.compile(
    rf"{_BOUNDARY_BEFORE}(?:"
    + "|".join(f"(?P<t{n}>{pattern})" for n, (_, pattern) in enumerate(_PREFIXED_TOKENS))
    + rf"){_BOUNDARY_AFTER}"
)
# Telegram bot tokens follow "bot" in API URLs (https://api.telegram.org/bot123:AA.../getMe).
_TELEGRAM_BOT_TOKEN = re.compile(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")


def _prefixed_kind(match: re.Match[str]) -> str:
    return _PREFIXED_KINDS[match.lastgroup or ""]


def _prefixed_token(match: re.Match[str]) -> _Span | None:
    if _PREFIXED_KINDS[match.lastgroup or ""] == "Discord bot token":
        first = match.group().split(".", 1)[0]
        decoded = _b64decode(first)
        if decoded is None or not decoded.isdigit():
            return None
    return _whole_match(match)


def _b64decode(value: str) -> str | None:
    """The text a base64 (or base64url) value encodes, or None if it encodes no UTF-8 text."""
    value = value.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


# --- basic auth -----------------------------------------------------------------------------------

# curl -u user:password, curl --user user:password, http -a user:password (httpie): on the line
# of an HTTP client, so that `docker run -u 1000:1000` (a user and a group) is not one.
_CLIENT_BASIC_AUTH = re.compile(
    r"(?<![\w-])(?:curl|http|https|xh|httpie|grpcurl|wget)(?![\w-])[^\n]*?"
    r"[ \t](?:-u|--user|-a|--auth|--proxy-user|-U)(?:[ \t]+|=)"
    r"(?P<quote>[\"'`]?)[^\s:\"'`@/]+:(?P<secret>[^\s\"'`]+)(?P=quote)"
)
_BASIC_AUTHORIZATION = re.compile(
    r"\bbasic[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])", re.IGNORECASE
)
# "auth": "<base64 of user:password>" in ~/.docker/config.json, _auth=<base64> in .npmrc.
_ENCODED_AUTH_ENTRY = re.compile(
    r"(?:[\"']auth[\"'][ \t]*:[ \t]*[\"']|(?<![\w-])_auth[ \t]*=[ \t]*[\"']?)"
    r"(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"
)
# Python: requests.get(url, auth=("admin", "S3cret")), HTTPBasicAuth("admin", "S3cret").
_PYTHON_BASIC_AUTH = re.compile(
    r"(?:\bauth[ \t]*=[ \t]*\(|BasicAuth\()[ \t]*(?P<q1>[\"'])[^\"'\n]+(?P=q1)[ \t]*,[ \t]*"
    r"(?P<q2>[\"'])(?P<secret>[^\"'\n]+)(?P=q2)"
)


def _client_basic_auth(match: re.Match[str]) -> _Span | None:
    password, start = _trim_bare_value(match.group("secret").rstrip(",;")), match.start("secret")
    if password.isdigit() and len(password) < 6:  # a port or a group id
        return None
    if not password or _is_placeholder(password):
        return None
    return start, start + len(password)


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


# Key=value; connection strings (ADO.NET, ODBC, JDBC for SQL Server, Azure): the credential is
# a pair next to a ";", as in "Server=db;User ID=app;Password=S3cret!;" or
# "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=...;".
_KEY_VALUE_CREDENTIAL = re.compile(
    r"(?:(?<=;)|(?<=;[ \t])|(?<![\w.-]))"
    r"(?P<key>password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)[ \t]*=[ \t]*"
    r"(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|\{[^{}\n]*\}|[^;\s\"'`]+)"
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


def _connection_kind(match: re.Match[str]) -> str:
    return _CONNECTION_KINDS[match.group("key").lower()]


def _key_value_credential(match: re.Match[str]) -> _Span | None:
    """A credential pair of a `;`-separated connection string, unless it is a placeholder."""
    before = match.string[max(0, match.start() - 2) : match.start()]
    if ";" not in before and not match.group("after"):
        return None  # not in a ";" list: an ordinary assignment, found by the rules below
    value, start = match.group("secret"), match.start("secret")
    if value[:1] in "\"'{" and value[-1:] in "\"'}" and len(value) >= 2:
        value, start = value[1:-1], start + 1
    if len(value) < 3 or _is_placeholder(value):
        return None
    return start, start + len(value)


# Azure shared access signatures in URLs: ?sv=2022-11-02&...&sig=<base64, URL-encoded>.
_AZURE_SAS = re.compile(
    r"[?&]sv=[0-9-]+&[^\s\"'`]*?(?<=[?&])sig=(?P<secret>[A-Za-z0-9%+/=]{30,})", re.IGNORECASE
)

# --- other credential files and command lines --------------------------------------------------

# .netrc: "machine host login user password secret" (on one line or several); also "default".
# The host has a dot (or a login follows it), so that "machine learning password ..." is prose.
_NETRC = re.compile(
    r"(?<![\w-])(?:machine[ \t]+(?:[^\s]*[.:][^\s]*|[^\s]+(?=\s+login\s))|default(?=\s+login\s))"
    r"(?:\s+(?:login|account)\s+[^\s]+)*"
    r"\s+password\s+(?P<secret>[^\s]+)"
)
# .pgpass: hostname:port:database:username:password, as a whole word (the host has a letter
# or a dot: "10:00:00:UTC:daily" is not one).
_PGPASS = re.compile(
    r"(?<![^\s\"'`(])(?:[A-Za-z0-9]*[A-Za-z.][\w.-]*|\*):(?:[0-9]{2,5}|\*):[\w*$.-]+:[\w*$.@-]+:"
    r"(?P<secret>(?:\\[:\\]|[^\s:\\\"'`])+)(?=[\s\"'`)]|$)"
)


def _pgpass_password(match: re.Match[str]) -> _Span | None:
    value = _trim_bare_value(match.group("secret"))
    start = match.start("secret")
    if len(value) < 3 or _is_placeholder(value) or (value.isdigit() and len(value) < 6):
        return None
    return start, start + len(value)


def _netrc_password(match: re.Match[str]) -> _Span | None:
    value, start = _trim_bare_value(match.group("secret")), match.start("secret")
    if _is_placeholder(value) or _PATH_OR_URL.search(value) or len(value) < 3:
        return None
    return start, start + len(value)


_COMMAND_VALUE = r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'|;&<>-][^\s\"'|;&<>]*)"
# mysql's -p takes the password attached (-pS3cret); "-p S3cret" prompts, S3cret is a database.
_MYSQL_PASSWORD = re.compile(
    r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb"
    r"|mariadb-dump|mariadb-admin|7z|7za|unrar)(?![\w-])[^\n|;]*?[ \t]-p"
    r"(?P<secret>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'|;&<>]{3,})"
)
# Tools whose short flag takes a password as the next argument.
_PASSWORD_FLAG = re.compile(
    r"(?<![\w-])(?:sshpass[ \t]+-p|mongo(?:sh|dump|restore|import|export)?(?![\w-])[^\n|;]*?[ \t]-p"
    r"|(?:docker|podman|nerdctl|helm[ \t]+registry|oras|skopeo|buildah)[ \t]+login(?![\w-])"
    r"[^\n|;]*?[ \t]-p"
    r"|(?:sqlcmd|bcp|zip)(?![\w-])[^\n|;]*?[ \t]-P"
    r"|redis-cli(?![\w-])[^\n|;]*?[ \t]-a"
    r"|ldap(?:search|add|modify|delete|whoami|passwd)(?![\w-])[^\n|;]*?[ \t]-w"
    r"|(?:cqlsh|cypher-shell)(?![\w-])[^\n|;]*?[ \t]-p"
    r"|keytool(?![\w-])[^\n|;]*?[ \t]-(?:store|key|srcstore|deststore|new)pass"
    r")[ \t]+" + _COMMAND_VALUE
)
# --password Secret, --db-password "Secret", --api-token Secret (the "=" form is an assignment).
_LONG_PASSWORD_FLAG = re.compile(
    r"(?<![\w-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|passphrase|secret|token|api-key|apikey"
    r"|access-key|secret-key|private-key|client-secret)[ \t]+" + _COMMAND_VALUE
)
# openssl -passin pass:Secret, smbclient -U user%Secret.
_INLINE_PASSWORD_ARGUMENT = re.compile(
    r"(?<![\w-])-pass(?:in|out|word)?[ \t]+pass:(?P<secret>[^\s\"']+)"
    r"|(?<![\w-])smbclient(?![\w-])[^\n|;]*?[ \t]-U[ \t]+[\"']?[\w.\\-]+%(?P<secret2>[^\s\"']+)"
)


def _command_password(match: re.Match[str]) -> _Span | None:
    """A password given on a command line, unless it is a placeholder, a variable or a port."""
    value, start = match.group("secret"), match.start("secret")
    quoted = value[:1] in "\"'"
    if quoted:
        value, start = value[1:-1], start + 1
    if not _is_secret_like(value, quoted=quoted):
        return None
    return start, start + len(value)


def _inline_password_argument(match: re.Match[str]) -> _Span | None:
    group = "secret" if match.group("secret") is not None else "secret2"
    value = match.group(group)
    if not _is_secret_like(value, quoted=False):
        return None
    return match.span(group)


# --- assignments: password=..., api_key: "...", DB_PASSWORD: ... --------------------------------

# The key may end a longer name (DB_PASSWORD, PGPASSWORD, access_token, SMTP_PASS, DB_PW) but not
# continue (password_hash, tokens, secretName); a quote and a bracket may close it
# (conf["password"] = ...). "pass" and "pw" alone are keys only at the end of a longer name or
# in capitals (PASS=...): "first pass: done" is prose.
_LOGIN_KEY_NAMES = (
    r"passw(?:or)?d|pwd|passphrase|passcode|(?<=[_.-])(?:pass|pw)|(?<![A-Za-z0-9])(?-i:PASS|PW)"
)
_CREDENTIAL_KEY_NAMES = (
    r"secret(?:[_-]?key)?|api[_-]?key|apikey|token|private[_-]?key"
    r"|(?:access|auth|master|signing|encryption|app|account|client|service|admin|server|webhook"
    r"|hmac|jwt|subscription|functions|shared[_-]?access)[_-]?key"
)
# The separator is "=", ":", ":=", "=>" or a Python annotation ("password: str = ..."), never
# "==" or "::". A bare value in brackets may hold spaces (password=<your password>).
_ASSIGNMENT = r"""
    (?P<key>{keys})(?![A-Za-z0-9_])["']?\]?[ \t]*
    (?: (?P<annotation>:[ \t]*[A-Za-z_][\w.\[\], |]{0,60}?[ \t]+=(?!=))
      | (?P<separator>=> | := | =(?!=) | :(?!:)) )
    [ \t]*
    (?: (?P<quote>["'`])(?P<quoted>[^\s"'`](?:[^\n]*?[^\s])?)(?P=quote)
      | (?P<bare> <[^<>\n]{1,80}> | \[[^\[\]\n]{1,80}\] | [^\s"'`,;]+ ) )
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
# Dockerfile: ENV DB_PASSWORD S3cret (the legacy form without "=").
_DOCKERFILE_ENV = re.compile(
    r"(?<![\w-])(?:ENV|ARG)[ \t]+(?P<name>[A-Za-z_][A-Za-z0-9_]*)[ \t]+"
    r"(?P<secret>[^\s=\"'][^\s]*|\"[^\"\n]+\"|'[^'\n]+')(?P<end>[ \t]*$)?",
    re.MULTILINE,
)
# Space-separated configuration directives: redis.conf's requirepass and masterauth.
_PASSWORD_DIRECTIVE = re.compile(
    r"(?<![\w-])(?:requirepass|masterauth)[ \t]+(?P<secret>[^\s\"'#]+|\"[^\"\n]+\")"
)
_LOGIN_NAME = re.compile(rf"(?:{_LOGIN_KEY_NAMES})$", re.IGNORECASE)
_CREDENTIAL_NAME = re.compile(rf"(?:{_CREDENTIAL_KEY_NAMES})$", re.IGNORECASE)

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
_CALL_OR_INDEX = re.compile(r"[(\[]")
_DOTTED_NAME = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$")
_CREDENTIAL_IDENTIFIER = re.compile(
    r"^(?=[A-Za-z_]\w*$)(?=.*(?:_|(?-i:[a-z][A-Z])))(?=.*(?:pass|pwd|secret|token|key|cred|auth))",
    re.IGNORECASE,
)
# A digit inside a word ("S3cret", "passw0rd") is how passwords are spelled, not identifiers.
_LEET = re.compile(r"[A-Za-z][0-9]+[a-z]")
_PATH_OR_URL = re.compile(r"^(?:~|\.{1,2})?/|^[A-Za-z]:\\|://")
# A file holding the secret, not the secret: client.key, sa.json, ./creds.env.
_FILE_NAME = re.compile(
    r"^[\w.-]+\.(?:key|pem|crt|cer|der|p12|pfx|jks|keystore|json|ya?ml|toml|env|txt|ini|conf)$",
    re.IGNORECASE,
)
_YAML_TAG = re.compile(r"^![A-Za-z]\w*$")  # password: !vault |
# Where a secret is kept, named by words: secret/db:password, kv/data/prod/api (a Vault path).
_WORDY_PATH = re.compile(r"^[a-z_-]+(?:[/:][a-z_-]+)*/[a-z_-]+(?:[/:][a-z_-]+)*$")
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
    if _WORDY_PATH.match(value):
        return False
    if quoted:
        return True
    if _YAML_TAG.match(value) or _STATUS_WORD.fullmatch(value):
        return False
    if literal:
        return not _CALL_OR_INDEX.search(value)
    return not _is_code_reference(value)


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


def _is_environment_style(match: re.Match[str]) -> bool:
    """`DB_PASSWORD=...`, `POSTGRES_PASSWORD: ...`: a name in capitals, directly followed by
    "=" or ":" (a shell variable, .env line, compose file), whose bare value is a literal."""
    start, text = match.start("key"), match.string
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    name = text[start : match.end("key")]
    separator = match.group("separator")
    return (
        name.isupper() and separator in ("=", ":") and match.start("separator") == match.end("key")
    )


# A "&" ends a value where the next query parameter starts (?user=app&password=x&ssl=true).
_NEXT_PARAMETER = re.compile(r"&(?:&|[\w.-]+=)")


def _assigned_value(match: re.Match[str]) -> _Span | None:
    """The span of a concrete assigned value, or None for placeholders, code and prose."""
    if match.group("quoted") is not None:
        if _EXPRESSION_CONTINUES.match(match.string, match.end()):
            return None
        value, start = match.group("quoted"), match.start("quoted")
        return (start, start + len(value)) if _is_concrete_value(value, quoted=True) else None
    if match.group("annotation"):  # password: str = name: in Python, a bare name is code
        return None
    bare, start = match.group("bare"), match.start("bare")
    following = _NEXT_PARAMETER.search(bare)
    if following:
        bare = bare[: following.start()]
    elif _introduces_prose(match) and not _END_OF_VALUE.match(match.string, match.end()):
        return None
    value = _trim_bare_value(bare)
    literal = _is_environment_style(match)
    if not _is_concrete_value(value, quoted=False, literal=literal):
        return None
    return start, start + len(value)


def _element_value(match: re.Match[str]) -> _Span | None:
    """The text of a credential XML element, unless it is a placeholder such as `${env.X}`."""
    value = match.group("secret")
    return match.span("secret") if _is_concrete_value(value, quoted=True) else None


def _dockerfile_kind(match: re.Match[str]) -> str:
    return (
        "password assignment"
        if _LOGIN_NAME.search(match.group("name"))
        else "secret or token assignment"
    )


def _dockerfile_env(match: re.Match[str]) -> _Span | None:
    name = match.group("name")
    if not (_LOGIN_NAME.search(name) or _CREDENTIAL_NAME.search(name)):
        return None
    value, start = match.group("secret"), match.start("secret")
    quoted = value[:1] in "\"'"
    if quoted:
        value, start = value[1:-1], start + 1
    # a Dockerfile line holds a literal; in a sentence, only what looks like a secret counts
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    whole_line = (
        match.group("end") is not None and not match.string[line_start : match.start()].strip()
    )
    if whole_line:
        concrete = _is_concrete_value(value, quoted=quoted, literal=True)
    else:
        concrete = _is_secret_like(value, quoted=quoted)
    return (start, start + len(value)) if concrete else None


def _password_directive(match: re.Match[str]) -> _Span | None:
    value, start = match.group("secret"), match.start("secret")
    if value.startswith('"'):
        value, start = value[1:-1], start + 1
    return (start, start + len(value)) if _is_concrete_value(value, quoted=True) else None


# --- prose: "the password is hunter2", "the Heroku API key is <uuid>" ---------------------------

# What a sentence may put between a credential's noun and its verb: "password for the NAS",
# "API key of the staging account on Datadog".
_QUALIFIER = r"""
    (?:[ \t]+\([^()\n]{1,40}\))?
    (?:[ \t]+(?:for|of|on|to|at|in|from)[ \t]+(?:(?:the|my|our|your|this|that|a|an)[ \t]+)?
       [\w.@:/-]+(?:[ \t]+[\w.@/-]+){0,5}?)?
"""
_QUOTED_VALUE = r"\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|`[^`\n]{1,100}`|“[^”\n]{1,100}”"
# An unquoted word that may be a password: it holds a digit or a symbol (checked further by
# _is_password_like); a plain word ("stored", "the") fails here, so that the pattern tries the
# sentence's other readings ("the password for the QA account was changed to ...").
_WORD_WITH_DIGIT_OR_SYMBOL = r"(?=[^\s\"'`“]*[0-9!@#$%^&*+=?~|\\<>\[\]{}])[^\s\"'`“]+"
_PROSE_PASSWORD = re.compile(
    rf"""
    (?<![\w-])(?:password|passwd|passphrase|pass[ \t]phrase|pass[ \t]?word|pw|pwd)
    {_QUALIFIER}
    [ \t]*
    (?: (?:(?:has[ \t]+been|was|is|got)[ \t]+)?(?:set|changed|reset|updated|rotated)[ \t]+to
      | (?:is|was|are)(?:[ \t]+(?:now|still|currently|just|simply|always))?[ \t]*:?
      | : | -> | →
    )
    [ \t]*
    (?P<secret>{_QUOTED_VALUE}|{_WORD_WITH_DIGIT_OR_SYMBOL})
    """,
    re.VERBOSE | re.IGNORECASE,
)
# "log in with password hunter2", "use the password S3cret!", "user admin / password S3cret!"
_PASSWORD_WITHOUT_VERB = re.compile(
    rf"(?<![\w-])(?:password|passwd|passphrase)[ \t]+"
    rf"(?P<secret>{_QUOTED_VALUE}|{_WORD_WITH_DIGIT_OR_SYMBOL})",
    re.IGNORECASE,
)
# "the staging login is admin / S3cret!", "credentials: admin:S3cret!"
_LOGIN_PAIR = re.compile(
    r"(?<![\w-])(?:login|credentials?|creds|user[ \t]*/[ \t]*pass(?:word)?)"
    r"(?:[ \t]+(?:for|of|on|to)[ \t]+(?:(?:the|my|our)[ \t]+)?[\w.@-]+(?:[ \t]+[\w.@-]+)?)?"
    r"[ \t]*(?:is|are|:|=|->|→)[ \t]*[\"'`]?[\w.@+-]+(?:[ \t]*/[ \t]*|:)(?P<secret>[^\s\"'`]+)"
    # "user admin, pass S3cret!", "user=report pw=S3cret!"
    r"|(?<![\w-])user(?:name)?[ \t]*[:=]?[ \t]*[\w.@+-]+[ \t]*[,;/]?[ \t]*"
    r"(?:pass|pw|pwd)[ \t]*[:=]?[ \t]+(?P<secret2>[^\s\"'`]+)",
    re.IGNORECASE,
)
# Hashing schemes, encodings, protocols and products that a sentence about passwords names
# ("the password is argon2id-hashed", "stored in 1Password"): never a password.
_TECH_WORD = re.compile(
    r"""^(?:argon2(?:id|i|d)?|pbkdf2|sha-?[0-9]*|md[45]|bcrypt|scrypt|yescrypt|crc-?[0-9]+
    |base(?:32|58|64)(?:url)?|utf-?(?:8|16|32)|ascii|aes-?[0-9]*|rsa-?[0-9]*|ecdsa|ed25519
    |x25519|x\.?509|hmac|tls(?:v?1\.?[0-3])?|ssl|ssh|ipv[46]|https?[23]?|oauth2?|oidc|saml2?
    |ldaps?|kerberos|ntlm(?:v2)?|fido2?|u2f|webauthn|2fa|mfa|totp|hotp|otp|1password|bitwarden
    |lastpass|keepass(?:xc)?|dashlane|vault|k8s|s3|ec2|rfc[0-9]+|iso[0-9]+|soc2?|nist|pci
    |v[0-9]+|python[0-9.]*|node[0-9.]*|java[0-9]*|go[0-9.]+|gpt-?[0-9.]*)
    (?=$|[-_.,;:!?)'/\s])""",
    re.VERBOSE | re.IGNORECASE,
)
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_VERSION_OR_DATE = re.compile(r"^v?[0-9]+(?:[.:/-][0-9]+)+[a-z]?$", re.IGNORECASE)
_NUMBER_AND_UNIT = re.compile(r"^[0-9]+[+-]?[a-z]+s?$")  # 12chars, 16-character, 90days
_ENVIRONMENT_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")  # DB_PASSWORD
_PASSWORD_SYMBOLS = frozenset("!@#$%^&*+=?~|\\<>[]{}")


def _unquote(value: str) -> tuple[str, int, bool]:
    """The value without its quotes, the offset of its text, and whether it was quoted."""
    if len(value) >= 2 and value[0] in "\"'`“" and value[-1] in "\"'`”":
        return value[1:-1], 1, True
    return value, 0, False


def _is_password_like(value: str, *, quoted: bool) -> bool:
    """Whether a word of a sentence is a password rather than prose: quoted, or letters with a
    digit or a symbol inside ("hunter2", "Winter2024!", "P@ss&word"), or six digits or more."""
    if len(value) < 4 or len(value) > 100 or _is_placeholder(value):
        return False
    if _PATH_OR_URL.search(value) or _EMAIL.match(value) or _ENVIRONMENT_NAME.match(value):
        return False
    if quoted:
        return not value.isdigit() or len(value) >= 4
    if " " in value or _TECH_WORD.match(value) or _CALL_OR_INDEX.search(value):
        return False
    if _YAML_TAG.match(value) or _WORDY_PATH.match(value):
        return False
    if _VERSION_OR_DATE.match(value) or _NUMBER_AND_UNIT.match(value) or _FILE_NAME.match(value):
        return False
    if value.isdigit():
        return len(value) >= 6
    core = value.rstrip("!?")  # a sentence's "!" is not a symbol of the password
    if not any(c.isalpha() for c in core):
        return False
    return any(c.isdigit() for c in core) or any(c in _PASSWORD_SYMBOLS for c in core)


def _is_secret_like(value: str, *, quoted: bool) -> bool:
    """A value given to a password or token flag: password-like, or a long random token."""
    if quoted:
        return _is_concrete_value(value, quoted=True) and not _ENVIRONMENT_NAME.match(value)
    if _is_password_like(value, quoted=False):
        return True
    return len(value) >= 16 and _is_token_like(value)


def _prose_password(match: re.Match[str]) -> _Span | None:
    raw, start = match.group("secret"), match.start("secret")
    value, offset, quoted = _unquote(raw)
    if not quoted:
        value = _trim_bare_value(value.rstrip(",;)"))
    if not _is_password_like(value, quoted=quoted):
        return None
    return start + offset, start + offset + len(value)


def _login_pair(match: re.Match[str]) -> _Span | None:
    group = "secret" if match.group("secret") is not None else "secret2"
    value = _trim_bare_value(match.group(group).rstrip(",;)"))
    if not _is_password_like(value, quoted=False):
        return None
    start = match.start(group)
    return start, start + len(value)


# "my PIN is 4821", "the door code for the office is 4417#", "phone passcode: 284619".
_PIN = re.compile(
    r"""
    (?<![\w-])(?:(?-i:PIN)(?:[ \t]+(?:code|number))?|pin[ \t]+code|pass[ \t]?code
      |(?:door|gate|alarm|lock|safe|locker|garage|entry|keypad|unlock|building)[ \t]+code)
    (?:[ \t]+(?:for|of|on|to|at|in)[ \t]+(?:(?:the|my|our)[ \t]+)?[\w.-]+(?:[ \t]+[\w.-]+){0,2})?
    [ \t]*(?:is|was|:|=)(?:[ \t]+(?:now|still))?[ \t]*:?[ \t]*
    (?P<quote>["'`]?)(?P<secret>[0-9]{4,8}\#?)(?P=quote)
    (?![0-9A-Za-z.,:/-][0-9A-Za-z])
    (?![ \t]*(?:digits?|characters?|chars?|numbers?|attempts?|tries|times|minutes?|seconds?|%))
    """,
    re.VERBOSE | re.IGNORECASE,
)

# A credential's noun: "API key", "auth token", "client secret", "TWILIO_AUTH_TOKEN", "token".
_CREDENTIAL_NOUN = r"""
    (?:(?:personal[ _-]access|access|auth(?:entication)?|api|bot|deploy|refresh|session|admin
        |service|write|ingest(?:ion)?|integration|registration|runner|management|app(?:lication)?
        |master|root|bearer|oauth)[ _-]?)?token
    | (?:api|access|secret|private|signing|master|admin|server|service|app(?:lication)?|account
        |auth|encryption|ingest(?:ion)?|write|license|subscription|integration|routing)[ _-]?key
    | (?:client|app(?:lication)?|api|webhook|signing|consumer|shared|oauth|token)[ _-]?secret
    | secret
"""
_PROSE_CREDENTIAL = re.compile(
    rf"""
    (?<![A-Za-z0-9])(?P<noun>{_CREDENTIAL_NOUN})(?![A-Za-z0-9_-])
    {_QUALIFIER}
    [ \t]*(?:(?:is|was)(?:[ \t]+(?:now|still|currently))?[ \t]*:?|[:=]|[-\u2013\u2014(])?[ \t]*
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
    r"gpg|pgp|fingerprint|sha-?[0-9]|md5|hash|digest|checksum|commit", re.IGNORECASE
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
}
_PROVIDER = re.compile(
    r"(?<![A-Za-z0-9])("
    + "|".join(re.escape(name) for name in sorted(_PROVIDERS, key=len, reverse=True))
    + r")(?![a-z0-9])",
    re.IGNORECASE,
)
_NOUN_SPELLING = {"api": "API", "oauth": "OAuth", "app": "app", "pat": "PAT"}
_SENTENCE_END = re.compile(r"[.!?;\n](?:\s|$)")


def _prose_credential_kind(match: re.Match[str]) -> str:
    """ "Twilio auth token", "Heroku API key": the provider the sentence names (before the noun,
    or in its qualifier) and the noun; "secret or token in prose" when it names none."""
    text = match.string
    window = text[max(0, match.start() - 60) : match.start("noun")]
    ends = list(_SENTENCE_END.finditer(window))
    if ends:
        window = window[ends[-1].end() :]
    providers = _PROVIDER.findall(window) or _PROVIDER.findall(
        text[match.end("noun") : match.start("secret")]
    )
    if not providers:
        return "secret or token in prose"
    provider = _PROVIDERS[providers[-1].lower()]
    words = re.split(r"[ _-]+", match.group("noun").lower())
    noun = " ".join(_NOUN_SPELLING.get(word, word) for word in words)
    return f"{provider} {noun}"


def _is_token_like(value: str) -> bool:
    """A long run of mixed letters and digits that is not made of words (a token, not a name)."""
    alphanumeric = re.sub(r"[^A-Za-z0-9]", "", value)
    if len(alphanumeric) < 16:
        return False
    return _has_mixed_classes(alphanumeric) and _word_share(alphanumeric) < _MAX_WORD_SHARE


def _prose_credential(match: re.Match[str]) -> _Span | None:
    """The value after a credential's noun, if it looks like one: a UUID, 24 or more hex
    digits, a long mixed-case token, or a quoted value; not a pagination token or a digest."""
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
    else:
        credential = _is_token_like(value) and not _is_code_reference(value)
    return (start + offset, start + offset + len(value)) if credential else None


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
    if "/" in token:  # a path: only short pieces, or ids (a UUID in an Azure resource id)
        pieces = [piece for piece in token.split("/") if not _HEX_OR_UUID.match(piece)]
        if max(map(len, pieces), default=0) < _MIN_PATH_PIECE:
            return False
    alphanumeric = re.sub(r"[^A-Za-z0-9]", "", token)  # snake_case and kebab-case words joined
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


@functools.lru_cache(maxsize=512)
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


def _is_public_value(match: re.Match[str]) -> bool:
    """A long token that is public by what it is or what the sentence says it is: an SSH public
    key, a Bitcoin address, an IPFS CID, a value in a certificate or public key block, or one
    named a public key, site key, client id or app id."""
    token = match.group()
    if _is_ssh_public_key(token) or _IPFS_CID.match(token) or _is_bitcoin_address(token):
        return True
    text = match.string
    if "-----BEGIN" in text and any(
        block.start() < match.start() < block.end() for block in _PUBLIC_BLOCK.finditer(text)
    ):
        return True
    window = text[max(0, match.start() - 40) : match.start()]
    ends = list(_SENTENCE_END.finditer(window))
    if ends:
        window = window[ends[-1].end() :]
    public = list(_PUBLIC_CONTEXT.finditer(window))
    return bool(public) and not _PRIVATE_CONTEXT.search(window, public[-1].end())


def _high_entropy_kind(match: re.Match[str]) -> str:
    inner, _ = _decoded_text(match.group())
    return inner or "high-entropy token"


def _high_entropy_token(match: re.Match[str]) -> _Span | None:
    """A long random-looking token, unless it is inline data (`data:...;base64,`), a hash
    named by its algorithm (`SHA256:...`) or part of a crypt hash (`$2b$12$...`), public key
    material, or base64 of text holding no secret (a JWT header, a certificate)."""
    before = match.string[max(0, match.start() - 7) : match.start()]
    if before.lower() == "base64," or _HASH_LABEL.search(before) or before.endswith("$"):
        return None
    token = match.group()
    inner, structured = _decoded_text(token)
    if inner:
        return match.span()  # base64 of a private key block, of a Docker config's auth
    if structured or _is_public_value(match):
        return None
    return match.span() if _looks_random(token) else None


# In priority order: where findings overlap, the earlier rule's finding is kept.
_RULES = (
    _Rule("private key block", _PRIVATE_KEY, _unchecked, needs=("private",)),
    _Rule("AWS access key id", _AWS_ACCESS_KEY_ID, needs=("akia", "asia")),
    _Rule("AWS secret access key", _AWS_SECRET_ACCESS_KEY, _secret_group, needs=("secret",)),
    _Rule("GitHub token", _GITHUB_TOKEN, needs=("gh", "github_pat_")),
    _Rule("GitLab token", _GITLAB_TOKEN, needs=("gl", "gr1348941")),
    _Rule("Slack token", _SLACK_TOKEN, needs=("xox", "xapp-")),
    _Rule("Slack webhook URL", _SLACK_WEBHOOK, needs=("hooks.slack.com",)),
    _Rule("Stripe secret key", _STRIPE_KEY, needs=("k_live_", "k_test_")),
    _Rule("Anthropic API key", _ANTHROPIC_KEY, needs=("sk-ant-",)),
    _Rule("OpenAI API key", _OPENAI_KEY, _openai_key, needs=("sk-",)),
    _Rule("Google API key", _GOOGLE_API_KEY, needs=("aiza",)),
    _Rule(_prefixed_kind, _PREFIXED_TOKEN, _prefixed_token),
    _Rule("Telegram bot token", _TELEGRAM_BOT_TOKEN, needs=(":aa",)),
    _Rule("JSON web token", _JWT, _unchecked, needs=("eyj",)),
    _Rule("bearer token", _BEARER_TOKEN, _bearer_token, needs=("bearer",)),
    _Rule(
        "authorization header token", _AUTHORIZATION_TOKEN, _bearer_token, needs=("authorization",)
    ),
    _Rule("basic auth credentials", _BASIC_AUTHORIZATION, _encoded_basic_auth, needs=("basic",)),
    _Rule("basic auth credentials", _ENCODED_AUTH_ENTRY, _encoded_basic_auth, needs=("auth",)),
    _Rule(
        "basic auth credentials",
        _CLIENT_BASIC_AUTH,
        _client_basic_auth,
        needs=("curl", "http", "xh", "wget"),
    ),
    _Rule("basic auth credentials", _PYTHON_BASIC_AUTH, _secret_group, needs=("auth",)),
    _Rule("Azure SAS token", _AZURE_SAS, _secret_group, needs=("sig=",)),
    _Rule("connection string with a password", _URL_WITH_PASSWORD, _url_password, needs=("://",)),
    _Rule(
        _connection_kind,
        _KEY_VALUE_CREDENTIAL,
        _key_value_credential,
        needs=("password", "pwd", "accountkey", "sharedaccess"),
    ),
    _Rule("netrc password", _NETRC, _netrc_password, needs=("password",)),
    _Rule("pgpass password", _PGPASS, _pgpass_password),
    _Rule(
        "password on a command line",
        _MYSQL_PASSWORD,
        _command_password,
        needs=("mysql", "mariadb", "7z", "unrar"),
    ),
    _Rule(
        "password on a command line",
        _PASSWORD_FLAG,
        _command_password,
        needs=(
            "sshpass",
            "mongo",
            "login",
            "sqlcmd",
            "bcp",
            "zip",
            "redis-cli",
            "ldap",
            "cqlsh",
            "cypher-shell",
            "keytool",
        ),
    ),
    _Rule(
        "password on a command line",
        _INLINE_PASSWORD_ARGUMENT,
        _inline_password_argument,
        needs=("pass:", "smbclient"),
    ),
    _Rule("password assignment", _PASSWORD_ASSIGNMENT, _assigned_value, needs=("pass", "pw")),
    _Rule(
        "secret or token assignment",
        _SECRET_ASSIGNMENT,
        _assigned_value,
        needs=("secret", "key", "token"),
    ),
    _Rule("password assignment", _PASSWORD_ELEMENT, _element_value, needs=("pass", "pw")),
    _Rule(
        "secret or token assignment",
        _SECRET_ELEMENT,
        _element_value,
        needs=("secret", "key", "token"),
    ),
    _Rule(_dockerfile_kind, _DOCKERFILE_ENV, _dockerfile_env, needs=("env", "arg")),
    _Rule(
        "password assignment",
        _PASSWORD_DIRECTIVE,
        _password_directive,
        needs=("requirepass", "masterauth"),
    ),
    _Rule("password on a command line", _LONG_PASSWORD_FLAG, _command_password, needs=("--",)),
    _Rule("password in prose", _PROSE_PASSWORD, _prose_password, needs=("pass", "pw")),
    _Rule("password in prose", _LOGIN_PAIR, _login_pair, needs=("login", "cred", "user")),
    _Rule("password in prose", _PASSWORD_WITHOUT_VERB, _prose_password, needs=("pass",)),
    _Rule("PIN or passcode", _PIN, _secret_group, needs=("pin", "code")),
    _Rule(
        _prose_credential_kind,
        _PROSE_CREDENTIAL,
        _prose_credential,
        needs=("token", "key", "secret"),
    ),
    _Rule(_high_entropy_kind, _TOKEN_CANDIDATE, _high_entropy_token),
)


def find_secrets(text: str) -> list[SecretFinding]:
    """Every secret in `text`, ordered by start; empty when the text is safe to store.

    Each finding's span covers the secret value itself (the token, the password of a URL, the
    assigned value, the whole private key block), so `text[start:end]` is what to redact.
    """
    return _find(text, nested=False)


def _find(text: str, *, nested: bool) -> list[SecretFinding]:
    """The findings of every rule; `nested`: in text decoded from a token, where the
    high-entropy rule (which decodes) does not run again."""
    findings: list[SecretFinding] = []
    lowered = text.lower()
    for rule in _RULES[:-1] if nested else _RULES:
        if rule.needs and not any(needed in lowered for needed in rule.needs):
            continue
        for match in rule.pattern.finditer(text):
            span = rule.secret(match)
            if span is None or any(_overlap(span, found) for found in findings):
                continue
            findings.append(SecretFinding(rule.kind_of(match), *span))
    return sorted(findings, key=lambda finding: (finding.start, finding.end))


def _overlap(span: _Span, finding: SecretFinding) -> bool:
    return span[0] < finding.end and finding.start < span[1]
