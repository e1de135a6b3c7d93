"""The report of a run: report.md and report.html with the RAGAS table (the paper's Table II), the
readability table, box plots of FK and CL per level and system with the target grades, a
per-question table linking full transcripts, raw CSV/JSON, and run metadata."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path
from typing import Any

from agent.level import LEVELS, TARGET_GRADE
from eval.runner import Scored, answers_of, scores_of

RAGAS_COLUMNS = [
    ("ragas", "RAGAS"),
    ("answer_relevancy", "Answer relevancy"),
    ("context_relevance", "Context relevance"),
    ("faithfulness", "Faithfulness"),
]


def _mean(values: list[Any]) -> float | None:
    nums = [v for v in values if isinstance(v, int | float) and not math.isnan(v)]
    return statistics.fmean(nums) if nums else None


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _cell(rows: list[dict], system: str, level: str, field: str) -> float | None:
    return _mean([r.get(field) for r in rows if r["system"] == system and r["level"] == level])


def ragas_table(rows: list[dict], systems: list[str]) -> str:
    head = "| System | Level | " + " | ".join(label for _, label in RAGAS_COLUMNS) + " | n | no contexts |"
    lines = [head, "|" + "---|" * (len(RAGAS_COLUMNS) + 4)]
    for system in systems:
        for level in LEVELS:
            group = [r for r in rows if r["system"] == system and r["level"] == level]
            if not group:
                continue
            cells = [_fmt(_cell(rows, system, level, f)) for f, _ in RAGAS_COLUMNS]
            cells += [str(len(group)), str(sum(1 for r in group if not r["contexts"]))]
            lines.append(f"| {system} | {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def readability_table(rows: list[dict], systems: list[str]) -> str:
    lines = [
        "| System | Level | Target FK | Answer FK | Answer CL | FK − target | abs(FK − target) | n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for system in systems:
        for level in LEVELS:
            mine = [r for r in rows if r["system"] == system and r["level"] == level]
            if not mine:
                continue
            distances = [r.get("fk_distance") for r in mine]
            absolute = _mean([abs(d) for d in distances if d is not None])
            fk = _fmt(_mean([r.get("answer_fk") for r in mine]), 1)
            cl = _fmt(_mean([r.get("answer_cl") for r in mine]), 1)
            lines.append(
                f"| {system} | {level} | {TARGET_GRADE[level]:.1f} | {fk} | {cl}"
                f" | {_fmt(_mean(distances), 1)} | {_fmt(absolute, 1)} | {len(mine)} |"
            )
    return "\n".join(lines)


def questions_table(rows: list[dict]) -> str:
    lines = ["| Level | Question FK | Question CL | n |", "|---|---|---|---|"]
    seen: dict[str, dict] = {}
    for r in rows:
        seen.setdefault(r["qid"], r)
    for level in LEVELS:
        mine = [r for r in seen.values() if r["level"] == level]
        if mine:
            lines.append(
                f"| {level} | {_fmt(_mean([r.get('question_fk') for r in mine]), 1)}"
                f" | {_fmt(_mean([r.get('question_cl') for r in mine]), 1)} | {len(mine)} |"
            )
    return "\n".join(lines)


def per_question_table(rows: list[dict]) -> str:
    lines = [
        "| Question | System | Level | FK | CL | FK − target | RAGAS | AR | CR | F | s | Transcript |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        link = f"[open](transcripts/{r['system']}/{r['qid']}.md)"
        question = r["question"].replace("|", "\\|")
        grades = [_fmt(r.get(f), 1) for f in ("answer_fk", "answer_cl", "fk_distance")]
        ragas = [_fmt(r.get(f)) for f, _ in RAGAS_COLUMNS]
        cells = [
            question[:80] + ("…" if len(question) > 80 else ""),
            r["system"],
            r["level"],
            *grades,
            *ragas,
        ]
        lines.append("| " + " | ".join([*cells, f"{r['seconds']:.0f}", link]) + " |")
    return "\n".join(lines)


def box_plot(rows: list[dict], systems: list[str], field: str, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=110)
    width = 0.8 / max(len(systems), 1)
    colors = ["#b31b1b", "#1f4f8f", "#6b6b73", "#1f7a44"]
    for i, system in enumerate(systems):
        data, positions = [], []
        for j, level in enumerate(LEVELS):
            values = [
                r[field]
                for r in rows
                if r["system"] == system and r["level"] == level and r.get(field) is not None
            ]
            if values:
                data.append(values)
                positions.append(j + (i - (len(systems) - 1) / 2) * width)
        if data:
            parts = ax.boxplot(
                data, positions=positions, widths=width * 0.9, patch_artist=True, manage_ticks=False
            )
            for box in parts["boxes"]:
                box.set_facecolor(colors[i % len(colors)])
                box.set_alpha(0.55)
            ax.plot([], [], color=colors[i % len(colors)], lw=8, alpha=0.55, label=system)
    for j, level in enumerate(LEVELS):
        ax.hlines(TARGET_GRADE[level], j - 0.45, j + 0.45, colors="black", linestyles="dashed", lw=1.2)
    ax.plot([], [], color="black", ls="dashed", label="target grade (FK)")
    ax.set_xticks(range(len(LEVELS)), LEVELS)
    ax.set_xlabel("question level")
    ax.set_ylabel("grade")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _scores_section(s: Scored) -> str:
    r = s.readability
    lines = [
        "## Scores",
        f"Answer FK {_fmt(r.answer_fk, 1)} (target {r.target}) · CL {_fmt(r.answer_cl, 1)}",
    ]
    if s.ragas:
        g = s.ragas
        lines.append(
            f"RAGAS {_fmt(g.ragas)} · answer relevancy {_fmt(g.answer_relevancy)} · context relevance "
            f"{_fmt(g.context_relevance)} · faithfulness {_fmt(g.faithfulness)}"
        )
        if g.error:
            lines.append(f"**Judge error.** {g.error}")
        for call in g.judge_calls:
            lines.append(f"### Judge: {call.output} ({call.seconds:.1f} s)")
            if call.reply is not None:  # runs before replies were recorded have none
                lines.append(f"```json\n{call.reply}\n```")
    return "\n\n".join(lines)


def transcripts(folder: Path, rows: list[dict]) -> None:
    answers, scores = answers_of(folder), scores_of(folder)
    for r in rows:
        a = answers[(r["system"], r["qid"])]
        out = folder / "transcripts" / r["system"] / f"{r['qid']}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        parts = [
            f"# {a.system} · {a.level} · {a.topic}",
            f"**Question.** {a.question}",
            f"Judged level: {a.judged_level or '–'} · {a.seconds:.1f} s"
            f" · tokens in/out {a.tokens_in}/{a.tokens_out}",
        ]
        if a.error:
            parts.append(f"**Error.** {a.error}")
        for i, step in enumerate(a.steps, 1):
            parts.append(
                f"## Step {i}: `{step.get('tool')}`\n\nArguments: `{json.dumps(step.get('arguments'))}`\n\n"
                f"> {step.get('observation', '')}"
            )
        parts.append(f"## Answer\n\n{a.answer}")
        if a.contexts:
            parts.append("## Contexts given to RAGAS\n\n" + "\n\n".join(f"```\n{c}\n```" for c in a.contexts))
        if (s := scores.get((r["system"], r["qid"]))) is not None:
            parts.append(_scores_section(s))
        out.write_text("\n\n".join(parts) + "\n", encoding="utf-8")


def write_report(folder: Path, rows: list[dict], systems: list[str], meta: dict[str, Any]) -> Path:
    """Write every report file into `folder`; returns the path of report.md."""
    with (folder / "results.csv").open("w", newline="", encoding="utf-8") as f:
        fields = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("qid", "system", "level"), k))
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    (folder / "results.json").write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
    box_plot(rows, systems, "answer_fk", "Flesch-Kincaid grade of answers", folder / "fk_boxplot.png")
    box_plot(rows, systems, "answer_cl", "Coleman-Liau index of answers", folder / "cl_boxplot.png")
    transcripts(folder, rows)

    config = meta.get("config", {})
    answering, scoring = meta.get("answer_seconds", 0) / 60, meta.get("score_seconds", 0) / 60
    hours = (answering + scoring) / 60
    md = f"""# chatpapers evaluation — {config.get("date", "")}

