"""The one decision of whether an item needs processing again, shared by every engine and by the
bulk-load planner."""

from __future__ import annotations

from corpus import ingest_state
from ingest.prepare import TEXT_VERSION


def skip_reason(state: ingest_state.ItemState | None, version: int | None, sha256: str | None) -> str | None:
    """Why an item need not be processed again, or None. A paper whose stored text an older
    extraction made is processed again: its file read anew gives the better text. A PDF that failed
    is not: what made it fail (encrypted, not a PDF) is no extraction's to mend. Only the same
    version is read again: an older version's file (v1 in an archive, v3 stored) is no better text."""
    if state is None:
        return None
    older_text = (state.text_version or 0) < TEXT_VERSION
    if state.status in ("ok", "empty") and older_text and (state.version or 0) == (version or 0):
        return None
    if state.status in ("ok", "empty") and (state.version or 0) >= (version or 0):
        return "unchanged" if state.source_sha256 in (None, sha256) or sha256 is None else "same version"
    if (
        state.status == "failed"
        and not state.retryable
        and (state.version or 0) == (version or 0)
        and (sha256 is None or state.source_sha256 in (None, sha256))
    ):
        return "failed before"
    return None
