"""Question sets: YAML or JSONL records of topic, level, question and an optional reference answer."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator

from agent.level import LEVELS


class QuestionSetError(ValueError):
    """The question file cannot be used; the message says where and why."""


class EvalQuestion(BaseModel):
    topic: str = Field(min_length=1)
    level: str
    question: str = Field(min_length=1)
    reference: str | None = None

    @field_validator("level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        if value not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}")
        return value

    @property
    def qid(self) -> str:
        """Stable id: the same question keeps its results when a run is resumed."""
        digest = hashlib.sha1(f"{self.level}\n{self.question}".encode()).hexdigest()[:8]
        return f"{self.topic}-{self.level}-{digest}"


def default_questions_path() -> Path:
    return Path(str(resources.files("eval") / "questions" / "default.yaml"))


def load_questions(path: Path | None = None) -> list[EvalQuestion]:
    path = path or default_questions_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise QuestionSetError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix in (".jsonl", ".ndjson"):
            raw = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            raw = yaml.safe_load(text) or []
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise QuestionSetError(
            f"{path} is not valid {'JSONL' if path.suffix != '.yaml' else 'YAML'}: {exc}"
        ) from None
    if not isinstance(raw, list):
        raise QuestionSetError(f"{path}: expected a list of questions")
    questions = []
    for number, item in enumerate(raw, 1):
        try:
            questions.append(EvalQuestion.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "record"
            raise QuestionSetError(f"{path}, question {number}: {where}: {first['msg']}") from None
    if not questions:
        raise QuestionSetError(f"{path} holds no questions")
    ids = [q.qid for q in questions]
    if len(set(ids)) != len(ids):
        raise QuestionSetError(f"{path} repeats a question")
    return questions
