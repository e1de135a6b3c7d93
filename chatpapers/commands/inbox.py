"""`chatpapers inbox`: the personal inbox in the terminal — the new papers ranked for a user, with
the reason each is there; rate papers and follow topics without the page."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.markup import escape

from chatpapers.services import Services
from corpus import accounts as account_store
from corpus import interests
from corpus.chats import LOCAL_OWNER
from corpus.ids import stored_paper_id
from ground.console import err, out
from inbox import listing, topics
from inbox.profile import RandomPapers, retrain
from inbox.refresh import refresh_all

inbox_app = typer.Typer(
    help="Your new papers, ranked for you (`chatpapers inbox --user NAME`); rate papers and follow "
    "topics from the terminal. Without --user: the terminal's own profile (single-user mode's too).",
    invoke_without_command=True,
)

User = Annotated[
    str | None,
    typer.Option("--user", "-u", help="A web account's username. Default: the terminal's own profile."),
]


def _owner(services: Services, username: str | None) -> str:
    if username is None:
        return LOCAL_OWNER
    with services.db.connect() as conn:
        found = account_store.credentials(conn, username)
    if found is None:
        err.print(f"[red]error:[/red] no account named {escape(username)!r} (chatpapers users list)")
        raise typer.Exit(1)
    return str(found[0].user_id)


@inbox_app.callback()
def show(
    ctx: typer.Context,
    user: User = None,
    since: Annotated[
        datetime | None,
        typer.Option(
            formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"],
            help="Papers that arrived since this day (YYYY-MM-DD). Default: the page's window, "
            "since the visit before the latest one, or the last 7 days.",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="How many papers at most.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (the API's inbox page).")] = False,
) -> None:
    """Print the inbox: the new papers, best first, each with why it is there."""
    if ctx.invoked_subcommand is not None:
        return
    services = Services.of(ctx)
    owner = _owner(services, user)
    now = datetime.now(UTC)
    with services.db.connect() as conn:
        prof = interests.profile(conn, owner)
        start = since.replace(tzinfo=UTC) if since else listing.default_since(prof.previous_visit, now)
        page = listing.ranked(conn, owner, start, limit=limit)
    if as_json:
        typer.echo(page.model_dump_json(indent=2))
        return
    how = {"model": "your ratings", "topics": "your topics", "newest": "newest first"}[page.ranked_by]
    out.print(
        f"[bold]{page.total} new paper(s) since {start:%Y-%m-%d %H:%M} UTC[/bold] — ranked by {how}",
        soft_wrap=True,
    )
    if page.ranked_by == "newest":
        out.print('[dim]follow topics to rank them: chatpapers inbox follow "topic one" "topic two"[/dim]')
    for n, p in enumerate(page.papers, 1):
        mark = {1: " 👍", -1: " 👎"}.get(p.rating, "")
        authors = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
        date = f"{p.published:%Y-%m-%d}" if p.published else "undated"
        out.print(f"\n[bold]{n}. {escape(p.title)}[/bold]{mark}", soft_wrap=True)
        out.print(
            f"   {p.paper_id} · {escape(authors)} · {date} · {', '.join(p.categories[:3])}", soft_wrap=True
        )
        out.print(f"   [green]{escape(p.why.text)}[/green]", soft_wrap=True)
        if p.abstract_head:
            out.print(f"   [dim]{escape(p.abstract_head)}[/dim]", soft_wrap=True)


@inbox_app.command("rate")
def rate(
    ctx: typer.Context,
    paper_id: Annotated[str, typer.Argument(help="An arXiv id (2301.01234, arXiv:2301.01234v2, a URL).")],
    rating: Annotated[str, typer.Argument(help="up (👍), down (👎) or clear.")],
    user: User = None,
) -> None:
    """👍 / 👎 a paper; the ranker learns from it at once."""
    value = {"up": 1, "down": -1, "clear": 0}.get(rating.lower())
    if value is None:
        raise typer.BadParameter("up, down or clear", param_hint="RATING")
    pid = stored_paper_id(paper_id)
    if pid is None:
        raise typer.BadParameter(f"{paper_id!r} is not an arXiv id", param_hint="PAPER_ID")
    services = Services.of(ctx)
    owner = _owner(services, user)
    with services.db.connect() as conn, conn.transaction():
        if not interests.rate(conn, owner, pid, value, "terminal"):
            err.print(f"[red]error:[/red] {pid} is not in the corpus")
            raise typer.Exit(1)
        trained = retrain(conn, owner, RandomPapers())
    word = {1: "👍", -1: "👎", 0: "cleared"}[value]
    out.print(
        f"{pid}: {word}; the ranker learned from {trained.counts['liked']} 👍"
        f" and {trained.counts['disliked']} 👎"
    )


@inbox_app.command("follow")
def follow(
    ctx: typer.Context,
    topic: Annotated[list[str], typer.Argument(help="Topics to follow, each quoted; replaces the list.")],
    user: User = None,
) -> None:
    """Follow exactly these topics (free text), e.g. `chatpapers inbox follow "graph neural networks"`."""
    services = Services.of(ctx)
    owner = _owner(services, user)
    try:
        wanted = topics.clean(topic)
    except topics.TopicError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    with services.db.connect() as conn, conn.transaction():
        topics.follow(conn, services.embedder, owner, wanted)
        retrain(conn, owner, RandomPapers())
    out.print("following: " + "; ".join(escape(t) for t in wanted))


@inbox_app.command("refresh")
def refresh(
    ctx: typer.Context,
    since: Annotated[
        datetime,
        typer.Option(formats=["%Y-%m-%d"], help="Score the papers that arrived since this day."),
    ] = datetime(1970, 1, 1),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Learn every user's ranker again (what `ingest` does at its end)."""
    with Services.of(ctx).db.connect() as conn:
        done = refresh_all(conn, since.replace(tzinfo=UTC))
    if as_json:
        typer.echo(json.dumps(done.model_dump()))
        return
    out.print(
        f"{done.users} user(s), {done.trained} with a trained ranker; {done.new_papers} paper(s) scored "
        f"in {done.score_seconds:.3f} s after {done.train_seconds:.2f} s training"
    )
