"""Long answers under control, against the live app (uvicorn) and the real database: stopping an
answer, following it again from another page, and asking again in place of an earlier question
(edit and resend, regenerate). The chat model is scripted and paced by the test, so every run
sees the same interleaving."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.scripted_model import FailingFirst, GatedModel, PausingModel, ScriptedModel, step
from tests.web import CSRF, live_server, sign_up, sse_events

ANSWER = "Residual learning lets very deep networks train well because each block learns a residual [1]."


def _user(base: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=base, timeout=60)
    token = sign_up(client, f"u-{uuid.uuid4().hex[:8]}")
    return client, token


def _chat(client: httpx.Client, token: str) -> str:
    res = client.post("/api/chats", json={}, headers={CSRF: token})
    assert res.status_code == 201, res.text
    return res.json()["chat_id"]


def _events(lines: Iterator[str], until: str | None = None) -> list[tuple[str, dict, int]]:
    """(type, data, id) of each event read from `lines` (one iterator per response, so reading
    can go on where it stopped); stops after the first event of type `until`."""
    out, kind, data, number = [], None, [], 0
    for line in lines:
        if line == "":
            if data:
                out.append((kind, json.loads("\n".join(data)), number))
                if kind == until:
                    return out
            kind, data = None, []
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line.startswith("id:"):
            number = int(line[3:])
    return out


def _messages(client: httpx.Client, chat_id: str) -> list[dict]:
    res = client.get(f"/api/chats/{chat_id}/messages")
    assert res.status_code == 200, res.text
    return res.json()["messages"]


def test_stop_saves_what_was_written_and_the_chat_goes_on(make_app) -> None:
    second = "A whole second answer [1]."
    # the answer waits at its fifth word until the test opens the gate
    model = PausingModel([step("final_answer"), ANSWER, step("final_answer"), second], pause_at=4)
    app = make_app(model=model)
    with live_server(app) as base:
        client, token = _user(base)
        other, other_token = _user(base)
        chat_id = _chat(client, token)
        nothing = client.post(f"/api/chats/{chat_id}/stop", headers={CSRF: token})
        assert nothing.status_code == 409 and "no answer" in nothing.json()["detail"]

        with client.stream(
            "POST", f"/api/chats/{chat_id}/messages", json={"content": "Why do residual networks train?"},
            headers={CSRF: token},
        ) as res:  # fmt: skip
            assert res.status_code == 200
            assert model.halfway.wait(30)
            # only the owner stops it, and only with the CSRF token
            assert other.post(f"/api/chats/{chat_id}/stop", headers={CSRF: other_token}).status_code == 404
            assert client.post(f"/api/chats/{chat_id}/stop").status_code == 403
            stopped = client.post(f"/api/chats/{chat_id}/stop", headers={CSRF: token})
            assert stopped.status_code == 202 and stopped.json() == {"stopping": True}
            model.gate.set()
            events = _events(res.iter_lines())
        kinds = [k for k, _, _ in events]
        assert kinds[-1] == "final" and "error" not in kinds
        final = events[-1][1]
        written = "".join(d["text"] for k, d, _ in events if k == "token")
        assert final["stopped"] is True
        # exactly the four words written before the stop, and not one more
        assert written == " ".join(ANSWER.split(" ")[:4]) + " "
        assert final["answer"] == written.strip()
        assert final["grounding"] is None and final["question_id"] and final["message_id"]

        saved = _messages(client, chat_id)
        assert [m["role"] for m in saved] == ["user", "assistant"]
        assert saved[1]["stopped"] is True and saved[1]["content"] == written.strip()
        assert [saved[0]["message_id"], saved[1]["message_id"]] == [final["question_id"], final["message_id"]]
        export = client.get(f"/api/chats/{chat_id}/export.md").text
        assert "**Answer** (stopped: unfinished)" in export

        # the chat is free again and the next answer is whole
        model.pause_at = -1
        with client.stream(
            "POST", f"/api/chats/{chat_id}/messages", json={"content": "And then?"}, headers={CSRF: token}
        ) as res:
            final = _events(res.iter_lines())[-1][1]
        assert final["stopped"] is False and final["answer"].startswith("A whole second answer")
        assert [m["stopped"] for m in _messages(client, chat_id)] == [False, True, False, False]


def test_a_page_opened_again_follows_the_answer_being_written(make_app) -> None:
    model = GatedModel([step("final_answer"), ANSWER], at=1)  # the answer waits for the gate
    app = make_app(model=model)
    with live_server(app) as base:
        client, token = _user(base)
        other, _ = _user(base)
        chat_id = _chat(client, token)
        assert client.get(f"/api/chats/{chat_id}/stream").status_code == 204  # nothing being written

        question = "What problem do deep residual networks solve?"
        with client.stream(
            "POST", f"/api/chats/{chat_id}/messages", json={"content": question}, headers={CSRF: token}
        ) as first:
            lines = first.iter_lines()
            seen = _events(lines, until="step_finished")
            # the chat says what is being answered (the question is saved only with its answer)
            listed = client.get(f"/api/chats/{chat_id}/messages").json()
            assert listed["messages"] == [] and listed["chat"]["answering"] is True
            assert listed["chat"]["pending"] == {"content": question, "replaces": None}
            assert other.get(f"/api/chats/{chat_id}/stream").status_code == 404

            # a second page: the events so far at once, then the rest as it comes
            with client.stream("GET", f"/api/chats/{chat_id}/stream") as again:
                assert again.status_code == 200
                assert again.headers["content-type"].startswith("text/event-stream")
                threading.Timer(0.3, model.gate.set).start()
                replayed = _events(again.iter_lines())
            rest = _events(lines)
        everything = seen + rest
        assert [k for k, _, _ in everything][:3] == ["level", "step_started", "step_finished"]
        assert everything[-1][0] == "final"
        assert replayed == everything  # same events, same ids, same order
        assert [n for _, _, n in everything] == list(range(1, len(everything) + 1))

        assert client.get(f"/api/chats/{chat_id}/stream").status_code == 204  # finished: saved
        saved = _messages(client, chat_id)
        assert saved[0]["content"] == question and saved[1]["stopped"] is False
        assert client.get("/api/chats").json()[0]["pending"] is None


def test_resume_after_a_known_event(make_app) -> None:
    model = GatedModel([step("final_answer"), ANSWER], at=1)
    app = make_app(model=model)
    with live_server(app) as base:
        client, token = _user(base)
        chat_id = _chat(client, token)
        with client.stream(
            "POST", f"/api/chats/{chat_id}/messages", json={"content": "Residual networks?"},
            headers={CSRF: token},
        ) as first:  # fmt: skip
            lines = first.iter_lines()
            _events(lines, until="step_finished")
            with client.stream(
                "GET", f"/api/chats/{chat_id}/stream", headers={"Last-Event-ID": "2"}
            ) as again:
                threading.Timer(0.3, model.gate.set).start()
                resumed = _events(again.iter_lines())
            # an EventSource reconnecting with the last id it had: the events after it
            assert resumed[0][0] == "step_finished" and resumed[0][2] == 3
            assert resumed[-1][0] == "final" and _events(lines)[-1] == resumed[-1]
        bad = client.get(f"/api/chats/{chat_id}/stream", headers={"Last-Event-ID": "not a number"})
        assert bad.status_code == 422


def test_edit_and_resend_replaces_the_question_and_all_after_it(make_app) -> None:
    replies = [step("final_answer"), "First answer [1].", step("final_answer"), "Second answer [1]."]
    replies += [step("final_answer"), "Edited answer [1].", step("final_answer"), "Regenerated answer [1]."]
    app = make_app(model=ScriptedModel(replies))
    with live_server(app) as base:
        client, token = _user(base)
        chat_id = _chat(client, token)

        def ask(content: str, replaces: int | None = None) -> list[tuple[str, dict]]:
            body = {"content": content} | ({"replaces": replaces} if replaces is not None else {})
            with client.stream(
                "POST", f"/api/chats/{chat_id}/messages", json=body, headers={CSRF: token}
            ) as res:
                assert res.status_code == 200, res.read()
                return sse_events(res.iter_lines())

        ask("What problem do deep residual networks solve?")
        ask("How deep were they?")
        before = _messages(client, chat_id)
        q2 = before[2]["message_id"]

        # not a question of this chat: an answer's id, an unknown id, another chat's question
        for bad in (before[1]["message_id"], q2 + 1000):
            res = client.post(
                f"/api/chats/{chat_id}/messages",
                json={"content": "x", "replaces": bad},
                headers={CSRF: token},
            )
            assert res.status_code == 404 and "replaces" in res.json()["detail"]
        elsewhere = _chat(client, token)
        res = client.post(
            f"/api/chats/{elsewhere}/messages", json={"content": "x", "replaces": q2}, headers={CSRF: token}
        )
        assert res.status_code == 404
        assert _messages(client, chat_id) == before  # nothing lost

        edited = ask("How many layers did the deepest one have?", replaces=q2)
        assert edited[-1][1]["answer"].startswith("Edited answer")
        after = _messages(client, chat_id)
        assert [m["content"].split(" [")[0] for m in after] == [
            "What problem do deep residual networks solve?",
            before[1]["content"].split(" [")[0],
            "How many layers did the deepest one have?",
            "Edited answer",
        ]
        assert after[:2] == before[:2]  # the turn before the edit is untouched

        # regenerate: the first question again, in its own place; what came after it goes
        again = ask(after[0]["content"], replaces=after[0]["message_id"])
        assert again[-1][1]["answer"].startswith("Regenerated answer")
        final = _messages(client, chat_id)
        assert [m["role"] for m in final] == ["user", "assistant"]
        assert final[1]["content"].startswith("Regenerated answer")
        titles = {c["chat_id"]: c["title"] for c in client.get("/api/chats").json()}
        assert titles[chat_id].startswith("What problem do deep residual")


def test_a_failed_resend_loses_nothing(make_app) -> None:
    model = FailingFirst([step("final_answer"), "Kept answer [1]."])
    model.failed = True  # the first answer works; the failure is armed below
    app = make_app(model=model)
    with live_server(app) as base:
        client, token = _user(base)
        chat_id = _chat(client, token)
        with client.stream(
            "POST",
            f"/api/chats/{chat_id}/messages",
            json={"content": "Residual networks?"},
            headers={CSRF: token},
        ) as res:
            assert sse_events(res.iter_lines())[-1][0] == "final"
        before = _messages(client, chat_id)
        model.failed = False
        with client.stream(
            "POST", f"/api/chats/{chat_id}/messages",
            json={"content": "Residual networks, again?", "replaces": before[0]["message_id"]},
            headers={CSRF: token},
        ) as res:  # fmt: skip
            events = sse_events(res.iter_lines())
        assert events[-1][0] == "error"
        assert _messages(client, chat_id) == before


@pytest.mark.parametrize("replaces", [0, -3, "one", 1.5])
def test_bad_replaces_is_a_422(make_app, replaces) -> None:
    app = make_app(model=ScriptedModel([]))
    with live_server(app) as base:
        client = httpx.Client(base_url=base, timeout=30)
        token = sign_up(client, f"u-{uuid.uuid4().hex[:8]}")
        chat_id = _chat(client, token)
        res = client.post(
            f"/api/chats/{chat_id}/messages",
            json={"content": "q", "replaces": replaces},
            headers={CSRF: token},
        )
        assert res.status_code == 422 and res.json()["errors"][0]["loc"][-1] == "replaces"
        assert _messages(client, chat_id) == []


def test_a_regeneration_stopped_before_it_wrote_anything_keeps_the_chat(make_app) -> None:
    # the regeneration's step waits at the gate; the person stops it there
    model = GatedModel([step("final_answer"), ANSWER, step("final_answer"), "Never written [1]."], at=2)
    app = make_app(model=model)
    with live_server(app) as base:
        client, token = _user(base)
        chat_id = _chat(client, token)
        url = f"/api/chats/{chat_id}/messages"
        with client.stream("POST", url, json={"content": "Residual networks?"}, headers={CSRF: token}) as res:
            assert sse_events(res.iter_lines())[-1][0] == "final"
        before = _messages(client, chat_id)
        again = {"content": "Residual networks?", "replaces": before[0]["message_id"]}
        with client.stream("POST", url, json=again, headers={CSRF: token}) as res:
            lines = res.iter_lines()
            _events(lines, until="step_finished")
            assert client.post(f"/api/chats/{chat_id}/stop", headers={CSRF: token}).status_code == 202
            model.gate.set()
            final = _events(lines)[-1]
        assert final[0] == "final" and final[1]["stopped"] and final[1]["answer"] == ""
        assert final[1]["question_id"] is None  # nothing was saved
        assert _messages(client, chat_id) == before  # the old answer is still there


def test_stop_ends_an_answer_whose_model_call_stalls(make_app) -> None:
    """A remote model that stalls (no token for a long time): the stop ends the answer at once,
    with nothing written, and no other model call (a fallback, a revision) starts after it."""
    import time

    model = GatedModel([step("final_answer"), ANSWER, ANSWER, ANSWER], at=1)  # the answer call stalls
    app = make_app(model=model, reader="agent")
    with live_server(app) as base:
        client, token = _user(base)
        chat_id = _chat(client, token)
        with client.stream(
            "POST", f"/api/chats/{chat_id}/messages", json={"content": "Why do residual networks train?"},
            headers={CSRF: token},
        ) as res:  # fmt: skip
            deadline = time.monotonic() + 30
            while len(model.calls) < 1 and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.3)  # the answer's call is under way and stalls
            calls_at_stop = len(model.calls)
            started = time.perf_counter()
            assert client.post(f"/api/chats/{chat_id}/stop", headers={CSRF: token}).status_code == 202
            events = _events(res.iter_lines())
            took = time.perf_counter() - started
        model.gate.set()  # let the abandoned call end
        assert events[-1][0] == "final" and events[-1][1]["stopped"] is True
        assert took < 5, took  # not the stalled call's 60 s
        time.sleep(0.5)
        assert len(model.calls) <= calls_at_stop + 1, model.calls  # only the abandoned call finished
