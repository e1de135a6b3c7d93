"""Responses that can always be written: every string is made encodable (unpaired surrogates and
NUL become U+FFFD, the storage policy of corpus.text) before it is encoded. Request models refuse
such text with a 422; this is the net under every field that echoes text back (a transcript the
page sends, a model's output), so no response is ever a 500 for its content."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse, PlainTextResponse

from corpus.text import storable, storable_json


class EncodableJSON(JSONResponse):
    def render(self, content: Any) -> bytes:
        return super().render(storable_json(content))


class TextFile(PlainTextResponse):
    """A text download (Markdown, BibTeX)."""

    def render(self, content: Any) -> bytes:
        return super().render(storable(content) if isinstance(content, str) else content)
