"""Terminal output shared by the commands: errors on stderr, progress bars."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text

err = Console(stderr=True)
out = Console()


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        if elapsed <= 0:
            return Text("– papers/s  – chunks/s", style="progress.data.speed")
        papers = task.completed / elapsed
        chunks = task.fields.get("chunks", 0) / elapsed
        return Text(f"{papers:.2f} papers/s  {chunks:.1f} chunks/s", style="progress.data.speed")


class IngestProgress:
    """A bar of papers processed with papers/s, chunks/s and ETA; silent when disabled."""

    def __init__(self, description: str, enabled: bool = True) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} papers"),
            _RateColumn(),
            TimeRemainingColumn(),
            console=err,
            disable=not enabled,
            transient=False,
        )
        self._task = self._progress.add_task(description, total=0, chunks=0)

    def __enter__(self) -> IngestProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def add_total(self, n: int) -> None:
        task = self._progress.tasks[0]
        self._progress.update(self._task, total=(task.total or 0) + n)

    def advance(self, chunks: int) -> None:
        task = self._progress.tasks[0]
        self._progress.update(self._task, advance=1, chunks=task.fields.get("chunks", 0) + chunks)
