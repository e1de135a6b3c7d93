"""`/health`: is the database reachable, is the embedder there, is a language model configured.

200 when chatting can work; 503 when the database is down. A missing LLM is reported (the page
shows a banner) but the rest of the app still works, so it is not a 503 by itself. Anybody may ask;
only signed-in users see the details (paths, database location, model file), which tell an
outsider how the machine is laid out."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from agent.llm.base import LLMError
from api.auth import State, principal
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


_PUBLIC_DETAIL = {
    "database": ("connected", "the database is unavailable"),
    "embedder": ("ready", "the embedding model is missing"),
    "llm": ("configured", "no language model is configured"),
}


def _public(report: Health) -> Health:
    def plain(name: str, part: Component) -> Component:
        return Component(ok=part.ok, detail=_PUBLIC_DETAIL[name][0 if part.ok else 1])

    return report.model_copy(
        update={name: plain(name, getattr(report, name)) for name in _PUBLIC_DETAIL} | {"papers": None}
    )


@router.head("/health", include_in_schema=False)
@router.get("/health", response_model=Health, responses={503: {"model": Health}})
async def health(request: Request, state: State) -> JSONResponse:
    report = await run_in_threadpool(check, state)
    signed_in = await run_in_threadpool(lambda: _signed_in(request, state))
    shown = report if signed_in else _public(report)
    return JSONResponse(shown.model_dump(), status_code=200 if report.database.ok else 503)


def _signed_in(request: Request, state: AppState) -> bool:
    try:
        return principal(request, state) is not None
    except Exception:  # the database is down: nobody can be recognised
        return False
