"""`chatpapers eval`: readability and RAGAS of chatpapers and baselines, by question level."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from chatpapers.services import Services
from corpus import papers
from eval.systems import SYSTEMS
from ground.console import err, out


def evaluate(
    ctx: typer.Context,
    questions: Annotated[
        Path | None,
        typer.Option(
            help="Question set (YAML or JSONL: topic, level, question, reference). Default: built-in 30."
        ),
    ] = None,
    systems: Annotated[
        str, typer.Option(help=f"Comma-separated systems to compare: {', '.join(SYSTEMS)}.")
    ] = ",".join(SYSTEMS),
    llm: Annotated[
        str | None,
        typer.Option(help="Model that answers (as CHATPAPERS_LLM: local, openai:<m>, ollama:<m>)."),
    ] = None,
    judge_llm: Annotated[
        str | None, typer.Option(help="Model that judges RAGAS. Default: the --llm model.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N questions (a quick run).")
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Report folder. Default: eval-reports/<today>; a rerun resumes it."),
    ] = None,
    ragas: Annotated[
        bool, typer.Option(help="Score RAGAS (slow with a local judge); off: readability only.")
    ] = True,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Evaluate chatpapers like the ChatPapers paper: every question (10 topics x BSc/MSc/PhD by
    default) goes to each system; answers get Flesch-Kincaid and Coleman-Liau grades (and their
    distance from the level's target grade) and RAGAS scores (answer relevancy, context relevance,
    faithfulness) judged on the contexts each system retrieved. Writes report.md / report.html
    with tables, box plots, transcripts and raw CSV/JSON into a dated folder. Interrupted? Run the
    same command again: finished answers are kept.
    """
    from eval.evaluate import evaluate as run_evaluation
    from eval.questions import QuestionSetError, default_questions_path, load_questions

    names = [s.strip() for s in systems.split(",") if s.strip()]
    unknown = [s for s in names if s not in SYSTEMS]
    if unknown or not names:
        raise typer.BadParameter(
            f"unknown {', '.join(unknown) or 'empty list'}; choose from {', '.join(SYSTEMS)}",
            param_hint="--systems",
        )
    path = questions or default_questions_path()
    try:
        chosen = load_questions(path)
    except QuestionSetError as exc:
        raise typer.BadParameter(str(exc), param_hint="--questions") from None
    chosen = chosen[:limit] if limit else chosen

    services = Services.of(ctx).with_llm(llm)
    settings, db, embedder = services.settings, services.db, services.embedder
    model = services.llm()
    judge = None
    if ragas:
        judge = model if not judge_llm or judge_llm == llm else services.with_llm(judge_llm).llm()
    with db.connect(autocommit=True) as conn:
        if papers.is_empty(conn):
            err.print("[red]error:[/red] the corpus is empty: run `chatpapers ingest` first")
            raise typer.Exit(1)
    folder = out_dir or Path("eval-reports") / date.today().isoformat()
    err.print(
        f"[dim]{len(chosen)} questions x {len(names)} systems; LLM {model.name}; "
        f"judge {judge.name if judge else 'none (readability only)'}; report in {folder}[/dim]"
    )
    report, meta, rows = run_evaluation(
        settings,
        db,
        embedder,
        model,
        judge,
        chosen,
        path.read_text(encoding="utf-8"),
        str(path),
        names,
        folder,
        show_progress=progress,
    )
    session = meta["last_session"]
    out.print(
        f"answered {session['answered']} in {session['answer_wall_seconds'] / 60:.1f} min, scored "
        f"{session['scored']} in {session['score_wall_seconds'] / 60:.1f} min "
        f"(whole run: {(meta['answer_seconds'] + meta['score_seconds']) / 3600:.2f} h, {len(rows)} answers)"
    )
    out.print(f"report: {report} and {report.with_suffix('.html')}")
