"""The credential detector (scanner/inputs/credentials.py) on every token kind, in every way scripts,
user data, env files, JSON and YAML write one, in plain text and in base64 (gzip too); and on
the evidence it must leave alone. Its patterns are detect-secrets' where that library has a
detector (checked both ways against the installed library), ours where it has none."""

from __future__ import annotations

import base64
import gzip
import importlib
import inspect
import pkgutil

import pytest

from scanner.inputs.credentials import (
    BASE64_ENTROPY,
    KEYWORDS,
    LEFT_OUT,
    OURS,
    VENDORED,
    looks_like_credential,
    secret_name,
)
from tests.secret_tokens import TOKENS

# How each kind is written where it is used (the name an env file or a script gives it).
ENV_NAMES = {
    "aws_access_key_id": "AWS_ACCESS_KEY_ID", "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY",
    "openai_project": "OPENAI_API_KEY", "openai_legacy": "OPENAI_KEY",
    "anthropic": "ANTHROPIC_API_KEY", "huggingface": "HF_TOKEN", "google_api": "GOOGLE_KEY",
    "npm": "NPM_TOKEN", "github_classic": "GH_TOKEN", "github_fine_grained": "GITHUB_PAT",
    "slack_bot": "SLACK_BOT", "stripe_live": "STRIPE", "jwt": "SESSION", "gitlab": "CI_JOB",
    "bearer": "HEADER", "private_key": "KEY_PEM", "basic_auth_url": "REGISTRY",
}


def _forms(name: str, token: str) -> list[str]:
    script = f"#!/bin/bash\nset -e\nexport {name}='{token}'\npython train.py --epochs 3\n"
    return [
        token,
        f"{name}={token}",  # an env file
        f"export {name}={token}",
        f'export {name}="{token}"',
        f"{name}: {token}",  # YAML
        f'{{"{name}": "{token}"}}',  # JSON
        f"  - name: {name}\n    value: {token}\n",  # a Kubernetes / ECS env list
        f"docker run -e {name}={token} trainer:latest",
        script,
        base64.b64encode(script.encode()).decode(),  # user data as EC2 takes it
        base64.b64encode(gzip.compress(script.encode())).decode(),  # cloud-init gzip
        base64.b64encode(base64.b64encode(script.encode())).decode(),  # base64 twice
    ]


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_every_token_kind_in_every_form(kind: str) -> None:
    token = TOKENS[kind]
    for text in _forms(ENV_NAMES[kind], token):
        assert looks_like_credential(text), (kind, text[:80])


# A value that looks like nothing: only its name says it is a secret.
PLAIN = "hunter2-Correct-Horse-42"


@pytest.mark.parametrize("text", [
    f"aws configure set aws_secret_access_key {PLAIN}",
    f"--aws-secret-key={PLAIN}", f"--aws-secret-key {PLAIN}", f"--secret-access-key={PLAIN}",
    f"gpuctl login --password {PLAIN}", f"--api-token={PLAIN}", f"--db-pass {PLAIN}",
    f"WANDB_KEY={PLAIN}", f"export WANDB_API_KEY={PLAIN}", f"COMET_KEY: {PLAIN}",
    f"DATADOG_TOKEN={PLAIN}", f"REGISTRY_PAT={PLAIN}",
    f"SecretAccessKey={PLAIN}", f"SecretAccessKey: {PLAIN}", f'"SecretAccessKey": "{PLAIN}"',
    f"'SecretAccessKey': '{PLAIN}'", f"secretAccessKey = \"{PLAIN}\"",
    f"AccessKey={PLAIN}", f"ClientSecret: {PLAIN}", f'"MasterUserPassword": "{PLAIN}"',
    f"db_password := {PLAIN}", f"password => '{PLAIN}'", f"Authorization: Basic {PLAIN}",
    f"Authorization: token {PLAIN}", f"curl -H 'Authorization: Bearer {PLAIN}' https://x",
    f"mysql_root_password={PLAIN}", f"PGPASSWORD={PLAIN} psql -h db", f"[db]\npassword = {PLAIN}",
])
def test_a_secret_by_its_name(text: str) -> None:
    assert looks_like_credential(text)


@pytest.mark.parametrize("text", [
    "g5.xlarge", "p4d.24xlarge", "ami-0123456789abcdef0", "vol-049df61146c4d7901",
    "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "KmsKeyId: arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "SecretArn=arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf",
    "key_name = gpu-keypair", "KeyName: gpu-keypair", "--key-name gpu-keypair",
    "--kms-key-id alias/aws/ebs", "KMS_KEY=alias/aws/ebs", "password_length=16",
    "PasswordLength: 16", "HttpTokens: required", "http_tokens = optional",
    "AuthorizationType=AWS_IAM", "aws_iam_access_key.deploy", "aws_secretsmanager_secret.db",
    "SECRET_ARN=arn:aws:secretsmanager:us-east-1:1:secret:x", "DB_PASSWORD=${DB_PASSWORD}",
    "password: {{resolve:secretsmanager:db:SecretString:password}}", "password=",
    "EBS storage not encrypted: root (from the AMI)", "s3://datasets/imagenet/train/",
    "AssociatePublicIpAddress", "OnDemandPercentageAboveBaseCapacity",
    "module.estate_a[\"a00018\"].aws_ebs_volume.data_awskey",
    "the secret is read from Secrets Manager at boot", "disk-io-optimized", "Asia Pacific (Tokyo)",
    "4f3c2b1a09e8d7c6b5a49382716050f4e3d2c1b0", "sha256:" + "ab" * 32,
    "Set Encrypted to true on every EBS volume and block device mapping",
    "tokenizer: meta-llama/Llama-3-8B", "TOKENIZER_NAME=bert-base-uncased",
    "max_tokens: 4096", "tokens_per_second=180",
    "no credentials: The config profile (missing) could not be found",
    "access denied (UnauthorizedOperation): You are not authorized to perform this operation.",
])
def test_useful_evidence_survives(text: str) -> None:
    assert not looks_like_credential(text)


