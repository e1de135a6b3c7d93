"""Prompts of the research agent. Few-shot steps matter: small local models follow examples far
better than instructions."""

from __future__ import annotations

import json
import re
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

# "Which papers cover ...?", "any work on ...?", "list the studies about ...": the user wants every
# relevant paper named, and the next question often picks one of them ("the third one").
_ASKS_FOR_PAPERS = re.compile(
    r"\b(?:which|what|any|list|find|show|recommend|suggest|name|are\s+there)\b[^?.]{0,40}?"
    r"\b(?:papers|works|studies|articles|publications|approaches|methods)\b"
    r"|\bwhat(?:'s|\s+is)\s+(?:here|there)\b"
    r"|\bwhat\s+do(?:es)?\s+(?:the|this|your)\s+(?:corpus|collection|library|database)\s+have\b"
    # "Is there anything here on protein structure prediction with diffusion models?": read as a
    # question about the search's first paper, it was answered "Yes" from a chemistry review's
    # passing mention (a chat of 2026-12-05); "is there anything in the ResNet paper on ..." is not
    r"|\b(?:is|are)\s+there\s+(?:anything|something|any\s+(?:work|research))\s+"
    r"(?:(?:here|in\s+(?:the|this|your)\s+(?:corpus|collection|library|database))\s+)?"
    r"(?:on|about|regarding|related\s+to)\b"
    # "Is there another paper here on filling in missing entries in tables ...?" (conv-15) was
    # answered "Yes, there is another paper here on ..." and "This paper introduces ...", never
    # naming it: asked whether a paper exists, the person wants its title, as a listing gives it
    r"|\b(?:is|are)\s+there\s+(?:a|an|another|any|other)\s+(?:paper|work|study|article|publication)s?\s+"
    r"(?:(?:here|in\s+(?:the|this|your)\s+(?:corpus|collection|library|database))\s+)?"
    r"(?:on|about|regarding|related\s+to|that|which|for)\b"
    r"|\b(?:is|are)\s+there\s+(?:anything|something)\s+similar\b",
    re.IGNORECASE,
)


def asks_for_papers(question: str) -> bool:
    return bool(_ASKS_FOR_PAPERS.search(question))


def earlier_turns(turns: list[tuple[str, str]]) -> str:
    """Earlier turns of the chat, (question, answer as reread), told inside the new question.
    As assistant turns of their own, a 1.5B model copied its previous answer word for word as the
    answer to the follow-up (4 of 12 follow-ups on the grounded benchmark); told as context, it
    answers the new question."""
    if not turns:
        return ""
    lines = ["(Earlier in this chat, for context only:"]
    for asked, answered in turns:
        lines.append(f'- I asked: "{asked}" You answered: "{answered}"')
    return "\n".join(lines) + ")\n\nMy new question: "


def answer_request(
    level: str,
    level_instructions: bool = True,
    sources: list[tuple[str, str]] | None = None,
    listing: bool = False,
    question: str = "",
) -> str:
    """The request for the final answer; `sources` are (paper id, title), numbered from 1;
    `listing`: the question asks which papers, so each relevant one gets its own bullet. The
    question is said again: after several observations a small model loses track of it."""
    style = f" {LEVEL_STYLE[level]}" if level_instructions else ""
    asked = f': "{question.strip()}"' if question.strip() else ""
    request = (
        f"Now write the final answer to my question{asked}, in Markdown, from the observations above "
        f"only.{style} If the observations do not answer it, say so plainly instead of guessing. "
        f"Keep it under {ANSWER_WORDS} words. Do not write JSON."
    )
    if sources:
        listed = "\n".join(f"[{n}] {title} (arXiv:{pid})" for n, (pid, title) in enumerate(sources, 1))
        request += (
            "\nCite the papers you use by their number in square brackets, like [1], right after the "
            f"sentence that uses them. Sources:\n{listed}"
        )
        if listing and len(sources) > 1:
            request += (
                "\nI asked which papers: answer with a bulleted list, one bullet for each source "
                "that is relevant (there may be several), each bullet one sentence on what that "
                "paper does, ending with its number."
            )
    return request


def context_note(
    previous: list[tuple[int, str, str]], meant: list[tuple[int | None, str, str]], how: str
) -> str:
    """What the question refers to, told to the model: the previous answer's numbered sources and
    the one(s) this question means. Items are (number, paper id, title); a paper meant from
    earlier in the chat has no number in the previous answer."""
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
            + "; ".join(f"{f'[{n}] ' if n else ''}{title} (arXiv:{pid})" for n, pid, title in meant)
            + f": {how}.)"
        )
    return "\n".join(lines)


def repair_request(error: str) -> str:
    return (
        f"That reply was not valid: {error}. Reply again with exactly one JSON object "
        '{"thought": ..., "action": ..., "action_input": {...}} using a listed tool or final_answer.'
    )


STEP_CAP_NOTE = "You have used all your steps."
