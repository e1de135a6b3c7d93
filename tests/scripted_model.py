"""Scripted models that misbehave on purpose, for tests of the web app and the loop."""

from __future__ import annotations

import threading

from agent.llm.base import Completion, LLMError
from agent.llm.scripted import RuleModel, ScriptedModel, is_pick_call, step

__all__ = ["FailingFirst", "GatedModel", "PausingModel", "RuleModel", "ScriptedModel", "step"]


class GatedModel(ScriptedModel):
    """Waits at reply number `at` until the test opens `gate`: lets a test act mid-answer."""

    def __init__(self, replies: list[str], at: int = 0) -> None:
        super().__init__(replies)
        self.gate = threading.Event()
        self.entered = threading.Event()  # the answer is waiting at the gate: provably mid-answer
        self.at = at

    def chat(self, messages, json_schema=None, max_tokens=512, on_token=None, role="agent") -> Completion:
        if is_pick_call(json_schema):  # not a reply of the script
            return super().chat(messages, json_schema, max_tokens, on_token, role)
        if len(self.calls) == self.at:
            self.entered.set()
            if not self.gate.wait(timeout=60):
                raise AssertionError("the test never opened the gate")
        return super().chat(messages, json_schema, max_tokens, on_token, role)


class FailingFirst(ScriptedModel):
    """The first call fails like an unreachable LLM server; later calls follow the script."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.failed = False

    def chat(self, messages, json_schema=None, max_tokens=512, on_token=None, role="agent") -> Completion:
        if not self.failed and not is_pick_call(json_schema):
            self.failed = True
            raise LLMError("the model server is unreachable (connection refused)")
        return super().chat(messages, json_schema, max_tokens, on_token, role)


class PausingModel(ScriptedModel):
    """Streams the answer up to token `pause_at`, then waits for `gate` before the rest: lets a
    test act while an answer is half written."""

    def __init__(self, replies: list[str], pause_at: int) -> None:
        super().__init__(replies)
        self.pause_at = pause_at
        self.halfway = threading.Event()
        self.gate = threading.Event()

    def chat(self, messages, json_schema=None, max_tokens=512, on_token=None, role="agent"):
        if on_token is None or json_schema is not None:  # only the answer is paced, not a step
            return super().chat(messages, json_schema, max_tokens, on_token, role)
        sent = 0

        def paced(text: str) -> None:
            nonlocal sent
            if sent == self.pause_at:
                self.halfway.set()
                if not self.gate.wait(timeout=60):
                    raise AssertionError("the test never opened the gate")
            sent += 1
            on_token(text)

        return super().chat(messages, json_schema, max_tokens, paced, role)
