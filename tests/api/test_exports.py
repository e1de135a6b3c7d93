"""Exports of a chat (Markdown, BibTeX of its cited papers) through the real app and database, the
BibTeX escaping on its own, and what each answer shows of its model, time and tokens; setting the
level back to "auto"."""

from __future__ import annotations

import re
import uuid
from datetime import datetime

from fastapi.testclient import TestClient

from api import exports
from corpus.models import PaperRecord
from tests.scripted_model import ScriptedModel, step
from tests.web import CSRF, ask, sign_up

QUESTION = "What problem do deep residual networks solve?"
ANSWER = "Residual learning makes very deep networks trainable [1]."
FILENAME = re.compile(
    r'^attachment; filename="chatpapers-what-problem-do-deep-residual-networks-solve-[0-9a-f]{8}\.(md|bib)"$'
)


def _answered_chat(make_app) -> tuple[TestClient, str, str, object]:
    """A signed-in client with one answered chat (citing the ResNet paper): client, token, chat id,
    app."""
    app = make_app(model=ScriptedModel([step("final_answer", thought="The abstract says it"), ANSWER]))
    client = TestClient(app)
    token = sign_up(client, f"alice-{uuid.uuid4().hex[:6]}")
    chat_id = client.post("/api/chats", json={}, headers={CSRF: token}).json()["chat_id"]
    events = ask(client, chat_id, token, QUESTION)
    assert events[-1][0] == "final", events[-1]
    return client, token, chat_id, app


