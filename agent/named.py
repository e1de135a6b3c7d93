"""Which of the search's papers a question names: "Both PaLM and OPT ...", "How do RETRO and the
retrieval-augmented prompt tuning approach ...", "the Transformer of Vaswani et al.".

A question over several named papers is answered from each of them; the step-by-step agent,
given the search's five papers, answered such a question from one unrelated paper (PaLM and OPT's
loss spikes from the ADADELTA paper), though the search had found both."""

from __future__ import annotations

import re

import psycopg

from corpus import papers
from corpus.models import PaperRecord

# "OPT: Open Pre-trained ...", "Paper Plain: Making ...": the name a title leads with
_LEAD = re.compile(r"^\s*(?P<name>[^:]{2,40}?)\s*:\s")
# "the Retrieval-Enhanced Transformer (RETRO)", "Vision Transformer (ViT)": a name the abstract gives
_DEFINED = re.compile(r"\((?P<name>[A-Za-z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)\)")
_ET_AL = re.compile(r"(?<![\w-])(?P<name>[A-Z][\w'-]+)\s+et\s+al\b")


def names(paper: PaperRecord) -> set[str]:
    """What a question may call a paper by: its title's lead name ("PaLM", "Paper Plain"), the
    names its abstract defines in parentheses ("RETRO", "ViT") and the words they abbreviate
    ("Vision Transformer")."""
    return names_in(paper.title, paper.abstract or "")


def names_in(title: str, abstract: str, terms: bool = True) -> set[str]:
    """`names` of a paper given as its title and abstract. `terms=False` leaves out the field's
    terms the abstract spells out in lower case ("stochastic gradient descent (SGD)", "recurrent
    neural networks (RNNs)") unless the title writes them capitalised: RAG's abstract spells out
    "retrieval-augmented generation (RAG)", its title "Retrieval-Augmented Generation for ..."."""
    found: set[str] = set()
    lead = _LEAD.match(title)
    if lead and len(lead.group("name").split()) <= 3:
        found.add(lead.group("name"))
    abstract = " ".join(abstract.split())
    for m in _DEFINED.finditer(abstract):
        name = m.group("name")
        initials = [c for c in name if c.isupper()]
        before = re.findall(r"[\w]+", abstract[: m.start()])[-len(initials) :] if initials else []
        spelled = len(before) == len(initials) and [w[0].upper() for w in before] == initials
        if spelled and not terms and all(w.islower() for w in before) and not _titled(title, before):
            continue
        found.add(name)
        if spelled:
            found.add(" ".join(before))
    return {n for n in found if len(n) >= 3}


def _titled(title: str, words: list[str]) -> bool:
    """Whether the title writes these words, one after another, each capitalised."""
    spelled = r"[\s-]+".join(re.escape(w.capitalize()) for w in words)
    return bool(re.search(rf"(?<![\w-]){spelled}(?![\w-])", title))


def is_called(name: str, title: str, abstract: str) -> bool:
    """Whether a paper calls itself by the name (`names_in`), as written ("ZeRO", not "zero");
    "OPT-175B" is OPT's."""
    return any(name == own or name.startswith(f"{own}-") for own in names_in(title, abstract))


def papers_called(conn: psycopg.Connection, names: list[str]) -> list[str]:
    """The corpus's papers whose title leads with one of the names ("ZeRO: Memory Optimizations
    ..."). Not a name an abstract defines: "stochastic gradient descent (SGD)", "Gaussian process
    (GP)" are defined in many papers that nobody calls "the SGD paper"."""
    return [
        pid for pid, title in papers.titled_by(conn, names) if any(is_called(n, title, "") for n in names)
    ]


def _says(text: str, name: str) -> bool:
    return bool(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text))


