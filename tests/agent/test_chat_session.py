"""Chats persist turns (steps, citations, level, allowed papers) and feed history back."""

from __future__ import annotations

from agent.events import Final
from agent.session import ChatService
from corpus import chats as chat_store
from corpus.db import Database
from corpus.embedder import Embedder
from tests.scripted_model import ScriptedModel, step


def test_turns_are_saved_and_reused(corpus_copy: Database, embedder: Embedder) -> None:
    model = ScriptedModel(
        [
            step("final_answer"),
            "ResNets ease optimisation (arXiv:1512.03385).",
            step("final_answer"),
            "As I said, see [1].",
        ]
    )
    service = ChatService(corpus_copy, embedder, model, reader="agent")  # history in the ReAct prompt
    with corpus_copy.connect(autocommit=True) as conn:
        chat = chat_store.create_chat(conn, "alice")
    finals = [
        e
        for e in service.ask(chat.chat_id, "alice", "What do deep residual networks solve?")
        if isinstance(e, Final)
    ]
    assert finals and finals[0].citations == ["1512.03385"]
    list(service.ask(chat.chat_id, "alice", "Say it again?"))
    with corpus_copy.connect(autocommit=True) as conn:
        saved = chat_store.messages(conn, chat.chat_id)
        info = chat_store.get_chat(conn, chat.chat_id, "alice")
        other = chat_store.get_chat(conn, chat.chat_id, "bob")
        chat_store.delete_chat(conn, chat.chat_id, "alice")
    assert [m.role for m in saved] == ["user", "assistant", "user", "assistant"]
    assert saved[1].steps[0]["tool"] == "search" and saved[1].steps[0]["arguments"]["k"] == 5
    # "Say it again?" is about the paper of the previous answer: the turn reads it
    assert saved[3].steps[0]["tool"] == "get_information_from_paper"
    assert saved[3].steps[0]["arguments"]["paper_id"] == "1512.03385"
    assert saved[1].citations == ["1512.03385"] and saved[3].citations == ["1512.03385"]
    assert info is not None and info.title == "What do deep residual networks solve?"
    assert "1512.03385" in info.allowed_papers and info.level is not None
    assert other is None  # somebody else's chat does not exist for them
    # the second turn saw the first one as history
    asked = model.calls[3][0][1].content
    assert asked.startswith('(Earlier in this chat, for context only:\n- I asked: "What do deep residual')
    assert ")\n\nMy new question: Say it again?\n(Sources of your previous answer: [1] Deep" in asked