def test_names() -> None:
    for name in ("Authorization", "SecretAccessKey", "db_password", "HF_TOKEN", "ClientSecret"):
        assert secret_name(name), name
    for name in ("SecretArn", "KmsKeyId", "PasswordLength", "HttpTokens", "KeyName",
                 "SecretsManagerEndpoint", "TokenFile", "AuthorizationType", "PasswordStore"):
        assert not secret_name(name), name


# ------------------------------------------------------------ detect-secrets, checked both ways


def _library_patterns() -> dict[str, set[tuple[str, bool]]]:
    ds = pytest.importorskip("detect_secrets")
    from detect_secrets.plugins.base import RegexBasedDetector

    out: dict[str, set[tuple[str, bool]]] = {}
    for info in pkgutil.iter_modules(importlib.import_module("detect_secrets.plugins").__path__):
        module = importlib.import_module(f"detect_secrets.plugins.{info.name}")
        for obj in vars(module).values():
            if (inspect.isclass(obj) and issubclass(obj, RegexBasedDetector)
                    and obj.__module__ == module.__name__ and not inspect.isabstract(obj)):
                for rx in obj.denylist:
                    out.setdefault(info.name, set()).add(
                        (rx.pattern, bool(rx.flags & 2)))  # re.IGNORECASE
    assert ds is not None
    return out


def test_every_copied_pattern_is_the_librarys() -> None:
    library = _library_patterns()
    for module, pattern, nocase, _ in VENDORED:
        assert (pattern, nocase) in library.get(module, set()), (module, pattern)


def test_every_pattern_of_the_library_is_copied_or_left_out_with_a_reason() -> None:
    library = _library_patterns()
    copied = {(m, p) for m, p, _, _ in VENDORED}
    for module, patterns in library.items():
        if module in LEFT_OUT:
            assert LEFT_OUT[module].strip()
            continue
        for pattern, _ in patterns:
            assert (module, pattern) in copied, (module, pattern)


def test_the_keyword_words_and_the_entropy_limit_are_the_librarys() -> None:
    pytest.importorskip("detect_secrets")
    from detect_secrets.plugins import high_entropy_strings, keyword

    assert tuple(keyword.DENYLIST) == KEYWORDS
    assert high_entropy_strings.Base64HighEntropyString().entropy_limit == BASE64_ENTROPY


def test_our_patterns_say_why_they_are_ours() -> None:
    for pattern, _, why in OURS:
        assert why.strip(), pattern


# ------------------------------------------------------------------------------- its cost

HOSTILE = {
    "a keyword repeated": "password" * 2048, "flags": "--password-" * 1500,
    "keywords in one word": "secret_key_password_token_" * 600, "signs": "key=" * 4000,
    "npm's slashes": "//" * 8000 + "/:_authToken=", "JWT starts": "eyJ" * 5400 + ".",
    "base64 words": "QUJDRGVmZ2gxMjM0NTY3ODkw " * 650, "env names": "A_KEY" * 3200,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_no_string_costs_the_square_of_its_length(name: str) -> None:
    # 16 KiB (a report string's limit): a pattern that backtracks over the whole text took
    # 3-9 s on these; linear work is a few milliseconds
    import time

    from scanner.inputs.credentials import _credential

    start = time.process_time()
    _credential(HOSTILE[name])
    assert time.process_time() - start < 0.5, name


def test_a_credential_across_the_report_cut_is_redacted() -> None:
    from scanner.findings.redact import MAX_TEXT, Redactor

    token = TOKENS["huggingface"]
    text = "x" * (MAX_TEXT - 10) + " " + token + " and more"
    assert Redactor().text(text) == REDACTED_TEXT
    long_clean = "GPU node " * (MAX_TEXT // 4)
    assert Redactor().text(long_clean).endswith("more characters]")


REDACTED_TEXT = "[redacted: looks like a credential]"


CUT_KINDS = ("openai_project", "anthropic", "huggingface", "google_api", "npm",
             "github_classic", "github_fine_grained", "slack_bot", "stripe_live", "gitlab",
             "aws_access_key_id")


@pytest.mark.parametrize("kind", CUT_KINDS)
def test_a_token_cut_short_in_a_message_is_still_known(kind: str) -> None:
    # a source quotes the first 40 characters of a line it cannot parse
    line = f'  token = "{TOKENS[kind]}'
    assert looks_like_credential(f"syntax error near {line[:40].strip()!r}"), kind
    assert looks_like_credential(f"not a number: {TOKENS[kind][:20]!r}"), kind


@pytest.mark.parametrize("text", ["pip install hf_transfer", "npm_lifecycle_event=install",
                                  "npm_config_cache=/tmp/npm", "AKIA", "hf_hub_download()"])
def test_common_words_with_those_prefixes_survive(text: str) -> None:
    assert not looks_like_credential(text)


def test_a_quoted_high_entropy_string_is_a_credential() -> None:
    # detect-secrets' Base64HighEntropyString: quoted, above 4.5 bits a character
    assert looks_like_credential('client = Client("Zq8Lm2Xv7Rb4Tw9Nk3Yh6Fs1Jd5Ga0Eu")')
    assert not looks_like_credential('name = "gpu-training-cluster-nodes"')
    assert not looks_like_credential("'ami-0123456789abcdef0'")
