"""Sign-in: register / login / logout, the session cookie, and CSRF checks.

The session cookie is HTTP-only. Every state-changing request must send `X-CSRF-Token`: for a
signed-in user the session's own token, otherwise (login, register, single-user mode) the value of
the `chatpapers_csrf` cookie — a page on another site can read neither."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, Response, status
from pydantic import BaseModel, Field

from api import accounts
from api.devices import DEVICE_COOKIE
from api.fields import Text
from api.state import AppState
from corpus.chats import LOCAL_OWNER

SESSION_COOKIE = "chatpapers_session"
CSRF_COOKIE = "chatpapers_csrf"
CSRF_HEADER = "X-CSRF-Token"

router = APIRouter(prefix="/api/auth", tags=["auth"])


class Principal(BaseModel):
    owner: str  # chats.owner
    username: str
    csrf_token: str | None


class Credentials(BaseModel):
    username: Text = Field(min_length=1, max_length=100)
    password: Text = Field(min_length=1, max_length=1000)


class SessionInfo(BaseModel):
    auth: str
    user: str | None
    csrf_token: str


def app_state(request: Request) -> AppState:
    return request.app.state.chatpapers


State = Annotated[AppState, Depends(app_state)]


def principal(request: Request, state: AppState) -> Principal | None:
    if state.settings.auth == "none":
        return Principal(owner=LOCAL_OWNER, username=LOCAL_OWNER, csrf_token=request.cookies.get(CSRF_COOKIE))
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    with state.db.pooled() as conn:
        session = accounts.get_session(conn, token)
    if session is None:
        return None
    return Principal(
        owner=str(session.user.user_id), username=session.user.username, csrf_token=session.csrf_token
    )


def current_user(request: Request, state: State) -> Principal:
    user = principal(request, state)
    if user is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "sign in first")
    return user


def _check_csrf(request: Request, expected: str | None) -> None:
    sent = request.headers.get(CSRF_HEADER)
    # as bytes: compare_digest refuses str with non-ASCII characters (a header can carry any byte)
    if not expected or not sent or not secrets.compare_digest(sent.encode(), expected.encode()):
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"missing or wrong {CSRF_HEADER} header (CSRF check)")


async def acting_user(request: Request, user: Annotated[Principal, Depends(current_user)]) -> Principal:
    """The signed-in user of a state-changing request, after the CSRF check (async: no thread hop)."""
    _check_csrf(request, user.csrf_token)
    return user


CurrentUser = Annotated[Principal, Depends(current_user)]
ActingUser = Annotated[Principal, Depends(acting_user)]


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _set_csrf_cookie(request: Request, response: Response, value: str) -> None:
    response.set_cookie(CSRF_COOKIE, value, samesite="strict", secure=_secure(request), path="/")


def _start_session(request: Request, response: Response, state: AppState, user: accounts.User) -> SessionInfo:
    with state.db.pooled() as conn:
        new = accounts.create_session(conn, user, state.settings.session_days)
    response.set_cookie(
        SESSION_COOKIE,
        new.token,
        max_age=state.settings.session_days * 86400,
        httponly=True,
        samesite="lax",
        secure=_secure(request),
        path="/",
    )
    _set_csrf_cookie(request, response, new.csrf_token)
    response.set_cookie(
        DEVICE_COOKIE,
        state.devices.issue(user.username),
        max_age=state.devices.seconds,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
        path="/api/auth",
    )
    return SessionInfo(auth=state.settings.auth, user=user.username, csrf_token=new.csrf_token)


def _accounts_on(state: AppState) -> None:
    if state.settings.auth == "none":
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST, "accounts are off: this server runs in single-user mode"
        )


@router.get("/session", response_model=SessionInfo)
def session(request: Request, response: Response, state: State) -> SessionInfo:
    """Who is signed in, and the CSRF token to send with state-changing requests."""
    user = principal(request, state)
    if user is not None and user.csrf_token:
        if state.settings.auth == "password":
            _set_csrf_cookie(request, response, user.csrf_token)
        return SessionInfo(auth=state.settings.auth, user=user.username, csrf_token=user.csrf_token)
    token = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
    _set_csrf_cookie(request, response, token)
    signed_in = user.username if user is not None else None
    return SessionInfo(auth=state.settings.auth, user=signed_in, csrf_token=token)


def client_address(request: Request) -> str:
    """The client's address. Behind a reverse proxy it is the proxy's X-Forwarded-For only when
    that proxy is trusted (`CHATPAPERS_TRUSTED_PROXIES` / `serve --forwarded-allow-ips`): uvicorn
    rewrites the address then, and ignores the header otherwise."""
    return request.client.host if request.client else "?"


def _too_many(wait: float, what: str) -> HTTPException:
    return HTTPException(
        status.HTTP_429_TOO_MANY_REQUESTS,
        f"too many {what}; try again later",
        {"Retry-After": str(int(wait) + 1)},
    )


@router.post("/register", response_model=SessionInfo, status_code=status.HTTP_201_CREATED)
def register(request: Request, response: Response, body: Credentials, state: State) -> SessionInfo:
    """Create an account and sign in (unless registration is closed)."""
    _accounts_on(state)
    if state.settings.registration == "closed":
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "registration is closed on this server; ask its administrator"
        )
    _check_csrf(request, request.cookies.get(CSRF_COOKIE))
    if not accounts.valid_username(body.username):
        raise HTTPException(422, "a username has 3 to 40 letters, digits, '.', '_' or '-'")
    weak = accounts.weak_password(body.password, body.username)
    if weak is not None:
        raise HTTPException(422, weak)
    wait = state.logins.take(
        {f"register:{client_address(request)}": (state.settings.registrations_per_hour, 3600.0)}
    )
    if wait is not None:
        raise _too_many(wait, "new accounts from this address")
    with state.db.pooled() as conn:
        user = accounts.create_user(conn, body.username, body.password)
    if user is None:
        raise HTTPException(status.HTTP_409_CONFLICT, "that username is taken")
    return _start_session(request, response, state, user)


@router.post("/login", response_model=SessionInfo)
def login(request: Request, response: Response, body: Credentials, state: State) -> SessionInfo:
    """Sign in. Failed attempts are limited per client address and per account; a browser that
    signed in to this account before has its own limit instead (see api/devices.py)."""
    _accounts_on(state)
    _check_csrf(request, request.cookies.get(CSRF_COOKIE))
    settings, name = state.settings, accounts.username_key(body.username)
    device = request.cookies.get(DEVICE_COOKIE)
    if state.devices.username(device) == name:
        quotas = {f"device:{device}": (settings.failed_logins_per_minute, 60.0)}
    else:
        quotas = {
            f"address:{client_address(request)}": (settings.failed_logins_per_minute, 60.0),
            f"account:{name}": (settings.failed_logins_per_account_hour, 3600.0),
        }
    # Counted before the check, in one step: concurrent guesses cannot all pass a check that
    # none of them has been counted in yet. A right password gives its attempt back.
    wait = state.logins.take(quotas)
    if wait is not None:
        raise _too_many(wait, "failed sign-ins")
    with state.db.pooled() as conn:
        if accounts.locked_out(conn, quotas):  # failures from before a restart
            state.logins.give_back(quotas)
            raise _too_many(60.0, "failed sign-ins")
        user = accounts.check_password(conn, body.username, body.password)
        if user is None:
            accounts.record_failure(conn, quotas)
    if user is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "wrong username or password")
    state.logins.give_back(quotas)
    return _start_session(request, response, state, user)


@router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(request: Request, response: Response, user: ActingUser, state: State) -> None:
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        with state.db.pooled() as conn:
            accounts.delete_session(conn, token)
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")
