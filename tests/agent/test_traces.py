"""OpenTelemetry traces of a turn, exported by OTLP/HTTP to a real receiver on loopback (the OTLP
protobuf decoded as a collector would), over the real database; the chat model is scripted."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from pydantic import SecretStr

from agent import tracing
from agent.events import Final, StepFinished
from agent.llm.traced import TracedModel
from agent.session import ChatService
from chatpapers.services import Services
from chatpapers.telemetry import header_pairs, start_tracing, stop_tracing, traces_url
from corpus import chats as chat_store
from corpus.db import Database
from corpus.embedder import Embedder
from tests.scripted_model import ScriptedModel, step

QUESTION = "What problem do deep residual networks solve?"
ANSWER = "Residual learning makes very deep networks trainable [1]."


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP traces endpoint: keeps every request's headers and decoded spans."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[dict[str, str], ExportTraceServiceRequest, bytes]] = []

    def spans(self) -> list:
        return [
            s
            for _, req, _ in self.requests
            for rs in req.resource_spans
            for ss in rs.scope_spans
            for s in ss.spans
        ]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append(({k.lower(): v for k, v in self.headers.items()}, request, body))
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200 if self.path == "/v1/traces" else 404)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        stop_tracing()  # later tests trace nothing


def _attributes(span) -> dict:
    out = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value"))
    return out


def test_a_turn_is_traced_step_by_step(corpus_copy: Database, embedder: Embedder, receiver: Receiver) -> None:
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    settings = corpus_copy.settings.model_copy(
        update={
            "trace_endpoint": endpoint,
            "trace_headers": SecretStr("Authorization=Basic cGs6c2s=, x-tenant=a=b"),
        }
    )
    provider = start_tracing(settings)
    assert provider is not None
    model = TracedModel(ScriptedModel([step("final_answer"), ANSWER, step("final_answer"), ANSWER]))
    # the step-by-step reader: a tool step, then a step and the answer from the model
    service = ChatService(corpus_copy, embedder, model, reader="agent")
    with corpus_copy.connect(autocommit=True) as conn:
        chat_id = chat_store.create_chat(conn, chat_store.LOCAL_OWNER).chat_id

    events = list(service.ask(chat_id, chat_store.LOCAL_OWNER, QUESTION))
    final = events[-1]
    assert isinstance(final, Final) and final.citations
    assert provider.force_flush(10_000)

    spans = receiver.spans()
    headers = receiver.requests[0][0]
    assert headers["authorization"] == "Basic cGs6c2s=" and headers["x-tenant"] == "a=b"
    by_name = {s.name: s for s in spans}
    turn = by_name["chatpapers.turn"]
    assert turn.parent_span_id == b""  # the root of the turn's trace
    assert {s.trace_id for s in spans} == {turn.trace_id}
    tool = by_name["step 0: search"]
    chats = [s for s in spans if s.name == "chat scripted"]
    # one tool step, then two model calls (the next step, the streamed answer from its own thread)
    assert len(spans) == 4 and len(chats) == 2
    assert all(s.parent_span_id == turn.span_id for s in [tool, *chats])
    attributes = _attributes(turn)
    assert attributes["chatpapers.turn.citations"] == len(final.citations)
    assert attributes["chatpapers.turn.steps"] == 1 and attributes["chatpapers.turn.stopped"] is False
    assert attributes["gen_ai.usage.output_tokens"] == final.tokens_out
    assert _attributes(tool)["chatpapers.tool.name"] == "search"
    assert _attributes(tool)["chatpapers.tool.passages"] == len(
        next(e for e in events if isinstance(e, StepFinished)).chunk_ids
    )
    streamed = next(s for s in chats if _attributes(s)["chatpapers.llm.streamed"])
    assert _attributes(streamed)["gen_ai.request.max_tokens"] == 200
    assert _attributes(streamed)["gen_ai.usage.input_tokens"] > 0
    assert resource_name(receiver) == "chatpapers"
    # content is off by default: sizes only, no question or answer anywhere in what was sent
    assert all(
        QUESTION.encode() not in body and b"Residual learning" not in body for *_, body in receiver.requests
    )

    # with content on, the turn carries its question and answer, the tool its arguments
    tracing.use(provider, content=True)
    before = len(spans)
    list(service.ask(chat_id, chat_store.LOCAL_OWNER, QUESTION))
    assert provider.force_flush(10_000)
    later = receiver.spans()[before:]
    turn = next(s for s in later if s.name == "chatpapers.turn")
    assert _attributes(turn)["input.value"] == QUESTION
    assert "Residual learning" in _attributes(turn)["output.value"]
    search = next(
        s for s in later if s.name.endswith("search") or s.name.endswith("get_information_from_paper")
    )
    assert "input.value" in _attributes(search)
    assert start_tracing(settings) is provider  # once a process


def resource_name(receiver: Receiver) -> str:
    resource = receiver.requests[0][1].resource_spans[0].resource
    return next(kv.value.string_value for kv in resource.attributes if kv.key == "service.name")


def test_tracing_is_off_unless_an_endpoint_is_set(corpus_copy: Database) -> None:
    assert start_tracing(corpus_copy.settings) is None
    services = Services(corpus_copy.settings.model_copy(update={"llm": "local"}))
    assert not isinstance(services.llm(), TracedModel)


def test_a_malformed_header_setting_is_refused_at_start(corpus_copy: Database) -> None:
    from pydantic import ValidationError

    from ground.settings import load_settings

    with pytest.raises(ValidationError, match="name=value"):
        load_settings(env_file=None, trace_endpoint="http://127.0.0.1:9", trace_headers="just-a-token")


def test_endpoint_and_headers_forms() -> None:
    assert traces_url("http://localhost:4318") == "http://localhost:4318/v1/traces"
    assert traces_url("https://cloud.langfuse.com/api/public/otel/") == (
        "https://cloud.langfuse.com/api/public/otel/v1/traces"
    )
    assert traces_url("http://c:4318/v1/traces") == "http://c:4318/v1/traces"
    assert header_pairs("a=1, b = x=y") == {"a": "1", "b": "x=y"}
    with pytest.raises(ValueError, match="not name=value"):
        header_pairs("just-a-token")
