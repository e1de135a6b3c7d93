"""JSON inside a model's reply."""

from __future__ import annotations


def json_object(text: str) -> str:
    """The outermost {...} of a reply (models like to wrap JSON in prose or code fences)."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else text
