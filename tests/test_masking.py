"""Credentials stay in the person's files and out of the context (masking.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brainiac import Memory
from brainiac.language import masking
from brainiac.language.masking import mask


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("my key is sk-proj-abcdefghijklmnopqrstuvwx123", "my key is [masked API key]"),
        ("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz", "OPENAI_API_KEY=[masked API key]"),
        ("use ghp_abcdefghijklmnopqrstuvwxyz0123456789", "use [masked token]"),
        ("AWS: AKIAIOSFODNN7EXAMPLE", "AWS: [masked access key]"),
        ("The wifi password is tulip-42.", "The wifi password is [masked]"),
        ("password: hunter22", "password: [masked]"),
        ("api_key = 'abc123def456'", "api_key = '[masked]"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz123", "Authorization: [masked token]"),
    ],
)
def test_secret_looking_values_are_masked(text: str, shown: str) -> None:
    masked, count = mask(text)
    assert shown in masked and count == 1


@pytest.mark.parametrize(
    "text",
    ["I passed the interview", "the token economy is weird", "Password managers are useful."],
)
def test_prose_about_secrets_is_left_alone(text: str) -> None:
    assert mask(text) == (text, 0)


def test_the_context_masks_what_the_vault_keeps(memory: Memory) -> None:
    memory.remember("The staging password: Tr0ub4dor&3 for the Atlas database")
    memory.remember("Atlas API key sk-ant-abcdefghijklmnopqrstuvwxyz0123")
    ctx = memory.context("What is the Atlas staging password?", budget=1500)
    assert "Tr0ub4dor&3" not in ctx.text and "sk-ant-abcdefghij" not in ctx.text
    assert "The staging password: [masked]" in ctx.text and "[masked API key]" in ctx.text
    assert ctx.tokens <= 1500
    kept = (memory.vault.root / "memory" / "short_term.md").read_text(encoding="utf-8")
    assert "Tr0ub4dor&3" in kept  # the person's file is theirs


def _every_pattern(text: str) -> tuple[str, int]:
    """mask() as it was: every shape searched, whatever the text holds."""
    count = 0
    for kind, _needed, pattern in masking._SHAPES:
        text, n = pattern.subn(f"[masked {kind}]", text)
        count += n

    def named(m: re.Match[str]) -> str:
        nonlocal count
        if m.group("value").startswith("[masked"):
            return m.group()
        count += 1
        return f"{m.group('name')}{m.group('sep')}[masked]"

    return masking._NAMED.sub(named, text), count


_PIECES = [
    *("sk-", "sk-ant-", "ghp_", "ghs_", "github_pat_", "glpat-", "xoxb-", "AIza", "AKIA", "ASIA"),
    *("eyJ", ".eyJ", "Bearer ", "bearer ", "-----BEGIN RSA PRIVATE KEY-----", "password: "),
    *("-----END RSA PRIVATE KEY-----", "token=", "abcdefghij", "ABCDEFGHIJKLMNOP", "0123456789"),
    *("_", "-", ".", " ", "\n", "x"),
    # The named rule's words in other cases, and spelt with letters only Unicode's case-blindness
    # takes for ASCII ones (the long s, the Kelvin sign): not skipped by its ASCII pre-check.
    *("PASSWORD is ", "Pin code: ", "API_KEY=", "Token: ", "paſſword: ", "api \u212aey=", "é"),
]


@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=8), max_size=30).map("".join))
def test_skipping_shapes_whose_prefix_is_absent_changes_nothing(text: str) -> None:
    assert mask(text) == _every_pattern(text)
