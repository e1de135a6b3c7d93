"""What the web app holds for its lifetime: settings, the database, the embedder and the chat model
(all handed in by the composition root, each started lazily and once), and the limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agent.llm.base import ChatModel
from agent.session import ChatService
from api.devices import DeviceCookies
from api.limits import RateLimiter
from api.turns import TurnRunner
from corpus.db import Database
from corpus.embedder import Embedder
from ground.settings import Settings
from inbox.profile import RandomPapers


@dataclass
class AppState:
    settings: Settings
    db: Database
    embedder: Embedder
    llm: Callable[[], ChatModel]  # the configured model, or LLMError saying how to configure one
    warmed_up: bool = False  # database, embedder and dictionary loaded ahead of the first question
    sends: RateLimiter = field(init=False)
    logins: RateLimiter = field(init=False)  # failed sign-ins and registrations, by key
    devices: DeviceCookies = field(init=False)
    turns: TurnRunner = field(init=False)
    random_papers: RandomPapers = field(init=False)  # the inbox ranker's shared negatives

    def __post_init__(self) -> None:
        self.sends = RateLimiter(self.settings.sends_per_minute, per_seconds=60.0)
        self.logins = RateLimiter(self.settings.failed_logins_per_minute, per_seconds=60.0)
        self.devices = DeviceCookies()
        self.turns = TurnRunner(self.settings.max_active_answers, self.settings.answer_slots)
        self.random_papers = RandomPapers()

    def chat_service(self) -> ChatService:
        return ChatService(
            self.db,
            self.embedder,
            self.llm(),
            self.settings.max_steps,
            hybrid=self.settings.retrieval == "hybrid",
            reader=self.settings.reader,
        )
