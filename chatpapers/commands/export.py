"""`chatpapers export CHAT_ID --format md|bib`: a chat as Markdown, or its cited papers as BibTeX —
the same files the page's download links give (api/exports.py renders both)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from api import exports
from chatpapers.services import Services
from corpus import accounts as account_store
from corpus import chats as chat_store
from ground.console import err


class ExportFormat(StrEnum):
    md = "md"
    bib = "bib"


def export(
    ctx: typer.Context,
    chat_id: Annotated[
        str, typer.Argument(help="The chat's id (in the page's download links; `chat` prints it).")
    ],
    fmt: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="md: the conversation; bib: its cited papers.")
    ] = ExportFormat.md,
    user: Annotated[
        str | None,
        typer.Option(help="Whose chat (a web account); default: the terminal's and single-user mode's."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of standard output.")
    ] = None,
) -> None:
    """Export a chat: the questions, the agent's steps, the answers and their sources as Markdown,
    or the papers its answers cited as BibTeX.

    `chatpapers export 3f2c... --format bib -o refs.bib`; `--user alice` for a web account's chat.
    """
    with Services.of(ctx).db.connect(autocommit=True) as conn:
        owner = chat_store.LOCAL_OWNER
        if user is not None:
            found_user = account_store.credentials(conn, user)
            if found_user is None:
                err.print(f"[red]error:[/red] no account named {user!r}")
                raise typer.Exit(1)
            owner = str(found_user[0].user_id)
        found = exports.load(conn, chat_id.strip(), owner)
        recent = chat_store.list_chats(conn, owner, limit=5) if found is None else []
    if found is None:
        whose = f"{user}'s chats" if user else "the terminal's chats (--user NAME for a web account's)"
        err.print(f"[red]error:[/red] no chat {chat_id!r} among {whose}", soft_wrap=True, highlight=False)
        for chat in recent:  # the ids it may have meant: one is easily mistyped or cut short
            line = f"  {chat.chat_id}  {chat.updated_at:%Y-%m-%d %H:%M}  {chat.title}"
            err.print(line, markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    text = exports.render(found, "md" if fmt is ExportFormat.md else "bib")
    if output is None:
        sys.stdout.write(text)
        return
    output.write_text(text, encoding="utf-8")
    err.print(f"wrote {output}", markup=False, highlight=False)
