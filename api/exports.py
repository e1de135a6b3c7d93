"""A chat to take away: the conversation as Markdown, and the papers its answers cited as BibTeX.

One renderer for the web API (`GET /api/chats/{id}/export.md|bib`) and `chatpapers export`, so a
download and a terminal export are the same file. It reads what the chat stored; the papers'
metadata (authors, year, primary category) comes from the corpus, where the BibTeX needs more than
an answer's source card keeps."""

from __future__ import annotations

import json
import re
import unicodedata
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

import psycopg
from pydantic import BaseModel

from corpus import chats as chat_store
from corpus import papers as paper_store
from corpus.ids import abs_url, parse_arxiv_id
from corpus.models import PaperRecord

Format = Literal["md", "bib"]
MEDIA_TYPES: dict[str, str] = {
    "md": "text/markdown; charset=utf-8",
    "bib": "application/x-bibtex; charset=utf-8",
}


class ChatExport(BaseModel):
    """Everything an export shows: the chat, its saved messages, and the cited papers by id."""

    chat: chat_store.ChatInfo
    messages: list[chat_store.MessageRecord]
    papers: dict[str, PaperRecord]


def load(conn: psycopg.Connection, chat_id: UUID | str, owner: str) -> ChatExport | None:
    """The owner's chat ready to export; None for an unknown chat and for somebody else's alike."""
    chat = chat_store.get_chat(conn, chat_id, owner)
    if chat is None:
        return None
    saved = chat_store.messages(conn, chat.chat_id)
    return ChatExport(chat=chat, messages=saved, papers=paper_store.get_papers(conn, cited(saved)))


def cited(messages: list[chat_store.MessageRecord]) -> list[str]:
    """Every paper the chat's answers cited, in the order they were first cited."""
    return list(dict.fromkeys(pid for m in messages if m.role == "assistant" for pid in m.citations))


def render(export: ChatExport, fmt: Format) -> str:
    return to_markdown(export) if fmt == "md" else to_bibtex(export)


def filename(chat: chat_store.ChatInfo, fmt: Format) -> str:
    """A name every file system and every Content-Disposition parser takes: the title in lowercase
    ASCII words (accents dropped), then the start of the chat id so two chats of one title differ."""
    words = re.findall(r"[a-z0-9]+", _ascii(chat.title).lower())
    slug = "-".join(words)[:60].rstrip("-") or "chat"
    return f"chatpapers-{slug}-{str(chat.chat_id)[:8]}.{fmt}"


# ---------------------------------------------------------------- Markdown