Systems: {", ".join(systems)} · questions: {len({r["qid"] for r in rows})} ({config.get("questions", "")})
· answers: {len(rows)} · LLM: `{config.get("llm")}` · judge: `{config.get("judge_llm")}`
· embeddings: all-MiniLM-L6-v2 · corpus: {config.get("papers")} papers, {config.get("chunks")} chunks
· commit `{config.get("commit")}`

## RAGAS by system and level (as the paper's Table II)

RAGAS is the harmonic mean of answer relevancy, context relevance and faithfulness, judged on the
contexts each system actually retrieved (its tool observations), averaged over the answers that
have them; "no contexts" counts answers written without any (`llm-only` retrieves nothing, so only
its answer relevancy is defined).

{ragas_table(rows, systems)}

## Readability

Targets (Flesch-Kincaid grade, as the paper defines them): BSc {TARGET_GRADE["BSc"]}, MSc
{TARGET_GRADE["MSc"]}, PhD {TARGET_GRADE["PhD"]}. Grades are computed on the answer's prose (links and
arXiv ids removed) with textstat and the CMU dictionary.

{readability_table(rows, systems)}

Questions:

{questions_table(rows)}

![Flesch-Kincaid grade by level and system](fk_boxplot.png)

![Coleman-Liau index by level and system](cl_boxplot.png)

## Every answer

{per_question_table(rows)}

AR answer relevancy · CR context relevance · F faithfulness · s seconds to answer.

## Run

- answering: {answering:.1f} min · scoring: {scoring:.1f} min
  · total {hours:.2f} h over {meta.get("sessions")} session(s) (resumed runs add up)
- started {meta.get("started")} · finished {meta.get("finished", "–")}
- raw data: [results.csv](results.csv), [results.json](results.json), [answers.jsonl](answers.jsonl),
  [scores.jsonl](scores.jsonl), [run.json](run.json)
"""
    (folder / "report.md").write_text(md, encoding="utf-8")
    (folder / "report.html").write_text(_html(md), encoding="utf-8")
    return folder / "report.md"


def _html(md: str) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").enable("table").render(md)
    style = (
        "body{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem}"
        "table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}"
        "td,th{border:1px solid #ddd;padding:.3rem .5rem}th{background:#f4f4f6}"
        "img{max-width:100%}code{background:#f4f4f6;padding:0 .2rem}"
    )
    head = f'<meta charset="utf-8"><title>chatpapers evaluation</title><style>{style}</style>'
    return f'<!doctype html>\n<html lang="en">{head}\n{body}</html>\n'
