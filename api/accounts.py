"""Accounts over the users/sessions store: password hashing (argon2id) and session tokens.

Session tokens are random; only their SHA-256 is stored. Each session carries its own CSRF token,
which state-changing requests must echo in a header."""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from datetime import UTC, datetime, timedelta

import psycopg
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from corpus import accounts as store
from corpus.accounts import StoredSession as Session
from corpus.accounts import User, username_key

_hasher = PasswordHasher()
# Matched with fullmatch: `$` also matches before a final newline, which let "alice\n" register as
# a second "alice". ASCII only, so no control, format or bidi character can be part of a name.
USERNAME = re.compile(r"[A-Za-z0-9_.-]{3,40}")
MIN_PASSWORD = 8
MIN_STRENGTH = 2  # zxcvbn's 0..4 score: 2 is "somewhat guessable", beyond a throttled online attack
# argon2id takes 64 MiB per hash: a burst of sign-ups or sign-ins hashes two at a time instead of
# growing the server by 64 MiB per request.
_ARGON2_SLOTS = threading.BoundedSemaphore(2)
# Verifying against this keeps an unknown username as slow as a wrong password.
_DUMMY_HASH = _hasher.hash("not a password of anybody")

__all__ = [
    "MIN_PASSWORD", "USERNAME", "NewSession", "Session", "User",
    "username_key", "valid_username", "weak_password",
]  # fmt: skip


class NewSession(Session):
    token: str  # goes into the cookie; never stored


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def valid_username(username: str) -> bool:
    return USERNAME.fullmatch(username) is not None


def weak_password(password: str, username: str) -> str | None:
    """Why `password` is too weak for an account named `username`, or None."""
    from zxcvbn import zxcvbn

    if len(password) < MIN_PASSWORD:
        return f"a password has at least {MIN_PASSWORD} characters"
    # zxcvbn's time grows fast with length; 64 characters are plenty to judge
    verdict = zxcvbn(password[:64], user_inputs=[username])
    if verdict["score"] < MIN_STRENGTH:
        hint = verdict["feedback"].get("warning") or "it is too easy to guess"
        return f"that password is too weak ({hint.rstrip('.').lower()}); a few unusual words work well"
    return None


def _hash(password: str) -> str:
    with _ARGON2_SLOTS:
        return _hasher.hash(password)


def create_user(conn: psycopg.Connection, username: str, password: str) -> User | None:
    """None when the name is taken (case-insensitively)."""
    return store.insert_user(conn, username, _hash(password))


def set_password(conn: psycopg.Connection, username: str, password: str) -> bool:
    found = store.credentials(conn, username)
    if found is None:
        return False
    store.set_password_hash(conn, found[0].user_id, _hash(password))
    return True


def check_password(conn: psycopg.Connection, username: str, password: str) -> User | None:
    found = store.credentials(conn, username)
    try:
        with _ARGON2_SLOTS:
            _hasher.verify(found[1] if found else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return None
    if found is None:
        return None
    user, password_hash = found
    if _hasher.check_needs_rehash(password_hash):
        store.set_password_hash(conn, user.user_id, _hash(password))
    return user


def create_session(conn: psycopg.Connection, user: User, days: int) -> NewSession:
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
    store.insert_session(conn, _digest(token), user.user_id, csrf, datetime.now(UTC) + timedelta(days=days))
    return NewSession(user=user, csrf_token=csrf, token=token)


def get_session(conn: psycopg.Connection, token: str) -> Session | None:
    return store.live_session(conn, _digest(token))


def delete_session(conn: psycopg.Connection, token: str) -> None:
    store.delete_session(conn, _digest(token))


def locked_out(conn: psycopg.Connection, quotas: dict[str, tuple[int, float]]) -> bool:
    """Whether a key of `quotas` has used up its failed sign-ins in the stored record (which
    outlives a restart, unlike the in-memory limiter)."""
    return any(store.recent_failures(conn, key, window) >= limit for key, (limit, window) in quotas.items())


def record_failure(conn: psycopg.Connection, quotas: dict[str, tuple[int, float]]) -> None:
    store.record_failure(conn, list(quotas), keep_seconds=max(window for _, window in quotas.values()))