def to_markdown(export: ChatExport) -> str:
    chat = export.chat
    lines = [f"# {_md_inline(chat.title)}", ""]
    about = [f"chatpapers chat of {chat.created_at:%Y-%m-%d}"]
    if chat.level:
        about.append(f"level {chat.level}")
    lines += [f"_{' · '.join(about)}_", ""]
    number = 0
    for message in export.messages:
        if message.role == "user":
            number += 1
            lines += [f"## Question {number}", "", *_quoted(message.content), ""]
        else:
            lines += _answer_markdown(message, export.papers)
    if number == 0:
        lines += ["_No questions yet._", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _answer_markdown(message: chat_store.MessageRecord, papers: dict[str, PaperRecord]) -> list[str]:
    lines: list[str] = []
    if message.steps:
        lines += ["**Steps**", ""]
        for i, step in enumerate(message.steps, 1):
            arguments = json.dumps(step.get("arguments") or {}, ensure_ascii=False)
            failed = " (failed)" if step.get("error") else ""
            lines.append(f"{i}. {_code(str(step.get('tool', '?')))} {_code(arguments)}{failed}")
        lines.append("")
    stopped = " (stopped: unfinished)" if message.stopped else ""
    lines += [f"**Answer**{stopped}", "", message.content.strip() or "_(empty answer)_", ""]
    grounding = message.grounding or {}
    notes = (
        ("unsupported", "_Not supported by the passages read:_"),
        ("left_out", "_Left out of the draft, as no passage read supports it:_"),
    )
    for field, label in notes:
        sentences = grounding.get(field) or []
        if sentences:
            lines += [label, "", *(f"- {_md_inline(str(s))}" for s in sentences), ""]
    sources = _sources(message, papers)
    if sources:
        lines += ["**Sources**", ""]
        for source in sources:
            lines.append(_source_line(source))
        lines.append("")
    meta = answer_meta(message)
    if meta:
        lines += [f"_{_md_inline(meta)}_", ""]
    return lines


def _sources(message: chat_store.MessageRecord, papers: dict[str, PaperRecord]) -> list[dict[str, Any]]:
    """The answer's numbered sources as its cards showed them; answers saved before sources were
    kept get theirs from the citations and the corpus."""
    if message.sources:
        return message.sources
    out = []
    for n, pid in enumerate(message.citations, 1):
        paper = papers.get(pid)
        out.append(
            {
                "n": n,
                "paper_id": pid,
                "title": paper.title if paper else pid,
                "authors": paper.authors if paper else [],
                "year": paper.published.year if paper and paper.published else None,
                "url": abs_url(pid),
            }
        )
    return out


def _source_line(source: dict[str, Any]) -> str:
    pid = str(source.get("paper_id", ""))
    title = _md_inline(str(source.get("title") or pid))
    arxiv = parse_arxiv_id(pid)
    head = f"[{title}]({abs_url(arxiv.paper_id)})" if arxiv else title
    authors = [str(a) for a in source.get("authors") or []]
    who = ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
    parts = [p for p in (_md_inline(who), str(source.get("year") or "")) if p]
    tail = f" — {', '.join(parts)}" if parts else ""
    where = f" · arXiv:{arxiv.paper_id}" if arxiv else ""
    return f"{source.get('n', '-')}. {head}{tail}{where}"


def answer_meta(message: chat_store.MessageRecord) -> str:
    """Which model wrote the answer, how long it took and how many tokens it used, as far as known."""
    parts = []
    if message.model:
        parts.append(message.model)
    if message.seconds is not None:
        parts.append(f"{message.seconds:.1f} s")
    if message.tokens_in is not None or message.tokens_out is not None:
        parts.append(f"{message.tokens_in or 0} tokens in, {message.tokens_out or 0} out")
    return " · ".join(parts)


def _quoted(text: str) -> list[str]:
    # A blockquote keeps the question apart from the headings around it, whatever it contains.
    return [f"> {line}".rstrip() for line in text.strip().splitlines()] or [">"]


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")


def _md_inline(text: str) -> str:
    """Text from a paper's metadata or a title, shown literally: no stray emphasis, links or HTML."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _code(text: str) -> str:
    """An inline code span that holds any text: its fence is longer than any run of backticks in it."""
    text = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# ---------------------------------------------------------------- BibTeX

# LaTeX's special characters, each as a command that needs no package and keeps braces balanced
# (BibTeX counts braces without looking at backslashes, so "\{" alone would break the entry).
_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX))


def bibtex_escape(text: str) -> str:
    """A value for inside a braced BibTeX field: one line, LaTeX specials escaped."""
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)
    return _LATEX_RE.sub(lambda m: _LATEX[m.group(0)], " ".join(text.split()))


def to_bibtex(export: ChatExport) -> str:
    entries = []
    keys: set[str] = set()
    for pid in cited(export.messages):
        paper = export.papers.get(pid)
        if paper is None:
            paper = _from_sources(pid, export.messages)
        entries.append(bibtex_entry(paper, _unique(_key(paper), keys)))
    if not entries:
        return f"% chatpapers: no papers cited in “{bibtex_escape(export.chat.title)}”\n"
    return "\n".join(entries)


def bibtex_entry(paper: PaperRecord, key: str) -> str:
    fields: list[tuple[str, str]] = [("title", "{" + bibtex_escape(paper.title) + "}")]  # keep its capitals
    if paper.authors:
        fields.append(("author", " and ".join(_author(a) for a in paper.authors)))
    if paper.published:
        fields.append(("year", str(paper.published.year)))
    arxiv = parse_arxiv_id(paper.paper_id)
    if arxiv:  # a local PDF (local:<sha256>) has no arXiv record to point at
        fields += [("eprint", arxiv.paper_id), ("archivePrefix", "arXiv")]
        if paper.primary_category:
            fields.append(("primaryClass", bibtex_escape(paper.primary_category)))
        fields.append(("url", abs_url(arxiv.paper_id)))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@misc{{{key},\n{body}\n}}\n"


def _author(name: str) -> str:
    name = bibtex_escape(name)
    # A name that itself contains " and " (a consortium) would split in two; braces keep it whole.
    return f"{{{name}}}" if re.search(r"\sand\s", name, re.IGNORECASE) else name


def _key(paper: PaperRecord) -> str:
    """A citation key as people write them: first author's last name, year, first title word."""
    last = _ascii(paper.authors[0].split()[-1]).lower() if paper.authors and paper.authors[0].split() else ""
    title_words = [w for w in re.findall(r"[a-z0-9]+", _ascii(paper.title).lower()) if w not in _STOP]
    year = str(paper.published.year) if paper.published else ""
    key = re.sub(r"[^a-z0-9]", "", last) + year + (title_words[0] if title_words else "")
    if not key or key == year:
        key = "paper" + re.sub(r"[^a-z0-9]", "", paper.paper_id.lower())[:16]
    return key


_STOP = {"a", "an", "the", "on", "of", "for", "in", "to", "and", "with", "towards", "toward"}


def _unique(key: str, taken: set[str]) -> str:
    candidate, n = key, 0
    while candidate in taken:
        n += 1
        candidate = key + (chr(ord("a") + n - 1) if n <= 26 else str(n))
    taken.add(candidate)
    return candidate


def _from_sources(pid: str, messages: list[chat_store.MessageRecord]) -> PaperRecord:
    """A cited paper no longer in the corpus: what its source card kept."""
    card = next(
        (s for m in messages for s in m.sources if s.get("paper_id") == pid),
        {"title": pid, "authors": [], "year": None},
    )
    year = card.get("year")
    return PaperRecord(
        paper_id=pid,
        version=None,
        title=str(card.get("title") or pid),
        authors=[str(a) for a in card.get("authors") or []],
        abstract=None,
        categories=[],
        primary_category=None,
        published=datetime(int(year), 1, 1) if year else None,
        updated=None,
        pdf_url=None,
        n_chunks=0,
    )


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
