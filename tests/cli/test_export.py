"""`chatpapers export` as a real subprocess against the real database: a terminal chat and a web
account's chat, as Markdown and BibTeX, to standard output and to a file; wrong ids and users."""

from __future__ import annotations

import uuid
from pathlib import Path

from agent.session import ChatService
from api import accounts
from corpus import chats as chat_store
from corpus.db import Database
from corpus.embedder import Embedder
from tests.conftest import cli_env, run_cli
from tests.scripted_model import ScriptedModel, step

QUESTION = "What problem do deep residual networks solve?"


def _answered(db: Database, embedder: Embedder, owner: str) -> str:
    """A chat of `owner` with one answer citing the ResNet paper; its id."""
    model = ScriptedModel([step("final_answer"), "Residual learning makes very deep networks trainable [1]."])
    with db.connect(autocommit=True) as conn:
        chat = chat_store.create_chat(conn, owner)
    events = list(ChatService(db, embedder, model).ask(chat.chat_id, owner, QUESTION))
    assert events[-1].type == "final", events[-1]
    return str(chat.chat_id)


def test_export_a_terminal_chat_and_a_web_accounts_chat(
    corpus_copy: Database, embedder: Embedder, tmp_path: Path
) -> None:
    env = cli_env(corpus_copy.settings, DATABASE_URL=corpus_copy.url)
    mine = _answered(corpus_copy, embedder, chat_store.LOCAL_OWNER)

    bib = run_cli(env, "export", mine, "--format", "bib")
    assert bib.returncode == 0, bib.stderr
    assert bib.stdout.startswith(
        "@misc{he2015deep,\n  title = {{Deep Residual Learning for Image Recognition}},"
    )
    assert "  eprint = {1512.03385},\n  archivePrefix = {arXiv},\n  primaryClass = {cs.CV}," in bib.stdout

    out = tmp_path / "chat.md"
    md = run_cli(env, "export", mine, "-o", str(out))  # Markdown is the default
    assert md.returncode == 0 and md.stdout == "" and f"wrote {out}" in md.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith(f"# {QUESTION}\n") and f"> {QUESTION}" in text
    assert "1. `search`" in text and "(https://arxiv.org/abs/1512.03385)" in text
    assert "_scripted · " in text

    # a web account's chat needs --user; without it, it is not among the terminal's chats
    username = f"carol-{uuid.uuid4().hex[:6]}"
    with corpus_copy.connect() as conn:
        user = accounts.create_user(conn, username, "correct horse battery")
        conn.commit()
    assert user is not None
    theirs = _answered(corpus_copy, embedder, str(user.user_id))
    hidden = run_cli(env, "export", theirs)
    assert hidden.returncode == 1 and hidden.stdout == ""
    assert f"no chat '{theirs}' among the terminal's chats" in hidden.stderr
    assert mine in hidden.stderr and "Traceback" not in hidden.stderr  # the ids it could have meant
    found = run_cli(env, "export", theirs, "--user", username.upper(), "--format", "md")
    assert found.returncode == 0 and found.stdout.startswith(f"# {QUESTION}\n"), found.stderr
    # ...and the terminal's chat is not among the account's
    assert run_cli(env, "export", mine, "--user", username).returncode == 1

    nobody = run_cli(env, "export", mine, "--user", "nobody-here")
    assert nobody.returncode == 1 and "no account named 'nobody-here'" in nobody.stderr
    wrong = run_cli(env, "export", mine, "--format", "pdf")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    garbage = run_cli(env, "export", "not-a-chat-id")
    assert garbage.returncode == 1 and "no chat 'not-a-chat-id'" in garbage.stderr
