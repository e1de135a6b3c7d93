"""The personal inbox: followed topics, 👍 / 👎, an imported library, papers worth rating, the
ranked new papers with their reasons, "more like this", and the Atom feed's token. Everything is
the signed-in user's own: no route takes a user id."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

import psycopg
from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from fastapi.responses import Response as RawResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from api.auth import ActingUser, CurrentUser, State
from api.fields import Text
from api.papers import paper_id_of
from corpus import interests
from inbox import feed, library, listing, suggest, topics
from inbox.listing import InboxPage, InboxPaper, Why
from inbox.profile import retrain

router = APIRouter(prefix="/api/inbox", tags=["inbox"])
feeds = APIRouter(tags=["inbox"])

NEW_VISIT_AFTER_SECONDS = 3600.0  # reloads within an hour are the same visit


class ProfileOut(BaseModel):
    topics: list[str]
    liked: int
    disliked: int
    implicit: bool
    has_feed: bool
    trained_on: dict[str, int]
    ranked_by: Literal["model", "topics", "newest"]


class InboxOut(InboxPage):
    profile: ProfileOut


class TopicsIn(BaseModel):
    topics: list[Text] = Field(max_length=topics.MAX_TOPICS, description="Every topic followed, in order.")


class RatingIn(BaseModel):
    rating: Literal[-1, 0, 1] = Field(description="1: 👍, -1: 👎, 0: clear the rating.")
    source: Literal["inbox", "card", "start"] = "inbox"


class RatingOut(BaseModel):
    paper_id: str
    rating: int
    profile: ProfileOut


class SettingsIn(BaseModel):
    implicit: bool = Field(description="Whether papers your chats cited count as a weak 👍.")


class FeedOut(BaseModel):
    url: str


def _profile(conn: psycopg.Connection, owner: str) -> ProfileOut:
    prof = interests.profile(conn, owner)
    rated = interests.ratings(conn, owner)
    followed = [t for t, _ in interests.topics(conn, owner)]
    return ProfileOut(
        topics=followed,
        liked=sum(r.rating == 1 for r in rated),
        disliked=sum(r.rating == -1 for r in rated),
        implicit=prof.implicit,
        has_feed=prof.has_feed,
        trained_on=prof.trained_on,
        ranked_by="model" if prof.weights is not None else "topics" if followed else "newest",
    )


@router.get("", response_model=InboxOut)
def inbox(
    user: CurrentUser,
    state: State,
    since: Annotated[
        datetime | None,
        Query(description="Papers that arrived since then (a date or a time). Default: your last visit."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=100000)] = 0,
) -> InboxOut:
    """The papers that arrived since your last visit (or `since`), best first, each with its reason."""
    now = datetime.now(UTC)
    with state.db.pooled() as conn:
        if since is None:
            # only the inbox as the page opens it is a visit (not a chosen day, not "show more")
            previous = (
                interests.record_visit(conn, user.owner, NEW_VISIT_AFTER_SECONDS)
                if offset == 0
                else interests.profile(conn, user.owner).previous_visit
            )
            since = listing.default_since(previous, now)
        elif since.tzinfo is None:
            since = since.replace(tzinfo=UTC)
        page = listing.ranked(conn, user.owner, since, limit=limit, offset=offset)
        return InboxOut(**page.model_dump(), profile=_profile(conn, user.owner))


@router.get("/profile", response_model=ProfileOut)
def profile(user: CurrentUser, state: State) -> ProfileOut:
    """What the inbox knows of you: topics, how many papers you rated, what the model learned from."""
    with state.db.pooled() as conn:
        return _profile(conn, user.owner)


@router.put("/topics", response_model=ProfileOut)
def follow_topics(body: TopicsIn, user: ActingUser, state: State) -> ProfileOut:
    """Follow exactly these topics (free text: "graph neural networks for molecules")."""
    try:
        wanted = topics.clean(body.topics)
    except topics.TopicError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    with state.db.pooled() as conn:
        topics.follow(conn, state.embedder, user.owner, wanted)
        retrain(conn, user.owner, state.random_papers)
        return _profile(conn, user.owner)


@router.put("/ratings/{paper_id:path}", response_model=RatingOut)
def rate(paper_id: str, body: RatingIn, user: ActingUser, state: State) -> RatingOut:
    """👍 (1), 👎 (-1) or clear (0) a paper; the ranker learns from it at once."""
    pid = paper_id_of(paper_id)
    with state.db.pooled() as conn:
        if not interests.rate(conn, user.owner, pid, body.rating, body.source):
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"{pid} is not in the corpus")
        retrain(conn, user.owner, state.random_papers)
        return RatingOut(paper_id=pid, rating=body.rating, profile=_profile(conn, user.owner))


@router.get("/suggestions", response_model=list[InboxPaper])
def suggestions(
    user: CurrentUser, state: State, n: Annotated[int, Query(ge=1, le=50)] = 10
) -> list[InboxPaper]:
    """Papers worth rating next: what teaches your ranker most (for the first visit: ten)."""
    with state.db.pooled() as conn:
        return suggest.suggestions(conn, user.owner, n)


@router.get("/similar/{paper_id:path}", response_model=list[InboxPaper])
def similar(
    paper_id: str, user: CurrentUser, state: State, k: Annotated[int, Query(ge=1, le=50)] = 10
) -> list[InboxPaper]:
    """More like this: the papers nearest to one paper (title and abstract)."""
    pid = paper_id_of(paper_id)
    with state.db.pooled() as conn:
        found = interests.candidates(conn, [pid])
        if not found:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"{pid} is not in the corpus")
        near = interests.nearest(conn, found[0].vector, k, exclude=[pid])
        ratings = interests.rating_of(conn, user.owner, [c.paper_id for c in near])
    title = found[0].title
    return [
        listing.card(
            c,
            float(c.vector @ found[0].vector),
            Why(kind="liked", text=f"like “{title}”", ref=pid),
            ratings.get(c.paper_id, 0),
        )
        for c in near
    ]


@router.post(
    "/library",
    response_model=library.Imported,
    openapi_extra={"requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
async def import_library(request: Request, user: ActingUser, state: State) -> library.Imported:
    """Import a BibTeX or RIS export (the file's text as the body): entries found in the corpus by
    arXiv id or title become 👍; the others are listed with the reason."""
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # older BibTeX files; every byte is a character
    if "\x00" in text:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "not a text file")

    def run() -> library.Imported:
        try:  # the file is read whole before anything is rated: a bad file changes nothing
            kind, entries, unreadable = library.parse(text)
        except library.LibraryError as exc:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
        with state.db.pooled() as conn:
            result = library.import_library(conn, user.owner, kind, entries, unreadable)
            retrain(conn, user.owner, state.random_papers)
            return result

    return await run_in_threadpool(run)


@router.put("/settings", response_model=ProfileOut)
def settings(body: SettingsIn, user: ActingUser, state: State) -> ProfileOut:
    with state.db.pooled() as conn:
        interests.set_implicit(conn, user.owner, body.implicit)
        retrain(conn, user.owner, state.random_papers)
        return _profile(conn, user.owner)


@router.post("/feed", response_model=FeedOut)
def new_feed(request: Request, user: ActingUser, state: State) -> FeedOut:
    """A new private feed URL (Atom) of your inbox; the previous URL stops working."""
    with state.db.pooled() as conn:
        token = feed.new_token(conn, user.owner)
    return FeedOut(url=str(request.url_for("atom_feed", token=token)))


@router.delete("/feed", status_code=status.HTTP_204_NO_CONTENT)
def revoke_feed(user: ActingUser, state: State) -> Response:
    """The feed URL stops working."""
    with state.db.pooled() as conn:
        feed.revoke(conn, user.owner)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@feeds.get("/feeds/{token}", name="atom_feed", response_class=RawResponse)
def atom_feed(token: str, request: Request, state: State) -> RawResponse:
    """A user's inbox as Atom, at the URL `POST /api/inbox/feed` gave them (no sign-in: the URL is
    the key)."""
    with state.db.pooled() as conn:
        owner = feed.owner_of(conn, token)
        if owner is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "no such feed (revoked, or never made)")
        page = feed.feed_page(conn, owner)
    body = feed.atom(page, owner, str(request.url), str(request.base_url))
    # private: a shared cache must not keep one user's papers under a URL
    return RawResponse(
        body, media_type="application/atom+xml; charset=utf-8", headers={"Cache-Control": "private, no-store"}
    )
