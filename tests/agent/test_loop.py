"""The ReAct loop with a scripted model: repair, tool errors, step cap, history, citations, level."""

from __future__ import annotations

import pytest

from agent.events import Final, LevelDecided, StepFinished, StepStarted, Token
from agent.loop import ResearchAgent, Turn, step_schema
from agent.tools import ALL_TOOLS, ToolContext
from corpus.db import Database
from corpus.embedder import Embedder
from tests.scripted_model import ScriptedModel, step


@pytest.fixture
def ctx(ingested: Database, embedder: Embedder) -> ToolContext:
    return ToolContext(connect=ingested.pooled, embedder=embedder)


ANSWER = "Residual learning eases training of very deep nets (arXiv:1512.03385v1); see also arXiv:2401.00001."


def _run(model: ScriptedModel, ctx: ToolContext, question: str, **kw):
    events = list(ResearchAgent(model, ctx, max_steps=kw.pop("max_steps", 6)).run(question, **kw))
    final = events[-1]
    assert isinstance(final, Final)
    return events, final


def test_search_then_answer_with_filtered_citations(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [
            step("search", query="residual learning deep networks", k=3),
            step("final_answer"),
            ANSWER,
        ]
    )
    events, final = _run(model, ctx, "What problem does residual learning solve?")
    kinds = [type(e).__name__ for e in events]
    assert kinds[:3] == ["LevelDecided", "StepStarted", "StepFinished"]
    assert "Token" in kinds and kinds[-1] == "Final"
    started = next(e for e in events if isinstance(e, StepStarted))
    assert started.tool == "search" and started.arguments == {
        "query": "residual learning deep networks",
        "k": 3,
    }
    finished = next(e for e in events if isinstance(e, StepFinished))
    assert "[arXiv:1512.03385]" in finished.observation and not finished.error
    assert final.citations == ["1512.03385"] and final.removed_citations == ["2401.00001"]
    assert "[arXiv:1512.03385](https://arxiv.org/abs/1512.03385)" in final.answer
    assert "citation removed" in final.answer and not final.forced
    streamed = "".join(e.text for e in events if isinstance(e, Token))
    assert streamed.strip() == ANSWER
    # the answer call continues the step conversation (same prefix) and is not schema-constrained
    step_messages, schema = model.calls[0]
    answer_messages, answer_schema = model.calls[-1]
    assert schema is not None and answer_schema is None
    # a chat's first question must use a tool before answering; later steps may answer
    assert _actions(schema) == [t.name for t in ALL_TOOLS]
    assert _actions(model.calls[1][1]) == [t.name for t in ALL_TOOLS] + ["final_answer"]
    assert answer_messages[: len(step_messages)] == step_messages


def test_invalid_json_is_repaired_once(ctx: ToolContext) -> None:
    model = ScriptedModel(
        ["Sure! I will search.", step("search", query="attention"), step("final_answer"), "ok"]
    )
    events, _final = _run(model, ctx, "attention mechanisms?")
    assert any(isinstance(e, StepStarted) for e in events)
    repair_prompt = model.calls[1][0][-1].content
    assert repair_prompt.startswith("That reply was not valid: not JSON")


def test_twice_invalid_gives_a_graceful_answer(ctx: ToolContext) -> None:
    model = ScriptedModel(["nonsense", step("nonexistent_tool"), "I could not look this up, sorry."])
    events, final = _run(model, ctx, "anything")
    assert final.forced and final.answer == "I could not look this up, sorry."
    assert "unknown action 'nonexistent_tool'" not in final.answer
    assert not any(isinstance(e, StepStarted) for e in events)


def test_bad_arguments_are_repaired(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [step("search", q="wrong name"), step("search", query="right"), step("final_answer"), "ok"]
    )
    _run(model, ctx, "question")
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
    events, _final = _run(model, ctx, "question")
    errors = [e for e in events if isinstance(e, StepFinished)]
    assert [e.error for e in errors] == [True, True]
    assert "not in the corpus" in errors[0].observation and "first chunk" in errors[1].observation
    assert model.calls[1][0][-1].content.startswith(
        "Observation: Error: paper 2401.99999 is not in the corpus"
    )