def test_markdown_export(make_app) -> None:
    client, _, chat_id, _ = _answered_chat(make_app)
    res = client.get(f"/api/chats/{chat_id}/export.md")
    assert res.status_code == 200, res.text
    assert res.headers["content-type"] == "text/markdown; charset=utf-8"
    assert FILENAME.match(res.headers["content-disposition"]), res.headers["content-disposition"]
    assert res.headers["cache-control"] == "private, no-store"
    text = res.text
    assert text.startswith("# What problem do deep residual networks solve?\n")
    assert f"## Question 1\n\n> {QUESTION}\n" in text
    # the steps as a short list: the planned search with its arguments
    steps = text.split("**Steps**\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert steps[0].startswith("1. `search` `{") and '"query": "What problem do deep residual' in steps[0]
    # the answer with its citation link, then the sources with titles and arXiv links
    assert "**Answer**\n\nResidual learning makes very deep networks trainable" in text
    assert "[[1]](https://arxiv.org/abs/1512.03385)" in text
    assert (
        "1. [Deep Residual Learning for Image Recognition](https://arxiv.org/abs/1512.03385)"
        " — Kaiming He, Xiangyu Zhang, Shaoqing Ren et al., 2015 · arXiv:1512.03385"
    ) in text
    meta = re.search(r"^_scripted · (\d+\.\d) s · (\d+) tokens in, (\d+) out_$", text, re.MULTILINE)
    assert meta and int(meta.group(2)) > 0 and int(meta.group(3)) > 0, text[-300:]


def test_bibtex_export(make_app) -> None:
    client, token, chat_id, _ = _answered_chat(make_app)
    res = client.get(f"/api/chats/{chat_id}/export.bib")
    assert res.status_code == 200, res.text
    assert res.headers["content-type"] == "application/x-bibtex; charset=utf-8"
    assert FILENAME.match(res.headers["content-disposition"]), res.headers["content-disposition"]
    assert res.text == (
        "@misc{he2015deep,\n"
        "  title = {{Deep Residual Learning for Image Recognition}},\n"
        "  author = {Kaiming He and Xiangyu Zhang and Shaoqing Ren and Jian Sun},\n"
        "  year = {2015},\n"
        "  eprint = {1512.03385},\n"
        "  archivePrefix = {arXiv},\n"
        "  primaryClass = {cs.CV},\n"
        "  url = {https://arxiv.org/abs/1512.03385}\n"
        "}\n"
    )
    # a chat that cited nothing gives a file BibTeX reads as empty
    empty = client.post("/api/chats", json={"title": "50% {odd} title"}, headers={CSRF: token}).json()
    res = client.get(f"/api/chats/{empty['chat_id']}/export.bib")
    assert res.status_code == 200 and "@" not in res.text
    assert (
        res.text == "% chatpapers: no papers cited in “50\\% \\textbraceleft{}odd\\textbraceright{} title”\n"
    )
    md = client.get(f"/api/chats/{empty['chat_id']}/export.md")
    assert md.text.startswith("# 50% {odd} title\n") and "_No questions yet._" in md.text


def test_only_the_owner_can_export(make_app) -> None:
    client, _, chat_id, app = _answered_chat(make_app)
    bob = TestClient(app)
    sign_up(bob, f"bob-{uuid.uuid4().hex[:6]}")
    anonymous = TestClient(app)
    for ext in ("md", "bib"):
        other = bob.get(f"/api/chats/{chat_id}/export.{ext}")
        assert other.status_code == 404 and other.json() == {"detail": "no such chat"}
        assert "content-disposition" not in other.headers and "residual" not in other.text.lower()
        assert anonymous.get(f"/api/chats/{chat_id}/export.{ext}").status_code == 401
        assert client.get(f"/api/chats/{uuid.uuid4()}/export.{ext}").status_code == 404
        assert client.get(f"/api/chats/{chat_id}/export.{ext}").status_code == 200


def test_answers_show_model_time_and_tokens_and_the_level_goes_back_to_auto(make_app) -> None:
    client, token, chat_id, _ = _answered_chat(make_app)
    answer = client.get(f"/api/chats/{chat_id}/messages").json()["messages"][1]
    assert answer["model"] == "scripted" and answer["seconds"] >= 0
    assert answer["tokens_in"] > 0 and answer["tokens_out"] > 0
    # the answer's level was judged and kept for the chat; null sets it back to auto
    assert client.get(f"/api/chats/{chat_id}/messages").json()["chat"]["level"] in ("BSc", "MSc", "PhD")
    renamed = client.patch(f"/api/chats/{chat_id}", json={"title": "Renamed"}, headers={CSRF: token}).json()
    assert renamed["level"] is not None  # a rename alone leaves the level as it was
    res = client.patch(f"/api/chats/{chat_id}", json={"level": None}, headers={CSRF: token})
    assert res.status_code == 200 and res.json()["level"] is None and res.json()["title"] == "Renamed"
    res = client.patch(f"/api/chats/{chat_id}", json={"level": "PhD"}, headers={CSRF: token})
    assert res.json()["level"] == "PhD"


def _paper(**fields) -> PaperRecord:
    base = dict(
        paper_id="2101.00001",
        version=1,
        title="A title",
        authors=["Ada Lovelace"],
        abstract=None,
        categories=["cs.LG"],
        primary_category="cs.LG",
        published=datetime(2021, 1, 1),
        updated=None,
        pdf_url=None,
        n_chunks=1,
    )
    return PaperRecord(**{**base, **fields})


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def test_bibtex_escapes_latex_specials_and_keeps_braces_balanced() -> None:
    assert exports.bibtex_escape(r"50% of {x} & $y_1$ #1 ~ ^ \cite") == (
        r"50\% of \textbraceleft{}x\textbraceright{} \& \$y\_1\$ \#1 \textasciitilde{} "
        r"\textasciicircum{} \textbackslash{}cite"
    )
    assert exports.bibtex_escape("two\nlines\x00\u2028here") == "two lines here"
    entry = exports.bibtex_entry(
        _paper(
            title="Un}balanced {braces: 100% of $\\alpha$",
            authors=["Zoë Ğüneş", "The Smith and Jones Consortium", "A_B"],
        ),
        "key",
    )
    assert _balanced(entry), entry
    assert "  author = {Zoë Ğüneş and {The Smith and Jones Consortium} and A\\_B},\n" in entry
    assert (
        "title = {{Un\\textbraceright{}balanced \\textbraceleft{}braces: "
        "100\\% of \\$\\textbackslash{}alpha\\$}}" in entry
    )
    # a local PDF has no arXiv record: no eprint, class or link
    local = exports.bibtex_entry(_paper(paper_id="local:0123abcd", primary_category=None), "k")
    assert "eprint" not in local and "url" not in local and "archivePrefix" not in local
    # keys: ASCII, unique within the file
    taken: set[str] = set()
    paper = _paper(authors=["Zoë Ğüneş"], title="The Ünïcode Paper")
    assert [exports._unique(exports._key(paper), taken) for _ in range(3)] == [
        "gunes2021unicode",
        "gunes2021unicodea",
        "gunes2021unicodeb",
    ]


def test_filenames_are_safe_whatever_the_title() -> None:
    from corpus.chats import ChatInfo

    now = datetime(2026, 1, 1)
    chat_id = uuid.UUID("12345678-1234-5678-1234-567812345678")

    def name(title: str, fmt: exports.Format = "md") -> str:
        info = ChatInfo(
            chat_id=chat_id,
            owner="o",
            title=title,
            level=None,
            allowed_papers=[],
            created_at=now,
            updated_at=now,
        )
        return exports.filename(info, fmt)

    assert name('Ünïcödé "quotes"; ../../etc/passwd\r\nX-Evil: 1') == (
        "chatpapers-unicode-quotes-etc-passwd-x-evil-1-12345678.md"
    )
    assert name("日本語だけ", "bib") == "chatpapers-chat-12345678.bib"
    assert re.fullmatch(r"chatpapers-[a-z0-9-]{1,60}-12345678\.md", name("word " * 100))


def test_markdown_shows_metadata_literally_and_older_answers_get_their_sources() -> None:
    from corpus.chats import ChatInfo, MessageRecord

    now = datetime(2026, 11, 23)
    chat = ChatInfo(
        chat_id=uuid.uuid4(), owner="o", title="Why *deep* [nets]?", level="MSc", allowed_papers=[],
        created_at=now, updated_at=now,
    )  # fmt: skip
    question = MessageRecord(
        message_id=1, role="user", content="Why deep nets?", level="MSc", steps=[], citations=[],
        passages={}, tokens_in=None, tokens_out=None, created_at=now,
    )  # fmt: skip
    answer = MessageRecord(
        message_id=2, role="assistant", content="They train [[1]](https://arxiv.org/abs/2101.00001).",
        level="MSc", steps=[{"tool": "search", "arguments": {"query": "deep `nets`"}, "error": True}],
        citations=["2101.00001"], passages={}, sources=[],  # saved before sources were kept
        grounding={"unsupported": ["A *claim*."], "left_out": ["An invented one."]},
        tokens_in=1234, tokens_out=56, model="local:qwen_q4_k_m", seconds=41.27, created_at=now,
    )  # fmt: skip
    paper = _paper(title="Nets_with [brackets]", authors=["A One", "B Two", "C Three", "D Four"])
    text = exports.to_markdown(
        exports.ChatExport(chat=chat, messages=[question, answer], papers={paper.paper_id: paper})
    )
    assert text.startswith("# Why \\*deep\\* \\[nets\\]?\n\n_chatpapers chat of 2026-11-23 · level MSc_\n")
    assert "## Question 1\n\n> Why deep nets?\n" in text
    # arguments in a code span whose fence is longer than any run of backticks in them
    assert '1. `search` ``{"query": "deep `nets`"}`` (failed)\n' in text
    assert "_Not supported by the passages read:_\n\n- A \\*claim\\*.\n" in text
    assert "_Left out of the draft, as no passage read supports it:_\n\n- An invented one.\n" in text
    assert (
        "1. [Nets\\_with \\[brackets\\]](https://arxiv.org/abs/2101.00001)"
        " — A One, B Two, C Three et al., 2021 · arXiv:2101.00001\n"
    ) in text
    assert text.endswith("_local:qwen\\_q4\\_k\\_m · 41.3 s · 1234 tokens in, 56 out_\n")
