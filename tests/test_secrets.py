"""The secret detector: real-looking credentials are found, look-alikes in notes are not.

The fake provider tokens are built from a prefix and a random-looking body at run time, so that
this file does not itself look like it leaks credentials to secret scanners. Two corpora in
`tests/data` measure the detector as a whole: `secret_memories.txt` (memories holding a
credential, every one refused) and `benign_memories.txt` (ordinary memories, none refused);
tests/secret_corpus.py reads them, for these tests and for benchmarks/secrets.py.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from emergent_memory.auth.principal import Principal
from emergent_memory.errors import SecretRejected
from emergent_memory.memory import MemoryService
from emergent_memory.memory.capture_text import clean
from emergent_memory.memory.secrets import SecretFinding, describe_secret, find_secrets
from emergent_memory.memory.validation import no_secrets
from tests.secret_corpus import (
    LINE,
    SecretMemory,
    adversarial,
    benign_memories,
    corpus_lines,
    grouped,
    pem,
    secret_memories,
    with_check_digit,
)

ALNUM_36 = "R8mZ2kQ7vX4nL9pT3wY6cB1jH5gF0sD8aE2u"
ALNUM_24 = "Rk8mZ2qX7vL4nT9pW3yC6bJ1"
ALNUM_20 = "Xk9mQ2vR7tL4wB8nY1cH"
BASE64URL_48 = "Rk8mZ2qX7vL4nT9pW3yC6bJ1hG5fD0sA8eU2iO4yP7_aB3dE"
AWS_SECRET = "Zk3pQ9vR2mX7tL0wB5nY8cH1jF4gD6sA/e+Kq3Uv"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


RSA_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nAw8xK9zQm9vZ2xlIGlzIG5vdCBhIHNl"
HEX_32 = "8d3f5a9c2e1b4d6f8a0c3e5b7d9f1a2c"
UUID_VALUE = "6f1c2a4e-8d3b-4f7a-9e21-0b5c7d8a9f10"
SENDGRID_KEY = "SG." + ALNUM_24[:22] + "." + BASE64URL_48[:43]
# a key of the right shape whose parts read as words: before issue 13 no rule refused it
SENDGRID_PLAIN_KEY = (
    "SG." + "abcdefghijABCDEFGHIJ12" + "." + "abcdefghijABCDEFGHIJ1234567890abcdefghijABC"
)
BASE64_44 = "Zk3pQ9vR2mX7tL0wB5nY8cH1jF4gD6sA/e+Kq3UvXk9m"
AZURE_KEY = (AWS_SECRET + BASE64_44)[:86] + "=="
OPENSSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
LOWER_32 = "k3v9xq2m8w7z4t1p6r5s0n8b2c4d6f8h"
TOTP_SEED = "JBSWY3DPEHPK3PXP"
TOTP_GROUPED = "ZDUR I55B HK2I SDFA"
# twelve words of the BIP-39 English list, in no alphabetical order
SEED_PHRASE = "canyon olive badge rocket anchor melody pepper island cotton fossil harbor jelly"


# Fake card numbers, made Luhn-valid at run time (not the documented test numbers).
CARD_VISA = with_check_digit("453914880343" + "646")
CARD_VISA_SPACED = grouped(CARD_VISA, (4, 4, 4, 4))
CARD_VISA_BAD_LUHN = CARD_VISA_SPACED[:-1] + str((int(CARD_VISA_SPACED[-1]) + 1) % 10)
CARD_MASTERCARD_DASHED = grouped(with_check_digit("542523343010" + "991"), (4, 4, 4, 4), "-")
CARD_AMEX_SPACED = grouped(with_check_digit("37144963539" + "842"), (4, 6, 5))


def case(kind: str, text: str, secret: str | None = None, *, name: str) -> object:
    """A text holding a secret of `kind`; `secret` is the value found (all of `text` if None)."""
    return pytest.param(text, kind, text if secret is None else secret, id=name)


POSITIVES = [
    case("AWS access key id", "AKIA" + "Z3MHQX7LR2PVN4TB", name="aws-akia"),
    case(
        "AWS access key id",
        "session key ASIA" + "J7QW2ERT5YUI8OPA expires at noon",
        "ASIA" + "J7QW2ERT5YUI8OPA",
        name="aws-asia-in-prose",
    ),
    case(
        "AWS secret access key",
        "aws_secret_access_key = " + AWS_SECRET,
        AWS_SECRET,
        name="aws-secret-ini",
    ),
    case(
        "AWS secret access key",
        f'export AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"',
        AWS_SECRET,
        name="aws-secret-env",
    ),
    case(
        "AWS secret access key",
        f'{{"SecretAccessKey": "{AWS_SECRET}"}}',
        AWS_SECRET,
        name="aws-secret-json",
    ),
    case("GitHub token", "ghp_" + ALNUM_36, name="github-ghp"),
    case("GitHub token", "gho_" + ALNUM_36, name="github-gho"),
    case("GitHub token", "ghu_" + ALNUM_36, name="github-ghu"),
    case("GitHub token", "ghs_" + ALNUM_36, name="github-ghs"),
    case("GitHub token", "ghr_" + ALNUM_36, name="github-ghr"),
    case(
        "GitHub token",
        "github_pat_" + "11ABCDEFG0" + ALNUM_24 + "_" + BASE64URL_48.replace("_", "x"),
        name="github-fine-grained",
    ),
    case("GitLab token", "glpat-" + ALNUM_20, name="gitlab-pat"),
    case("GitLab token", "glpat-" + ALNUM_24 + ".01.0w1ab2cd3", name="gitlab-pat-routable"),
    case("GitLab token", "gldt-" + ALNUM_20, name="gitlab-deploy"),
    case("GitLab token", "glrt-" + ALNUM_20, name="gitlab-runner"),
    case("GitLab token", "glptt-" + ALNUM_24 + ALNUM_20, name="gitlab-trigger"),
    case("GitLab token", "glcbt-64_" + ALNUM_20, name="gitlab-ci-job"),
    case("GitLab token", "GR1348941" + ALNUM_20, name="gitlab-runner-registration"),
    case("Slack token", "xoxb-" + "2847561039-4817263950148-" + ALNUM_24, name="slack-bot"),
    case("Slack token", "xoxp-" + "2847561039-4817263950148-" + ALNUM_24, name="slack-user"),
    case("Slack token", "xoxa-" + "2-2847561039-" + ALNUM_24, name="slack-app"),
    case("Slack token", "xoxr-" + "2847561039-" + ALNUM_24, name="slack-refresh"),
    case("Slack token", "xoxs-" + "2847561039-" + ALNUM_24, name="slack-session"),
    case(
        "Slack token", "xapp-" + "1-A05EF34GH12-4817263950148-" + ALNUM_36, name="slack-app-level"
    ),
    case("Slack token", "xoxe-" + "1-" + BASE64URL_48.replace("_", "Q"), name="slack-rotating"),
    case(
        "Slack token",
        "xoxe.xoxp-" + "1-" + BASE64URL_48.replace("_", "Q"),
        name="slack-rotating-user",
    ),
    case(
        "Slack webhook URL",
        "https://hooks.slack.com/services/" + "T04AB12CD/B05EF34GH/" + ALNUM_24,
        name="slack-webhook",
    ),
    case(
        "Slack webhook URL",
        "https://hooks.slack.com/workflows/" + "T04AB12CD/A05EF34GH/4817263950/" + ALNUM_24,
        name="slack-workflow-webhook",
    ),
    case("Stripe secret key", "sk_live_" + "51H8x2KJ" + ALNUM_24, name="stripe-live"),
    case("Stripe secret key", "sk_test_" + "51H8x2KJ" + ALNUM_24, name="stripe-test"),
    case("Stripe secret key", "rk_live_" + "51H8x2KJ" + ALNUM_24, name="stripe-restricted"),
    case("Stripe secret key", "rk_test_" + "51H8x2KJ" + ALNUM_24, name="stripe-restricted-test"),
    case("OpenAI API key", "sk-" + ALNUM_24 + "T3BlbkFJ" + ALNUM_20, name="openai-legacy"),
    case("OpenAI API key", "sk-proj-" + BASE64URL_48 + "-" + ALNUM_24, name="openai-project"),
    case("OpenAI API key", "sk-svcacct-" + BASE64URL_48, name="openai-service-account"),
    case("Anthropic API key", "sk-ant-api03-" + BASE64URL_48 + "-" + ALNUM_24, name="anthropic"),
    case("Anthropic API key", "sk-ant-admin01-" + BASE64URL_48, name="anthropic-admin"),
    case("Google API key", "AIza" + "SyD8mZ2qX7vL4nT9pW3yC6bJ1hG5fD0sA8e", name="google-1"),
    case(
        "Google API key",
        "https://maps.googleapis.com/maps/api/geocode/json?key=AIza"
        + "SyB-x2qX7vL4nT9pW3yC_bJ1hG5fD0sA8e1",
        "AIza" + "SyB-x2qX7vL4nT9pW3yC_bJ1hG5fD0sA8e1",
        name="google-in-query",
    ),
    case("JSON web token", JWT, name="jwt"),
    case("JSON web token", f"Authorization: Bearer {JWT}", JWT, name="jwt-bearer"),
    case("private key block", pem("RSA ", RSA_BODY), name="pem-rsa"),
    case("private key block", pem("OPENSSH ", OPENSSH_BODY), name="pem-openssh"),
    case("private key block", pem("EC ", "MHcCAQEEIBkg4LVWM9nuwNSk3yBX6iGfUaL0ybw"), name="pem-ec"),
    case("private key block", pem("DSA ", "MIIBuwIBAAKBgQD3bFz1kq8s"), name="pem-dsa"),
    case("private key block", pem("", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"), name="pem-pkcs8"),
    case(
        "private key block",
        pem("ENCRYPTED ", "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkq"),
        name="pem-encrypted-pkcs8",
    ),
    case(
        "private key block",
        pem(
            "RSA ",
            RSA_BODY,
            headers="Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\n",
        ),
        name="pem-rsa-encrypted-headers",
    ),
    case(
        "private key block",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + OPENSSH_BODY,
        name="pem-truncated-paste",
    ),
    case(
        "private key block",
        pem("PGP ", "lQOYBF8xK9zQm9vZ2xlIGlzIG5vdCBhIHNl", headers="Version: GnuPG v2\n\n").replace(
            "KEY-----", "KEY BLOCK-----"
        ),
        name="pgp-private-key-block",
    ),
    case(
        "connection string with a password",
        "postgres://app:Tr0ub4dor3@db.internal:5432/app",
        "Tr0ub4dor3",
        name="url-postgres",
    ),
    case(
        "connection string with a password",
        "postgresql://app:Tr0ub4dor3@db.internal:5432/app?sslmode=require",
        "Tr0ub4dor3",
        name="url-postgresql",
    ),
    case(
        "connection string with a password",
        "mysql://root:s3cr3tpw@127.0.0.1:3306/shop",
        "s3cr3tpw",
        name="url-mysql",
    ),
    case(
        "connection string with a password",
        "mongodb://admin:N0tS0S3cret@mongo1:27017,mongo2:27017/?replicaSet=rs0",
        "N0tS0S3cret",
        name="url-mongodb",
    ),
    case(
        "connection string with a password",
        "mongodb+srv://svc:Zq8pL2mX@cluster0.ab1cd.mongodb.net/prod",
        "Zq8pL2mX",
        name="url-mongodb-srv",
    ),
    case(
        "connection string with a password",
        "redis://:r3d1sPa55@cache:6379/0",
        "r3d1sPa55",
        name="url-redis-no-user",
    ),
    case(
        "connection string with a password",
        "amqp://worker:Rabb1tPw@mq.internal:5672/vhost",
        "Rabb1tPw",
        name="url-amqp",
    ),
    case(
        "connection string with a password",
        "clone https://deploy:Hx7nQ2pL9v@git.internal.dev/org/repo.git",
        "Hx7nQ2pL9v",
        name="url-https",
    ),
    case(
        "connection string with a password",
        "postgres://u:p@ss@host/db",
        "p@ss",
        name="url-unencoded-at",
    ),
    case("password assignment", "password=hunter2", "hunter2", name="password-bare"),
    case("password assignment", 'DB_PASSWORD: "S3cr3t!x"', "S3cr3t!x", name="password-yaml"),
    case(
        "password assignment",
        "passwd: correcthorsebatterystaple",
        "correcthorsebatterystaple",
        name="passwd-colon",
    ),
    case("password assignment", "pwd=Tr0ub4dor3", "Tr0ub4dor3", name="pwd"),
    case(
        "password assignment",
        "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: s3cr3t-Pw\n",
        "s3cr3t-Pw",
        name="password-compose-file",
    ),
    case(
        "secret or token assignment",
        "# .env\nDEBUG=false\nSTRIPE_WEBHOOK_SECRET=q8Zm2Lx7Vt4N9pW3\n",
        "q8Zm2Lx7Vt4N9pW3",
        name="secret-dotenv",
    ),
    case("password assignment", "PGPASSWORD=hunter2 psql -h db", "hunter2", name="pgpassword"),
    case("password assignment", '{"password": "hunter2"}', "hunter2", name="password-json"),
    case("password assignment", 'password := "hunter2"', "hunter2", name="password-go"),
    case("password assignment", 'password: str = "hunter2"', "hunter2", name="password-annotated"),
    case(
        "password assignment",
        "{user: bob, password: hunter2, host: db}",
        "hunter2",
        name="password-inline-map",
    ),
    case(
        "password assignment",
        "Set password=hunter2. Then restart.",
        "hunter2",
        name="password-sentence",
    ),
    case(
        "password assignment",
        "$conn = ['password' => 'Zx9!kLm2pQ']",
        "Zx9!kLm2pQ",
        name="password-php",
    ),
    case(
        "password assignment",
        "<server><id>nexus</id><password>Zx9kLm2pQ7rt</password></server>",
        "Zx9kLm2pQ7rt",
        name="password-xml-element",
    ),
    case(
        "password assignment",
        "PASSWORD= Zx9kLm2pQ7rt",
        "Zx9kLm2pQ7rt",
        name="password-space-after-equals-at-end",
    ),
    case("secret or token assignment", "api_key='abcd1234efgh'", "abcd1234efgh", name="api-key"),
    case(
        "secret or token assignment",
        "<apiKey>q8Zm2Lx7Vt4N9pW3</apiKey>",
        "q8Zm2Lx7Vt4N9pW3",
        name="api-key-xml-element",
    ),
    case("secret or token assignment", "secret=Zx9!kLm2pQ", "Zx9!kLm2pQ", name="secret"),
    case("secret or token assignment", "token=abc123def456", "abc123def456", name="token"),
    case(
        "secret or token assignment",
        "access_token: 7f3a9c2e1b8d4f6a",
        "7f3a9c2e1b8d4f6a",
        name="access-token",
    ),
    case(
        "secret or token assignment",
        'client_secret = "c8f7e6d5c4b3a2918070"',
        "c8f7e6d5c4b3a2918070",
        name="client-secret",
    ),
    case(
        "secret or token assignment",
        "GET /v1/items?token=q8Zm2Lx7Vt4N&page=2",
        "q8Zm2Lx7Vt4N",
        name="token-in-query",
    ),
    case(
        "bearer token",
        'curl -H "Authorization: Bearer 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e" https://api',
        "9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
        name="bearer",
    ),
    case(
        "high-entropy token",
        "the staging value is Qm9vZ2xlIGlzIG5vdCBhIHNlY3JldCBidXQgdGhpcyBpcw8xK9z",
        "Qm9vZ2xlIGlzIG5vdCBhIHNlY3JldCBidXQgdGhpcyBpcw8xK9z",
        name="entropy-base64",
    ),
    case("high-entropy token", "webhook " + BASE64URL_48, BASE64URL_48, name="entropy-base64url"),
    # --- issue 13: what a tester saved, exactly as reported -----------------------------------
    case("password assignment", "password: Tr0ub4dor&3", "Tr0ub4dor&3", name="tester-colon-amp"),
    case("password assignment", "password: P@ss&word1", "P@ss&word1", name="tester-colon-at"),
    case("password assignment", "DB_PASSWORD=S3cretPass", "S3cretPass", name="tester-db-password"),
    case(
        "password assignment",
        "MYSQL_ROOT_PASSWORD=rootPass123",
        "rootPass123",
        name="tester-mysql-root-password",
    ),
    case(
        "password assignment",
        "PGPASSWORD=dbPass2024 psql -h db.internal",
        "dbPass2024",
        name="tester-pgpassword",
    ),
    case("password assignment", "SMTP_PASS=hunter2", "hunter2", name="tester-smtp-pass"),
    case(
        "SendGrid API key",
        f"SENDGRID_API_KEY={SENDGRID_KEY}",
        SENDGRID_KEY,
        name="tester-sendgrid",
    ),
    case(
        "SendGrid API key",
        f"SENDGRID_API_KEY={SENDGRID_PLAIN_KEY}",
        SENDGRID_PLAIN_KEY,
        name="tester-sendgrid-plain-parts",
    ),
    case("password in prose", "The password is: hunter2", "hunter2", name="tester-prose-is"),
    case(
        "password in prose",
        "My wifi password is sunflower42",
        "sunflower42",
        name="tester-prose-wifi",
    ),
    case(
        "password in prose",
        "The root password for the NAS is Winter2024!",
        "Winter2024!",
        name="tester-prose-for-the-nas",
    ),
    case(
        "basic auth credentials",
        "curl -u admin:S3cretPass https://jenkins.acme.dev/api/json",
        "S3cretPass",
        name="tester-curl-basic-auth",
    ),
    case(
        "Twilio auth token",
        f"Twilio auth token {HEX_32}",
        HEX_32,
        name="tester-twilio-prose",
    ),
    case(
        "Heroku API key",
        f"The Heroku API key is {UUID_VALUE}",
        UUID_VALUE,
        name="tester-heroku-prose",
    ),
    case(
        "password assignment",
        "DB_PASSWORD=example-prod-pw",
        "example-prod-pw",
        name="tester-example-in-value",
    ),
    # --- environment-style names: any prefix before PASSWORD, PASS, PASSWD, PW, SECRET, TOKEN,
    # API_KEY, PRIVATE_KEY, MASTER_KEY ...
    case("password assignment", "REDIS_PASS=r3d1sPa55", "r3d1sPa55", name="env-redis-pass"),
    case("password assignment", "FTP_PASS=Upl0adMe", "Upl0adMe", name="env-ftp-pass"),
    case("password assignment", "DB_PASSWD=hunter22", "hunter22", name="env-passwd"),
    case("password assignment", "DB_PW=hunter22", "hunter22", name="env-pw"),
    case("password assignment", "MYSQL_ROOT_PASSWORD=SuperSecret", "SuperSecret", name="env-word"),
    case(
        "password assignment",
        "POSTGRES_PASSWORD: dbPassword2",
        "dbPassword2",
        name="env-compose-camel-case-value",
    ),
    case("password assignment", "ansible_become_pass=Zx9kLm2pQ", "Zx9kLm2pQ", name="ansible-pass"),
    case("password assignment", "ENV DB_PASSWORD Zx9kLm2pQ7rt", "Zx9kLm2pQ7rt", name="docker-env"),
    case("password assignment", "requirepass Zx9kLm2pQ7rt", "Zx9kLm2pQ7rt", name="redis-conf"),
    case(
        "secret or token assignment",
        "JWT_SECRET=Zx9kLm2pQ7rtVb4N",
        "Zx9kLm2pQ7rtVb4N",
        name="env-jwt-secret",
    ),
    case(
        "secret or token assignment",
        f"SLACK_SIGNING_SECRET={HEX_32}",
        HEX_32,
        name="env-slack-signing-secret",
    ),
    case("secret or token assignment", f"NPM_TOKEN={UUID_VALUE}", UUID_VALUE, name="env-npm-token"),
    case(
        "secret or token assignment",
        f"DATADOG_API_KEY={HEX_32}",
        HEX_32,
        name="env-datadog-api-key",
    ),
    case(
        "secret or token assignment",
        "GITHUB_APP_PRIVATE_KEY=Zx9kLm2pQ7rtVb4N",
        "Zx9kLm2pQ7rtVb4N",
        name="env-private-key",
    ),
    case(
        "secret or token assignment",
        f"RAILS_MASTER_KEY={HEX_32}",
        HEX_32,
        name="env-master-key",
    ),
    # --- connection strings -----------------------------------------------------------------
    case(
        "connection string with a password",
        "Server=tcp:db.acme.dev,1433;Initial Catalog=shop;User ID=app;Password=S3cret!x;",
        "S3cret!x",
        name="ado-net-password",
    ),
    case(
        "connection string with a password",
        "Driver={ODBC Driver 18 for SQL Server};Server=db;UID=erp;PWD=Zx9kLm2pQ;",
        "Zx9kLm2pQ",
        name="odbc-pwd",
    ),
    case(
        "Azure storage account key",
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE_KEY};"
        "EndpointSuffix=core.windows.net",
        AZURE_KEY,
        name="azure-storage-account-key",
    ),
    case(
        "Azure shared access key",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;"
        f"SharedAccessKey={BASE64_44}",
        BASE64_44,
        name="azure-service-bus-key",
    ),
    # --- -p and --password flags ------------------------------------------------------------
    case(
        "password on a command line",
        "mysql -uroot -pS3cretPw shop",
        "S3cretPw",
        name="mysql-attached-p",
    ),
    case(
        "password assignment",
        "mysqldump --password=S3cretPw shop",
        "S3cretPw",
        name="password-flag-equals",
    ),
    case(
        "password on a command line",
        "mongosh --password S3cretPw",
        "S3cretPw",
        name="password-flag-spaced",
    ),
    case(
        "password on a command line",
        "sshpass -p 'S3cret!pw' ssh root@10.0.4.7",
        "S3cret!pw",
        name="sshpass",
    ),
    case(
        "password on a command line",
        "redis-cli -h cache -a r3d1sPa55 PING",
        "r3d1sPa55",
        name="redis-cli-a",
    ),
    case(
        "password on a command line",
        "sqlcmd -S db -U sa -P 'S3cretPw1' -Q 'SELECT 1'",
        "S3cretPw1",
        name="sqlcmd-capital-p",
    ),
    case(
        "password on a command line",
        "openssl pkcs12 -in b.p12 -passin pass:S3cretPw -nodes",
        "S3cretPw",
        name="openssl-passin",
    ),
    case(
        "password on a command line",
        "smbclient //fs/finance -U finance%S3cretPw",
        "S3cretPw",
        name="smbclient-user-percent",
    ),
    # --- credential files ---------------------------------------------------------------------
    case(
        "netrc password",
        f"machine api.heroku.com login alice@acme.dev password {UUID_VALUE}",
        UUID_VALUE,
        name="netrc",
    ),
    case(
        "netrc password",
        "machine git.acme.dev\n  login ci-bot\n  password Zx9kLm2pQ7rt",
        "Zx9kLm2pQ7rt",
        name="netrc-multi-line",
    ),
    case("pgpass password", "db.internal:5432:app:app_user:S3cretPw", "S3cretPw", name="pgpass"),
    case(
        "pgpass password",
        "add *:*:*:backup:S3cretPw to .pgpass",
        "S3cretPw",
        name="pgpass-wildcards",
    ),
    # --- prose --------------------------------------------------------------------------------
    case(
        "password in prose",
        "the password for the shared QA account was changed to Qa2024pw this morning",
        "Qa2024pw",
        name="prose-changed-to",
    ),
    case(
        "password in prose",
        'The VPN password is "correct horse battery staple".',
        "correct horse battery staple",
        name="prose-quoted",
    ),
    case(
        "password in prose",
        "log in with user ops and password P@ssw0rd-7",
        "P@ssw0rd-7",
        name="prose-without-verb",
    ),
    case(
        "password in prose",
        "The staging login is admin / Zx9kLm2pQ",
        "Zx9kLm2pQ",
        name="prose-login-pair",
    ),
    case("PIN or passcode", "My PIN is 4821", "4821", name="pin"),
    case("PIN or passcode", "the phone passcode is 284619.", "284619", name="passcode"),
    case("PIN or passcode", "The door code for the office is 4417#", "4417#", name="door-code"),
    case(
        "Datadog API key",
        f"The Datadog API key for staging is {HEX_32}.",
        HEX_32,
        name="provider-prose-datadog",
    ),
    case(
        "secret or token in prose",
        f"The API key is {HEX_32}, scoped to read-only.",
        HEX_32,
        name="prose-credential-without-provider",
    ),
    # --- provider formats ---------------------------------------------------------------------
    case("npm token", "npm_" + ALNUM_36, name="npm-token"),
    case("PyPI token", "pypi-AgEIcHlwaS5vcmc" + BASE64URL_48 * 2, name="pypi-token"),
    case("Hugging Face token", "hf_" + ALNUM_36[:34], name="hugging-face-token"),
    case("DigitalOcean token", "dop_v1_" + HEX_32 * 2, name="digitalocean-token"),
    case("Shopify access token", "shpat_" + HEX_32, name="shopify-token"),
    case("Mailgun API key", "key-" + HEX_32.replace("a", "x"), name="mailgun-key"),
    case(
        "Discord bot token",
        "MTA4NzY1NDMyMTA5ODc2NTQzMg." + ALNUM_20[:6] + "." + BASE64URL_48[:38],
        name="discord-bot-token",
    ),
    case(
        "Telegram bot token",
        "https://api.telegram.org/bot123456789:AA" + BASE64URL_48[:33] + "/getMe",
        "123456789:AA" + BASE64URL_48[:33],
        name="telegram-bot-token",
    ),
    case("Azure AD client secret", "Xk98Q~" + BASE64URL_48[:34], name="azure-ad-client-secret"),
    case("Google OAuth client secret", "GOCSPX-" + BASE64URL_48[:28], name="google-client-secret"),
    case("Stripe webhook secret", "whsec_" + ALNUM_36[:32], name="stripe-webhook-secret"),
    case(
        "private key block",
        '{"type": "service_account", "private_key": '
        + json.dumps(pem("", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n" + RSA_BODY) + "\n")
        + "}",
        json.dumps(pem("", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n" + RSA_BODY))[1:-1],
        name="gcp-service-account-json",
    ),
    case(
        "private key block",
        "client-key-data: " + base64.b64encode(pem("RSA ", RSA_BODY).encode()).decode(),
        base64.b64encode(pem("RSA ", RSA_BODY).encode()).decode(),
        name="kubeconfig-client-key-data",
    ),
    # --- basic auth and other authorization headers -------------------------------------------
    case(
        "basic auth credentials",
        "Authorization: Basic " + base64.b64encode(b"deploy:S3cretPass").decode(),
        base64.b64encode(b"deploy:S3cretPass").decode(),
        name="basic-authorization-header",
    ),
    case(
        "basic auth credentials",
        '{"auths": {"registry.acme.dev": {"auth": "'
        + base64.b64encode(b"ci:Zx9kLm2pQ7rt").decode()
        + '"}}}',
        base64.b64encode(b"ci:Zx9kLm2pQ7rt").decode(),
        name="docker-config-auth",
    ),
    case(
        "basic auth credentials",
        'requests.get(url, auth=("reporting", "Zx9kLm2pQ7rt"))',
        "Zx9kLm2pQ7rt",
        name="python-auth-tuple",
    ),
    case(
        "authorization header token",
        f"Authorization: Token {HEX_32}",
        HEX_32,
        name="authorization-token-scheme",
    ),
    # --- the held-out check's classes ---------------------------------------------------------
    case(
        "payment card number",
        f"My debit card number is {CARD_MASTERCARD_DASHED}; it is the blue one.",
        CARD_MASTERCARD_DASHED,
        name="card-in-prose-about-a-card",
    ),
    case(
        "2FA recovery code list",
        "GitHub 2FA recovery codes: 4f2a1-9c8e3 7b6d0-e15f4 a93c2-08d7b",
        "4f2a1-9c8e3 7b6d0-e15f4 a93c2-08d7b",
        name="recovery-codes-hex",
    ),
    case(
        "2FA recovery code list",
        "Google backup codes: 8142 0937, 5561 2804, 7730 1198",
        "8142 0937, 5561 2804, 7730 1198",
        name="backup-codes-digits",
    ),
    case(
        "TOTP secret",
        "The 2FA secret key shown during setup was " + TOTP_GROUPED + ".",
        TOTP_GROUPED,
        name="totp-grouped-in-prose",
    ),
    case("TOTP secret", "The TOTP secret is " + TOTP_SEED, TOTP_SEED, name="totp-in-prose"),
    case(
        "TOTP secret",
        f"otpauth://totp/Acme:admin?secret={TOTP_SEED}&issuer=Acme",
        TOTP_SEED,
        name="totp-otpauth-uri",
    ),
    case(
        "TOTP secret",
        "Authenticator setup key: " + TOTP_GROUPED.lower(),
        TOTP_GROUPED.lower(),
        name="totp-lower-case-groups",
    ),
    case(
        "session cookie",
        f"Session cookie for the admin UI: sessionid={LOWER_32}",
        LOWER_32,
        name="django-sessionid",
    ),
    case(
        "session cookie",
        f"Use Cookie: _gh_sess={BASE64URL_48[:43]}; logged_in=yes to reproduce",
        BASE64URL_48[:43],
        name="cookie-header",
    ),
    case(
        "session cookie",
        f"Set-Cookie: _acme_session={ALNUM_36}; Path=/; HttpOnly",
        ALNUM_36,
        name="set-cookie-header",
    ),
    case(
        "session cookie",
        f"JSESSIONID={HEX_32} in the failing request",
        HEX_32,
        name="jsessionid-hex",
    ),
    case(
        "secret or token in prose",
        f"The API token is {LOWER_32}",
        LOWER_32,
        name="prose-lower-case-token",
    ),
    case(
        "wallet seed phrase",
        f"The cold wallet seed phrase is: {SEED_PHRASE}",
        SEED_PHRASE,
        name="seed-phrase",
    ),
    case("wallet seed phrase", f"mnemonic: {SEED_PHRASE}", SEED_PHRASE, name="mnemonic"),
    case(
        "Microsoft Teams webhook URL",
        f"https://acme.webhook.office.com/webhookb2/{UUID_VALUE}@{UUID_VALUE}/IncomingWebhook/"
        f"{HEX_32}/{UUID_VALUE}",
        name="teams-webhook",
    ),
    case(
        "Zapier webhook URL",
        "https://hooks.zapier.com/hooks/catch/1234567/bx7y2z3/",
        name="zapier-webhook",
    ),
    case(
        "Discord webhook URL",
        "https://discord.com/api/webhooks/1189234567890123456/" + BASE64URL_48,
        name="discord-webhook",
    ),
    case(
        "webhook URL",
        f"Mattermost hook https://chat.acme.io/hooks/{LOWER_32[:26]}",
        f"https://chat.acme.io/hooks/{LOWER_32[:26]}",
        name="generic-webhook",
    ),
    case(
        "Asana personal access token",
        f"Asana personal access token is 2/4698748272344511/{HEX_32}",
        f"2/4698748272344511/{HEX_32}",
        name="asana-token",
    ),
    case("password assignment", "pw = J3nk1ns_2023!", "J3nk1ns_2023!", name="pw-spaced"),
    case(
        "password assignment",
        "pw for jenkins admin = J3nk1ns_2023!",
        "J3nk1ns_2023!",
        name="password-for-x-equals",
    ),
    case("password assignment", "with bindpw S3rv1ce!Ld4p", "S3rv1ce!Ld4p", name="bindpw"),
    case(
        "password assignment",
        "ldap_default_authtok = S3rv1ce!Ld4p",
        "S3rv1ce!Ld4p",
        name="sssd-authtok",
    ),
    case("password assignment", "psk=moosetracks1987", "moosetracks1987", name="wifi-psk"),
    case(
        "secret or token assignment",
        f"secret_key_base: {HEX_32 * 4}",
        HEX_32 * 4,
        name="rails-secret-key-base",
    ),
    case(
        "secret or token in prose",
        f"The HMAC-SHA256 signing key is {HEX_32 * 2}",
        HEX_32 * 2,
        name="hmac-key-in-prose",
    ),
    case(
        "password assignment",
        "define('DB_PASSWORD', 'Wp!9xKq2mLz');",
        "Wp!9xKq2mLz",
        name="php-define",
    ),
    case("password assignment", 'setPassword("Wp!9xKq2mLz")', "Wp!9xKq2mLz", name="setter"),
    case(
        "password assignment",
        "config.set('password', 'Wp!9xKq2mLz')",
        "Wp!9xKq2mLz",
        name="config-set",
    ),
    case(
        "password in prose",
        'Password for the shared vault "Ops" is correct-horse-77.',
        "correct-horse-77",
        name="prose-quoted-name",
    ),
    case(
        "password in prose",
        "Ansible vault password file contains: v4ult-Pa55-Ops!2024",
        "v4ult-Pa55-Ops!2024",
        name="prose-verb-contains",
    ),
    case(
        "password in prose",
        "The htaccess basic auth for staging is staging / Stg-Preview-553",
        "Stg-Preview-553",
        name="prose-basic-auth",
    ),
    case("password in prose", "The Wi-Fi key is moosetracks1987", "moosetracks1987", name="wifi"),
    case("password in prose", "my password is letmein", "letmein", name="prose-plain-word"),
    case(
        "password in prose",
        "The guest wifi password is sunflower.",
        "sunflower",
        name="prose-plain-word-2",
    ),
    case(
        "password assignment",
        "database.yml sets password: Pr0d-Db!x7Qm2 under the primary key",
        "Pr0d-Db!x7Qm2",
        name="yaml-key-in-a-sentence",
    ),
    case(
        "Keycloak client secret",
        f"Keycloak client secret for the grafana client: {ALNUM_36}",
        ALNUM_36,
        name="provider-next-to-the-noun",
    ),
    case(
        "secret or token in prose",
        f"Some client secret for the grafana client: {ALNUM_36}",
        ALNUM_36,
        name="provider-only-a-modifier",
    ),
    case(
        "Datadog API key",
        f"The API key for Datadog is {HEX_32}",
        HEX_32,
        name="provider-ends-the-qualifier",
    ),
    # --- review: credentials that were not refused --------------------------------------------
    case(
        "payment card number",
        f"{CARD_VISA_SPACED} 09/27",
        CARD_VISA_SPACED,
        name="card-with-expiry-right-after-and-no-card-word",
    ),
    case(
        "password in a SQL statement",
        "CREATE USER report IDENTIFIED BY 'Rp0rt!2024';",
        "Rp0rt!2024",
        name="sql-identified-by",
    ),
    case(
        "password in a SQL statement",
        "GRANT ALL ON *.* TO 'app'@'%' IDENTIFIED BY 'Zq8pL2mXv';",
        "Zq8pL2mXv",
        name="sql-grant-identified-by",
    ),
    case(
        "password in a SQL statement",
        "ALTER USER app IDENTIFIED WITH mysql_native_password BY 'Zq8pL2mXv';",
        "Zq8pL2mXv",
        name="sql-identified-with-plugin-by",
    ),
    case(
        "password on a command line",
        "htpasswd -b .htpasswd admin Adm1nPw!",
        "Adm1nPw!",
        name="htpasswd-batch",
    ),
    case(
        "password on a command line", "htpasswd -nb admin Adm1nPw!", "Adm1nPw!", name="htpasswd-n"
    ),
    case(
        "password on a command line",
        "net user administrator Adm1n!2024 /add",
        "Adm1n!2024",
        name="net-user",
    ),
    case(
        "password on a command line",
        "az login --service-principal -u 1234 -p Xk9mQ2vR7tL4wB8nY1 --tenant t",
        "Xk9mQ2vR7tL4wB8nY1",
        name="az-login",
    ),
    case(
        "password on a command line",
        "mosquitto_pub -u iot -P Xk9mQ2vR7 -t test -m hi",
        "Xk9mQ2vR7",
        name="mosquitto-pub",
    ),
    case(
        "password on a command line",
        "echo 'Xk9mQ2vR7' | sudo -S apt update",
        "Xk9mQ2vR7",
        name="echo-into-sudo",
    ),
    case(
        "password on a command line",
        "echo 'deploy:Xk9mQ2vR7' | chpasswd",
        "Xk9mQ2vR7",
        name="echo-into-chpasswd",
    ),
    case(
        "connection string with a password",
        "HTTPS_PROXY=proxyuser:Pr0xyPw1@proxy.acme.dev:3128",
        "Pr0xyPw1",
        name="proxy-login-without-scheme",
    ),
    case(
        "connection string with a password",
        "admin:Zq8pL2mXv@ftp.acme.dev",
        "Zq8pL2mXv",
        name="login-at-host-without-scheme",
    ),
    case(
        "password assignment",
        "login: admin  pass: Adm1n!2024",
        "Adm1n!2024",
        name="pass-key-in-lower-case",
    ),
    case("password assignment", "pass: Xk9mQ2vR7!", "Xk9mQ2vR7!", name="pass-key-alone"),
    case("password assignment", "user=admin;pass=Xk9mQ2vR7!", "Xk9mQ2vR7!", name="pass-key-pair"),
    case(
        "password assignment",
        "rclone config: pass = Xk9mQ2vR7tL4",
        "Xk9mQ2vR7tL4",
        name="pass-key-spaced",
    ),
    case(
        "bearer token",
        "Bearer: Xk9mQ2vR7tL4wB8nY1cH3jF5gD6sA",
        "Xk9mQ2vR7tL4wB8nY1cH3jF5gD6sA",
        name="bearer-colon",
    ),
    case("password in prose", "Password - Xk9mQ2vR7!", "Xk9mQ2vR7!", name="prose-dash"),
    case("password in prose", "the password? Xk9mQ2vR7!", "Xk9mQ2vR7!", name="prose-question"),
    case(
        "password in prose",
        "Wi-Fi: AcmeGuest / Welcome2Acme!",
        "Welcome2Acme!",
        name="wifi-network-and-password",
    ),
    case(
        "password in prose",
        "wifi password: Sunflower Meadow 42",
        "Sunflower Meadow 42",
        name="wifi-passphrase-of-words",
    ),
    case(
        "password in prose",
        "Use admin/Tr0ub4dor&3 to log in",
        "Tr0ub4dor&3",
        name="user-slash-password-to-log-in",
    ),
    case(
        "password in prose",
        "log in as root with Tr0ub4dor&3",
        "Tr0ub4dor&3",
        name="log-in-as-user-with",
    ),
    case("password in prose", "creds admin Tr0ub4dor&3", "Tr0ub4dor&3", name="creds-user-password"),
    case(
        "app password",
        "my gmail app password is xmqz kbtw plrf vwhd",
        "xmqz kbtw plrf vwhd",
        name="google-app-password",
    ),
    case(
        "app password",
        "Apple app-specific password for altool: hqzt-vwkp-rmxd-bcfy",
        "hqzt-vwkp-rmxd-bcfy",
        name="apple-app-specific-password",
    ),
    case(
        "BitLocker recovery key",
        "BitLocker recovery key: 482913-557204-118866-302511-649374-221958-707161-539012",
        "482913-557204-118866-302511-649374-221958-707161-539012",
        name="bitlocker-recovery-key",
    ),
    case("PIN or passcode", "my bank pin is 4821", "4821", name="pin-lower-case"),
    case("PIN or passcode", "pin: 4821", "4821", name="pin-colon"),
    case("PIN or passcode", "card pin: 4821", "4821", name="card-pin"),
    case("PIN or passcode", "PIN code 4821", "4821", name="pin-code-without-verb"),
    case("PIN or passcode", "PIN 4821 for the corporate card", "4821", name="pin-without-verb"),
    case("password in prose", "My password is crystal", "crystal", name="plain-word-ending-al"),
    case("password in prose", "My password is magic", "magic", name="plain-word-ending-ic"),
    case(
        "password in prose",
        "The guest wifi password is elephant",
        "elephant",
        name="plain-word-ending-ant",
    ),
    case("password in prose", "Passwort ist Geheim123!", "Geheim123!", name="german"),
    case("password in prose", "le mot de passe est Soleil2024!", "Soleil2024!", name="french"),
    case("password assignment", "contraseña: Gato2024!", "Gato2024!", name="spanish"),
    case(
        "password assignment",
        "docker run -e POSTGRES_PASSWORD=postgres -d postgres:16",
        "postgres",
        name="vendor-default-not-said-to-be-one",
    ),
    case(
        "Power Automate webhook URL",
        f"https://prod-27.westeurope.logic.azure.com:443/workflows/{HEX_32}/triggers/manual/paths"
        f"/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={ALNUM_36}",
        name="power-automate-webhook",
    ),
    case(
        "private key block",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + OPENSSH_BODY + "\n" + OPENSSH_BODY[::-1],
        name="pem-truncated-paste-of-several-lines",
    ),
    # --- one case for each guard that lets a value through (each fails with the guard off) ----
    case(
        "password assignment",
        "password: Passw0rd_2024",
        "Passw0rd_2024",
        name="leet-digits-make-a-name-a-password",
    ),
    case(
        "password in prose",
        "The password is P@ss&Word",
        "P@ss&Word",
        name="symbols-without-digits",
    ),
    case(
        "secret or token assignment",
        "ENV API_TOKEN Zx9kLm2pQ7rtVb4N",
        "Zx9kLm2pQ7rtVb4N",
        name="dockerfile-env-credential-name",
    ),
    case(
        "secret or token in prose",
        f"The Heroku app. API key is {UUID_VALUE}",
        UUID_VALUE,
        name="provider-of-another-sentence",
    ),
    case(
        "high-entropy token",
        f"Beside the public key, the private one: {BASE64_44}",
        BASE64_44,
        name="private-after-public-in-the-sentence",
    ),
    # --- issue 26: login pairs without the word "password", US SSNs and ITINs, card codes ---
    case("password in prose", "The NAS: admin / Winter2024!", "Winter2024!", name="bare-pair"),
    case("password in prose", "try root:Toor#123 on it", "Toor#123", name="bare-pair-colon"),
    case(
        "password in prose", "jdoe / Vend0r#Portal8 for the portal", "Vend0r#Portal8", name="pair"
    ),
    case("password in prose", "login: admin  pw Winter2024!", "Winter2024!", name="login-pw"),
    case("password in prose", "utilisateur admin, mdp Soleil#2024", "Soleil#2024", name="mdp"),
    case("password in prose", "inloggegevens: beheer / Zomer#24", "Zomer#24", name="dutch-pair"),
    case(
        "password in prose",
        "the login is editor and the pass is Edit0r!Cms",
        "Edit0r!Cms",
        name="the-pass-is",
    ),
    case("US social security number", "My SSN is 317-77-0641.", "317-77-0641", name="ssn"),
    case("US social security number", "SSN: 317 77 0641", "317 77 0641", name="ssn-spaced"),
    case("US social security number", '"ssn": "317770641"', "317770641", name="ssn-json"),
    case(
        "US social security number",
        "Die US-Sozialversicherungsnummer von John ist 317770641.",
        "317770641",
        name="ssn-german",
    ),
    case("US ITIN", "Her ITIN is 912-70-1234, for the W-7.", "912-70-1234", name="itin"),
    case("card security code", "CVV 737", "737", name="cvv-alone"),
    case("card security code", "the card's security code is 737", "737", name="security-code"),
    case("card security code", "Amex CID 4417", "4417", name="cid-with-a-card"),
    case("card security code", "cryptogramme visuel : 737", "737", name="cvv-french"),
    case("card security code", '{"cvv": "737"}', "737", name="cvv-json"),
    case("PIN or passcode", "the alarm security code is 4821", "4821", name="security-code-pin"),
    # --- issue 26, second round: the classes behind the held-out set's misses ---
    case("password in prose", "utente mrossi e chiave Fiume#2207", "Fiume#2207", name="it-pair"),
    case("password in prose", "账号：ops_cn 密码：Huang@5531", "Huang@5531", name="zh-pair"),
    case(
        "password in prose",
        "the login for the router page is admin, pass is Maple#4410",
        "Maple#4410",
        name="pair-after-a-qualifier",
    ),
    case("password in prose", "ssh as root and kestrel7 for now", "kestrel7", name="root-and"),
    case(
        "password in prose", "rkoch / Eichhorn#42 ist mein Zugang", "Eichhorn#42", name="pair-hash"
    ),
    case("US social security number", "tax_id=317-77-0641 failed", "317-77-0641", name="tax-id"),
    case(
        "US social security number",
        "SSN 317\u201377\u20130641",
        "317\u201377\u20130641",
        name="en-dash",
    ),
    case("US social security number", "my wife's: 528-09-2071", "528-09-2071", name="ssn-2071"),
    case(
        "US social security number",
        "le SSN de Mme Roux est 317770641",
        "317770641",
        name="ssn-qualified-french",
    ),
    case("card security code", "il codice CVV della mia carta è 412", "412", name="cvv-it"),
    case("card security code", "CVC-koden är 412", "412", name="cvc-koden"),
    case("card security code", "卡的安全码是 412", "412", name="cvv-zh"),
    case(
        "card security code",
        "the 4 digits on the front of the amex are 4417",
        "4417",
        name="amex-front-code",
    ),
]


@pytest.mark.parametrize(("text", "kind", "secret"), POSITIVES)
def test_a_secret_is_found_with_its_kind_and_span(text: str, kind: str, secret: str) -> None:
    findings = find_secrets(text)
    assert [finding.kind for finding in findings] == [kind]
    finding = findings[0]
    assert text[finding.start : finding.end] == secret


@pytest.mark.parametrize(("text", "kind", "secret"), POSITIVES)
def test_the_description_names_the_kind_but_never_the_secret(
    text: str, kind: str, secret: str
) -> None:
    (finding,) = find_secrets(text)
    description = describe_secret(finding)
    assert kind in description
    assert secret not in description
    assert text[finding.start : finding.end] not in description


NEGATIVES = [
    pytest.param("550e8400-e29b-41d4-a716-446655440000", id="uuid"),
    pytest.param("550E8400-E29B-41D4-A716-446655440000", id="uuid-upper"),
    pytest.param("object 3f2504e0-4f89-11d3-9a0c-0305e82c3301 was updated", id="uuid-in-prose"),
    pytest.param("3f9a2b1c4d5e6f708192a3b4c5d6e7f809a1b2c3", id="git-sha"),
    pytest.param("fixed in commit 3f9a2b1c4d5e6f708192a3b4c5d6e7f809a1b2c3", id="git-sha-prose"),
    pytest.param("fixed in commit 3f9a2b1c, see PR #4471", id="git-short-sha"),
    pytest.param("reverted 3f9a2b1c4d5e in main", id="git-12-char-sha"),
    pytest.param(
        "the checksum is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        id="sha256",
    ),
    pytest.param("md5 d41d8cd98f00b204e9800998ecf8427e", id="md5"),
    pytest.param(
        "host key SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8", id="ssh-fingerprint"
    ),
    pytest.param("h1:Hc8Nv8hLu5C1p+6ZfN3jGkCVUjQ1ziA0cJx/Ir8tBoc=", id="go-sum-hash"),
    pytest.param(
        "docker pull ghcr.io/org/app@sha256:"
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        id="image-digest",
    ),
    pytest.param("the password policy requires 12 characters", id="password-policy"),
    pytest.param("Use the PASSWORD environment variable", id="password-env-var"),
    pytest.param("The password must contain 1 digit: enforced by the validator", id="pw-rule"),
    pytest.param("Password reset tokens expire after 24h", id="reset-tokens"),
    pytest.param("password: <redacted>", id="redacted"),
    pytest.param("password=***", id="stars"),
    pytest.param("token=${GITHUB_TOKEN}", id="env-var-braces"),
    pytest.param("password=$DB_PASSWORD", id="env-var"),
    pytest.param("token: ${{ secrets.GITHUB_TOKEN }}", id="github-actions-secret"),
    pytest.param("api_key=YOUR_API_KEY", id="your-api-key"),
    pytest.param("password=your_password", id="your-password"),
    pytest.param("token=insert_token_here", id="token-here"),
    pytest.param("password=changeme", id="changeme"),
    pytest.param("password: example", id="example"),
    pytest.param("api_key=xxx", id="xxx"),
    pytest.param('password="<password>"', id="angle-brackets"),
    pytest.param("password=<your password> in the config", id="angle-brackets-spaces"),
    pytest.param("token=[paste the token here]", id="square-brackets-spaces"),
    pytest.param("password=...", id="ellipsis"),
    pytest.param("password=test", id="test-word"),
    pytest.param('token="test-token"', id="test-token"),
    pytest.param("api_key=fake_api_key", id="fake-api-key"),
    pytest.param("PASSWORD= with an empty value", id="empty-then-prose"),
    pytest.param("the secret= option is deprecated", id="option-name-in-prose"),
    pytest.param("<password>${env.NEXUS_PASSWORD}</password>", id="xml-element-placeholder"),
    pytest.param("<passwordHash>abc123456</passwordHash>", id="xml-element-other-name"),
    pytest.param("secret: [REDACTED]", id="square-brackets"),
    pytest.param('password = ""', id="empty-quoted"),
    pytest.param("password=", id="empty"),
    pytest.param("password = None", id="none"),
    pytest.param("password: !vault |", id="ansible-vault"),
    pytest.param("connect(password=password)", id="kwarg-same-name"),
    pytest.param("client = Client(api_key=api_key)", id="kwarg-api-key"),
    pytest.param('password = os.environ["DB_PASSWORD"]', id="environ"),
    pytest.param("password = get_password()", id="call"),
    pytest.param("api_key=settings.api_key", id="attribute"),
    pytest.param("password: str", id="annotation"),
    pytest.param("password: str | None = None", id="annotation-default"),
    pytest.param("secret: Callable[[str], bool] = check_secret", id="annotation-name"),
    pytest.param('token = "ghp_" + suffix', id="string-concatenation"),
    pytest.param('secret_key = "{}".format(key)', id="string-format"),
    pytest.param("password: see the vault", id="colon-prose"),
    pytest.param("Secret: keep it out of logs", id="colon-prose-2"),
    pytest.param("token: expires after 1h", id="colon-prose-3"),
    pytest.param("A bearer token: long, with letters and digits", id="colon-prose-comma"),
    pytest.param("Token: revoked", id="status-word"),
    pytest.param("max_tokens=4096", id="max-tokens"),
    pytest.param("password_hash = bcrypt(password)", id="password-hash"),
    pytest.param('if password == "":', id="comparison"),
    pytest.param("pwd: /home/alice/projects", id="pwd-path"),
    pytest.param("secretName: db-credentials", id="k8s-secret-name"),
    pytest.param("token_type: Bearer", id="token-type"),
    pytest.param("Bearer token authentication is used", id="bearer-prose"),
    pytest.param("Authorization: Bearer <token>", id="bearer-placeholder"),
    pytest.param("The key file starts with -----BEGIN RSA PRIVATE KEY-----", id="pem-header-only"),
    pytest.param("YWJj is base64 for abc, and aGVsbG8gd29ybGQ= is hello world", id="base64-prose"),
    pytest.param("Internationalization and localization are hard", id="long-words"),
    pytest.param("/usr/local/lib/python3.11/site-packages", id="unix-path"),
    pytest.param("/Users/JohnSmith/Projects2024/MyApp/src/components/UserProfile.tsx", id="path"),
    pytest.param(r"C:\Users\JohnSmith\AppData\Local\Programs\Python\Python311", id="windows-path"),
    pytest.param("https://user@github.com/org/repo", id="url-user-only"),
    pytest.param("postgresql://localhost:5432/db", id="url-no-credentials"),
    pytest.param("postgresql://user:@localhost:5432/db", id="url-empty-password"),
    pytest.param("postgresql://user:***@localhost:5432/db", id="url-stars"),
    pytest.param("postgresql://user:<password>@localhost:5432/db", id="url-angle"),
    pytest.param("postgresql://user:${DB_PASSWORD}@localhost:5432/db", id="url-env-braces"),
    pytest.param("postgresql://user:$DB_PASSWORD@localhost:5432/db", id="url-env"),
    pytest.param("mysql://root:password@localhost/app", id="url-password-word"),
    pytest.param("redis://:pass@localhost:6379", id="url-pass-word"),
    pytest.param("amqp://guest:xxx@rabbit:5672", id="url-xxx"),
    pytest.param('url = f"postgresql://{user}:{password}@{host}/{db}"', id="url-template"),
    pytest.param(
        "https://github.com/emergent/memory/blob/main/emergent_memory/memory/secrets.py",
        id="url-plain",
    ),
    pytest.param("AbstractSingletonProxyFactoryBeanConfigurationManager", id="camel-case"),
    pytest.param("useEffectHook2ForFetchingUserDataFromGraphQLApi", id="camel-case-digit"),
    pytest.param("test_user_can_login_with_OAuth2_and_MFA_enabled_v3", id="snake-case"),
    pytest.param("feature/JIRA-1234-add-user-login-flow-for-admins", id="branch-name"),
    pytest.param("@typescript-eslint/eslint-plugin", id="npm-scoped-package"),
    pytest.param("npm install left-pad lodash.debounce @babel/plugin-transform-runtime", id="npm"),
    pytest.param("1.2.3-beta.4+build.5678", id="semver"),
    pytest.param("upgraded from v10.24.1 to 2.13.0", id="versions"),
    pytest.param("2024-05-01T12:34:56.789Z", id="iso-timestamp"),
    pytest.param("deployed at 2024-05-01T12:34:56+02:00", id="iso-timestamp-offset"),
    pytest.param("The API runs on port 8080", id="port"),
    pytest.param("ERR_4471", id="error-code"),
    pytest.param("E11000 duplicate key error collection", id="mongo-error-code"),
    pytest.param(
        '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+5ZOANnVvZE5VM0iIAlz'
        'NoeZdi3vTnu2ox4nCJA=="',
        id="lockfile-integrity",
    ),
    pytest.param("pk_live_" + "51H8x2KJ" + ALNUM_24, id="stripe-publishable-key"),
    pytest.param("ghp_" + "x" * 36, id="github-token-placeholder"),
    pytest.param("AKIA" + "IOSFODNN7EXAMPLE", id="aws-documentation-example"),
    pytest.param("sk-my-feature-branch-for-the-login-page", id="sk-branch-name"),
    pytest.param(
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        id="data-url",
    ),
    # --- issue 13: look-alikes of the new classes ---------------------------------------------
    pytest.param("The password is stored in 1Password under 'NAS'", id="prose-stored-in"),
    pytest.param("password: see the team vault", id="prose-see-the-vault"),
    pytest.param("SMTP_PASS is injected by the deployment", id="env-name-in-prose"),
    pytest.param("the API key header is X-Api-Key", id="api-key-header-name"),
    pytest.param("DB_PASSWORD is read from the vault at startup", id="env-name-read-from"),
    pytest.param(
        "export PGPASSWORD=$(vault read -field=password secret/db/prod)", id="env-from-command"
    ),
    pytest.param(f"The tenant id is {UUID_VALUE}.", id="tenant-id-uuid"),
    pytest.param(f"The Heroku app id is {UUID_VALUE}", id="heroku-app-id"),
    pytest.param(f"The request token {UUID_VALUE} was rejected", id="request-token-id"),
    pytest.param(f"The API key id is {UUID_VALUE}", id="api-key-id"),
    pytest.param("The password is hashed with argon2id before it is stored", id="prose-hashed"),
    pytest.param("The password is 16+ characters for service accounts", id="prose-length"),
    pytest.param("The password is 2FA-protected", id="prose-tech-word"),
    pytest.param("Passwords must be 12 characters; rotate the DB password quarterly", id="policy"),
    pytest.param("The password reset flow emails a link", id="reset-flow"),
    pytest.param("The SIM PIN is 4 digits", id="pin-length"),
    pytest.param("Connect the LED to GPIO pin 17", id="gpio-pin"),
    pytest.param("The exit code is 137", id="exit-code"),
    pytest.param("mysql -u root -p shop", id="mysql-prompt"),
    pytest.param("mkdir -p /var/lib/acme/data", id="mkdir-p"),
    pytest.param("docker run -u 1000:1000 -p 8080:8080 acme/api", id="docker-user-group"),
    pytest.param("docker login -u ci --password-stdin ghcr.io", id="password-stdin"),
    pytest.param('curl -u "$API_USER:$API_PASSWORD" https://api.acme.dev', id="curl-env-vars"),
    pytest.param("redis-cli -h cache -p 6379 PING", id="redis-cli-port"),
    pytest.param("Use --password-file ~/.config/acme/pw", id="password-file-flag"),
    pytest.param("The .pgpass format is hostname:port:database:username:password", id="pgpass-doc"),
    pytest.param("machine <host> login <user> password <token>", id="netrc-doc"),
    pytest.param(
        "DefaultEndpointsProtocol=https;AccountName=<name>;AccountKey=<key from the portal>;",
        id="azure-template",
    ),
    pytest.param("Server=db;User Id=app;Password=${SQL_PASSWORD};", id="ado-net-env"),
    pytest.param("The Twilio account SID is an identifier; the auth token is secret", id="twilio"),
    pytest.param("The password is `DB_PASSWORD` in the compose file", id="prose-env-name"),
    pytest.param("AKIA" + "I44QH8DHBEXAMPLE", id="aws-documentation-example-2"),
    pytest.param(
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
        id="aws-documentation-secret",
    ),
    pytest.param(
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqL8n7k2Zr0vT9yXw4bC1dE6fH3jK5mN8pQ2sU7xV0a ci@acme",
        id="ssh-public-key",
    ),
    pytest.param(
        "-----BEGIN CERTIFICATE----- MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYD"
        "VQQGEwJJRTESMBAGA1UEChMJQmFsdGltb3Jl -----END CERTIFICATE-----",
        id="certificate",
    ),
    pytest.param(
        "the JWT header eyJhbGciOiJSUzI1NiIsImtpZCI6IjIwMjQtMDUifQ decodes to JSON",
        id="base64-of-json",
    ),
    pytest.param("The public key is xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=", id="public-key"),
    # --- the held-out check's classes: look-alikes ------------------------------------------
    pytest.param("the card ends in 4821", id="card-last-four"),
    pytest.param("order number 1234 5678 9012 3456 is not a card", id="card-order-number"),
    pytest.param(f"Order {CARD_VISA_SPACED} shipped with the card reader", id="card-order-luhn"),
    pytest.param(f"The card form rejects {CARD_VISA_BAD_LUHN}: it fails Luhn", id="card-bad-luhn"),
    pytest.param(f"Saved {CARD_VISA} as the reference", id="card-number-without-card-words"),
    pytest.param(
        "The Stripe test card 4242 4242 4242 4242 with any future expiry works",
        id="card-documented-test-number",
    ),
    pytest.param("call me on 0161 496 0000", id="phone-number"),
    pytest.param("ISBN 978-0-13-468599-1", id="isbn"),
    pytest.param("Our IBAN is DE89 3704 0044 0532 0130 00 for invoices", id="iban"),
    pytest.param("IMEI of the test phone is 356938035643809 (card slot 2)", id="imei"),
    pytest.param("USPS tracking 9400 1000 0000 0000 0000 00 for the card", id="tracking"),
    pytest.param("The Discord server id is 1189234567890123456", id="long-numeric-id"),
    pytest.param("The 2FA recovery codes are printed and kept in the fire safe", id="codes-prose"),
    pytest.param("Recovery codes are 10 characters long, 16 of them", id="codes-length"),
    pytest.param("The TOTP secret is stored encrypted in the users table", id="totp-prose"),
    pytest.param("The 2FA key is: done with this task", id="totp-words-of-four"),
    pytest.param(
        "The seed phrase is written on a steel plate and kept in the safe deposit box at the bank",
        id="seed-phrase-prose",
    ),
    pytest.param("Seed phrases are 12 or 24 words from the BIP-39 list", id="seed-phrase-doc"),
    pytest.param(
        "The session cookie is named __Host-session and is HttpOnly, Secure, SameSite=Lax",
        id="session-cookie-prose",
    ),
    pytest.param("Cookie: theme=dark; lang=en-GB; _ga=GA1.2.1234567890.1700000000", id="cookies"),
    pytest.param("The redirect adds ?session_id={CHECKOUT_SESSION_ID}", id="session-template"),
    pytest.param("The Mapbox style is mapbox://styles/acme/clx9k2m4p00ab01qw", id="cuid-in-url"),
    pytest.param("Name the API token deploybot20240501", id="token-name-with-date"),
    pytest.param("Webhook receiver endpoint: https://api.acme.io/hooks/github", id="hook-path"),
    pytest.param("https://github.com/acme/orders/settings/hooks/412345678", id="hook-settings"),
    pytest.param("https://hooks.zapier.com/hooks/catch/<account>/<hook>/", id="zapier-template"),
    pytest.param("https://app.asana.com/0/1204567890123456/1204567890123457", id="asana-url"),
    pytest.param("ldap_default_authtok_type = password", id="authtok-type"),
    pytest.param("Set bindpw in nslcd.conf from the vault, never inline", id="bindpw-prose"),
    pytest.param("The HMAC key is rotated quarterly", id="hmac-prose"),
    pytest.param("define('DB_PASSWORD', getenv('DB_PASSWORD'));", id="define-from-env"),
    pytest.param('t("login.password", "Enter your password")', id="i18n-label"),
    pytest.param('os.getenv("DB_PASSWORD", "postgres")', id="getenv-default-word"),
    pytest.param("the password is stored in the vault", id="plain-stored-in"),
    pytest.param("the password is required", id="plain-required"),
    pytest.param("the password is rotated monthly", id="plain-rotated"),
    pytest.param("The password is incorrect.", id="plain-status"),
    pytest.param("The default password is admin, change it on first login", id="plain-default"),
    pytest.param("I don't know what the password is.", id="plain-nothing-after"),
    pytest.param("The password is somewhere in Slack", id="plain-somewhere"),
    pytest.param("The wifi password is WPA2-protected.", id="wpa2-protected"),
    pytest.param(
        "The sha1 of the password is 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12", id="hash-of-pw"
    ),
    pytest.param('autocomplete="current-password" on the password field', id="autocomplete"),
    pytest.param('The fixture sets password="not-a-real-password"', id="not-a-real-password"),
    pytest.param('token = "Not_A_Real_Pw_1"', id="not-a-real-pw-1"),
    pytest.param('password="fake-password-for-tests"', id="fake-prefix"),
    pytest.param('api_key = "dummy_key_123"', id="dummy-prefix"),
    pytest.param('token = "test-token-value"', id="test-words"),
    pytest.param("The messaging service SID is MG" + HEX_32, id="twilio-service-sid"),
    pytest.param("The Twilio API key is SK" + HEX_32, id="twilio-api-key-sid"),
    pytest.param("The build id is XK" + HEX_32, id="prefixed-hex-id"),
    pytest.param("docker build --secret id=npmrc,src=$HOME/.npmrc .", id="buildkit-secret-spec"),
    pytest.param("vault kv put secret/db password=@pw.txt", id="password-from-file"),
    pytest.param("podman run --secret db_pass_v2 acme/api", id="secret-name-flag"),
    pytest.param("Wi-Fi's `psk=`), Dockerfile `ENV` lines", id="markdown-code-span"),
    pytest.param("ph, pw = ph_up, pw_up", id="pw-variable-in-code"),
    pytest.param('"Cryptography_HAS_PSK": cryptography_has_psk,', id="psk-in-a-name"),
    # --- review: code and look-alikes that were refused ---------------------------------------
    pytest.param("const token = await getToken()", id="code-await"),
    pytest.param("token = await client.fetch_token()", id="code-await-method"),
    pytest.param("password = await bcrypt.hash(plain, 12)", id="code-await-hash"),
    pytest.param("secret = await vault.read('kv/app')", id="code-await-vault"),
    pytest.param("token = yield take(LOGIN_SUCCESS)", id="code-yield"),
    pytest.param(
        "token = typeof window !== 'undefined' ? localStorage.token : null", id="code-typeof"
    ),
    pytest.param("token = lambda: os.environ['T']", id="code-lambda"),
    pytest.param(
        "let token = match req.headers().get(AUTHORIZATION) { Some(v) => v, None => return }",
        id="code-match",
    ),
    pytest.param("password = user_input", id="code-snake-case"),
    pytest.param("api_key = fallback_value", id="code-snake-case-2"),
    pytest.param("token = current_user", id="code-snake-case-3"),
    pytest.param("token = payload", id="code-word"),
    pytest.param("token = body", id="code-word-2"),
    pytest.param("token = encoded", id="code-word-3"),
    pytest.param("token = signature", id="code-word-4"),
    pytest.param("password = userInput", id="code-camel-case"),
    pytest.param("token = jwtString", id="code-camel-case-2"),
    pytest.param("token = headerValue", id="code-camel-case-3"),
    pytest.param("password = dbPass2024", id="code-camel-case-with-digits"),
    pytest.param("secret = shared", id="code-word-5"),
    pytest.param("password = plaintext", id="code-word-6"),
    pytest.param("password = hashed", id="code-word-7"),
    pytest.param("password = random_string", id="code-snake-case-4"),
    pytest.param("password = pw_hash", id="code-snake-case-5"),
    pytest.param("secret = not_found", id="code-snake-case-6"),
    pytest.param("password := readPassword()", id="code-walrus"),
    pytest.param("Client(token=payload)", id="code-keyword-argument"),
    pytest.param("connect(host=h, password=user_pw)", id="code-keyword-argument-2"),
    pytest.param("password = hunter2 if debug else None", id="code-expression"),
    pytest.param(
        "The password field is type=password and uses autocomplete=current-password",
        id="attribute-in-prose",
    ),
    pytest.param("CREATE USER reporting WITH PASSWORD :'reporting_password';", id="psql-variable"),
    pytest.param("password: !!str 0123", id="yaml-tag"),
    pytest.param("password: &lt;hidden&gt;", id="html-escaped-placeholder"),
    pytest.param("psk: &#x3C;Buffer> in the HTML docs", id="html-entity"),
    pytest.param(
        "The mnemonic for the deploy order is: build, test, tag, push, deploy, verify, announce,"
        " rollback, monitor, review, retro, close",
        id="mnemonic-of-words-not-in-bip39",
    ),
    pytest.param(
        "Use the seed phrase words list from BIP-39: abandon ability able about above absent"
        " absorb abstract absurd abuse access accident",
        id="bip39-list-in-alphabetical-order",
    ),
    pytest.param("pW = ph_up", id="short-key-mixed-case"),
    pytest.param("Psk = ph_up", id="short-key-mixed-case-2"),
    pytest.param("wpa-psk = ph_up", id="short-key-dashed"),
    pytest.param("first pass: done", id="pass-in-prose"),
    pytest.param("POSTGRES_PASSWORD=postgres (the image default)", id="vendor-default-said"),
    pytest.param(
        "The default MYSQL_ROOT_PASSWORD=root is for local use", id="vendor-default-said-2"
    ),
    pytest.param("sip:alice2@voip.acme.com", id="sip-address"),
    pytest.param("docker pull nginx:1.25@sha256:" + HEX_32 * 2, id="image-tag-and-digest"),
    pytest.param("npm install lodash4:4.17.21@4.17.21", id="npm-alias"),
    pytest.param("wifi: 5GHz/2.4GHz", id="wifi-bands"),
    pytest.param("Connect to GPIO pin: 4821 on the header", id="gpio-pin"),
    pytest.param("log in with SSO", id="log-in-with-a-method"),
    # --- one case for each guard that keeps a value out (each fails with the guard off) -------
    pytest.param("password: db_password", id="name-of-a-credential"),
    pytest.param("password = user_input2", id="code-snake-case-with-digit"),
    pytest.param("token = headerValue2", id="code-camel-case-with-digit"),
    pytest.param("private_key: deploy-key.pem", id="file-name"),
    pytest.param("Password: security@acme.dev resets it on request", id="email-address"),
    pytest.param("QA pass: 1.8.2b", id="version"),
    pytest.param("The admin password is Yubikey5-protected", id="descriptor"),
    pytest.param(
        "The GPG signing key is 3AA5C34371567BD2C8A1B1E3F5D7A9B0C2E4F6A8", id="gpg-fingerprint"
    ),
    pytest.param(
        "The mnemonic for the shopping list is: apple lemon mango banana olive cherry grape onion"
        " garlic tomato potato pepper, so I buy twelve things",
        id="bip39-words-going-on-as-a-sentence",
    ),
    pytest.param(
        "Cookie: _ga=GA1.2.Xk9mQ2vR7tL4wB8nY1cH3jF5gD6sA; theme=dark", id="analytics-cookie"
    ),
    pytest.param(
        f"Gift card {grouped(with_check_digit('901234567890123'), (4, 4, 4, 4))} for the lunch",
        id="luhn-valid-number-of-no-card-scheme",
    ),
    # --- issue 26: pairs that are not logins, numbers that are not SSNs, codes that are not CVVs
    pytest.param("Release builds target linux/amd64 and linux/arm64.", id="platform-pair"),
    pytest.param("Base images: postgres:16-alpine and node:20-slim.", id="image-tags"),
    pytest.param("CI pins actions/checkout@v4; see acme/api#1234.", id="pinned-action-and-issue"),
    pytest.param("We benchmarked MySQL8 / PostgreSQL16 on one box.", id="products-pair"),
    pytest.param("The RBAC matrix toggles admin / settings page access.", id="admin-slash-word"),
    pytest.param("The ratio admin / 100000 users is fine.", id="admin-slash-count"),
    pytest.param("Default login is admin / admin; the wizard forces a change.", id="default-pair"),
    pytest.param("Call 555-123-4567 or fax 415-555-0199.", id="phone-numbers"),
    pytest.param("ISBN 978-0-306-40615-7, ISBN-10 0-306-40615-2", id="isbns"),
    pytest.param("Order 123-45-6789 shipped; lot 123-45-6790 recalled.", id="named-numbers"),
    pytest.param("The migration 202-11-2024 ran twice.", id="day-month-year"),
    pytest.param(
        "Invalid: 000-12-3456, 666-12-3456, 123-00-4567, 123-45-0000", id="ssn-never-issued"
    ),
    pytest.param("Example SSNs 078-05-1120 and 987-65-4321 are public.", id="public-ssns"),
    pytest.param("Area 9xx with group 40: 912-40-1234 is no ITIN.", id="itin-wrong-group"),
    pytest.param("Routing number 021000021, story points 123 45 6789", id="unnamed-nine-digits"),
    pytest.param("Masked SSNs look like ***-**-6789 or XXX-XX-6789.", id="masked-ssn"),
    pytest.param("cvv: str = Field(min_length=3, max_length=4)", id="cvv-in-code"),
    pytest.param("HTTP 404 on port 443; CVV length is 4 for Amex.", id="three-digit-numbers"),
    pytest.param("Customer CID 4821 and CSC 1234 opened tickets.", id="shared-code-names"),
    pytest.param("cvc-elt.1: Cannot find the declaration of element 'config'", id="xerces-cvc"),
    pytest.param("The corporate card expires 04/27; renew it before then.", id="expiry-alone"),
    # --- issue 26, second round ---
    pytest.param("Auftragsnummer 317-77-0641 ist unterwegs", id="order-number-german"),
    pytest.param("订单号 317-77-0641 已发货", id="order-number-chinese"),
    pytest.param("Prüfziffer 123 der Artikelnummer", id="check-digits-without-a-card"),
    pytest.param("root and admin2 accounts are locked", id="account-and-account"),
    pytest.param("the 3 digit number on the front of the ticket is 512", id="front-no-card"),
    pytest.param("| service | secret |\n|---|---|\n| api | k8s-secret-v2 |", id="secret-name"),
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_a_look_alike_is_not_a_secret(text: str) -> None:
    assert find_secrets(text) == []


AWS_KEY_ID = "AKIA" + "Z3MHQX7LR2PVN4TB"
MULTIPLE = [
    pytest.param(
        f"AWS key: {AWS_KEY_ID} / {AWS_SECRET}",
        [("AWS access key id", AWS_KEY_ID), ("AWS secret access key", AWS_SECRET)],
        id="aws-key-id-and-its-secret",
    ),
    pytest.param(
        f"{AWS_KEY_ID} with the secret access key {AWS_SECRET}",
        [("AWS access key id", AWS_KEY_ID), ("AWS secret access key", AWS_SECRET)],
        id="aws-key-id-with-its-secret",
    ),
    pytest.param(
        f"DB_PASSWORD=Zx9kLm2pQ7rt and GITHUB_TOKEN=ghp_{ALNUM_36}",
        [("password assignment", "Zx9kLm2pQ7rt"), ("GitHub token", "ghp_" + ALNUM_36)],
        id="assignment-and-provider-token",
    ),
    pytest.param(
        f"card {CARD_VISA_SPACED} exp 09/27, PIN 4821",
        [("payment card number", CARD_VISA_SPACED), ("PIN or passcode", "4821")],
        id="card-and-pin",
    ),
    # a card's security code is a finding of its own, so that capture removes it too (issue 26)
    pytest.param(
        f"Corporate Visa {CARD_VISA_SPACED}, exp 08/27, CVV 123",
        [("payment card number", CARD_VISA_SPACED), ("card security code", "123")],
        id="card-with-expiry-and-cvv",
    ),
    pytest.param(
        f"Amex {CARD_AMEX_SPACED} valid thru 03/28, CID 4417",
        [("payment card number", CARD_AMEX_SPACED), ("card security code", "4417")],
        id="card-amex-grouped-with-cid",
    ),
    pytest.param(
        f"card {CARD_VISA} 09/27 321",
        [("payment card number", CARD_VISA), ("card security code", "321")],
        id="card-plain-with-expiry-and-code-after",
    ),
    pytest.param(
        f"charge {CARD_VISA_SPACED} 09/27 737",
        [("payment card number", CARD_VISA_SPACED), ("card security code", "737")],
        id="card-charge-with-expiry-and-code",
    ),
    pytest.param(
        "Visa ending 4242 full number 4111 1111 1111 1111, exp 12/26, CVV 737",
        [("payment card number", "4111 1111 1111 1111"), ("card security code", "737")],
        id="card-test-number-with-cvv-is-refused",
    ),
    pytest.param(
        "SSNs for the two new hires: 317-77-0641 and 200-40-3158.",
        [
            ("US social security number", "317-77-0641"),
            ("US social security number", "200-40-3158"),
        ],
        id="two-ssns",
    ),
]


@pytest.mark.parametrize(("text", "expected"), MULTIPLE)
def test_every_secret_of_a_memory_is_found_with_its_kind_and_span(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert [(f.kind, text[f.start : f.end]) for f in find_secrets(text)] == expected


def test_a_secret_in_a_sentence_is_found_at_its_offsets() -> None:
    token = "ghp_" + ALNUM_36
    text = f"Remember: the CI uses {token} to push tags, rotate it in May."
    assert find_secrets(text) == [
        SecretFinding("GitHub token", text.index(token), text.index(token) + len(token))
    ]


def test_several_secrets_are_ordered_by_start() -> None:
    aws_key_id = "AKIA" + "Z3MHQX7LR2PVN4TB"
    text = (
        "prod db: postgres://app:Tr0ub4dor3@db.internal/app\n"
        f"aws key id {aws_key_id}\n"
        "password=hunter2\n"
    )
    findings = find_secrets(text)
    assert [finding.kind for finding in findings] == [
        "connection string with a password",
        "AWS access key id",
        "password assignment",
    ]
    assert [text[finding.start : finding.end] for finding in findings] == [
        "Tr0ub4dor3",
        aws_key_id,
        "hunter2",
    ]


def test_a_token_in_an_assignment_is_reported_once_as_the_more_specific_kind() -> None:
    token = "ghp_" + ALNUM_36
    text = f"GITHUB_TOKEN={token}"
    assert find_secrets(text) == [SecretFinding("GitHub token", len("GITHUB_TOKEN="), len(text))]


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("GitHub token", "it contains what looks like a GitHub token"),
        ("AWS access key id", "it contains what looks like an AWS access key id"),
        ("high-entropy token", "it contains what looks like a high-entropy token"),
        ("npm token", "it contains what looks like an npm token"),
        ("Heroku API key", "it contains what looks like a Heroku API key"),
    ],
)
def test_the_description_reads_as_a_reason(kind: str, expected: str) -> None:
    assert describe_secret(SecretFinding(kind, 0, 10)) == expected


def test_an_empty_text_has_no_secrets() -> None:
    assert find_secrets("") == []


# Every save scans its memory; the longest memory the service takes by default has 2,000
# characters. These inputs made patterns backtrack before (95 ms for "password machine " and
# 1,983 dots, 190 ms for "password is " and 1,988 spaces). How long a scan takes is measured by
# `make bench` (benchmarks/secrets.py: the worst input against ordinary text of the same length,
# and its growth from 2,000 to 10,000 characters, as ratios within one run); a test only says
# what the scan finds, which does not depend on how busy the machine is.
ADVERSARIAL = [
    pytest.param(short, long, id=f"{n:02d}-{short[:14]}")
    for n, (short, long) in enumerate(zip(adversarial(2_000), adversarial(10_000), strict=True))
]


@pytest.mark.parametrize(("short", "long"), ADVERSARIAL)
def test_an_adversarial_memory_is_scanned_to_the_end_and_five_times_it_finds_the_same(
    short: str, long: str
) -> None:
    """max_content_length can be raised: five times the text finds the same kinds of secret,
    each finding a span of the text that is not blank, and at most about five times as many."""
    assert (len(short), len(long)) == (2_000, 10_000)
    found_short, found_long = find_secrets(short), find_secrets(long)
    assert {f.kind for f in found_short} == {f.kind for f in found_long}
    for text, findings in ((short, found_short), (long, found_long)):
        assert all(0 <= f.start < f.end <= len(text) for f in findings)
        assert all(text[f.start : f.end].strip() for f in findings)
    # repeated shapes that hold a finding hold about five times as many in five times the text
    assert len(found_long) <= 5 * len(found_short) + 5


def test_the_cells_under_a_password_or_an_ssn_column_are_found_in_every_row() -> None:
    """Issue 26: a table's header names the column ("secret", "ssn"); each row's cell under it
    is the value, unless it is not one ("(ask #infra)", a masked number)."""
    table = (
        "| env | user | secret |\n|---|---|---|\n| prod | app | Juniper$4471 |\n"
        "| stage | app | Qx7#lark-22 |\n| dev | app | (ask #infra) |"
    )
    assert [(f.kind, table[f.start : f.end]) for f in find_secrets(table)] == [
        ("password in prose", "Juniper$4471"),
        ("password in prose", "Qx7#lark-22"),
    ]
    csv = "last,first,ssn,zip\nRoe,Jane,317 77 0641,43215\nDoe,John,***-**-1234,10001"
    assert [(f.kind, csv[f.start : f.end]) for f in find_secrets(csv)] == [
        ("US social security number", "317 77 0641")
    ]


def test_a_documented_test_card_is_allowed_alone_but_not_with_its_expiry_or_code() -> None:
    """The test cards of Stripe's and Braintree's documentation are public; a full card with its
    expiry date or security code is refused whatever its number (a memory cannot tell)."""
    assert find_secrets("The Stripe test card is 4242 4242 4242 4242.") == []
    assert find_secrets("Use card 4111 1111 1111 1111 in the sandbox") == []
    for text in (
        "card 4242 4242 4242 4242 exp 12/34 cvc 123",
        "card 4111111111111111 cvv 737",
    ):
        kinds = [finding.kind for finding in find_secrets(text)]
        assert kinds == ["payment card number", "card security code"]
    assert [f.kind for f in find_secrets(f"The card is {CARD_VISA_SPACED}.")] == [
        "payment card number"
    ]


def test_capture_removes_a_login_pair_an_ssn_and_a_card_code_before_the_llm_reads_a_turn() -> None:
    """Issue 26: what capture sends to the LLM kept "admin / Winter2024!", an SSN and a CVV."""
    turn = (
        "ok the NAS is admin / Winter2024!, my SSN is 317-77-0641 and the card is "
        f"{CARD_VISA_SPACED} exp 04/27 cvv 737"
    )
    cleaned = clean("user", turn, tool_output_chars=1_500)
    assert cleaned.content == (
        "ok the NAS is admin / [secret removed], my SSN is [secret removed] and the card is "
        "[secret removed] exp 04/27 cvv [secret removed]"
    )
    assert cleaned.secrets_removed == 4


def test_only_the_exact_documented_aws_example_keys_are_exempt() -> None:
    documented = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
    assert find_secrets(f"aws_secret_access_key = {documented}") == []
    assert find_secrets("AKIA" + "IOSFODNN7EXAMPLE") == []
    altered = documented.replace("wJ", "xJ")
    assert [f.kind for f in find_secrets(f"aws_secret_access_key = {altered}")] == [
        "AWS secret access key"
    ]
    assert [f.kind for f in find_secrets("AKIA" + "IOSFODNN8EXAMPLE")] == ["AWS access key id"]


# --- corpora ------------------------------------------------------------------------------------

REQUIRED_KINDS = {
    "AWS access key id",
    "AWS secret access key",
    "GitHub token",
    "GitLab token",
    "Slack token",
    "Slack webhook URL",
    "Stripe secret key",
    "OpenAI API key",
    "Anthropic API key",
    "JSON web token",
    "private key block",
    "connection string with a password",
    "password assignment",
    "secret or token assignment",
    "password in prose",
    "secret or token in prose",
    "password on a command line",
    "basic auth credentials",
    "authorization header token",
    "netrc password",
    "pgpass password",
    "PIN or passcode",
    "SendGrid API key",
    "Twilio auth token",
    "Heroku API key",
    "Mailgun API key",
    "npm token",
    "PyPI token",
    "Hugging Face token",
    "DigitalOcean token",
    "Shopify access token",
    "Discord bot token",
    "Telegram bot token",
    "Stripe webhook secret",
    "Azure storage account key",
    "Azure AD client secret",
    "payment card number",
    "2FA recovery code list",
    "TOTP secret",
    "session cookie",
    "wallet seed phrase",
    "Microsoft Teams webhook URL",
    "Zapier webhook URL",
    "Discord webhook URL",
    "webhook URL",
    "Asana personal access token",
}
MIN_SECRET_MEMORIES, MIN_SECRET_KINDS, MIN_BENIGN_MEMORIES = 300, 30, 500
SECRET_MEMORIES = secret_memories()
BENIGN_MEMORIES = benign_memories()


def test_every_line_of_the_secret_corpus_is_well_formed() -> None:
    lines = corpus_lines("secret_memories.txt")
    assert [line for line in lines if not LINE.fullmatch(line)] == []
    assert len(SECRET_MEMORIES) == len(lines)


def test_the_secret_corpus_has_at_least_300_memories_of_30_kinds() -> None:
    texts = [memory.text for memory in SECRET_MEMORIES]
    assert len(texts) >= MIN_SECRET_MEMORIES
    assert len(set(texts)) == len(texts)
    assert len({kind for memory in SECRET_MEMORIES for kind in memory.kinds}) >= MIN_SECRET_KINDS


def test_the_secret_corpus_has_several_formats_of_every_kind() -> None:
    kinds = [kind for memory in SECRET_MEMORIES for kind in memory.kinds]
    assert {kind: kinds.count(kind) for kind in REQUIRED_KINDS if kinds.count(kind) < 2} == {}


@pytest.mark.parametrize(
    "memory",
    [
        pytest.param(memory, id=f"{n:03d}-{memory.kinds[0]}")
        for n, memory in enumerate(SECRET_MEMORIES)
    ],
)
def test_a_memory_holding_a_secret_is_refused_naming_the_kind(memory: SecretMemory) -> None:
    """Every secret of the memory is found, with the kind the corpus gives it, in order; each
    finding covers one of the fake values filled into the line (not a key name or a word of
    the sentence); the error names the first kind and none of the values."""
    text = memory.text
    findings = find_secrets(text)
    assert tuple(finding.kind for finding in findings) == memory.kinds
    if memory.values:
        value_spans = [
            (match.start(), match.end())
            for value in memory.values
            for match in re.finditer(re.escape(value), text)
        ]
        for finding in findings:
            assert any(start < finding.end and finding.start < end for start, end in value_spans), (
                f"{finding.kind} {text[finding.start : finding.end]!r} is none of the values"
            )
    with pytest.raises(SecretRejected) as refused:
        no_secrets(text)
    message = str(refused.value)
    assert memory.kinds[0] in message
    for finding in findings:
        assert text[finding.start : finding.end] not in message
    for value in memory.values:
        assert value not in message


def test_the_benign_corpus_has_at_least_500_distinct_memories() -> None:
    assert len(BENIGN_MEMORIES) >= MIN_BENIGN_MEMORIES
    assert len(set(BENIGN_MEMORIES)) == len(BENIGN_MEMORIES)


def test_no_benign_memory_is_taken_for_a_secret() -> None:
    flagged = [
        f"{line!r}: " + ", ".join(f"{f.kind} {line[f.start : f.end]!r}" for f in findings)
        for line in BENIGN_MEMORIES
        if (findings := find_secrets(line))
    ]
    assert flagged == [], "false positives:\n" + "\n".join(flagged)


def test_the_service_refuses_every_secret_memory_and_writes_nothing(
    service: MemoryService, principal: Principal
) -> None:
    for memory in SECRET_MEMORIES:
        with pytest.raises(SecretRejected, match=re.escape(memory.kinds[0])):
            service.save(principal, memory.text, "fact")
    assert service.list_memories(principal)["count"] == 0


def test_the_service_saves_memories_that_only_talk_about_credentials(
    service: MemoryService, principal: Principal
) -> None:
    memories = [line for line in BENIGN_MEMORIES if re.search("password|token|secret", line)][:5]
    for text in memories:
        assert service.save(principal, text, "fact")["status"] == "created"
    assert service.list_memories(principal)["count"] == len(memories)