def plain(text: str) -> str:
    """Lower-case letters and digits, one space apart: titles compared case and punctuation aside."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


# a span a question quotes: in double quotes (apostrophes inside: "Don't Stop Pretraining"), or in
# single ones ('Attention Is All You Need')
_QUOTED = re.compile(r"[\"“]([^\"“”]{8,200})[\"”]|(?<!\w)['‘]([^'‘’]{8,200})['’](?!\w)")


def quoted(question: str) -> list[str]:
    """The spans of three words or more the question quotes, as `plain` writes them; a shorter
    one is a term ("a 'parallel' block"), not a title."""
    spans = [plain(a or b) for a, b in _QUOTED.findall(question)]
    return [s for s in spans if s.count(" ") >= 2]


def _writes(spans: list[str], asked: str, title: str) -> bool:
    """Whether a question (read once: its quoted spans, its plain words in spaces) writes the
    paper's title: quoted, the whole title or its head before a colon of three words or more
    ('Attention Is All You Need', "ZeRO: Memory Optimizations ..."); unquoted, the whole title of
    four words or more (a shorter one is a phrase anyone writes: "layer normalization",
    "acoustic scene classification")."""
    whole = plain(title)
    head = plain(title.split(":", 1)[0]) if ":" in title else ""
    if whole in spans or (head.count(" ") >= 2 and head in spans):
        return True
    return whole.count(" ") >= 3 and f" {whole} " in asked


def titled(question: str, found: list[PaperRecord]) -> list[PaperRecord]:
    """The papers of `found` whose titles the question writes, in their order; not one whose title
    is inside another's the question writes ("Attention Is All You Need in Speech Separation"
    names that paper, not the Transformer's)."""
    spans, asked = quoted(question), f" {plain(question)} "
    written = {p.paper_id: f" {plain(p.title)} " for p in found if _writes(spans, asked, p.title)}
    return [
        p for p in found if p.paper_id in written
        and not any(o != p.paper_id and written[p.paper_id] in t for o, t in written.items())
    ]  # fmt: skip


def named_papers(question: str, found: list[PaperRecord]) -> list[PaperRecord]:
    """The papers of `found` the question names, by a name no other of them uses ("DNNs" or
    "deep learning" in several abstracts names none), by a first author ("Vaswani et al.") or by
    its title, in the search's order."""
    surnames = {m.group("name").lower() for m in _ET_AL.finditer(question)}
    by_title = {p.paper_id for p in titled(question, found)}
    texts = {p.paper_id: f"{p.title} {' '.join((p.abstract or '').split())}" for p in found}

    def named(paper: PaperRecord) -> bool:
        own = [
            n
            # "the updates of SGD, momentum and Adagrad" names no paper that spells SGD out
            for n in names_in(paper.title, paper.abstract or "", terms=False)
            if not any(_says(text, n) for pid, text in texts.items() if pid != paper.paper_id)
        ]
        by_name = any(_says(question, n) for n in own)
        by_author = bool(paper.authors) and paper.authors[0].split()[-1].lower() in surnames
        return by_name or by_author or paper.paper_id in by_title

    return [p for p in found if named(p)]


_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+(?=\s|$)|$)", re.M)
_END = re.compile(r"[.!?]*\s*$")


def marked_by_name(answer: str, papers: list[PaperRecord]) -> str:
    """An answer over several papers (numbered [1], [2], ... in `papers`' order) with a paper's
    mark added to each sentence that names it without citing it: the 1.5B model wrote "Paper
    Plain is designed for healthcare consumers, while CiteSee is designed for scientists [1]." and
    only CiteSee was cited."""
    called = [names(paper) for paper in papers]

    def mark(m: re.Match) -> str:
        sentence = m.group(0)
        missing = [
            n
            for n, own in enumerate(called, 1)
            if any(_says(sentence, name) for name in own) and not re.search(rf"\[\s*{n}\s*\]", sentence)
        ]
        if not missing:
            return sentence
        end = _END.search(sentence).start()  # before the full stop and the space after it
        return f"{sentence[:end]} {' '.join(f'[{n}]' for n in missing)}{sentence[end:]}"

    return _SENTENCE.sub(mark, answer)


def about_another(sentence: str, own: PaperRecord, others: list[PaperRecord]) -> bool:
    """Whether a sentence of one paper's bullet names another paper read and not its own: the
    1.5B model, shown CiteSee's sentences for "how do Paper Plain and CiteSee differ?", wrote about
    Paper Plain under CiteSee's mark."""
    if any(_says(sentence, name) for name in names(own)):
        return False
    return any(_says(sentence, name) for other in others for name in names(other))
