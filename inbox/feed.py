"""A user's inbox as an Atom feed (RFC 4287) at an unguessable, revocable URL: any feed reader, or a
mail-by-feed service, delivers the papers without the page. Only a hash of the token is stored."""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree as ET

import psycopg

from corpus import interests
from inbox.listing import InboxPage, ranked

ATOM = "http://www.w3.org/2005/Atom"
FEED_DAYS = 7  # the window a feed reader sees: a week of arrivals, the best first
FEED_PAPERS = 50


# Characters XML 1.0 does not allow (controls, lone surrogates, U+FFFE/U+FFFF): ElementTree writes
# them as they are, and a feed reader then refuses the whole feed.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "replace")).digest()


def new_token(conn: psycopg.Connection, owner: str) -> str:
    """A new feed token for `owner`; the previous one stops working."""
    token = secrets.token_urlsafe(32)
    interests.set_feed_token_hash(conn, owner, token_hash(token))
    return token


def revoke(conn: psycopg.Connection, owner: str) -> None:
    interests.set_feed_token_hash(conn, owner, None)


def owner_of(conn: psycopg.Connection, token: str) -> str | None:
    if not token or len(token) > 100:
        return None
    return interests.owner_of_feed(conn, token_hash(token))


def feed_page(conn: psycopg.Connection, owner: str, now: datetime | None = None) -> InboxPage:
    now = now or datetime.now(UTC)
    return ranked(conn, owner, since=now - timedelta(days=FEED_DAYS), limit=FEED_PAPERS)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def atom(page: InboxPage, owner: str, feed_url: str, page_url: str) -> bytes:
    """The feed document. Its id comes from the owner (not the token), so a new token is the same
    feed to a reader; each entry's id is the paper's arXiv URL."""
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
        node = ET.SubElement(parent, f"{{{ATOM}}}{tag}", {k: xml_text(v) for k, v in attrs.items()})
        if text is not None:
            node.text = xml_text(text)
        return node

    updated = max((p.arrived for p in page.papers), default=page.since)
    sub(feed, "id", uuid.uuid5(uuid.NAMESPACE_URL, f"chatpapers-inbox:{owner}").urn)
    sub(feed, "title", "chatpapers: your new papers")
    sub(feed, "subtitle", f"New arXiv papers of the last {FEED_DAYS} days, ranked for you")
    sub(feed, "updated", _iso(updated))
    sub(feed, "link", rel="self", href=feed_url, type="application/atom+xml")
    sub(feed, "link", rel="alternate", href=page_url, type="text/html")
    sub(sub(feed, "author"), "name", "chatpapers")
    sub(feed, "generator", "chatpapers")
    for p in page.papers:
        entry = sub(feed, "entry")
        sub(entry, "id", p.url)
        sub(entry, "title", p.title)
        sub(entry, "updated", _iso(p.arrived))
        if p.published:
            sub(entry, "published", _iso(p.published))
        sub(entry, "link", rel="alternate", href=p.url, type="text/html")
        for name in p.authors[:20] or ["unknown"]:
            sub(sub(entry, "author"), "name", name)
        for category in p.categories:
            sub(entry, "category", term=category)
        sub(entry, "summary", f"{p.why.text}. {p.abstract_head}", type="text")
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(
        feed, encoding="utf-8", xml_declaration=False
    )
