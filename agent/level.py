"""Judge the user's level (BSc / MSc / PhD) from what they ask.

What separates the levels is what is asked, not how it is written: the basics (what something is,
why, the intuition), methods (how a method works in detail, design choices, how approaches
compare) or critical analysis (assumptions, limitations, open problems, whether the evidence
holds). Questions at every level can be long, formal and full of jargon, so reading grades and
jargon counts judged poorly (0.40 on our labelled sets). The judgement is a softmax regression on
the question's MiniLM vector, trained on the labelled sets in eval/levels (`python -m
eval.levels.train` measures it and writes agent/level_weights.json): a few microseconds beside the
embedding the search needs anyway.

A statement of who is asking wins ("I'm a PhD student", "explain like I'm five"). Once decided, a
level stays for the conversation unless the user states another one."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

LEVELS = ("BSc", "MSc", "PhD")
TARGET_GRADE = {"BSc": 15.5, "MSc": 16.5, "PhD": 17.5}

_I_AM = r"\b(?:i am|i'm|im|i’m|as an?|i study|i'm doing|i am doing|doing my|for my)\b[^.?!\n]{0,40}?"
_EXPLICIT = [
    (re.compile(_I_AM + r"\b(phd|ph\.d|doctoral|postdoc|professor|faculty|researcher)\b", re.I), "PhD"),
    (re.compile(_I_AM + r"\b(master'?s?|msc|m\.sc|graduate student|grad student)\b", re.I), "MSc"),
    (
        re.compile(
            _I_AM + r"\b(bachelor'?s?|bsc|b\.sc|undergrad\w*|freshman|sophomore|first[- ]year|high school|"
            r"beginner|newbie|new to)\b",
            re.I,
        ),
        "BSc",
    ),
    (re.compile(r"\b(eli5|explain like i'?m|in layman'?s terms|in simple terms)\b", re.I), "BSc"),
]


class Embeds(Protocol):
    def embed_query(self, text: str) -> np.ndarray: ...


def why_explicit(text: str) -> str | None:
    """The level the user states for themselves, if any."""
    for pattern, level in _EXPLICIT:
        if pattern.search(text):
            return level
    return None


def weights_path() -> Path:
    return Path(str(resources.files("agent") / "level_weights.json"))


@dataclass
class LevelModel:
    weights: np.ndarray  # (384, 3)
    bias: np.ndarray  # (3,)
    SCALE = 10.0  # unit vectors' components are small; scaled, one learning rate fits

    @staticmethod
    def softmax(z: np.ndarray) -> np.ndarray:
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        return self.softmax(np.atleast_2d(vectors) * self.SCALE @ self.weights + self.bias)

    def predict(self, vectors: np.ndarray) -> np.ndarray:
        return self.probabilities(vectors).argmax(axis=-1)

    def save(self, path: Path) -> None:
        path.write_text(
            json.dumps(
                {
                    "levels": LEVELS,
                    "bias": self.bias.round(5).tolist(),
                    "weights": self.weights.round(5).tolist(),
                }
            )
            + "\n"
        )

    @classmethod
    def load(cls, path: Path) -> LevelModel:
        raw = json.loads(path.read_text())
        if tuple(raw["levels"]) != LEVELS:
            raise ValueError(f"{path} was trained for levels {raw['levels']}")
        return cls(weights=np.asarray(raw["weights"]), bias=np.asarray(raw["bias"]))


@cache
def _model() -> LevelModel:
    return LevelModel.load(weights_path())


def judge_level(text: str, embedder: Embeds) -> tuple[str, str]:
    """(level, why) for one user message."""
    stated = why_explicit(text)
    if stated:
        return stated, "the user said so"
    probs = _model().probabilities(embedder.embed_query(text))[0]
    best = int(probs.argmax())
    kind = {"BSc": "the basics", "MSc": "methods and how they compare", "PhD": "critical analysis"}
    return LEVELS[best], f"asks about {kind[LEVELS[best]]} (p={probs[best]:.2f})"


def decide_level(message: str, current: str | None, embedder: Embeds) -> tuple[str, str, bool]:
    """(level, reason, changed) for the conversation after this message."""
    stated = why_explicit(message)
    if stated:
        return stated, "the user said so", stated != current
    if current:
        return current, "kept from earlier in the conversation", False
    level, why = judge_level(message, embedder)
    return level, why, True


LEVEL_STYLE = {
    "BSc": "The user is an undergraduate (BSc). Explain intuitively, define every technical term, "
    "prefer short sentences and a concrete example; avoid formulas unless asked.",
    "MSc": "The user is a graduate student (MSc). Assume core CS and ML background; explain methods "
    "precisely, name the key ideas and how they compare.",
    "PhD": "The user is a researcher (PhD). Be dense and precise: assumptions, methodology, "
    "quantitative results, limitations and open questions; use field terminology freely.",
}
