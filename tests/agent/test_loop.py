"""The ReAct loop with a scripted model: the planned first step, follow-ups, abstention, repair, tool
errors, step cap, history, numbered citations and their passages, grounding, level."""

from __future__ import annotations

import re

import pytest

from agent.citations import renumber
from agent.coverage import PASSING_MENTIONS, declines, name_pattern, names, undescribed, unnamed
from agent.events import Final, LevelDecided, StepFinished, StepStarted, Token
from agent.grounding import attribute, claim_spans, claims, unsupported
from agent.loop import ResearchAgent, Turn, _recalled, _whole_sentences, step_schema
from agent.references import ChatPaper
from agent.revision import NO_ANSWER, NOTHING_CLOSE, revise
from agent.tools import ALL_TOOLS, ToolContext
from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder
from corpus.models import PaperRecord
from tests.scripted_model import ScriptedModel, step


@pytest.fixture
def ctx(ingested: Database, embedder: Embedder) -> ToolContext:
    return ToolContext(connect=ingested.pooled, embedder=embedder)


ANSWER = "Residual learning eases the training of very deep networks [1]; see also arXiv:2401.00001."
RESNET_Q = "What problem does residual learning solve?"


def _run(model: ScriptedModel, ctx: ToolContext, question: str, **kw):
    agent = ResearchAgent(model, ctx, max_steps=kw.pop("max_steps", 6), reader=kw.pop("reader", "agent"))
    events = list(agent.run(question, **kw))
    final = events[-1]
    assert isinstance(final, Final)
    return events, final


def test_a_planned_search_then_the_model_answers_with_numbered_citations(ctx: ToolContext) -> None:
    model = ScriptedModel([step("final_answer"), ANSWER])
    events, final = _run(model, ctx, RESNET_Q)
    kinds = [type(e).__name__ for e in events]
    assert kinds[:3] == ["LevelDecided", "StepStarted", "StepFinished"]
    assert "Token" in kinds and kinds[-1] == "Final"
    started = next(e for e in events if isinstance(e, StepStarted))
    # the first step is decided in code: search for the question itself
    assert started.tool == "search" and started.arguments == {"query": RESNET_Q, "k": 5}
    finished = next(e for e in events if isinstance(e, StepFinished))
    assert "[arXiv:1512.03385]" in finished.observation and not finished.error
    assert final.citations == ["1512.03385"] and final.removed_citations == ["2401.00001"]
    assert "[[1]](https://arxiv.org/abs/1512.03385)" in final.answer
    assert "citation removed" in final.answer and not final.forced and not final.abstained
    assert [(s.n, s.paper_id) for s in final.sources] == [(1, "1512.03385")]
    assert final.sources[0].title.startswith("Deep Residual Learning") and final.sources[0].year == 2015
    assert final.sources[0].passage == final.passages["1512.03385"]
    streamed = "".join(e.text for e in events if isinstance(e, Token))
    assert streamed.strip() == ANSWER
    # the model's step sees the observation; the answer call continues the same conversation
    step_messages, schema = model.calls[0]
    answer_messages, answer_schema = model.calls[-1]
    assert step_messages[-1].content.startswith("Observation: [arXiv:1512.03385]")
    assert schema is not None and answer_schema is None
    assert _actions(schema) == [t.name for t in ALL_TOOLS] + ["final_answer"]
    assert answer_messages[: len(step_messages)] == step_messages
    assert (
        "[1] Deep Residual Learning for Image Recognition (arXiv:1512.03385)" in answer_messages[-1].content
    )


def test_invalid_json_is_repaired_once(ctx: ToolContext) -> None:
    model = ScriptedModel(["Sure! I will answer.", step("final_answer"), "ok"])
    _run(model, ctx, "How does multi-head attention work?")
    assert model.calls[1][0][-1].content.startswith("That reply was not valid: not JSON")


def test_twice_invalid_gives_a_graceful_answer(ctx: ToolContext) -> None:
    model = ScriptedModel(["nonsense", step("nonexistent_tool"), "I could not look this up, sorry."])
    events, final = _run(model, ctx, "How does multi-head attention work?")
    assert final.forced and final.answer.startswith("I could not look this up, sorry.")
    assert "unknown action 'nonexistent_tool'" not in final.answer
    assert [e.tool for e in events if isinstance(e, StepStarted)] == ["search"]  # the planned one


