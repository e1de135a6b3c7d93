"""Prompts of the research agent. Few-shot steps matter: small local models follow examples far
better than instructions."""

from __future__ import annotations

import json
from functools import lru_cache

from pydantic import BaseModel

from agent.level import LEVEL_STYLE
from agent.tools import Tool

FINAL = "final_answer"


def _arguments(tool: Tool) -> str:
    return _arguments_of(tool.input_model)


@lru_cache(maxsize=64)  # tools are fixed; building their JSON schemas costs more than a DB query
def _arguments_of(input_model: type[BaseModel]) -> str:
    schema = input_model.model_json_schema()
    parts = []
    for name, prop in schema["properties"].items():
        kind = prop.get("type") or next(
            (a.get("type") for a in prop.get("anyOf", []) if a.get("type") != "null"), ""
        )
        default = f", default {prop['default']}" if "default" in prop and prop["default"] is not None else ""
        parts.append(f'"{name}": {kind}{default}')
    return "{" + ", ".join(parts) + "}"


_EXAMPLES = [
    {
        "thought": "The user asks what a paper says about a method; I first find the paper.",
        "action": "search",
        "action_input": {"query": "batch normalization internal covariate shift", "k": 5},
    },
    {
        "thought": "Paper 1502.03167 is the one; I read what it says about the training speed-up.",
        "action": "ask_paper_question",
        "action_input": {"paper_id": "1502.03167", "question": "How much faster does training get?", "k": 4},
    },
    {"thought": "The observations answer the question.", "action": FINAL, "action_input": {}},
]


def system_prompt(tools: list[Tool], level: str, max_steps: int, level_instructions: bool = True) -> str:
    lines = [
        "You are ChatPapers, a research assistant for a corpus of arXiv computer-science papers.",
        "You work in steps. Every reply is exactly ONE JSON object:",
        '{"thought": "<why this step>", "action": "<a tool name or final_answer>", "action_input": {...}}',
        "",
        "Tools:",
    ]
    for tool in tools:
        lines.append(f"- {tool.name}: {tool.description} Arguments: {_arguments(tool)}")
    lines += [
        f"- {FINAL}: you have what you need (or the question needs no papers). Arguments: {{}}",
        "",
        "Rules: for any question about research, call search first. Use paper ids exactly as tools "
        "show them. Never invent papers. Stop with final_answer as soon as the observations suffice; "
        f"you have at most {max_steps} steps.",
        "",
        "Examples of replies:",
        *(json.dumps(e) for e in _EXAMPLES),
    ]
    if level_instructions:
        lines += ["", f"Audience: {LEVEL_STYLE[level]} Phrase tool queries for that audience too."]
    return "\n".join(lines)


ANSWER_WORDS = 100


def answer_request(
    level: str, level_instructions: bool = True, sources: list[tuple[str, str]] | None = None
) -> str:
    """The request for the final answer; `sources` are (paper id, title), numbered from 1."""
    style = f" {LEVEL_STYLE[level]}" if level_instructions else ""
    request = (
        "Now write the final answer to my question, in Markdown, from the observations above only."
        f"{style} If the observations do not answer it, say so plainly instead of guessing. "
        f"Keep it under {ANSWER_WORDS} words. Do not write JSON."
    )
    if sources:
        listed = "\n".join(f"[{n}] {title} (arXiv:{pid})" for n, (pid, title) in enumerate(sources, 1))
        request += (
            "\nCite the papers you use by their number in square brackets, like [1], right after the "
            f"sentence that uses them. Sources:\n{listed}"
        )
    return request


def context_note(previous: list[tuple[int, str, str]], meant: list[tuple[int, str, str]], how: str) -> str:
    """What the question refers to, told to the model: the previous answer's numbered sources and
    the one(s) this question means. Items are (number, paper id, title)."""
    lines = []
    if previous:
        lines.append(
            "(Sources of your previous answer: "
            + "; ".join(f"[{n}] {title} (arXiv:{pid})" for n, pid, title in previous)
            + ".)"
        )
    if meant:
        lines.append(
            "(Here I mean "
            + "; ".join(f"[{n}] {title} (arXiv:{pid})" for n, pid, title in meant)
            + f": {how}.)"
        )
    return "\n".join(lines)


def repair_request(error: str) -> str:
    return (
        f"That reply was not valid: {error}. Reply again with exactly one JSON object "
        '{"thought": ..., "action": ..., "action_input": {...}} using a listed tool or final_answer.'
    )


STEP_CAP_NOTE = "You have used all your steps."
