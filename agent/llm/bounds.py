"""Length bounds for JSON a small model writes under a grammar.

At temperature 0 a 1.5B model can loop inside a string or a list until its token budget runs out,
and the cut-off JSON is lost (an agent step that repeated itself for 256 tokens twice left an eval
answer with no retrieval at all). A maxLength on every string and a maxItems on every array,
enforced by the local model's grammar and shown to other models as part of the schema, make a
loop cost seconds and still parse."""

from __future__ import annotations

from typing import Any


def bounded(schema: Any, max_chars: int, max_items: int, per_name: dict[str, int] | None = None) -> Any:
    """A copy of `schema` with a maxLength on every string (`per_name` overrides it for properties
    of that name) and a maxItems on every array; bounds already there are kept."""
    per_name = per_name or {}

    def walk(node: Any, name: str = "") -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out[key] = {prop: walk(sub, prop) for prop, sub in value.items()}
            else:
                out[key] = walk(value)
        if out.get("type") == "string" and "format" not in out and "enum" not in out:
            out.setdefault("maxLength", per_name.get(name, max_chars))
        elif out.get("type") == "array":
            out.setdefault("maxItems", max_items)
        return out

    return walk(schema)
