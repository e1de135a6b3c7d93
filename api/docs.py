"""The OpenAPI docs at /docs, served from the app itself: the Swagger UI files of the
swagger-ui-bundle package and a page without inline code, so the app's CSP (no CDN, no inline
script or style) holds for /docs too. Its start-up code is web/docs.js.

That Swagger UI (4.x) reads OpenAPI 3.0, and FastAPI writes 3.1: the page gets the same schema
written as 3.0 from /docs/openapi.json; /openapi.json stays as FastAPI makes it."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from swagger_ui_bundle import swagger_ui_path

router = APIRouter(include_in_schema=False)

# The only Swagger UI files the page loads; nothing else of the package is served.
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}

PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title} – API docs</title>
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui" data-openapi="/docs/openapi.json"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/static/docs.js"></script>
</body>
</html>
"""


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    page = PAGE.format(title=html.escape(request.app.title))
    return HTMLResponse(page, headers={"Cache-Control": "no-cache"})


@router.get("/docs/assets/{name}")
def asset(name: str) -> FileResponse:
    media_type = ASSETS.get(name)
    if media_type is None:
        raise HTTPException(404, "no such file")
    return FileResponse(
        Path(swagger_ui_path) / name,
        media_type=media_type,
        headers={"Cache-Control": "public, max-age=86400"},
    )


@router.get("/docs/openapi.json")
def openapi_30(request: Request) -> JSONResponse:
    return JSONResponse(as_openapi_30(request.app.openapi()))


NULL = {"type": "null"}


def as_openapi_30(node: Any) -> Any:
    """An OpenAPI 3.1 document as 3.0 says the same, for what FastAPI and pydantic write:
    `anyOf` with a null type becomes `nullable`, numeric exclusive bounds become booleans, `const`
    an `enum` of one, a schema's list of `examples` its `example`."""
    if isinstance(node, list):
        return [as_openapi_30(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: as_openapi_30(v) for k, v in node.items()}
    if str(node.get("openapi", "")).startswith("3.1"):
        node["openapi"] = "3.0.3"
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list) and NULL in options:
            rest = [o for o in options if o != NULL]
            del node[key]
            if len(rest) == 1 and "$ref" not in rest[0]:
                node = {**rest[0], **node}
            elif rest:
                node["allOf" if len(rest) == 1 else key] = rest
            node["nullable"] = True
    for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = node.get(bound)
        if isinstance(value, int | float) and not isinstance(value, bool):
            node[plain], node[bound] = value, True
    if "const" in node and not isinstance(node["const"], dict):
        node["enum"] = [node.pop("const")]
    if isinstance(node.get("examples"), list):
        examples = node.pop("examples")
        if examples:
            node.setdefault("example", examples[0])
    return node
