"""Where the agent's OpenTelemetry spans go: OTLP over HTTP to `CHATPAPERS_TRACE_ENDPOINT` (a
collector, Jaeger, Langfuse, LangSmith, ...), batched in the background; nothing when it is unset."""

from __future__ import annotations

import atexit

from agent import tracing
from ground import __version__
from ground.settings import Settings


def traces_url(endpoint: str) -> str:
    """OTLP/HTTP's traces path under the endpoint, unless the endpoint already names it."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def header_pairs(text: str) -> dict[str, str]:
    """`name=value,name2=value2` (OTEL_EXPORTER_OTLP_HEADERS' form) as a dict; a value may hold '='."""
    pairs = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"CHATPAPERS_TRACE_HEADERS: {item.strip()!r} is not name=value")
        pairs[name.strip()] = value.strip()
    return pairs


_started: list = []  # the provider this process configured: once, whatever asks again


def start_tracing(settings: Settings):
    """Configure the agent's spans for this process (once); returns the provider (None: off)."""
    if not settings.trace_endpoint:
        return None
    if _started:
        return _started[0]
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    headers = header_pairs(settings.trace_headers.get_secret_value()) if settings.trace_headers else None
    provider = TracerProvider(
        resource=Resource.create({"service.name": "chatpapers", "service.version": __version__})
    )
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(settings.trace_endpoint), headers=headers))
    )
    tracing.use(provider, content=settings.trace_content)
    atexit.register(provider.shutdown)  # the last batch goes out when the process ends
    _started.append(provider)
    return provider


def stop_tracing() -> None:
    """Flush and forget this process's provider (tests configure tracing more than once)."""
    while _started:
        _started.pop().shutdown()
    tracing.use(None)
