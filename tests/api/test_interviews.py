"""Interviewing a paper through the API, against the live app and the real database: a round's
events, the person's own question, the transcript, and the request errors. The model is scripted
(the local-model run is tests/cli/test_interview.py)."""

from __future__ import annotations

import uuid

import httpx

from tests.scripted_model import GatedModel, ScriptedModel
from tests.web import CSRF, live_server, sign_up, sse_events

RESNET = "1512.03385"


def _client(base: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=base, timeout=60)
    return client, sign_up(client, f"iv-{uuid.uuid4().hex[:8]}")


def _round(client: httpx.Client, token: str, paper: str, **body) -> list[tuple[str, dict]]:
    with client.stream("POST", f"/api/papers/{paper}/interview", json=body, headers={CSRF: token}) as res:
        assert res.status_code == 200, res.read()
        return sse_events(res.iter_lines())


def test_rounds_question_answer_passages_and_transcript(make_app) -> None:
    question = "Q: Why were deeper networks worse than shallow ones?\nSome chatter."
    model = ScriptedModel([question, "Depth made training harder [1].", "Shortcuts add the input back [2]."])
    with live_server(make_app(model=model)) as base:
        client, token = _client(base)
        first = _round(client, token, RESNET)
        assert first[0][0] == "question" and first[-1][0] == "answer"
        assert first[0][1] == {"type": "question", "asker": "journalist",
                               "text": "Why were deeper networks worse than shallow ones?"}  # fmt: skip
        exchange = first[-1][1]["exchange"]
        assert exchange["answer"] == "Depth made training harder [1]." and not exchange["stopped"]
        assert exchange["unsupported"] == []  # too short to state a checkable finding
        assert "".join(d["text"] for k, d in first if k == "token").strip() == exchange["answer"]
        passages = exchange["passages"]
        assert 1 <= len(passages) <= 3 and passages[0]["n"] == 1  # the cited passage first
        assert all(p["chunk_id"].startswith(RESNET + "#") and p["text"] for p in passages)
        # the author read the paper's passages, numbered, and only those
        author_prompt = model.calls[1][0][-1].content
        assert (
            all(f"[{p['n']}]" in author_prompt for p in passages)
            and "Question: Why were deeper" in author_prompt
        )

        # the person's own question: no journalist call for it
        own = _round(
            client, token, RESNET, earlier=[exchange], question="How do shortcuts help?", level="BSc"
        )
        assert own[0][1]["asker"] == "you" and own[0][1]["text"] == "How do shortcuts help?"
        second = own[-1][1]["exchange"]
        assert second["passages"][0]["n"] == 2 and model.replies == []  # cited [2] comes first

        both = {"exchanges": [exchange, second]}
        res = client.post(f"/api/papers/{RESNET}/interview/transcript.md", json=both, headers={CSRF: token})
        assert res.status_code == 200 and res.headers["content-type"].startswith("text/markdown")
        assert 'filename="interview-1512-03385.md"' in res.headers["content-disposition"]
        text = res.text
        assert text.startswith("# Interview: Deep Residual Learning for Image Recognition")
        assert (
            "## 1. Journalist: Why were deeper networks" in text
            and "## 2. You: How do shortcuts help?" in text
        )
        assert "**Author:** Shortcuts add the input back [2]." in text and f"> [2] ({RESNET}#" in text


def test_interview_request_errors(make_app) -> None:
    model = GatedModel(["A question?", "An answer [1]."], at=1)  # the author waits for the gate
    with live_server(make_app(model=model)) as base:
        client, token = _client(base)
        url = f"/api/papers/{RESNET}/interview"
        assert client.post(url, json={}).status_code == 403  # CSRF
        assert (
            client.post("/api/papers/9999.99999/interview", json={}, headers={CSRF: token}).status_code == 404
        )
        assert (
            client.post("/api/papers/not-an-id/interview", json={}, headers={CSRF: token}).status_code == 404
        )
        too_many = {"earlier": [{"asker": "journalist", "question": "q?", "answer": "a"}] * 21}
        assert client.post(url, json=too_many, headers={CSRF: token}).status_code == 422
        assert client.post(url, json={"question": "x" * 2001}, headers={CSRF: token}).status_code == 422
        assert client.post(url, json={"level": "Professor"}, headers={CSRF: token}).status_code == 422
        nothing = client.post(f"{url}/stop", headers={CSRF: token})
        assert nothing.status_code == 409

        with client.stream("POST", url, json={}, headers={CSRF: token}) as res:
            assert res.status_code == 200
            busy = client.post(url, json={}, headers={CSRF: token})
            assert busy.status_code == 409 and "still running" in busy.json()["detail"]
            model.gate.set()
            assert sse_events(res.iter_lines())[-1][0] == "answer"
        other, other_token = _client(base)
        assert other.post(f"/api/papers/{RESNET}/interview/transcript.md", json={"exchanges": []},
                          headers={CSRF: other_token}).status_code == 200  # fmt: skip


def test_a_model_that_fails_is_a_503_not_an_empty_stream(make_app) -> None:
    from tests.scripted_model import FailingFirst

    with live_server(make_app(model=FailingFirst(["A question?", "An answer [1]."]))) as base:
        client, token = _client(base)
        res = client.post(f"/api/papers/{RESNET}/interview", json={}, headers={CSRF: token})
        assert res.status_code == 503 and "unreachable" in res.json()["detail"]
        # the next round works: the failure did not stick
        assert _round(client, token, RESNET)[-1][0] == "answer"
