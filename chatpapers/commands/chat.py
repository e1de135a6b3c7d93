"""`chatpapers chat`: the research agent in the terminal."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Annotated
from uuid import UUID

import typer
from rich.live import Live
from rich.text import Text

from agent.events import ErrorEvent, Final, LevelDecided, StepFinished, StepStarted, Token
from agent.level import LEVELS
from chatpapers.services import Services
from corpus import chats as chat_store
from ground.console import err, out

LOCAL_OWNER = chat_store.LOCAL_OWNER


def chat(
    ctx: typer.Context,
    once: Annotated[str | None, typer.Option(help="Ask one question, print the answer and exit.")] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="With --once: print one JSON object (answer, level, steps, citations)."),
    ] = False,
    level: Annotated[
        str | None, typer.Option(help="Answer at this level: BSc, MSc or PhD (default: judged).")
    ] = None,
) -> None:
    """Chat with the research agent about the papers in your corpus.

    It searches the corpus, reads papers with its tools (you see each step), answers at your level
    (BSc / MSc / PhD, judged from how you write) and cites the papers it used. In the chat:
    `/new` starts a new conversation, `/level PhD` sets the level, `/quit` leaves. Ctrl+C while an
    answer is being written stops it (what was written is kept, marked stopped); at the prompt it
    leaves.
    The model comes from CHATPAPERS_LLM (see README); the embedded local model is the default.
    """
    from agent.session import ChatService

    if level is not None and level not in LEVELS:
        raise typer.BadParameter(f"choose one of {', '.join(LEVELS)}", param_hint="--level")
    if as_json and once is None:
        raise typer.BadParameter("--json goes with --once", param_hint="--json")
    services = Services.of(ctx)
    model, db = services.llm(), services.db
    service = ChatService(
        db,
        services.embedder,
        model,
        services.settings.max_steps,
        hybrid=services.settings.retrieval == "hybrid",
        reader=services.settings.reader,
    )

    def new_chat(chosen: str | None) -> UUID:
        with db.connect(autocommit=True) as conn:
            return chat_store.create_chat(conn, LOCAL_OWNER, level=chosen).chat_id

    chat_id = new_chat(level)
    if once is not None:
        final = _show(service.ask(chat_id, LOCAL_OWNER, once), quiet=as_json)
        if as_json:
            print(
                json.dumps(
                    {
                        "answer": final.answer if final else "",
                        "level": final.level if final else level,
                        "steps": [
                            {"tool": s.tool, "input": s.arguments} for s in (final.steps if final else [])
                        ],
                        "citations": final.citations if final else [],
                        "chat_id": str(chat_id),
                    }
                )
            )
        if final is None:
            sys.exit(1)
        if not as_json:  # the id `chatpapers export` takes
            err.print(f"[dim]chat {chat_id}[/dim]")
        return

    err.print(f"[dim]model: {model.name}; chat {chat_id}; /new, /level BSc|MSc|PhD, /quit[/dim]")
    while True:
        try:
            question = input("\nyou> ").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if not question:
            continue
        if question in ("/quit", "/exit"):
            break
        if question == "/new":
            chat_id = new_chat(level)
            err.print(f"[dim]new conversation: chat {chat_id}[/dim]")
            continue
        if question.startswith("/level"):
            chosen = question.removeprefix("/level").strip()
            if chosen not in LEVELS:
                err.print(f"[yellow]choose one of {', '.join(LEVELS)}[/yellow]")
                continue
            with db.connect(autocommit=True) as conn:
                chat_store.set_level(conn, chat_id, chosen)
            level = chosen
            err.print(f"[dim]level set to {chosen}[/dim]")
            continue
        with ctrl_c_stops() as stop:
            _show(service.ask(chat_id, LOCAL_OWNER, question, stop=stop), quiet=False)


@contextlib.contextmanager
def ctrl_c_stops() -> Iterator[threading.Event]:
    """While an answer is written, the first Ctrl+C stops it (the turn still ends and is saved);
    a second one interrupts as usual."""
    stop = threading.Event()

    def on_interrupt(signum, frame) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        err.print("\n[dim]stopping the answer… (Ctrl+C again to leave)[/dim]")

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield stop
    except BaseException:
        # leaving mid-answer (a second Ctrl+C, SIGTERM): the model's thread ends at its next token,
        # so the exit, which waits for it, comes at once
        stop.set()
        raise
    finally:
        signal.signal(signal.SIGINT, previous)


def _show(events, quiet: bool) -> Final | None:
    """Print each event as it comes; returns the final answer (None after an error).

    The streamed tokens are the model's draft (sentence marks such as "[3]", sentences the check
    will cut); only the final event holds the answer as checked, revised and cited. So the draft
    is shown in a transient live area on a terminal and the final answer replaces it."""
    final = None
    draft = _Draft(enabled=not quiet and err.is_terminal)
    try:
        for event in events:
            if quiet and not isinstance(event, Final | ErrorEvent):
                continue
            if isinstance(event, Token):
                draft.add(event.text)
                continue
            draft.close()
            if isinstance(event, LevelDecided):
                err.print(f"[dim]level {event.level} ({event.reason})[/dim]")
            elif isinstance(event, StepStarted):
                err.print(
                    f"[cyan]→ {event.tool}[/cyan] {json.dumps(event.arguments)}  [dim]{event.thought}[/dim]"
                )
            elif isinstance(event, StepFinished):
                style = "red" if event.error else "dim"
                err.print(
                    f"  [{style}]{event.observation[:200]}[/{style}] [dim]({event.duration_ms:.0f} ms)[/dim]"
                )
            elif isinstance(event, Final):
                final = event
                if not quiet:
                    if event.answer:
                        out.print("\n[bold]chatpapers>[/bold] ", end="")
                        out.print(event.answer, end="", markup=False, highlight=False)
                    out.print()
                    if event.stopped:
                        err.print("[yellow]stopped[/yellow] [dim](the answer is unfinished)[/dim]")
                    if event.citations:
                        links = (f"https://arxiv.org/abs/{c}" for c in event.citations)
                        out.print("cited: " + ", ".join(links))
            elif isinstance(event, ErrorEvent):
                err.print(f"[red]error:[/red] {event.message}")
    finally:
        draft.close()
    return final


class _Draft:
    """The answer as the model writes it, in a live area on stderr that is erased when the
    checked answer arrives (nothing is shown when stderr is not a terminal)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.text = Text(style="dim")
        self.live: Live | None = None

    def add(self, token: str) -> None:
        if not self.enabled:
            return
        if self.live is None:
            self.text = Text("writing… ", style="dim")
            self.live = Live(self.text, console=err, transient=True, vertical_overflow="crop")
            self.live.start()
        self.text.append(token)
        self.live.update(self.text)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
