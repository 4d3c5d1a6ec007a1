"""Credential-shaped test values, one of each kind the report must never show.

Made from parts at import time (no whole token is written in the repository: secret scanners
of hosting services would flag this file). None of them is a real credential."""

from __future__ import annotations

_ALNUM = "Q7mZp2Lx9VbR4tWc8NkY3hFs6JdG1aEu5oIqTrBnXy0Cv"


def _run(n: int, offset: int = 0) -> str:
    turned = _ALNUM[offset:] + _ALNUM[:offset]
    return (turned * (n // len(turned) + 1))[:n]


AWS_ACCESS_KEY_ID = "AKIA" + "Q7MZP2LX9VBR4TWC"
AWS_SECRET_ACCESS_KEY = _run(20, 3) + "/" + _run(19, 11)
TOKENS: dict[str, str] = {
    "aws_access_key_id": AWS_ACCESS_KEY_ID,
    "aws_secret_access_key": AWS_SECRET_ACCESS_KEY,
    "openai_project": "sk-" + "proj-" + _run(48, 1) + "-" + _run(20, 9),
    "openai_legacy": "sk-" + _run(20, 2) + "T3Blbk" + "FJ" + _run(20, 5),
    "anthropic": "sk-" + "ant-api03-" + _run(40, 4),
    "huggingface": "hf" + "_" + _run(34, 6),
    "google_api": "AI" + "za" + "Sy" + _run(33, 7),
    "npm": "npm" + "_" + _run(36, 8),
    "github_classic": "gh" + "p_" + _run(36, 10),
    "github_fine_grained": "github" + "_pat_" + "11" + _run(20, 12) + "_" + _run(59, 13),
    "slack_bot": "xox" + "b-" + "2841957305" + "-" + "6620481738215" + "-" + _run(24, 14).lower(),
    "stripe_live": "sk" + "_live_" + _run(24, 15),
    "jwt": "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiJncHUtYXVkaXQifQ"
           + "." + _run(43, 16),
    "bearer": "Bearer " + _run(40, 17),
    "gitlab": "gl" + "pat-" + _run(20, 18),
    "private_key": "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow" + _run(40, 19)
                   + "\n-----END RSA PRIVATE KEY-----",
    "basic_auth_url": "https://deploy:" + "Pw" + _run(14, 20) + "@registry.internal/v2/",
}


# What must not be seen of each: the secret part (the token less its public prefix).
def secret_parts(token: str) -> list[str]:
    """Pieces of ``token`` that must appear nowhere: its first, middle and last 10 characters
    after the well-known prefix."""
    body = token
    for prefix in ("Bearer ", "-----BEGIN RSA PRIVATE KEY-----\n", "https://deploy:"):
        if body.startswith(prefix):
            body = body[len(prefix):]
    body = body.split("@")[0] if token.startswith("https://") else body
    body = body.split("\n")[0] if "PRIVATE KEY" in token else body
    body = body[4:] if len(body) > 24 else body
    n = len(body)
    return [p for p in (body[:10], body[n // 2 - 5: n // 2 + 5], body[-10:]) if len(p) == 10]
