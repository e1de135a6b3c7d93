"""Accounts over the users/sessions store: password hashing (argon2id) and session tokens.

Session tokens are random; only their SHA-256 is stored. Each session carries its own CSRF token,
which state-changing requests must echo in a header."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import UTC, datetime, timedelta

import psycopg
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from corpus import accounts as store
from corpus.accounts import StoredSession as Session
from corpus.accounts import User

_hasher = PasswordHasher()
USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,40}$")
MIN_PASSWORD = 8
# Verifying against this keeps an unknown username as slow as a wrong password.
_DUMMY_HASH = _hasher.hash("not a password of anybody")

__all__ = ["MIN_PASSWORD", "USERNAME", "NewSession", "Session", "User"]


class NewSession(Session):
    token: str  # goes into the cookie; never stored


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def create_user(conn: psycopg.Connection, username: str, password: str) -> User | None:
    """None when the name is taken (case-insensitively)."""
    return store.insert_user(conn, username, _hasher.hash(password))


def check_password(conn: psycopg.Connection, username: str, password: str) -> User | None:
    found = store.credentials(conn, username)
    try:
        _hasher.verify(found[1] if found else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return None
    if found is None:
        return None
    user, password_hash = found
    if _hasher.check_needs_rehash(password_hash):
        store.set_password_hash(conn, user.user_id, _hasher.hash(password))
    return user


def create_session(conn: psycopg.Connection, user: User, days: int) -> NewSession:
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
    store.insert_session(conn, _digest(token), user.user_id, csrf, datetime.now(UTC) + timedelta(days=days))
    return NewSession(user=user, csrf_token=csrf, token=token)


def get_session(conn: psycopg.Connection, token: str) -> Session | None:
    return store.live_session(conn, _digest(token))


def delete_session(conn: psycopg.Connection, token: str) -> None:
    store.delete_session(conn, _digest(token))
