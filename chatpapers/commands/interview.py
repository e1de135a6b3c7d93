"""`chatpapers interview PAPER`: a journalist agent interviews the author agent of one paper."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from agent.events import Token
from agent.interview import DEFAULT_ROUNDS, AnswerGiven, Exchange, PaperInterview, QuestionAsked, to_markdown
from agent.level import LEVELS
from agent.tools import ToolContext
from agent.tools.base import ToolError
from chatpapers.commands.chat import ctrl_c_stops
from chatpapers.services import Services
from ground.console import err, out


def interview(
    ctx: typer.Context,
    paper: Annotated[
        str, typer.Argument(help="The paper's arXiv id (e.g. 1512.03385), ingested with its text.")
    ],
    rounds: Annotated[int, typer.Option(min=1, max=20, help="Questions in all.")] = DEFAULT_ROUNDS,
    level: Annotated[str, typer.Option(help="Readers' level: BSc, MSc or PhD.")] = "MSc",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the transcript (Markdown) to this file.")
    ] = None,
) -> None:
    """Interview a paper: a journalist agent asks the questions a newcomer would not know to ask
    (the problem, the key idea, assumptions, what the results mean, limits), and the author agent
    answers each one only from the paper's passages, citing them ([1], [2] under each answer).

    In a terminal you may step in before each round: type your own question, or press Enter to
    let the journalist ask. Ctrl+C stops the answer being written; `q` ends the interview.
    """
    if level not in LEVELS:
        raise typer.BadParameter(f"choose one of {', '.join(LEVELS)}", param_hint="--level")
    services = Services.of(ctx)
    tools = ToolContext(connect=services.db.pooled, embedder=services.embedder, llm=services.llm())
    try:
        session = PaperInterview(tools, paper, level)
    except ToolError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    err.print(f"[bold]Interview:[/bold] {session.paper.title} [dim](arXiv:{session.paper.paper_id}, "
              f"{rounds} rounds, {services.llm().name})[/dim]")  # fmt: skip
    interactive = sys.stdin.isatty()
    exchanges: list[Exchange] = []
    for _ in range(rounds):
        own = None
        if interactive:
            try:
                own = input("\nyour question (Enter: the journalist asks; q: end)> ").strip()
            except (EOFError, KeyboardInterrupt):
                break
            if own.lower() in ("q", "quit", "/quit"):
                break
        with ctrl_c_stops() as stop:
            for event in session.round(exchanges, own or None, stop):
                if isinstance(event, QuestionAsked):
                    who = "you" if event.asker == "you" else "journalist"
                    out.print(f"\n[bold cyan]{who}>[/bold cyan] {event.text}", highlight=False)
                    out.print("[bold]author>[/bold] ", end="")
                elif isinstance(event, Token):
                    out.print(event.text, end="", markup=False, highlight=False)
                elif isinstance(event, AnswerGiven):
                    exchanges.append(event.exchange)
                    out.print()
                    if event.exchange.stopped:
                        err.print("[yellow]stopped[/yellow]")
                    for p in event.exchange.passages:
                        err.print(f"  [dim][{p.n}] {p.chunk_id}, page {p.page}: {p.text[:100]}…[/dim]",
                                  highlight=False)  # fmt: skip
    transcript = to_markdown(session.paper, exchanges)
    if output is not None:
        output.write_text(transcript, encoding="utf-8")
        err.print(f"transcript: {output}")