def test_bad_arguments_are_repaired(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [step("search", q="wrong name"), step("search", query="right"), step("final_answer"), "ok"]
    )
    _run(model, ctx, RESNET_Q)
    assert "bad arguments for search: query Field required" in model.calls[1][0][-1].content


def test_tool_error_becomes_an_observation(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [
            step("get_information_from_paper", paper_id="2401.99999", query="x"),
            step("get_prior_context", chunk_id="1512.03385#0"),
            step("final_answer"),
            "Nothing found.",
        ]
    )
    events, _final = _run(model, ctx, RESNET_Q)
    finished = [e for e in events if isinstance(e, StepFinished)]
    assert [e.error for e in finished] == [False, True, True]
    assert "not in the corpus" in finished[1].observation and "first chunk" in finished[2].observation
    assert model.calls[1][0][-1].content.startswith(
        "Observation: Error: paper 2401.99999 is not in the corpus"
    )


def test_step_cap_forces_an_answer(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [step("search", query=f"q{i}") for i in range(2)] + ["Forced answer from the evidence."]
    )
    _events, final = _run(model, ctx, RESNET_Q, max_steps=3)
    assert final.forced and len(final.steps) == 3
    assert model.calls[-1][0][-1].content.startswith("You have used all your steps.")


def test_history_and_level_carry_across_turns(ctx: ToolContext) -> None:
    first_q = "I'm a PhD student: how does residual learning affect optimisation of very deep networks?"
    model = ScriptedModel([step("final_answer"), "First answer."])
    events, final = _run(model, ctx, first_q)
    assert final.level == "PhD" and isinstance(events[0], LevelDecided) and not final.abstained
    assert events[0].reason == "the user said so"
    model2 = ScriptedModel([step("final_answer"), "Second answer."])
    history = [Turn(user=first_q, assistant=final.answer)]
    _events2, final2 = _run(model2, ctx, "and how does attention work?", history=history, level=final.level)
    assert final2.level == "PhD"
    contents = [m.content for m in model2.calls[0][0]]
    # earlier turns are context inside the new question, not assistant turns the model may repeat
    assert [m.role for m in model2.calls[0][0]][:3] == ["system", "user", "assistant"]  # the planned search
    assert contents[1] == (
        f'(Earlier in this chat, for context only:\n- I asked: "{first_q}" You answered: '
        f'"{_recalled(final.answer)}")\n\nMy new question: and how does attention work?'
    )
    assert 'my question: "and how does attention work?"' in model2.calls[-1][0][-1].content
    assert "researcher (PhD)" in contents[0]


PREVIOUS = [
    ChatPaper(n=1, paper_id="1706.03762", title="Attention Is All You Need"),
    ChatPaper(n=2, paper_id="1512.03385", title="Deep Residual Learning for Image Recognition"),
]


@pytest.mark.parametrize(
    ("question", "meant"),
    [
        ("How was the second one trained?", "1512.03385"),
        ("What datasets did [1] use?", "1706.03762"),
        ("What does the first paper you mentioned say about training cost?", "1706.03762"),
        ("What about the other one?", "1512.03385"),
        ("And what were its main results?", "1706.03762"),
    ],
)
def test_a_follow_up_reads_the_paper_it_refers_to(ctx: ToolContext, question: str, meant: str) -> None:
    model = ScriptedModel([step("final_answer"), "It is explained there [1]."])
    events, final = _run(
        model, ctx, question, allowed={"1706.03762", "1512.03385"}, previous=PREVIOUS, focus=["1706.03762"]
    )
    first = next(e for e in events if isinstance(e, StepStarted))
    assert (first.tool, first.arguments["paper_id"]) == ("get_information_from_paper", meant)
    assert final.state is not None and final.state.focus == [meant]
    assert final.citations == [meant]  # [1] of this answer is the paper meant: it is listed first
    asked = model.calls[0][0][-3].content  # the user's turn, with what it refers to
    assert "Sources of your previous answer: [1] Attention Is All You Need" in asked
    assert f"(Here I mean [{[p.paper_id for p in PREVIOUS].index(meant) + 1}]" in asked


def test_a_new_question_after_an_answer_is_searched_for(ctx: ToolContext) -> None:
    model = ScriptedModel([step("final_answer"), "Distillation trains a small model [1]."])
    events, _final = _run(
        model, ctx, "How can a small model learn from the soft targets of a large one?", previous=PREVIOUS
    )
    assert next(e for e in events if isinstance(e, StepStarted)).tool == "search"


