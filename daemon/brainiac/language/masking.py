"""Secrets kept out of the context: values that look like keys, tokens or passwords are masked.

A person pastes an API key into a chat, a note records the Wi-Fi password: the vault keeps what
they wrote (it is theirs), but the assembled context goes to a model, a file other programs read
and an MCP client, so what looks like a credential is replaced there by `[masked <kind>]`. Two
kinds of evidence: the known shapes of provider keys and tokens (a prefix and a long random
tail), and a value given to a word that names a secret ("password: hunter2", "api_key=...").
Pure functions; a false positive costs a few characters of context, a miss leaks a credential,
so the word rule is generous.

The index keeps the masked length of each note's excerpt head (search/excerpt_head.py): a change
here that masks more or less comes with a new index.SCHEMA_VERSION, so those lengths are made again.
"""

from __future__ import annotations

import re

# Known token shapes: a recognisable prefix and enough random characters that prose never has.
# Each with the strings one of which any match contains: a text without them is not searched
# (the context masks every part of itself on every call, and most parts hold no key at all).
_SHAPES: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    (
        "private key",
        ("-----BEGIN ",),
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
    ),
    ("API key", ("sk-",), re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}")),
    (
        "token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b"),
    ),
    ("token", ("github_pat_",), re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b")),
    ("token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("token", ("xox",), re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("API key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("access key", ("AKIA", "ASIA"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    (
        "token",
        ("eyJ",),
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    ("token", ("earer",), re.compile(r"\b[Bb]earer\s+[A-Za-z0-9._~+/-]{20,}=*")),
)
# "password: hunter2", "API_KEY=abc", "the wifi password is tulip-42": the value after a word
# that names a secret (up to the end of the value: white space, a quote or a comma).
_NAMED = re.compile(
    r"(?P<name>\b(?:passwords?|passwd|passphrase|pass\s?code|pin(?:\s?code)?|secret|"
    r"api[\s_-]?key|access[\s_-]?key|secret[\s_-]?key|private[\s_-]?key|token|auth[\s_-]?token|"
    r"client[\s_-]?secret)\b)"
    r"(?P<sep>\s*(?:[:=]|\bis\b|\bwas\b)\s*[\"'`]?)"
    r"(?P<value>[^\s\"'`,;]{4,})",
    re.I,
)
# What every match of _NAMED holds, lowercased: an ASCII text without any of them is not searched
# (the pattern, case-blind at every position, was half a millisecond of every context). Only in
# ASCII does lower() agree with the pattern's case-blindness: Unicode's also matches "ſ" to "s"
# and the Kelvin sign to "k", so any other text is searched.
_NAMED_NEEDS = ("pass", "pin", "secret", "key", "token")


def mask(text: str) -> tuple[str, int]:
    """The text with secret-looking values masked, and how many were masked."""
    count = 0

    for kind, needed, pattern in _SHAPES:
        if any(literal in text for literal in needed):
            text, n = pattern.subn(f"[masked {kind}]", text)
            count += n

    def named(m: re.Match[str]) -> str:
        nonlocal count
        if m.group("value").startswith("[masked"):
            return m.group()
        count += 1
        return f"{m.group('name')}{m.group('sep')}[masked]"

    lowered = text.lower()
    if not text.isascii() or any(literal in lowered for literal in _NAMED_NEEDS):
        text = _NAMED.sub(named, text)
    return text, count
