"""Listings ("which papers here cover X?"): each paper of the search kept only when its own
abstract answers the question, shown with that sentence, without a model call (real database,
real MiniLM; a scripted model that fails the test if it is called)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent import listing
from agent.events import Final, StepStarted
from agent.loop import ResearchAgent, lists_papers, wants_many
from agent.named import named_papers, titled
from agent.tools import ToolContext
from corpus.db import Database
from corpus.embedder import Embedder
from corpus.models import PaperRecord
from tests.scripted_model import ScriptedModel


@pytest.fixture
def ctx(ingested: Database, embedder: Embedder) -> ToolContext:
    return ToolContext(connect=ingested.pooled, embedder=embedder, hybrid=True)


def _paper(paper_id: str, title: str, abstract: str | None) -> PaperRecord:
    return PaperRecord(
        paper_id=paper_id, version=1, title=title, authors=["A. Author", "B. Author"], abstract=abstract,
        categories=["cs.LG"], primary_category="cs.LG", published=datetime(2020, 1, 1, tzinfo=UTC),
        updated=None, pdf_url=None, n_chunks=1,
    )  # fmt: skip


def test_which_papers_fit_is_answered_from_their_abstracts_without_the_model(ctx: ToolContext) -> None:
    model = ScriptedModel([])  # any model call fails the test
    events = list(
        ResearchAgent(model, ctx).run("Which papers here are about image classification with deep networks?")
    )
    final = events[-1]
    assert isinstance(final, Final) and not final.abstained and model.calls == []
    assert [e.tool for e in events if isinstance(e, StepStarted)] == ["search"]
    # ResNet and ViT classify images; the optimiser, the bird survey and the writing study do not
    assert {"1512.03385", "2010.11929"} <= set(final.citations)
    assert not {"1212.5701", "1608.03417", "2304.02623"} & set(final.citations)
    # each listed paper is shown with a sentence of its own abstract, and cited by its number
    records = final.state.records
    for n, pid in enumerate(final.citations, 1):
        line = next(x for x in final.answer.splitlines() if x.startswith(f"- [[{n}]]"))
        assert records[pid].title in line
        quoted = line.split(": “", 1)[1].rstrip("”").rstrip("…")
        assert quoted in listing.abstract_text(records[pid])
    assert final.grounding is not None and final.grounding.draft_checked == 0
    assert final.grounding.supported == final.grounding.checked > 0


def test_a_paper_whose_abstract_does_not_answer_is_left_out(embedder: Embedder) -> None:
    found = [
        _paper("1", "Deep Residual Learning", "We train residual nets for image recognition on ImageNet."),
        _paper("2", "Bird sounds", "We review automatic detection of bird sounds in audio recordings."),
        _paper("3", "An optimiser", None),  # no abstract: weighed on its title
    ]
    question = "Which papers train networks for image recognition?"
    weighed = listing.weigh(question, found, [1.0, 0.9, 0.8], embedder)
    assert [x.paper.paper_id for x in weighed] == ["1", "2", "3"]
    assert weighed[2].sentence == ""
    assert [x.paper.paper_id for x in listing.keep(weighed)] == ["1"]
    # nothing that fits: nothing is listed (the agent then says the corpus does not cover it)
    assert listing.keep([x for x in weighed if x.paper.paper_id != "1"]) == []


def test_the_shown_abstract_has_its_line_break_hyphens_and_ligatures_undone() -> None:
    paper = _paper("1", "T", "Open-domain QA relies on ef- \ufb01cient passage retrieval in mu- sic.")
    assert listing.abstract_text(paper) == "Open-domain QA relies on efficient passage retrieval in music."
    hanging = _paper(
        "2", "T", "Capabilities for zero- and few-shot learning, from small- to medium-sized models."
    )
    assert listing.abstract_text(hanging) == hanging.abstract


@pytest.mark.parametrize(
    ("question", "listed"),
    [
        ("Which papers here cover detecting bird calls in recordings?", True),
        ("What does the corpus have on deep architectures for image classification?", True),
        # "both" describes what the papers cover; each paper's bullet had said "The corpus has shown"
        ("What does the corpus have on image classifiers, both convolutional and transformer-based?", True),
        ("Which papers use both dropout and batch normalisation?", True),
        ("Both PaLM and OPT hit loss spikes. Which papers here say how each one handled them?", False),
        ("Which papers here report an MFCC+GMM baseline, and how well did it do in each?", False),
        ("Which papers use self-attention, and how do they differ?", False),
        ("Which papers in the corpus work with jackdaws, and how do their aims differ?", False),
        ("How does ADADELTA choose its learning rate?", False),
        ("Which papers here apply the Transformer, and to what kind of data?", False),
        # a chat answered "Yes" from one paper's passing mention
        ("Is there anything here on protein structure prediction with diffusion models?", True),
        ("Is there any work on speech emotion recognition in the collection?", True),
        ("Is there anything in the ResNet paper about dropout?", False),
    ],
)
def test_only_a_question_that_asks_which_papers_fit_is_listed(question: str, listed: bool) -> None:
    assert lists_papers(question) is listed


@pytest.mark.parametrize(
    ("question", "several"),
    [
        ("Both PaLM and OPT ran into training instabilities. How did each team handle loss spikes?", True),
        ("How did both PaLM and OPT handle loss spikes?", True),
        ("Do GPT-3.5 and PaLM both use rotary embeddings?", True),
        ("Quick question: did PaLM and OPT both use rotary embeddings?", True),
        ("RETRO and the paraphrasing approach both condition a model on retrieved text. How?", True),
        # the pair is two parts of one paper's block, after a comma: a question about PaLM alone
        # (it had been read in Primer too, and Primer's bullet credited it with PaLM's choice)
        ("PaLM uses a 'parallel' block, with attention and MLP both applied to the same input. Why?", False),
    ],
)
def test_a_pair_said_both_is_several_papers_only_when_its_sentence_is_about_it(
    question: str, several: bool
) -> None:
    assert wants_many(question) is several


def _record(paper_id: str, title: str, abstract: str) -> PaperRecord:
    return PaperRecord(paper_id=paper_id, version=1, title=title, authors=["A. Author"], abstract=abstract,
                       categories=["cs.LG"], primary_category="cs.LG", published=None, updated=None,
                       pdf_url=None, n_chunks=10)  # fmt: skip


def test_a_field_term_an_abstract_spells_out_names_no_paper() -> None:
    adadelta = _record("1212.5701", "ADADELTA: An Adaptive Learning Rate Method", "A per-dimension method.")
    dynamics = _record(
        "1906.08632", "Dynamics of stochastic gradient descent for two-layer neural networks",
        "We show how the dynamics of stochastic gradient descent (SGD) is captured by equations.",
    )  # fmt: skip
    retro = _record("2112.04426", "Improving language models by retrieving from trillions of tokens",
                    "We introduce a Retrieval-Enhanced Transformer (RETRO).")  # fmt: skip
    found = [adadelta, dynamics, retro]
    # "SGD" is the field's, spelled out in lower case; ADADELTA and RETRO are the papers' own
    asked = "The ADADELTA paper says the updates of SGD and Adagrad lack units. What does ADADELTA do?"
    assert [p.paper_id for p in named_papers(asked, found)] == ["1212.5701"]
    both = "How do ADADELTA and RETRO differ in what they train?"
    assert [p.paper_id for p in named_papers(both, found)] == ["1212.5701", "2112.04426"]
    # a name spelled out in lower case that the title capitalises is the paper's own
    rag = _record("2005.11401", "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks",
                  "A fine-tuning recipe for retrieval-augmented generation (RAG).")  # fmt: skip
    assert [p.paper_id for p in named_papers("How do RAG and RETRO differ?", [rag, retro])] == [
        "2005.11401", "2112.04426"]  # fmt: skip


def test_a_question_names_a_paper_by_its_title() -> None:
    transformer = _record("1706.03762", "Attention Is All You Need", "We propose the Transformer.")
    resnet = _record("1512.03385", "Deep Residual Learning for Image Recognition", "Residual nets.")
    zero = _record("1910.02054", "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
                   "We develop ZeRO.")  # fmt: skip
    found = [resnet, transformer, zero]
    quoted = "How do 'Attention Is All You Need' and 'Deep Residual Learning for Image Recognition' differ?"
    assert [p.paper_id for p in named_papers(quoted, found)] == ["1512.03385", "1706.03762"]
    # unquoted, in other case and punctuation: the same
    plain = "compare attention is all you need with deep residual learning for image recognition"
    assert [p.paper_id for p in named_papers(plain, found)] == ["1512.03385", "1706.03762"]
    # a few of a title's words name nothing; nor, unquoted, a short title or a title's head that
    # anyone writes as a phrase ("layer normalization", "large language models")
    assert named_papers("Is attention all you need for residual learning?", found) == []
    layer = _record("1607.06450", "Layer Normalization", "We normalise the summed inputs.")
    survey = _record("2303.18223", "Large Language Models: A Survey of Their Uses", "We survey LLMs.")
    assert not titled("Why does the Transformer apply layer normalization?", [layer])
    assert not titled("Tell me about large language models for code", [survey])
    # quoted, a head of three words or more names its paper, a one-word head is a name ("ZeRO")
    assert titled("What does the survey 'Large Language Models' cover?", [survey])
    assert titled(f"In '{zero.title}', what is partitioned?", [zero])
    assert not titled("What does 'ZeRO' partition?", [zero])
    # a title inside a longer title the question writes names the longer one's paper alone
    speech = _record("2010.13154", "Attention Is All You Need in Speech Separation", "SepFormer.")
    asked = "What does 'Attention Is All You Need in Speech Separation' separate?"
    assert titled(asked, [transformer, speech]) == [speech]
    # titles with apostrophes, in double quotes
    dont = _record("2004.10964", "Don't Stop Pretraining: Adapt Language Models to Domains and Tasks", "")
    assert titled('What does "Don\'t Stop Pretraining" adapt?', [dont])