def test_a_question_the_corpus_does_not_cover_is_declined_without_the_model(ctx: ToolContext) -> None:
    model = ScriptedModel([])  # any model call would fail the test
    events, final = _run(model, ctx, "How does the Raft consensus algorithm elect a leader?")
    assert final.abstained and final.citations == [] and not model.calls
    assert final.answer.startswith("I could not find this in the corpus")
    assert "The closest papers are:" in final.answer and "](https://arxiv.org/abs/" in final.answer
    assert [e.tool for e in events if isinstance(e, StepStarted)] == ["search"]


def test_a_question_about_what_the_paper_found_only_mentions_is_declined(ctx: ToolContext) -> None:
    # the Transformer paper names GNMT twice (a results table, a reference): it is found for the
    # question, and its sentences would be told as GNMT's
    model = ScriptedModel([])  # any model call would fail the test
    _events, final = _run(model, ctx, "How does GNMT translate sentences?", reader="narrow")
    assert final.abstained and not model.calls and final.citations == []
    assert "Attention Is All You Need, does not describe GNMT" in final.answer


def test_a_name_asked_about_that_no_paper_read_describes_is_said_to_be_missing(ctx: ToolContext) -> None:
    model = ScriptedModel(["It relies entirely on self-attention [1]."])
    _events, final = _run(
        model, ctx, "How does the Transformer differ from GNMT in how it models sequences?", reader="narrow"
    )
    assert not final.abstained and len(model.calls) == 1 and final.citations  # answered for the Transformer
    assert final.answer.split("\n\n")[-1] == "The papers I read do not describe GNMT."
    assert all("GNMT" not in c for c in claims(final.answer))  # a statement of absence, not a claim


def test_a_name_is_looked_for_as_papers_write_it(ingested: Database) -> None:
    assert name_pattern("GPT-2").search("we fine-tune GPT2 and")
    assert name_pattern("GPT-3-sized").search("comparable to GPT-3 while")
    assert name_pattern("Adagrad").search("ADAGRAD decays")
    assert name_pattern("ImageNet-trained").search("pre-trained on ImageNet.")
    assert not name_pattern("BERT").search("RoBERTa")
    with ingested.connect() as conn:
        transformer = papers.get_paper(conn, "1706.03762")
        assert transformer is not None
        text = " ".join(t for _, _, t in papers.chunk_texts(conn, "1706.03762"))
    assert 1 <= len(name_pattern("GNMT").findall(text)) <= PASSING_MENTIONS  # named, in passing

    def full_text(paper_id: str) -> str:
        assert paper_id == "1706.03762"
        return text

    assert undescribed(names("How does GNMT work?"), [transformer], full_text) == ["GNMT"]
    assert unnamed(["GNMT"], ["GNMT is a recurrent model."]) == []
    assert unnamed(["GNMT"], ["It is a recurrent model."]) == ["GNMT"]
    # in the abstract
    assert undescribed(names("Why is BLEU higher for Transformer models?"), [transformer], full_text) == []


def test_a_fields_initials_are_no_name() -> None:
    # "Why do very large AI models need so much memory?" was declined: ZeRO's paper never says "AI"
    assert names("Why do very large AI models need so much computer memory to train?") == []
    assert names("Which LLMs run on GPUs, and does ZeRO help?") == ["ZeRO"]


def test_capitalised_words_one_space_apart_are_one_name() -> None:
    # "Hugging Face" taken apart gave an answer ending "The papers I read do not describe Face."
    asked = names("How much faster does the first one train GPT-2 than the Hugging Face implementation?")
    assert asked == ["GPT-2", "Hugging Face"]
    assert names("Does Monte Carlo tree search beat the DQN Atari agents?") == ["Monte Carlo", "DQN", "Atari"]
    assert names("Compare Reptile and MAML.") == ["Reptile", "MAML"]
    assert name_pattern("Hugging Face").search("3x faster than the HuggingFace implementation")
    assert name_pattern("Hugging Face").search("the Hugging-Face models")
    paper = PaperRecord.model_construct(paper_id="X", title="FlashAttention", authors=[], abstract="Exact.")
    text = "GPT-2 (HuggingFace) " * (PASSING_MENTIONS + 1)
    assert undescribed(asked, [paper], lambda _pid: text) == []
    # held word by word, as before the words were one name: "American Community Survey" is written
    # whole once in its paper, its words more often
    words = "the Survey of the American Community " * (PASSING_MENTIONS + 1)
    assert undescribed(["American Community Survey"], [paper], lambda _pid: words) == []
    assert undescribed(["American Community Survey"], [paper], lambda _pid: "American Survey") == [
        "American Community Survey"
    ]
    assert unnamed(["Hugging Face"], ["the HuggingFace models"]) == []


