"""What the web app holds for its lifetime: settings, the database, the embedder and the chat model,
each started lazily and once."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from agent.llm.base import ChatModel, LLMError
from agent.session import ChatService
from api.limits import RateLimiter
from api.turns import TurnRunner
from chatpapers.settings import Settings
from corpus.db import Database
from corpus.embedder import Embedder


@dataclass
class AppState:
    settings: Settings
    db: Database
    embedder: Embedder
    model: ChatModel | None = None  # None: resolved from settings on first use
    warmed_up: bool = False  # database, embedder and dictionary loaded ahead of the first question
    sends: RateLimiter = field(init=False)
    failed_logins: RateLimiter = field(init=False)
    turns: TurnRunner = field(init=False)
    _model_error: str | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.sends = RateLimiter(self.settings.sends_per_minute, per_seconds=60.0)
        self.failed_logins = RateLimiter(10, per_seconds=60.0)  # per client address
        self.turns = TurnRunner(self.settings.max_active_answers, self.settings.answer_slots)

    def chat_model(self) -> ChatModel:
        """The configured model; LLMError (with how to configure one) when there is none."""
        with self._lock:
            if self.model is None and self._model_error is None:
                from agent.llm import resolve_llm

                try:
                    self.model = resolve_llm(self.settings)
                except LLMError as exc:
                    self._model_error = str(exc)
            if self.model is None:
                raise LLMError(self._model_error or "no language model")
            return self.model

    def chat_service(self) -> ChatService:
        return ChatService(self.db, self.embedder, self.chat_model(), self.settings.max_steps)
