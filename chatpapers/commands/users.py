"""`chatpapers users add | list | delete | set-password`: accounts of the web app, managed from the
server's terminal (the way to create accounts when CHATPAPERS_REGISTRATION=closed)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from api import accounts
from chatpapers.services import Services
from corpus import accounts as account_store
from corpus import chats as chat_store
from corpus import interests
from corpus.text import unstorable
from ground.console import err, out

users_app = typer.Typer(
    help="Web accounts: create them when registration is closed, list, remove, reset passwords.",
    no_args_is_help=True,
)

PasswordStdin = Annotated[
    bool,
    typer.Option(
        "--password-stdin", help="Read the password from standard input (scripts) instead of asking."
    ),
]


def _password(username: str, from_stdin: bool) -> str:
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("password", hide_input=True, confirmation_prompt=True)
    problem = unstorable(password) or accounts.weak_password(password, username)
    if len(password) > 1000:
        problem = "a password has at most 1000 characters"
    if problem:
        err.print(f"[red]error:[/red] {problem}")
        raise typer.Exit(2)
    return password


def _username(username: str) -> str:
    if not accounts.valid_username(username):
        err.print("[red]error:[/red] a username has 3 to 40 letters, digits, '.', '_' or '-'")
        raise typer.Exit(2)
    return username


@users_app.command("add")
def add(
    ctx: typer.Context,
    username: Annotated[str, typer.Argument(help="3 to 40 letters, digits, '.', '_' or '-'.")],
    password_stdin: PasswordStdin = False,
) -> None:
    """Create an account (asks for its password twice)."""
    password = _password(_username(username), password_stdin)
    with Services.of(ctx).db.connect() as conn:
        user = accounts.create_user(conn, username, password)
        conn.commit()
    if user is None:
        err.print(f"[red]error:[/red] the username {username!r} is taken")
        raise typer.Exit(1)
    out.print(f"created {user.username}")


@users_app.command("list")
def list_users(ctx: typer.Context) -> None:
    """Every account and when it was created."""
    with Services.of(ctx).db.connect() as conn:
        rows = account_store.list_users(conn)
    if not rows:
        out.print("no accounts yet (chatpapers users add NAME)")
    for user, created in rows:
        out.print(f"{user.username}\t{created:%Y-%m-%d %H:%M}")


@users_app.command("delete")
def delete(
    ctx: typer.Context,
    username: str,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Remove an account with its chats, sessions and inbox interests."""
    if not yes:
        typer.confirm(f"delete {username} and all their chats?", abort=True)
    with Services.of(ctx).db.connect() as conn, conn.transaction():
        user = account_store.delete_user(conn, username)
        removed = chat_store.delete_owner_chats(conn, str(user.user_id)) if user else 0
        if user:
            interests.forget_owner(conn, str(user.user_id))
    if user is None:
        err.print(f"[red]error:[/red] no account named {username!r}")
        raise typer.Exit(1)
    out.print(f"deleted {user.username} and {removed} chat(s)")


@users_app.command("set-password")
def set_password(ctx: typer.Context, username: str, password_stdin: PasswordStdin = False) -> None:
    """Give an account a new password and sign it out everywhere."""
    password = _password(username, password_stdin)
    with Services.of(ctx).db.connect() as conn, conn.transaction():
        found = account_store.credentials(conn, username)
        if found is not None:
            accounts.set_password(conn, username, password)
            account_store.delete_sessions(conn, found[0].user_id)
    if found is None:
        err.print(f"[red]error:[/red] no account named {username!r}")
        raise typer.Exit(1)
    out.print(f"new password set for {found[0].username}; their sessions were signed out")