def test_a_quoted_title_of_common_words_is_not_declined(ctx: ToolContext) -> None:
    # "All" and "You" are capitalised in the title but name nothing: stop words are not checked
    model = ScriptedModel([step("final_answer"), "It proposes the Transformer [1]."])
    _events, final = _run(model, ctx, "What does the paper 'Attention Is All You Need' propose?")
    assert not final.abstained and final.citations == ["1706.03762"]


def test_grounding_flags_sentences_no_passage_supports(ctx: ToolContext) -> None:
    answer = (
        "Deeper neural networks are more difficult to train, and a residual learning framework eases "
        "the training of networks substantially deeper than before [1]. "
        "The method was first invented in 1952 by a team of chemists in Lisbon [1]."
    )
    model = ScriptedModel([step("final_answer"), answer])
    _events, final = _run(model, ctx, RESNET_Q)
    grounding = final.grounding
    assert grounding is not None and (grounding.draft_checked, grounding.draft_supported) == (2, 1)
    # the revision leaves the invented sentence out of the answer and lists it beside it
    assert grounding.left_out == ["The method was first invented in 1952 by a team of chemists in Lisbon."]
    assert "1952" not in final.answer and "residual learning framework" in final.answer
    assert (grounding.checked, grounding.supported, grounding.unsupported) == (1, 1, [])
    assert final.citations == ["1512.03385"] and not grounding.quoted


def test_an_answer_no_passage_supports_becomes_quotes_of_the_passages(ctx: ToolContext) -> None:
    answer = (
        "Residual networks were invented in 1952 by chemists in Lisbon for punch cards [1]. "
        "They run only on quantum hardware built from seashells and copper wire [2]."
    )
    model = ScriptedModel([step("final_answer"), answer])
    _events, final = _run(model, ctx, RESNET_Q)
    grounding = final.grounding
    assert grounding is not None and grounding.quoted and len(grounding.left_out) == 2
    assert final.answer.startswith(NO_ANSWER) and "1952" not in final.answer
    quotes = re.findall(r'^- "(.+)" \[\[(\d)\]\]\(https://arxiv\.org/abs/([\d.]+)\)$', final.answer, re.M)
    assert 1 <= len(quotes) <= 2  # only those close to the question (here the framework sentence)
    assert final.state is not None
    read = " ".join(" ".join(final.state.evidence).split())
    for sentence, n, paper in quotes:
        assert sentence in read  # verbatim from what the tools returned
        assert final.citations[int(n) - 1] == paper
    assert grounding.checked == grounding.supported == len(quotes)


def test_sentences_beside_the_point_are_not_quoted_the_papers_read_are_named(embedder: Embedder) -> None:
    # the benchmark's full runs quoted unrelated papers' opening sentences for 58 answers
    draft = "Federated averaging adds Gaussian noise to each client's update [1]."
    passage = (
        "Deeper neural networks are more difficult to train. We present a residual learning framework "
        "to ease the training of networks that are substantially deeper than those used previously."
    )
    question = "How is differential privacy combined with federated averaging to protect client data?"
    missing = claim_spans(draft)
    revised = revise(draft, missing, 0, [("1512.03385", passage)], passage, question, embedder,
                     lambda paper: "Deep Residual Learning for Image Recognition")  # fmt: skip
    assert revised.answer.startswith(NOTHING_CLOSE) and not revised.quoted and declines(revised.answer)
    assert "Deep Residual Learning for Image Recognition" in revised.answer and '"' not in revised.answer
    assert revised.left_out == [missing[0].text]
    # asked what the passage says, its sentence is quoted
    close = revise(draft, missing, 0, [("1512.03385", passage)], passage,
                   "Why are deeper neural networks more difficult to train?", embedder)  # fmt: skip
    assert close.quoted and close.answer.startswith(NO_ANSWER)


