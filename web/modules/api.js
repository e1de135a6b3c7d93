// The JSON API under /api: one fetch helper that sends the CSRF token with every state-changing
// request and turns an error response into an ApiError with the server's own words; and the
// reader of Server-Sent Events (answers and interviews stream as the response of a POST).
import { state } from "./state.js";

export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function detailText(detail, fallback) {
  if (Array.isArray(detail)) return detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
  return detail || fallback;
}

// What a 401 does when someone was signed in (the session ended): set by the entry module, so
// that this module needs none of the views.
let signedOut = () => {};
export function onSignedOut(handler) { signedOut = handler; }

// `body` is sent as JSON; `text` as text/plain (an imported library file).
export async function api(path, { method = "GET", body, text } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  else if (text !== undefined) headers["Content-Type"] = "text/plain; charset=utf-8";
  if (method !== "GET") headers["X-CSRF-Token"] = state.csrf || "";
  const res = await fetch(path, {
    method, headers, credentials: "same-origin",
    body: body !== undefined ? JSON.stringify(body) : text,
  });
  return handle(res);
}

export async function handle(res) {
  if (res.ok) return res.status === 204 ? null : res.json();
  let detail = null;
  try { detail = (await res.json()).detail; } catch { /* not JSON */ }
  if (res.status === 401 && state.user) signedOut();
  throw new ApiError(res.status, detailText(detail, `${res.status} ${res.statusText}`));
}

export async function readEvents(res, onEvent) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(type, JSON.parse(data.join("\n")));
    }
  }
}
