"""One evaluation run in a folder: answer every question with every system, then score the answers.

Every finished answer and score is appended to a JSONL file at once, so an interrupted run
continues where it stopped when the same command runs again (nothing finished is redone)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from eval.metrics import RagasScorer, RagasScores, Readability, readability
from eval.questions import EvalQuestion
from eval.systems import Answered
from ground.console import err

ANSWERS, SCORES, RUN = "answers.jsonl", "scores.jsonl", "run.json"


class RunMismatch(ValueError):
    """The folder holds a run with other settings: resuming it would mix incomparable results."""


class System(Protocol):
    name: str

    def answer(self, q: EvalQuestion) -> Answered: ...


class Scored(BaseModel):
    qid: str
    system: str
    readability: Readability
    ragas: RagasScores | None = None
    seconds: float = 0.0


def _key(record: Answered | Scored) -> tuple[str, str]:
    return record.system, record.qid


def _read(path: Path, model: type[BaseModel]) -> list[Any]:
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                records.append(model.model_validate_json(line))
            except ValueError:
                continue  # a line cut short by a crash: that item is simply redone
    return records


def _append(path: Path, record: BaseModel) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(record.model_dump_json() + "\n")
        f.flush()
        os.fsync(f.fileno())


class EvalRun:
    def __init__(
        self,
        folder: Path,
        questions: list[EvalQuestion],
        systems: list[System],
        scorer_factory: Callable[[], RagasScorer] | None,
        config: dict[str, Any],
        show_progress: bool = True,
    ) -> None:
        self.folder = folder
        self.questions = questions
        self.systems = systems
        self.scorer_factory = scorer_factory
        self.config = config
        self.show_progress = show_progress
        self.meta: dict[str, Any] = {}

    # -- run metadata ------------------------------------------------------------------------
    def _load_meta(self) -> dict[str, Any]:
        path = self.folder / RUN
        if not path.exists():
            return {
                "config": self.config,
                "started": datetime.now(UTC).isoformat(),
                "answer_seconds": 0.0,
                "score_seconds": 0.0,
                "sessions": 0,
            }
        meta = json.loads(path.read_text())
        for field in ("llm", "judge_llm", "questions_sha1"):
            if meta["config"].get(field) != self.config.get(field):
                raise RunMismatch(
                    f"{self.folder} holds a run with {field} = {meta['config'].get(field)!r}, not "
                    f"{self.config.get(field)!r}; choose another folder with --out"
                )
        meta["config"] = {**meta["config"], **self.config}
        return meta

    def _save_meta(self, meta: dict[str, Any]) -> None:
        tmp = self.folder / (RUN + ".tmp")
        tmp.write_text(json.dumps(meta, indent=2))
        tmp.replace(self.folder / RUN)

    # -- the run -----------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        self.folder.mkdir(parents=True, exist_ok=True)
        meta = self.meta = self._load_meta()  # kept: an interrupted run's report needs it
        meta["sessions"] += 1
        self._save_meta(meta)

        # Each answer is scored right after it is written: an interrupted run still has complete
        # rows. An answer whose scoring a crash cut short is scored, not answered again.
        answered = {_key(a): a for a in _read(self.folder / ANSWERS, Answered)}
        scored = {_key(s) for s in _read(self.folder / SCORES, Scored)}
        work = [(q, s) for q in self.questions for s in self.systems if (s.name, q.qid) not in scored]
        done = len(self.questions) * len(self.systems) - len(work)
        if done:
            err.print(f"resuming: {done} answers already done and scored, {len(work)} to go")
        scorer = self.scorer_factory() if (self.scorer_factory and work) else None
        counts = {"answered": 0, "scored": 0, "answer_wall_seconds": 0.0, "score_wall_seconds": 0.0}
        with self._progress() as bar:
            task = bar.add_task("evaluating", total=len(work))
            for q, system in work:
                label = f"[dim]{system.name} · {q.level} · {q.topic}[/dim]"
                record = answered.get((system.name, q.qid))
                if record is None:
                    bar.update(task, description=f"answering {label}")
                    t0 = time.perf_counter()
                    record = system.answer(q)
                    _append(self.folder / ANSWERS, record)
                    counts["answered"] += 1
                    counts["answer_wall_seconds"] += time.perf_counter() - t0
                    meta["answer_seconds"] += record.seconds
                    self._save_meta(meta)
                bar.update(task, description=f"scoring {label}")
                t0 = time.perf_counter()
                result = Scored(
                    qid=record.qid,
                    system=record.system,
                    readability=readability(record.question, record.answer, record.level),
                    ragas=scorer.score(record.question, record.answer, record.contexts)
                    if scorer and record.answer
                    else None,
                )
                result.seconds = time.perf_counter() - t0
                _append(self.folder / SCORES, result)
                counts["scored"] += 1
                counts["score_wall_seconds"] += result.seconds
                meta["score_seconds"] += result.seconds
                self._save_meta(meta)
                bar.advance(task)
        meta["finished"] = datetime.now(UTC).isoformat()
        meta["last_session"] = counts
        self._save_meta(meta)
        return meta

    def _progress(self) -> Progress:
        return Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
            disable=not self.show_progress,
        )


def results(folder: Path, questions: list[EvalQuestion], systems: list[str]) -> list[dict[str, Any]]:
    """One flat row per (system, question) of this run's questions, answers joined with scores."""
    answers, scores = answers_of(folder), scores_of(folder)
    rows = []
    for q in questions:
        for system in systems:
            a = answers.get((system, q.qid))
            if a is None:
                continue
            s = scores.get((system, q.qid))
            row: dict[str, Any] = {
                "qid": q.qid,
                "system": system,
                "topic": q.topic,
                "level": q.level,
                "question": q.question,
                "answer": a.answer,
                "judged_level": a.judged_level,
                "citations": " ".join(a.citations),
                "steps": len(a.steps),
                "contexts": len(a.contexts),
                "seconds": round(a.seconds, 1),
                "error": a.error or (s.ragas.error if s and s.ragas else None),
            }
            # Readability is computed again, not read from the scores: it is cheap and exact, and a
            # run scored before a fix of `plain_text` then reports the grades the metric now gives.
            row.update(readability(q.question, a.answer, q.level).model_dump())
            if s and s.ragas:
                row.update(s.ragas.model_dump(exclude={"error", "judge_calls"}))
            rows.append(row)
    return rows


def answers_of(folder: Path) -> dict[tuple[str, str], Answered]:
    return {_key(a): a for a in _read(folder / ANSWERS, Answered)}


def scores_of(folder: Path) -> dict[tuple[str, str], Scored]:
    return {_key(s): s for s in _read(folder / SCORES, Scored)}