def test_step_cap_forces_an_answer(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [step("search", query=f"q{i}") for i in range(3)] + ["Forced answer from the evidence."]
    )
    _events, final = _run(model, ctx, "question", max_steps=3)
    assert final.forced and len(final.steps) == 3
    assert model.calls[-1][0][-1].content.startswith("You have used all your steps.")


def test_history_and_level_carry_across_turns(ctx: ToolContext) -> None:
    first_q = "I'm a PhD student: how does residual learning affect optimisation of very deep networks?"
    model = ScriptedModel([step("final_answer"), "First answer."])
    events, final = _run(model, ctx, first_q)
    assert (
        final.level == "PhD"
        and isinstance(events[0], LevelDecided)
        and events[0].reason == "the user said so"
    )
    model2 = ScriptedModel([step("final_answer"), "Second answer."])
    history = [Turn(user=first_q, assistant=final.answer)]
    _events2, final2 = _run(model2, ctx, "and what is a cat?", history=history, level=final.level)
    assert final2.level == "PhD"
    contents = [m.content for m in model2.calls[0][0]]
    assert contents[1:4] == [first_q, "First answer.", "and what is a cat?"]
    assert "researcher (PhD)" in contents[0]
    assert "final_answer" in _actions(model2.calls[0][1])  # a follow-up may answer from the chat


def test_citations_allowed_from_earlier_turns(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [step("search", query="transformer attention"), step("final_answer"), "See 1706.03762."]
    )
    _, first = _run(model, ctx, "attention?")
    assert first.state is not None and "1706.03762" in first.state.allowed
    model2 = ScriptedModel([step("final_answer"), "As said, arXiv:1706.03762 introduced it."])
    _, final = _run(
        model2, ctx, "who introduced it?", allowed=first.state.allowed, earlier_passages=first.passages
    )
    assert final.citations == ["1706.03762"]
    # without a tool in this turn, the citation points where the earlier turn's did
    assert final.passages == first.passages and "1706.03762#" in first.passages["1706.03762"]


def test_turn_state_collects_evidence_papers_passages_and_tokens(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [
            step("search", query="residual learning deep networks", k=3),
            step("get_information_from_paper", paper_id="1512.03385", query="degradation problem", k=2),
            step("final_answer"),
            "Residual learning fixes degradation (arXiv:1512.03385).",
        ]
    )
    _, final = _run(model, ctx, "What problem does residual learning solve?")
    state = final.state
    assert state is not None
    assert len(state.evidence) == 2 and state.evidence[1].startswith("From [arXiv:1512.03385]")
    assert state.papers[0] == "1512.03385" and state.read == ["1512.03385"]
    assert state.titles["1512.03385"].startswith("Deep Residual Learning")
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


def test_uncited_answer_names_its_sources_and_the_request_lists_links(ctx: ToolContext) -> None:
    model = ScriptedModel(
        [
            step("search", query="residual learning", k=3),
            step("final_answer"),
            "Residual nets are easier to train.",
        ]
    )
    _, final = _run(model, ctx, "What do residual nets solve?")
    request = model.calls[-1][0][-1].content
    assert "- [arXiv:1512.03385](https://arxiv.org/abs/1512.03385) Deep Residual Learning" in request
    assert final.answer.startswith("Residual nets are easier to train.\n\nSources: [arXiv:1512.03385]")
    assert final.citations == ["1512.03385"]  # only the best match of a mere listing


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
            step("search", query="residual learning and attention", k=5),
            step("get_information_from_paper", paper_id="1706.03762", query="BLEU on WMT 2014", k=3),
            step("final_answer"),
            "Transformers reach high BLEU [arXiv:1706.03762]; residual nets train deep [arXiv:1512.03385].",
        ]
    )
    events, final = _run(model, ctx, "Compare ResNets and Transformers.")
    read = [e for e in events if isinstance(e, StepFinished)][1]
    assert read.chunk_ids and all(c.startswith("1706.03762#") for c in read.chunk_ids)
    assert final.citations == ["1706.03762", "1512.03385"]
    # a paper read inside: its most relevant passage shown; a paper only listed: its abstract chunk
    assert final.passages["1706.03762"] == read.chunk_ids[0]
    assert final.passages["1512.03385"] == "1512.03385#0"