def test_a_claim_that_says_the_question_back_needs_a_passage_with_its_words(embedder: Embedder) -> None:
    # the model said yes to a question the corpus cannot answer, in the question's own words; three
    # of its five words were among the sentences read, none on video compression
    question = (
        "Was that game-playing algorithm later used for video compression, and how much bitrate did it save?"
    )
    echo = "The game-playing algorithm was later used for video compression."
    passage = (
        "MuZero is a planning algorithm evaluated on 57 Atari games and later on Go, chess and shogi, "
        "with the video frames of each game as its observations."
    )
    assert unsupported(echo, [passage], embedder)[1] == []  # held, read without the question
    assert [c.text for c in unsupported(echo, [passage], embedder, question)[1]] == [echo]
    # the passage holds all the words of this one: it stands
    asked = "Was MuZero evaluated on Atari games and on chess?"
    held = "MuZero was evaluated on Atari games and on chess."
    assert unsupported(held, [passage], embedder, asked)[1] == []
    # a claim with words of its own is checked as before
    own = "MuZero plans on Atari games, Go, chess and shogi from the video frames it observes."
    assert unsupported(own, [passage], embedder, question)[1] == []


def test_what_holds_beside_an_unsupported_yes_is_declined(ctx: ToolContext) -> None:
    question = "Was residual learning later used for video compression?"
    yes = "Residual learning was later used for video compression [1]. "
    beside = "Deeper neural networks are more difficult to train [1]."
    model = ScriptedModel([step("final_answer"), yes + beside])
    _events, final = _run(model, ctx, question)
    assert final.abstained and final.answer.startswith((NO_ANSWER, NOTHING_CLOSE)), final.answer
    assert final.grounding is not None and "video compression" in final.grounding.left_out[0]
    # what holds beside it shares the question's words: kept, the yes left out
    on_point = "Residual learning eases the training of networks substantially deeper than before [1]."
    model = ScriptedModel([step("final_answer"), yes + on_point])
    _events, final = _run(model, ctx, question)
    assert not final.abstained and "eases the training" in final.answer and "compression" not in final.answer
    assert final.grounding is not None and "video compression" in final.grounding.left_out[0]


def test_a_sentence_that_leaned_on_a_cut_opening_stands_alone(embedder: Embedder) -> None:
    draft = (
        "The game-playing one does not need to be told the rules of the games [1]. "
        "This is because MuZero does not rely on knowledge of the game rules [1]."
    )
    missing = claim_spans(draft)[:1]
    revised = revise(draft, missing, 1, [], "", "Does it need the rules?", embedder)
    assert revised.answer == "MuZero does not rely on knowledge of the game rules [1]."
    named = (
        "The survey mentions five International Timetabling Competitions organised by PATAT [1]. "
        "Of these, ITC-2021 was about sports timetabling rather than educational timetabling [1]."
    )
    revised = revise(named, claim_spans(named)[:1], 1, [], "", "Which one was not educational?", embedder)
    assert revised.answer == "ITC-2021 was about sports timetabling rather than educational timetabling [1]."
    # not cut first, it keeps its words
    kept = "Residual learning eases training. This is because the layers learn residual functions."
    assert revise(kept, [], 2, [], "", "Why?", embedder).answer == kept
    # nor when it opened the answer (it answers a "why"), whatever is cut after it
    why = "This is because the layers learn residual functions [1]. Networks of 1,000 layers train fast [1]."
    revised = revise(why, claim_spans(why)[1:], 1, [], "", "Why does it train?", embedder)
    assert revised.answer == "This is because the layers learn residual functions [1]."


def test_a_list_items_label_stays_when_its_gloss_is_cut(embedder: Embedder) -> None:
    # the review's three challenges: the model's glosses after the labels held in no passage, and
    # cut whole, the items left "2." and "3." behind and the answer named one challenge
    draft = (
        "The main open challenges are:\n"
        "1. Data quality and integration: LLMs require high-quality data to perform well [1].\n"
        "2. **Model interpretability:** LLMs can be hard to understand, so their results are hard to trust.\n"
        "3. The need for standard benchmarks: LLMs need to be evaluated against established benchmarks.\n"
        "4. Trust in the tools used by chemists in their daily laboratory work [1]."
    )
    found = claim_spans(draft)
    assert [c.text.split()[0] for c in found] == ["LLMs", "LLMs", "LLMs", "Trust"]
    revised = revise(draft, found[1:], 1, [], "", "What are the main open challenges?", embedder)
    assert revised.answer == (
        "The main open challenges are:\n"
        "1. Data quality and integration: LLMs require high-quality data to perform well [1].\n"
        "2. **Model interpretability**\n"
        "3. The need for standard benchmarks"
    )


