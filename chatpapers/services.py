"""The composition root: settings -> database, embedder and chat model, each built once per
process and only when first needed (`--help` starts nothing). The CLI builds one `Services` in
its callback and hands it to the command; benchmarks and tests build theirs the same way."""

from __future__ import annotations

import threading
from functools import cached_property

import typer

from agent.llm import resolve_llm
from agent.llm.base import ChatModel, LLMError
from agent.llm.traced import TracedModel
from chatpapers.telemetry import start_tracing
from corpus.db import Database
from corpus.embedder import Embedder
from ground.settings import Settings, load_settings


class Services:
    def __init__(self, settings: Settings, embed_threads: int | None = None) -> None:
        self.settings = settings
        # None: torch's default (all cores: ingest, eval). The web server passes 1: a question's
        # vector is small work, and the other core keeps serving.
        self.embed_threads = embed_threads
        self._llm: ChatModel | None = None
        self._llm_error: LLMError | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls, **overrides: object) -> Services:
        return cls(load_settings(**overrides))

    @staticmethod
    def of(ctx: typer.Context) -> Services:
        """The services the CLI callback built for this command."""
        services = ctx.find_object(Services)
        assert services is not None, "the chatpapers callback builds the services"
        return services

    @cached_property
    def db(self) -> Database:
        return Database(self.settings)

    @cached_property
    def embedder(self) -> Embedder:
        return Embedder(batch_size=self.settings.embed_batch_size, threads=self.embed_threads)

    def llm(self) -> ChatModel:
        """The configured chat model, resolved once; LLMError (saying how to configure one) when
        there is none — remembered, so a server without a model does not retry on every request."""
        with self._lock:
            if self._llm is None and self._llm_error is None:
                try:
                    self._llm = resolve_llm(self.settings)
                except LLMError as exc:
                    self._llm_error = exc
                if self._llm is not None and start_tracing(self.settings) is not None:
                    self._llm = TracedModel(self._llm)
            if self._llm is None:
                assert self._llm_error is not None
                raise self._llm_error
            return self._llm

    def with_llm(self, spec: str | None) -> Services:
        """The same services answering with another model (`local`, `openai:<model>`, ...);
        the database and embedder are shared."""
        if not spec or spec == self.settings.llm:
            return self
        other = Services(self.settings.model_copy(update={"llm": spec}), self.embed_threads)
        # both are lazy objects: sharing them starts nothing
        other.__dict__.update(db=self.db, embedder=self.embedder)
        return other
