"""`/health`: is the database reachable, is the embedder there, is a language model configured.

200 when chatting can work; 503 when the database is down. A missing LLM is reported (the page
shows a banner) but the rest of the app still works, so it is not a 503 by itself."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from agent.llm.base import LLMError
from api.auth import State
from api.state import AppState
from corpus import papers
from ground import __version__

router = APIRouter(tags=["health"])


class Component(BaseModel):
    ok: bool
    detail: str


class Health(BaseModel):
    status: str  # ok | degraded | down
    version: str
    auth: str
    papers: int | None
    warmed_up: bool
    database: Component
    embedder: Component
    llm: Component


def _database(state: AppState) -> tuple[Component, int | None]:
    try:
        with state.db.pooled() as conn:
            count = papers.count_papers(conn)
    except Exception as exc:  # any failure here is what /health reports
        return Component(ok=False, detail=f"the database is unavailable: {exc}"), None
    return Component(ok=True, detail=state.db.describe()), int(count)


def _embedder(state: AppState) -> Component:
    from corpus.embedder import model_path

    try:
        path = model_path()
    except Exception as exc:
        return Component(ok=False, detail=f"the MiniLM model package is missing: {exc}")
    loaded = state.embedder.loaded
    return Component(
        ok=True, detail=f"all-MiniLM-L6-v2 ({'loaded' if loaded else 'not loaded yet'}) from {path}"
    )


def _llm(state: AppState) -> Component:
    try:
        return Component(ok=True, detail=state.llm().name)
    except LLMError as exc:
        return Component(ok=False, detail=str(exc))


def check(state: AppState) -> Health:
    database, papers = _database(state)
    embedder, llm = _embedder(state), _llm(state)
    status = "ok" if database.ok and embedder.ok and llm.ok else ("degraded" if database.ok else "down")
    return Health(
        status=status,
        version=__version__,
        auth=state.settings.auth,
        papers=papers,
        warmed_up=state.warmed_up,
        database=database,
        embedder=embedder,
        llm=llm,
    )


@router.get("/health", response_model=Health, responses={503: {"model": Health}})
async def health(state: State) -> JSONResponse:
    report = await run_in_threadpool(check, state)
    return JSONResponse(report.model_dump(), status_code=200 if report.database.ok else 503)
