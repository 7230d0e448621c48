"""Who a request is, from its Authorization header, and what it may read.

The token rule of the emulator (the real Hub checks tokens against accounts):
- no token: anonymous; public repos only;
- a token starting `hf_granted_`: a user who was granted access to every gated repo;
- any other token starting `hf_`: a valid user with no gated-repo grants;
- anything else: invalid credentials (401, as the real Hub answers a bad token).
"""

from __future__ import annotations

from enum import StrEnum

GRANTED_PREFIX = "hf_granted_"
VALID_PREFIX = "hf_"


class Caller(StrEnum):
    ANONYMOUS = "anonymous"
    USER = "user"
    GRANTED_USER = "granted_user"
    INVALID = "invalid"


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def classify(token: str | None) -> Caller:
    if token is None:
        return Caller.ANONYMOUS
    if token.startswith(GRANTED_PREFIX):
        return Caller.GRANTED_USER
    if token.startswith(VALID_PREFIX) and len(token) > len(VALID_PREFIX):
        return Caller.USER
    return Caller.INVALID


def user_name(token: str) -> str:
    """A stable user name for a token, so whoami answers the same each time."""
    return "sim-granted-user" if token.startswith(GRANTED_PREFIX) else "sim-user"
