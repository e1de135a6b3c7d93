"""The one policy for text that reaches PostgreSQL.

PostgreSQL refuses two kinds of text that Python strings can hold: the NUL character (text and
jsonb columns cannot contain it) and unpaired UTF-16 surrogates (not encodable as UTF-8; JSON
bodies can carry them as `\\ud800`). Text from people is refused with the reason (`unstorable`,
the API turns it into a 422 before any work is done); text we produce ourselves (model output,
tool results, PDF text) is made storable (`storable`), so a turn is never lost at the last step."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator

_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 and C1 controls except tab, newline and carriage return: never meaningful in a title or a
# name, and some terminals act on them when a title is printed.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Invisible format characters that change how a line reads or looks: bidi overrides and isolates
# (U+202E shows "txt.exe" as "exe.txt"), zero-width spaces, the BOM. Zero-width (non-)joiners stay:
# scripts such as Persian and emoji sequences need them.
_INVISIBLE = re.compile("[\u00ad\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
REPLACEMENT = "\ufffd"


def unstorable(text: str) -> str | None:
    """Why PostgreSQL cannot store `text`, for people; None when it can."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which cannot be stored"
    if _SURROGATE.search(text):
        return "contains an unpaired UTF-16 surrogate, which is not valid Unicode text"
    return None


def storable(text: str) -> str:
    """`text` with what PostgreSQL cannot store replaced by U+FFFD."""
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    return _SURROGATE.sub(REPLACEMENT, text)


def storable_json(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings, numbers) with every string made storable; jsonb
    refuses `\\u0000` and unpaired surrogates just like text does."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable(str(k)): storable_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(v) for v in value]
    return value


def one_line(text: str) -> str:
    """A single line for titles and names: control characters become spaces, bidi and
    zero-width characters go, runs of whitespace one space, no space at either end."""
    return " ".join(_CONTROL.sub(" ", _INVISIBLE.sub("", text)).split())


def refuse_unstorable(value: str) -> str:
    reason = unstorable(value)
    if reason is not None:
        raise ValueError(reason)
    return value


# Text people send, for request models at any layer: refused (422) with the reason when it
# cannot be stored or written out, kept as written otherwise.
Storable = Annotated[str, AfterValidator(refuse_unstorable)]