def test_an_answer_that_declines_is_not_revised(ctx: ToolContext) -> None:
    # a declining answer keeps its words (the page marks it); its unsupported rest is flagged
    answer = (
        "The papers provided do not answer this question. "
        "Residual networks were invented by chemists in Lisbon in 1952 for punch cards."
    )
    model = ScriptedModel([step("final_answer"), answer])
    _events, final = _run(model, ctx, RESNET_Q)
    assert final.abstained and final.answer.startswith(answer) and final.grounding is not None
    assert final.grounding.left_out == [] and len(final.grounding.unsupported) == 1


def test_renumbering_follows_first_appearance_after_a_cut() -> None:
    text = "B holds [[2]](https://arxiv.org/abs/2) and A [[1]](https://arxiv.org/abs/1) [[1]](https://arxiv.org/abs/1)."
    assert renumber(text) == (
        "B holds [[1]](https://arxiv.org/abs/2) and A [[2]](https://arxiv.org/abs/1).",
        ["2", "1"],
    )


def test_a_sentence_saying_what_the_passages_lack_is_not_a_claim() -> None:
    assert claims("The paper does not report the learning rate used for the larger model.") == []
    assert claims("I could not look this up in the papers of the corpus, sorry.") == []


def test_an_abbreviation_ends_no_sentence_of_an_answer(embedder: Embedder) -> None:
    # "(Eq. 4)" was read as a sentence's end: the part before it was uncited, and the check cited
    # it mid-reference, "... representation y (Eq [1]. 4) [1]." (a chat with the local model)
    url = "https://arxiv.org/abs/2010.11929"
    said = f"The encoder's first output serves as the image representation y (Eq. 4) [[1]]({url})."
    assert claims(said) == ["The encoder's first output serves as the image representation y (Eq. 4)."]
    unit = ("2010.11929", "The state at the encoder's output serves as the image representation y (Eq. 4).")
    assert attribute(said, [unit], embedder) == said
    two = ["The model reached 79% AUC on the test set.", "Fig. 2 shows its curve over training."]
    assert claims(" ".join(two)) == two
    # nor does a name's initial: "... Daniel S [1]. Weld wrote the CiteSee paper." (a chat)
    names = "The paper's authors are Joseph Chee Chang, Amy X. Zhang and Daniel S. Weld of the institute."
    assert claims(names) == [names]


def test_every_bullet_of_a_listing_is_checked_on_its_own() -> None:
    answer = (
        "Two papers cover it:\n- One reviews automatic bird sound detection and its datasets [1]\n"
        "- Another denoises birdsong audio with an autoencoder trained on noisy data [2]\n\n"
        "Sources: [1] A, [2] B"
    )
    assert claims(answer) == [
        "One reviews automatic bird sound detection and its datasets [1]",
        "Another denoises birdsong audio with an autoencoder trained on noisy data [2]",
    ]


def test_citations_allowed_from_earlier_turns(ctx: ToolContext) -> None:
    model = ScriptedModel([step("final_answer"), "See [1]."])
    _, first = _run(model, ctx, "How does multi-head attention work?")
    assert first.state is not None and "1706.03762" in first.state.allowed
    model2 = ScriptedModel([step("final_answer"), "As said, arXiv:1706.03762 introduced it."])
    _, final = _run(
        model2, ctx, "Who introduced multi-head attention?", allowed=first.state.allowed,
        earlier_passages=first.passages,
    )  # fmt: skip
    assert final.citations == ["1706.03762"]
    assert "1706.03762#" in final.passages["1706.03762"]


def test_turn_state_collects_evidence_papers_passages_and_tokens(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [
            step("get_information_from_paper", paper_id="1512.03385", query="degradation problem", k=2),
            step("final_answer"),
            "Residual learning fixes degradation [1].",
        ]
    )
    _, final = _run(model, ctx, RESNET_Q)
    state = final.state
    assert state is not None
    assert len(state.evidence) == 2 and state.evidence[1].startswith("From [arXiv:1512.03385]")
    assert state.papers[0] == "1512.03385" and state.read == ["1512.03385"]
    assert state.title("1512.03385").startswith("Deep Residual Learning")
    # a passage the reading tool showed wins over where the listing's abstract is
    assert final.passages["1512.03385"] == state.read_passages["1512.03385"]
    assert state.read_passages["1512.03385"] != state.listed_passages["1512.03385"]
    assert state.tokens_in > 0 and final.tokens_in == state.tokens_in
    assert set(model.roles) == {"agent"}
    assert "state" not in final.model_dump_json()  # the evidence is not sent over the wire


