"""Page codes: random tokens the field's way (secrets), compared in constant time.

A side's private page and the host page are opened with a code in the URL. Codes are
72 bits (12 URL-safe characters) from `secrets`, so guessing one in a game's time is out
of reach even before the per-client rate limit of the web app; they are compared with
hmac.compare_digest so the time of a refusal says nothing about how much of a guess was right.
"""

from __future__ import annotations

import hmac
import secrets

CODE_BYTES = 9  # 72 bits -> 12 characters of token_urlsafe
HOST_CODE_MIN = 12  # characters a --host-code of one's own must have (12 random ones: about 70 bits)


def new_code(nbytes: int = CODE_BYTES) -> str:
    return secrets.token_urlsafe(nbytes)


def same(given: str | None, code: str | None) -> bool:
    """Is `given` the code? In constant time; a missing code or missing given is never right."""
    if not given or not code:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), code.encode("utf-8", "replace"))


def weak(code: str) -> bool:
    """A code shorter than today's (a journal written before codes were 72 bits)."""
    return len(code) < len(new_code())
