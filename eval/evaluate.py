"""An evaluation end to end: systems over a question set, scores, report."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import date
from pathlib import Path
from typing import Any

from agent.llm.base import ChatModel
from agent.tools import ToolContext
from corpus import papers
from corpus.db import Database
from corpus.embedder import Embedder
from eval.metrics import RagasScorer
from eval.questions import EvalQuestion
from eval.report import write_report
from eval.runner import EvalRun, results
from eval.systems import build_systems
from ground.console import err
from ground.settings import Settings


def commit() -> str:
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except OSError:
        return "unknown"
    return found.stdout.strip() or "unknown"


def evaluate(
    settings: Settings,
    db: Database,
    embedder: Embedder,
    model: ChatModel,
    judge: ChatModel | None,
    questions: list[EvalQuestion],
    questions_text: str,
    questions_name: str,
    system_names: list[str],
    folder: Path,
    show_progress: bool = True,
) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    """Run (or resume) the evaluation in `folder`; returns the report path, run metadata and rows.
    `judge` None: readability only, no RAGAS."""
    with db.connect(autocommit=True) as conn:
        counts = papers.corpus_counts(conn)
    config = {
        "date": date.today().isoformat(),
        "llm": model.name,
        "judge_llm": judge.name if judge else None,
        "questions": questions_name,
        "questions_sha1": hashlib.sha1(questions_text.encode()).hexdigest(),
        "n_questions": len(questions),
        "systems": system_names,
        "max_steps": settings.max_steps,
        "reader": settings.reader,
        "commit": commit(),
        **counts,
    }

    def ctx() -> ToolContext:
        return ToolContext(
            connect=db.pooled,  # type: ignore[arg-type]
            embedder=embedder,
            llm=model,
            hybrid=settings.retrieval == "hybrid",
        )

    systems = build_systems(system_names, model, ctx, settings.max_steps, settings.reader)
    scorer = (lambda: RagasScorer(judge, embedder)) if judge else None
    run = EvalRun(folder, questions, systems, scorer, config, show_progress=show_progress)
    try:
        meta = run.run()
    except KeyboardInterrupt:
        # Ctrl+C on a run of hours: what is finished gets its report now; rerunning continues.
        rows = results(folder, questions, system_names)
        if rows:
            report = write_report(folder, rows, system_names, run.meta)
            err.print(f"interrupted: report of the {len(rows)} finished answers in {report}")
        raise
    rows = results(folder, questions, system_names)
    return write_report(folder, rows, system_names, meta), meta, rows