def _actions(schema: dict) -> list[str]:
    return [v["properties"]["action"]["const"] for v in schema["anyOf"]]


def test_step_schema_covers_every_tool() -> None:
    schema = step_schema(ALL_TOOLS)
    assert _actions(schema) == [t.name for t in ALL_TOOLS] + ["final_answer"]
    search = schema["anyOf"][0]["properties"]["action_input"]
    assert search["required"] == ["query"] and search["properties"]["k"]["default"] == 5
    # every free-text field is bounded, so a looping small model still ends its step in time
    assert search["properties"]["query"]["maxLength"] == 300
    assert all(v["properties"]["thought"]["maxLength"] == 300 for v in schema["anyOf"])
    recent = schema["anyOf"][1]["properties"]["action_input"]["properties"]["since"]
    assert "maxLength" not in recent["anyOf"][0]  # a date keeps its own format


def test_uncited_answer_names_its_sources(ctx: ToolContext) -> None:
    # too short to attribute to a passage: the answer names the papers it was written from
    model = ScriptedModel([step("final_answer"), "Residual nets train easily."])
    _, final = _run(model, ctx, "What do residual nets solve?")
    assert final.answer.startswith(
        "Residual nets train easily.\n\nSources: [[1]](https://arxiv.org/abs/1512.03385) Deep Residual"
    )
    assert final.citations == ["1512.03385"]  # only the best match of a mere listing


def test_an_uncited_claim_gets_the_citation_of_the_paper_that_supports_it(ctx: ToolContext) -> None:
    answer = (
        "Deeper neural networks are more difficult to train, and a residual learning framework eases "
        "the training of networks substantially deeper than before."
    )
    model = ScriptedModel([step("final_answer"), answer])
    _, final = _run(model, ctx, RESNET_Q)
    assert final.answer == answer[:-1] + " [[1]](https://arxiv.org/abs/1512.03385)."
    assert final.citations == ["1512.03385"] and final.grounding is not None
    assert final.grounding.checked == final.grounding.supported == 1


def test_citation_rewriting() -> None:
    from agent.citations import apply_citations

    text, cited, removed = apply_citations(
        "See [[arXiv:1706.03762v5](https://arxiv.org/abs/1706.03762v5)], 1512.03385, "
        "arXiv:9999.99999 and v2.0.",
        {"1706.03762", "1512.03385"},
    )
    assert text.startswith("See [arXiv:1706.03762](https://arxiv.org/abs/1706.03762), [arXiv:1512.03385](")
    assert cited == ["1706.03762", "1512.03385"] and removed == ["9999.99999"]


def test_each_citation_points_at_a_passage(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [
            step("get_information_from_paper", paper_id="1706.03762", query="BLEU on WMT 2014", k=3),
            step("final_answer"),
            "Transformers reach high BLEU [arXiv:1706.03762]; residual nets train deep [arXiv:1512.03385].",
        ]
    )
    events, final = _run(model, ctx, "Compare residual networks and Transformers.")
    read = [e for e in events if isinstance(e, StepFinished)][1]
    assert read.chunk_ids and all(c.startswith("1706.03762#") for c in read.chunk_ids)
    assert final.citations == ["1706.03762", "1512.03385"]
    assert "[[1]](https://arxiv.org/abs/1706.03762)" in final.answer
    # a paper read inside: its most relevant passage shown; a paper only listed: its abstract chunk
    assert final.passages["1706.03762"] == read.chunk_ids[0]
    assert final.passages["1512.03385"] == "1512.03385#0"


def test_numbered_citations_follow_first_appearance() -> None:
    from agent.citations import number_citations

    text, cited, removed = number_citations(
        "ResNets ease training [2]. Attention helps [1] [1]. And [7], arXiv:2401.00001.",
        ["1706.03762", "1512.03385"],
        {"1706.03762", "1512.03385"},
    )
    assert text.startswith("ResNets ease training [[1]](https://arxiv.org/abs/1512.03385). Attention helps")
    assert "[[2]](https://arxiv.org/abs/1706.03762)." in text and "[7]" in text
    assert cited == ["1512.03385", "1706.03762"] and removed == ["2401.00001"]


