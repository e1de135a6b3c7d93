"""Judge the user's level (BSc / MSc / PhD) from what they ask.

What separates the levels is what is asked, not how it is written: the basics (what something is,
why, the intuition), methods (how a method works in detail, design choices, how approaches
compare) or critical analysis (assumptions, limitations, open problems, whether the evidence
holds). Questions at every level can be long, formal and full of jargon, so reading grades and
jargon counts judged poorly (0.40 on our labelled sets). A regression on the question's MiniLM
sentence vector learned the topics the training questions happened to ask at each level (that
vector mostly says what a question is about). The judgement reads the mean token states of
MiniLM's layers 2, 4 and 6 instead, which keep more of how a question is put ("what do the ...
experiments show about ...", "in simple words, what is ..."), trained on labelled sets that ask
each topic at every level and measured on topics it never saw (`python -m eval.levels.train`
prints the figures and writes agent/level_weights.json). One encoder pass, about 20 ms on a CPU.

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

    def layer_means(self, text: str, layers: tuple[int, ...]) -> np.ndarray: ...


def why_explicit(text: str) -> str | None:
    """The level the user states for themselves, if any."""
    for pattern, level in _EXPLICIT:
        if pattern.search(text):
            return level
    return None


def weights_path() -> Path:
    return Path(str(resources.files("agent") / "level_weights.json"))


# Words that frame any question, whatever its topic; with the request words learned from the
# labelled sets (words used on several topics: "limitations", "compare", "intuition", "assume")
# they are all a question keeps of its wording. Everything else is a topic word and becomes "_".
FRAME_WORDS = frozenset(
    """what is are how why does do did can could would should will which when where who whom whose
    the a an of to in on for with by from as at into over under about than then so such that this
    these those it its they them their there here i me my we our you your be been being was were
    has have had not no and or but if whether vs versus between among one ones something anything
    really actually even just""".split()
)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SHAPE_SIZE = 8
VIEWS = ("vector", "wording", "shape")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def masked(text: str, request_words: frozenset[str]) -> list[str]:
    """The question's wording with its topic words masked: "does _ _ still hold on _ _"."""
    return [w if w in request_words or w in FRAME_WORDS else "_" for w in words(text)]


def ngrams(tokens: list[str], longest: int = 3) -> list[str]:
    return [" ".join(tokens[i : i + n]) for n in range(1, longest + 1) for i in range(len(tokens) - n + 1)]


def wording_shape(text: str) -> np.ndarray:
    """How the question is built, not what it is about: length, word length, clauses, named
    things, figures (a compound question naming several mechanisms reads as research)."""
    tokens = text.split()
    return np.array(
        [
            len(tokens),
            float(np.mean([len(t) for t in tokens])) if tokens else 0.0,
            text.count(","),
            len(re.findall(r"\band\b", text)),
            sum(1 for t in tokens[1:] if t[:1].isupper()),
            len(re.findall(r"\b[A-Z]{2,}[a-z]*\b", text)),
            text.count("?"),
            len(re.findall(r"\d", text)),
        ],
        dtype=float,
    )


@dataclass
class LevelModel:
    """Softmax regression over three views of a question: its MiniLM vector (the mean states of
    `layers`, or the sentence vector: what and how specifically it asks), the n-grams of its
    wording with the topic masked (the kind of request: "what is _", "how does _ compare", "does
    _ still hold"), and its shape. The second and third carry no topic, so a topic the training
    questions happened to ask at one level does not pull the judgement there."""

    request_words: frozenset[str]
    ngram_index: dict[str, int]
    idf: np.ndarray  # (G,)
    shape_mean: np.ndarray  # (8,)
    shape_std: np.ndarray  # (8,)
    weights: np.ndarray  # (features, 3)
    bias: np.ndarray  # (3,)
    views: tuple[str, ...] = VIEWS
    # what the "vector" view is: the mean token states of these MiniLM layers (corpus.embedder's
    # layer_means), or the sentence vector when empty
    layers: tuple[int, ...] = ()
    SHAPE_WEIGHT = 0.3  # standardised shape features, damped beside unit-length vectors

    @staticmethod
    def softmax(z: np.ndarray) -> np.ndarray:
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    def wording(self, texts: list[str]) -> np.ndarray:
        """TF-IDF (sublinear, L2-normalised) of the masked wording's n-grams."""
        out = np.zeros((len(texts), len(self.ngram_index)))
        for row, text in enumerate(texts):
            for gram in ngrams(masked(text, self.request_words)):
                column = self.ngram_index.get(gram)
                if column is not None:
                    out[row, column] += 1
        np.log(out, out=out, where=out > 0)
        out[out != 0] += 1
        out *= self.idf
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def shapes(self, texts: list[str]) -> np.ndarray:
        raw = np.array([wording_shape(t) for t in texts]).reshape(len(texts), _SHAPE_SIZE)
        return (raw - self.shape_mean) / self.shape_std * self.SHAPE_WEIGHT

    def features(self, texts: list[str], vectors: np.ndarray) -> np.ndarray:
        made = {"vector": lambda: np.atleast_2d(vectors), "wording": lambda: self.wording(texts),
                "shape": lambda: self.shapes(texts)}  # fmt: skip
        return np.hstack([made[view]() for view in self.views])

    def probabilities(self, texts: list[str], vectors: np.ndarray) -> np.ndarray:
        return self.softmax(self.features(texts, vectors) @ self.weights + self.bias)

    def predict(self, texts: list[str], vectors: np.ndarray) -> np.ndarray:
        return self.probabilities(texts, vectors).argmax(axis=-1)

    def save(self, path: Path) -> None:
        grams = sorted(self.ngram_index, key=self.ngram_index.__getitem__)
        path.write_text(
            json.dumps(
                {
                    "levels": LEVELS,
                    "views": self.views,
                    "layers": self.layers,
                    "request_words": sorted(self.request_words),
                    "ngrams": grams,
                    "idf": self.idf.round(5).tolist(),
                    "shape_mean": self.shape_mean.round(5).tolist(),
                    "shape_std": self.shape_std.round(5).tolist(),
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
        return cls(
            request_words=frozenset(raw["request_words"]),
            ngram_index={g: i for i, g in enumerate(raw["ngrams"])},
            idf=np.asarray(raw["idf"]),
            shape_mean=np.asarray(raw["shape_mean"]),
            shape_std=np.asarray(raw["shape_std"]),
            weights=np.asarray(raw["weights"]),
            bias=np.asarray(raw["bias"]),
            views=tuple(raw["views"]),
            layers=tuple(raw.get("layers", ())),
        )

    def represent(self, text: str, embedder: Embeds) -> np.ndarray:
        """The question as the "vector" view reads it."""
        return embedder.layer_means(text, self.layers) if self.layers else embedder.embed_query(text)


@cache
def _model() -> LevelModel:
    return LevelModel.load(weights_path())


def judge_level(text: str, embedder: Embeds) -> tuple[str, str]:
    """(level, why) for one user message."""
    stated = why_explicit(text)
    if stated:
        return stated, "the user said so"
    model = _model()
    probs = model.probabilities([text], model.represent(text, embedder))[0]
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
