"""Chat models that follow a script or fixed rules instead of a language model: for tests of the
agent loop itself (never of tools or retrieval) and for benchmarks of everything around the model.
`CHATPAPERS_LLM` never selects them."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable

from agent.llm.base import ChatMessage, Completion, Role


def step(action: str, thought: str = "next", **arguments) -> str:
    return json.dumps({"thought": thought, "action": action, "action_input": arguments})


def _is_step(text: str) -> bool:
    try:
        reply = json.loads(text)
    except ValueError:
        return False
    return isinstance(reply, dict) and "action" in reply


def pick(*numbers: int) -> str:
    """A scripted reply to the narrow reader's pick call."""
    return json.dumps({"sentences": list(numbers)})


def is_pick_call(json_schema: dict | None) -> bool:
    """The narrow reader's pick call (agent.reading.pick_schema), which only a pick() reply answers."""
    return json_schema is not None and json_schema.get("title") == "sentence pick"


def _is_pick(text: str) -> bool:
    try:
        reply = json.loads(text)
    except ValueError:
        return False
    return isinstance(reply, dict) and set(reply) == {"sentences"}


class ScriptedModel:
    """Replies with the given texts in order; records every call (messages, schema, role). A step
    reply (a JSON object with an action) answers only a call that asks for a step (a JSON schema):
    the narrow reader asks for none, so a script written for the step-by-step agent answers it
    with its first plain reply. Its pick call (which sentences answer) takes only a pick() reply;
    unscripted, it is answered with no pick, counted in `unscripted_picks`, not in `calls`."""

    name = "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[ChatMessage], dict | None]] = []
        self.roles: list[Role] = []
        self.unscripted_picks = 0

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
        role: Role = "agent",
    ) -> Completion:
        if is_pick_call(json_schema) and not (self.replies and _is_pick(self.replies[0])):
            # the narrow reader's pick call takes a scripted pick only; a script without one keeps
            # its replies for the answer (no pick: every sentence is read) and its calls as written
            self.unscripted_picks += 1
            return Completion(text='{"sentences": []}', tokens_in=0, tokens_out=0)
        self.calls.append((list(messages), json_schema))
        self.roles.append(role)
        if json_schema is None:
            while self.replies and _is_step(self.replies[0]) and any(not _is_step(r) for r in self.replies):
                self.replies.pop(0)
        if not self.replies:
            raise AssertionError("the scripted model ran out of replies")
        text = self.replies.pop(0)
        if on_token:
            for word in text.split(" "):
                on_token(word + " ")
        return Completion(
            text=text, tokens_in=sum(len(m.content) for m in messages) // 4, tokens_out=len(text) // 4
        )


class RuleModel:
    """A stateless, thread-safe stand-in for many concurrent chats (benchmarks): search for the
    question, then answer citing the first paper the search showed."""

    name = "rules"
    token_seconds = 0.0  # also for subclasses that keep their own __init__

    def __init__(self, token_seconds: float = 0.0) -> None:
        self.token_seconds = token_seconds  # pace of streamed words, as a real model's (bench/api.py)

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
        role: Role = "agent",
    ) -> Completion:
        observations = [m.content for m in messages if m.content.startswith("Observation:")]
        if json_schema is not None:
            if observations:
                text = step("final_answer", thought="The search results answer it")
            else:
                question = next(m.content for m in reversed(messages) if m.role == "user")
                text = step("search", thought="Find papers on it", query=question[:200], k=3)
        else:
            found = re.search(r"arXiv:([\w./-]+?)\]", "\n".join(observations))
            cite = f" [arXiv:{found.group(1)}]" if found else ""
            text = (
                "The papers found describe the idea, the method and its evaluation; the key point is "
                f"stated in the abstract{cite}. In short, the approach improves on earlier work in "
                "accuracy and efficiency, and the authors discuss its limits and open questions."
            )
            if on_token:
                for word in text.split(" "):
                    if self.token_seconds:
                        time.sleep(self.token_seconds)
                    on_token(word + " ")
        return Completion(
            text=text, tokens_in=sum(len(m.content) for m in messages) // 4, tokens_out=len(text) // 4
        )