def test_earlier_answers_are_reread_short_with_bare_numbers() -> None:
    answer = (
        "Residual blocks ease optimisation [[1]](https://arxiv.org/abs/1512.03385). " + "More detail. " * 80
        + "\n\nSources: [[1]](https://arxiv.org/abs/1512.03385) Deep Residual Learning"
    )  # fmt: skip
    recalled = _recalled(answer)
    assert recalled.startswith("Residual blocks ease optimisation [1]. More detail.")
    assert "arxiv.org" not in recalled and len(recalled) <= 300


def test_an_answer_cut_by_the_token_limit_ends_at_its_last_whole_sentence() -> None:
    assert _whole_sentences("Residuals help [1]. Deeper nets train. They also gener") == (
        "Residuals help [1]. Deeper nets train."
    )
    assert _whole_sentences("One long unfinished sentence without an end") == (
        "One long unfinished sentence without an end…"
    )


@pytest.mark.parametrize(
    ("answer", "declined"),
    [
        ("The observations do not mention how Raft elects a leader.", True),
        ("The provided papers do not contain information on CRDTs [1]. They discuss ...", True),
        ("I cannot answer this from the corpus: no paper covers YOLO.", True),
        ("Residual learning eases optimisation [1]. The paper does not mention CRDTs.", False),
        ("ADADELTA does not need a manually set learning rate [1].", False),
        ("The method needs no extra parameters and provides details in Section 3 [1].", False),
    ],
)
def test_an_answer_that_opens_by_saying_the_papers_do_not_answer_declines(
    answer: str, declined: bool
) -> None:
    assert declines(answer) is declined


class StopsWhileStepping(ScriptedModel):
    """Sets the turn's stop switch while it writes its next step (the person pressed Stop)."""

    def __init__(self, replies: list[str], stop) -> None:
        super().__init__(replies)
        self.stop = stop

    def chat(self, messages, json_schema=None, max_tokens=512, on_token=None, role="agent"):
        if json_schema is not None:
            self.stop.set()
        return super().chat(messages, json_schema, max_tokens, on_token, role)


def test_a_stop_ends_the_turn_inside_the_step_being_written(ctx: ToolContext) -> None:
    import threading

    stop = threading.Event()
    # a long step: were it written whole, the tool it names would run
    model = StopsWhileStepping(
        [step("get_full_paper_summary", thought="I read it all " * 20, paper_id="1512.03385")], stop
    )
    events, final = _run(model, ctx, RESNET_Q, stop=stop)
    assert final.stopped and final.answer == "" and not final.abstained
    assert [e.tool for e in events if isinstance(e, StepStarted)] == ["search"]  # the step never ran
    assert [s.tool for s in final.steps] == ["search"] and len(model.calls) == 1
    assert not any(isinstance(e, Token) for e in events)


def test_a_stop_set_before_the_turn_runs_no_tool(ctx: ToolContext) -> None:
    import threading

    stop = threading.Event()
    stop.set()
    events, final = _run(ScriptedModel([]), ctx, RESNET_Q, stop=stop)
    assert final.stopped and final.steps == [] and final.citations == []
    assert [type(e).__name__ for e in events] == ["LevelDecided", "Final"]


def test_a_question_naming_a_paper_is_answered_from_a_read_paper_that_describes_the_name(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a chat of 2026-12-05: "Is the attention in FlashAttention an approximation?" read FlashAttention
    # and RWKV; RWKV's sentences on attention scored higher, and the answer was "the paper I read,
    # RWKV, does not describe FlashAttention". Here the reader's choice is made to miss the same way.
    import agent.loop as loop

    chose: list[str] = []

    def distillation(read, question="", margin=0.0):  # read beside the Transformer and ViT
        other = next(r for r in read if r.paper.paper_id == "1503.02531")
        chose.append(other.paper.paper_id)
        return other

    monkeypatch.setattr(loop, "best_read", distillation)
    model = ScriptedModel(["It relies entirely on self-attention [1]."])
    events, final = _run(model, ctx, "How does the Transformer model sequences?", reader="narrow")
    read = [e.arguments["paper_id"] for e in events if isinstance(e, StepStarted) and e.tool != "search"]
    assert "1706.03762" in read and chose and chose[0] != "1706.03762"
    assert not final.abstained and final.citations and final.citations[0] != chose[0]
    assert "does not describe" not in final.answer
