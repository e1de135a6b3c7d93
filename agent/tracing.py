"""OpenTelemetry spans of the agent's work: a turn, each tool step, each model call. Only the
OpenTelemetry API is used here; the composition root decides where spans go (`use`). Without a
provider every span is a no-op, so tracing costs nothing when it is off (the default)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Span, Tracer

_provider: trace.TracerProvider | None = None
_content = False  # questions, answers, prompts and tool arguments in the spans, or only their sizes

T = TypeVar("T")


def use(provider: trace.TracerProvider | None, content: bool = False) -> None:
    """Send the agent's spans to `provider` (None: OpenTelemetry's global provider, a no-op
    unless the process configured one)."""
    global _provider, _content
    _provider, _content = provider, content


def tracer() -> Tracer:
    return trace.get_tracer("chatpapers", tracer_provider=_provider)


def span(name: str, **attributes: Any) -> AbstractContextManager[Span]:
    """A span current for the `with` block; attributes that are None are left out."""
    return tracer().start_as_current_span(name, attributes=_clean(attributes))


def start(name: str, **attributes: Any) -> Span:
    """A span that is not made current (see `during`); the caller ends it."""
    return tracer().start_span(name, attributes=_clean(attributes))


def content(value: Any) -> str | None:
    """`value` as a span attribute when traces carry content, else None (left out)."""
    if not _content or value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def set_attributes(target: Span, **attributes: Any) -> None:
    target.set_attributes(_clean(attributes))


def during(target: Span, events: Iterator[T]) -> Iterator[T]:
    """`events` with `target` current while each next event is computed, and not while the caller
    handles it: a generator's work is traced without the span leaking into its consumer."""
    iterator = iter(events)
    while True:
        # whoever started `target` records a failure on it once, as it ends it
        with trace.use_span(target, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            try:
                event = next(iterator)
            except StopIteration:
                return
        yield event


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if v is not None}
