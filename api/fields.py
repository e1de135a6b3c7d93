"""Field types for request bodies and parameters: every text a request carries is checked against
the storage policy of `corpus.text` when the request is parsed, so bad text is a 422 before any
work is done (a question with a NUL byte used to run the whole agent, then fail to save)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, StringConstraints

from corpus.text import Storable, one_line, refuse_unstorable, unstorable


def _line(value: str) -> str:
    value = one_line(refuse_unstorable(value))
    if not value:
        raise ValueError("is empty once control characters and spaces are removed")
    return value


# Multi-line text people write (questions): kept as written.
Text = Storable
# One line (titles): controls become spaces, whitespace collapses; what is left must not be empty.
Line = Annotated[str, StringConstraints(max_length=200), AfterValidator(_line)]


def checked(value: str) -> str | None:
    """The reason a path or header value cannot be used, or None (for values FastAPI hands over
    as plain strings)."""
    return unstorable(value)
