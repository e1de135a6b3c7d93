"""A judge that answers each RAGAS prompt in the format its response model asks for, without a
language model: records the prompts and schemas the metrics send (tests of the scoring plumbing,
and bench/grammar.py, which replays the real prompts to the local model)."""

from __future__ import annotations

import json
from collections.abc import Callable

from agent.llm.base import ChatMessage, Completion, Role


class ScriptedJudge:
    """Answers each RAGAS prompt in the format its response model asks for."""

    name = "scripted-judge"

    def __init__(self, question: str = "", broken: bool = False) -> None:
        self.question = question
        self.broken = broken
        self.prompts: list[str] = []
        self.schemas: list[dict] = []

    def chat(
        self,
        messages: list[ChatMessage],
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_token: Callable[[str], None] | None = None,
        role: Role = "judge",
    ) -> Completion:
        self.prompts.append(messages[-1].content)
        self.schemas.append(json_schema or {})
        props = (json_schema or {}).get("properties", {})
        if self.broken:
            text = "I think it is fine."
        elif "noncommittal" in props:  # answer relevancy: the question the answer answers
            text = json.dumps({"question": self.question, "noncommittal": 0})
        elif "rating" in props:  # context relevance, both judges
            text = json.dumps({"rating": 2})
        elif "$defs" in (json_schema or {}):  # faithfulness verdicts
            text = json.dumps(
                {
                    "statements": [
                        {"statement": "Residual nets ease training.", "reason": "stated", "verdict": 1},
                        {"statement": "They were invented in 1950.", "reason": "not stated", "verdict": 0},
                    ]
                }
            )
        else:  # faithfulness statements
            text = json.dumps({"statements": ["Residual nets ease training.", "They were invented in 1950."]})
        return Completion(text=text)
