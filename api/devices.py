"""Known browsers (OWASP's "device cookie" defence against password guessing).

A browser that signed in to an account gets a signed cookie naming that account. Its sign-ins to
that account have a limit of their own instead of the client address's and the account's
failed-sign-in limits, so somebody guessing an account's password (from one address or many)
does not lock its owner out of the browser they always use. The signing key lives in memory: a
restart makes old cookies ordinary, which only means the ordinary limits apply to them again."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time

from corpus.accounts import username_key

DEVICE_COOKIE = "chatpapers_device"
DEVICE_DAYS = 180


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class DeviceCookies:
    def __init__(self, key: bytes | None = None, days: int = DEVICE_DAYS) -> None:
        self._key = key or secrets.token_bytes(32)
        self.seconds = days * 86400

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode(), hashlib.sha256).digest())

    def issue(self, username: str) -> str:
        expires = int(time.time()) + self.seconds
        payload = f"{_b64(username_key(username).encode())}.{expires}.{secrets.token_urlsafe(8)}"
        return f"{payload}.{self._sign(payload)}"

    def username(self, cookie: str | None) -> str | None:
        """The account this cookie was issued for (its username_key), if genuine and unexpired."""
        if not cookie or len(cookie) > 400:
            return None
        payload, _, signature = cookie.rpartition(".")
        if not hmac.compare_digest(self._sign(payload).encode(), signature.encode("utf-8", "replace")):
            return None
        name, expires, _nonce = payload.split(".")
        if int(expires) < time.time():
            return None
        return _unb64(name).decode()
