// chatpapers chat page: plain JS, no build step. Talks to the JSON API under /api and reads answers
// as Server-Sent Events from the response of POST /api/chats/{id}/messages.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { csrf: null, auth: "password", user: null, chats: [], current: null, sending: false,
  nextChats: null, loadingChats: false, stream: null }; // stream: the answer this page follows
const CHAT_PAGE = 50; // chats per page of GET /api/chats; its X-Next-Cursor header starts the next

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function detailText(detail, fallback) {
  if (Array.isArray(detail)) return detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
  return detail || fallback;
}

async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") headers["X-CSRF-Token"] = state.csrf || "";
  const res = await fetch(path, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return handle(res);
}

async function handle(res) {
  if (res.ok) return res.status === 204 ? null : res.json();
  let detail = null;
  try { detail = (await res.json()).detail; } catch { /* not JSON */ }
  if (res.status === 401 && state.user) showAuth();
  throw new ApiError(res.status, detailText(detail, `${res.status} ${res.statusText}`));
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c != null) node.append(c);
  return node;
}

// An answer shows text, never controls: a prompt-injected answer could otherwise fake a sign-in
// form. (marked makes an <input> only for a GFM task list's checkbox; the item's text stays.)
// No <style> (restyling the page is faking it) and no remote images (a beacon that tells another
// site who read which answer): the CSP stops both too, but the answer should not carry them.
const ANSWER_HTML = {
  FORBID_TAGS: ["form", "input", "button", "textarea", "select", "option", "optgroup", "datalist", "style"],
  FORBID_ATTR: ["action", "formaction", "form", "style", "srcset"],
};

function sameOriginOrData(url) {
  if (/^data:image\//i.test(url)) return true;
  try {
    return new URL(url, location.href).origin === location.origin;
  } catch {
    return false;
  }
}

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "IMG" && !sameOriginOrData(node.getAttribute("src") || "")) {
    node.remove();
  }
});

// Maths: $…$, \(…\) inline and $$…$$, \[…\] displayed, outside code. KaTeX writes MathML, which the
// browser lays out itself: no inline styles (the CSP allows none) and no fonts to serve. A "$"
// followed by a digit or next to a space is money, not maths ("$5 and $10").
const MATH = /(```[\s\S]*?```|`[^`\n]*`)|\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|\$(?![\s\d])([^$\n]+?)(?<!\s)\$(?!\d)/g;

function withMaths(text) {
  const rendered = [];
  const masked = text.replace(MATH, (whole, code, display1, display2, inline1, inline2) => {
    if (code !== undefined || typeof katex === "undefined") return whole;
    const display = display1 !== undefined || display2 !== undefined;
    const tex = display1 ?? display2 ?? inline1 ?? inline2;
    rendered.push(katex.renderToString(tex, { displayMode: display, output: "mathml", throwOnError: false }));
    return `\uE000${rendered.length - 1}\uE001`; // private-use characters: marked leaves them alone
  });
  return { text: masked, rendered };
}

function markdown(text) {
  // marked turns Markdown into HTML; DOMPurify removes anything a model could inject.
  const { text: prepared, rendered } = withMaths(text || "");
  const html = marked.parse(prepared, { gfm: true, breaks: false })
    .replace(/\uE000(\d+)\uE001/g, (_, i) => rendered[Number(i)] ?? "");
  return DOMPurify.sanitize(html, ANSWER_HTML);
}

// ---------------------------------------------------------------- banner (/health)
async function checkHealth() {
  const banner = $("banner");
  let report;
  try {
    const res = await fetch("/health", { headers: { Accept: "application/json" } });
    report = await res.json();
  } catch {
    report = null;
  }
  const notes = [];
  let bad = false;
  if (!report) { notes.push("The server does not answer."); bad = true; }
  else {
    if (!report.database.ok) { notes.push(report.database.detail); bad = true; }
    // signed-in users get the details (how to configure one); others the plain fact
    if (!report.llm.ok) notes.push("No language model is configured, so questions cannot be answered yet" +
      (report.llm.detail === "no language model is configured" ? "." : ": " + report.llm.detail));
    if (report.database.ok && report.papers === 0) notes.push("The corpus is empty: run `chatpapers ingest --category cs` first.");
  }
  banner.textContent = notes.join(" ");
  banner.classList.toggle("bad", bad);
  banner.hidden = notes.length === 0;
  return report;
}

// ---------------------------------------------------------------- sign-in
function showAuth() {
  state.user = null;
  $("app-view").hidden = true;
  $("auth-view").hidden = false;
  $("username").focus();
}

async function submitAuth(event) {
  event.preventDefault();
  const mode = event.submitter && event.submitter.value === "register" ? "register" : "login";
  const error = $("auth-error");
  error.textContent = "";
  try {
    const session = await api(`/api/auth/${mode}`, {
      method: "POST",
      body: { username: $("username").value.trim(), password: $("password").value },
    });
    $("password").value = "";
    await enter(session);
  } catch (e) {
    error.textContent = e.message;
  }
}

async function enter(session) {
  state.csrf = session.csrf_token;
  state.user = session.user;
  state.auth = session.auth;
  $("auth-view").hidden = true;
  $("app-view").hidden = false;
  $("who").textContent = session.auth === "none" ? "single-user mode" : session.user;
  $("logout").hidden = session.auth === "none";
  checkHealth();  // signed in, /health tells the details (paper count, how to configure a model)
  await loadChats();
  if (state.chats.length) await openChat(state.chats[0].chat_id);
  else showChat(null);
  $("question").focus();
}

async function logout() {
  try { await api("/api/auth/logout", { method: "POST" }); } catch { /* signed out anyway */ }
  const session = await api("/api/auth/session");
  state.csrf = session.csrf_token;
  showAuth();
}

// ---------------------------------------------------------------- chats sidebar
async function fetchChats(query) {
  const res = await fetch(`/api/chats?${new URLSearchParams(query)}`, {
    headers: { Accept: "application/json" }, credentials: "same-origin",
  });
  const chats = await handle(res);
  return { chats, next: res.headers.get("X-Next-Cursor") };
}

async function loadChats() {
  // the first page, or as many as are listed (up to the API's 200): a refresh keeps "More chats"
  const page = await fetchChats({ limit: Math.min(200, Math.max(CHAT_PAGE, state.chats.length)) });
  state.chats = page.chats;
  state.nextChats = page.next;
  renderChatList();
}

async function moreChats() {
  if (!state.nextChats || state.loadingChats) return;
  state.loadingChats = true;
  try {
    const page = await fetchChats({ limit: CHAT_PAGE, before: state.nextChats });
    const known = new Set(state.chats.map((c) => c.chat_id));
    state.chats.push(...page.chats.filter((c) => !known.has(c.chat_id)));
    state.nextChats = page.next;
    renderChatList();
  } catch (e) {
    alert(e.message);
  } finally {
    state.loadingChats = false;
  }
}

function renderChatList() {
  const list = $("chat-list");
  list.replaceChildren();
  for (const chat of state.chats) {
    const active = state.current && state.current.chat_id === chat.chat_id;
    const item = el("li", { class: active ? "active" : "", "data-chat-id": chat.chat_id });
    const open = el("button", { class: "open", text: chat.title, title: chat.title, onclick: () => openChat(chat.chat_id) });
    const rename = el("button", { class: "act rename", title: "Rename", "aria-label": "Rename", text: "✎", onclick: () => startRename(item, chat) });
    const del = el("button", { class: "act delete", title: "Delete", "aria-label": "Delete", text: "✕", onclick: () => deleteChat(chat) });
    item.append(open, rename, del);
    list.append(item);
  }
  $("more-chats").hidden = !state.nextChats;
}

function startRename(item, chat) {
  const input = el("input", { value: chat.title, "aria-label": "New title", maxlength: "200" });
  let done = false;
  const finish = async (save) => {
    if (done) return;
    done = true;
    const title = input.value.trim();
    if (save && title && title !== chat.title) {
      try {
        const updated = await api(`/api/chats/${chat.chat_id}`, { method: "PATCH", body: { title } });
        Object.assign(chat, updated);
        if (state.current && state.current.chat_id === chat.chat_id) showChatHead(updated);
      } catch (e) { alert(e.message); }
    }
    renderChatList();
  };
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); finish(true); }
    if (e.key === "Escape") finish(false);
  });
  input.addEventListener("blur", () => finish(true));
  item.replaceChildren(input);
  input.focus();
  input.select();
}

async function deleteChat(chat) {
  if (!confirm(`Delete “${chat.title}” and all its messages?`)) return;
  try {
    await api(`/api/chats/${chat.chat_id}`, { method: "DELETE" });
  } catch (e) {
    if (e.status !== 404) { alert(e.message); return; }
  }
  state.chats = state.chats.filter((c) => c.chat_id !== chat.chat_id);
  if (state.current && state.current.chat_id === chat.chat_id) showChat(null);
  renderChatList();
}

async function newChat() {
  const level = $("level-select").value || null;
  const chat = await api("/api/chats", { method: "POST", body: { level } });
  state.chats.unshift(chat);
  showChat(chat);
  renderChatList();
  return chat;
}

// ---------------------------------------------------------------- one chat
function showChatHead(chat) {
  $("chat-title").textContent = chat ? chat.title : "New chat";
  setLevel(chat ? chat.level : null);
  $("level-select").value = chat && chat.level ? chat.level : "";
  // downloads of what is saved: plain links, so the browser's own download handling applies
  $("downloads").hidden = !chat;
  if (chat) {
    $("export-md").href = `/api/chats/${chat.chat_id}/export.md`;
    $("export-bib").href = `/api/chats/${chat.chat_id}/export.bib`;
  }
}

function setLevel(level) {
  const badge = $("level-badge");
  badge.textContent = level || "auto";
  badge.className = "badge " + (level || "");
}

function showChat(chat) {
  if (state.stream && (!chat || state.stream.chatId !== chat.chat_id)) leaveStream();
  state.current = chat;
  showChatHead(chat);
  const box = $("messages");
  box.replaceChildren($("empty-hint") || el("div"));
  $("empty-hint").hidden = Boolean(chat && chat.message_count);
  closeMenu();
  renderChatList();
}

async function openChat(chatId) {
  leaveStream(); // the answer goes on being written (and saved) without this page
  let data;
  try {
    data = await api(`/api/chats/${chatId}/messages`);
  } catch (e) {
    if (e.status === 404) { await loadChats(); showChat(null); return; }
    throw e;
  }
  const pending = data.chat.pending;
  // an answer still being written: its question is not saved yet, and an edit hides what it replaces
  const shown = data.messages.filter((m) => !(pending && pending.replaces && m.message_id >= pending.replaces));
  showChat({ ...data.chat, message_count: shown.length + (pending ? 1 : 0) });
  let view = null;
  for (const m of shown) {
    if (m.role === "user") addUserMessage(m.content, m.message_id);
    else (view = new AnswerView()).load(m);
  }
  if (pending) {
    addUserMessage(pending.content);
    scrollDown();
    await follow(data.chat);
  } else {
    if (view) view.lastAnswer();
    scrollDown();
  }
}

// A page opened while an answer is being written replays its events so far and follows the rest.
async function follow(chat) {
  const view = new AnswerView().live();
  const abort = new AbortController();
  state.stream = { chatId: chat.chat_id, abort };
  state.sending = true;
  let res;
  try {
    res = await fetch(`/api/chats/${chat.chat_id}/stream`, {
      credentials: "same-origin", headers: { Accept: "text/event-stream" }, signal: abort.signal });
  } catch (e) {
    if (!abort.signal.aborted) { view.error(e.message); leaveStream(); }
    return;
  }
  if (state.stream === null || state.stream.abort !== abort) return; // the page moved on meanwhile
  if (res.status === 204) { leaveStream(); view.root.remove(); await openChat(chat.chat_id); return; } // finished
  if (!res.ok) { leaveStream(); try { await handle(res); } catch (e) { view.error(e.message); } return; }
  await streamAnswer(chat, res, view, abort);
}

function addUserMessage(text, messageId) {
  $("empty-hint").hidden = true;
  const node = el("div", { class: "msg user" }, el("div", { class: "text", text }));
  if (messageId) setQuestionId(node, messageId);
  $("messages").append(node);
  return node;
}

// A saved question can be edited and sent again: the new answer replaces it and all after it.
function setQuestionId(node, messageId) {
  node.dataset.id = messageId;
  if (node.querySelector(".edit")) return;
  node.append(el("button", { class: "edit link small", type: "button", title: "Edit and send again",
    text: "Edit", onclick: () => editQuestion(node) }));
}

function editQuestion(node) {
  if (state.sending || node.querySelector("textarea")) return;
  const text = node.querySelector(".text");
  const box = el("textarea", { rows: "3", maxlength: "8000", "aria-label": "Edit your question" });
  box.value = text.textContent;
  const done = () => { form.remove(); text.hidden = false; node.querySelector(".edit").hidden = false; };
  const form = el("form", { class: "edit-form" }, box,
    el("div", { class: "row" },
      el("button", { type: "submit", text: "Send" }),
      el("button", { type: "button", class: "link", text: "Cancel", onclick: done })));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!box.value.trim() || state.sending) return;
    done();
    send(box.value, Number(node.dataset.id));
  });
  box.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.stopPropagation(); done(); }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
  });
  text.hidden = true;
  node.querySelector(".edit").hidden = true;
  node.append(form);
  box.focus();
}

function scrollDown() {
  const box = $("messages");
  box.scrollTop = box.scrollHeight;
}

// The conversation follows a growing answer only while the reader is at its end: whoever scrolled
// up to read an earlier part is not pulled down by every token.
const FOLLOW_SLACK = 48; // pixels above the bottom that still count as "at the end"

function atBottom() {
  const box = $("messages");
  return box.scrollHeight - box.scrollTop - box.clientHeight <= FOLLOW_SLACK;
}

function following(update) {
  const follow = atBottom();
  update();
  if (follow) scrollDown();
}

// One assistant message: its steps (collapsible), the answer as Markdown, and the sources.
class AnswerView {
  constructor() {
    this.text = "";
    this.stepItems = new Map();
    this.steps = el("details", { class: "steps", open: "" }, el("summary", { text: "Agent steps" }), el("ol"));
    this.status = el("div", { class: "status", text: "Thinking…" });
    this.answer = el("div", { class: "answer" });
    this.sources = el("div", { class: "sources", hidden: "" });
    this.actions = el("div", { class: "actions small", hidden: "" },
      el("button", { class: "link copy", type: "button", text: "Copy", title: "Copy the answer as Markdown",
        onclick: (e) => this.copy(e.currentTarget) }));
    this.root = el("div", { class: "msg assistant" }, this.steps, this.answer, this.status, this.sources,
      this.actions);
    this.steps.hidden = true;
    $("messages").append(this.root);
    this.pending = false;
    this.done = false;
    this.passages = {};
  }

  load(message) {
    this.steps.open = false;
    for (const step of message.steps) this.stepFinished(step);
    this.final({ answer: message.content, citations: message.citations, passages: message.passages,
      sources: message.sources, grounding: message.grounding, abstained: message.abstained,
      model: message.model, seconds: message.seconds, tokens_in: message.tokens_in,
      tokens_out: message.tokens_out, stopped: message.stopped, message_id: message.message_id });
  }

  async copy(button) {
    try {
      await navigator.clipboard.writeText(this.text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  }

  // The newest answer can be written again: its question is sent again in its place.
  lastAnswer() {
    for (const old of document.querySelectorAll("#messages .regenerate")) old.remove();
    const question = this.root.previousElementSibling;
    if (!question || !question.dataset.id) return;
    this.actions.append(el("button", { class: "link regenerate", type: "button", text: "Regenerate",
      title: "Answer this question again", onclick: () => {
        if (!state.sending) send(question.querySelector(".text").textContent, Number(question.dataset.id));
      } }));
  }

  // Screen readers hear the answer being written, and only it: the region is this answer (busy
  // until it is final, so it is read once, whole), not the whole conversation.
  live() {
    for (const old of document.querySelectorAll("#messages .answer[aria-live]")) {
      old.removeAttribute("aria-live");
      old.removeAttribute("aria-busy");
    }
    this.answer.setAttribute("aria-live", "polite");
    this.answer.setAttribute("aria-busy", "true");
    return this;
  }

  countSteps() {
    this.steps.querySelector("summary").textContent = `Agent steps (${this.stepItems.size})`;
  }

  stepStarted(ev) {
    this.steps.hidden = false;
    const item = el("li", { class: "step" },
      el("div", {}, el("span", { class: "k", text: "Thought: " }), ev.thought || ""),
      el("div", {}, el("span", { class: "k", text: "Action: " }), el("code", { text: ev.tool }), " ",
        el("code", { text: JSON.stringify(ev.arguments) })),
      el("div", { class: "running", text: "running…" }));
    this.stepItems.set(ev.index, item);
    this.steps.querySelector("ol").append(item);
    this.countSteps();
    this.status.textContent = `Using ${ev.tool}…`;
  }

  stepFinished(ev) {
    let item = this.stepItems.get(ev.index);
    if (!item) {
      // steps of a saved message come without their start (thought is stored with the step)
      this.stepStarted({ index: ev.index, thought: ev.thought || "", tool: ev.tool, arguments: ev.arguments });
      item = this.stepItems.get(ev.index);
    }
    item.querySelector(".running").replaceWith(
      el("div", { class: "obs" }, el("span", { class: "k", text: "Observation: " }), ev.observation,
        el("span", { class: "muted", text: ` (${Math.round(ev.duration_ms)} ms)` })));
    item.classList.toggle("error", Boolean(ev.error));
    this.status.textContent = "Thinking…";
  }

  token(text) {
    this.text += text;
    this.status.textContent = "Writing…";
    if (!this.pending) {
      this.pending = true;
      requestAnimationFrame(() => {
        this.pending = false;
        if (!this.done) following(() => this.renderAnswer(this.text)); // the final text wins
      });
    }
  }

  renderAnswer(text) {
    this.answer.innerHTML = markdown(text);
    for (const link of this.answer.querySelectorAll("a[href]")) {
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      const m = link.getAttribute("href").match(/^https:\/\/arxiv\.org\/abs\/(.+)$/);
      if (m) {
        link.classList.add("cite-link");
        link.dataset.paper = m[1];
        if (this.passages[m[1]]) link.dataset.chunk = this.passages[m[1]];
      }
    }
  }

  final(ev) {
    this.done = true;
    this.text = ev.answer;
    const passages = (this.passages = ev.passages || {});
    this.renderAnswer(ev.answer);
    this.answer.setAttribute("aria-busy", "false");
    this.status.remove();
    this.steps.open = false;
    this.actions.hidden = false;
    if (ev.abstained) this.root.classList.add("abstained");
    if (ev.stopped) {
      this.root.classList.add("stopped");
      this.root.insertBefore(el("div", { class: "stopped-note small", role: "note",
        text: ev.answer ? "Stopped: the answer is unfinished." : "Stopped before the answer was written." }),
      this.sources);
    }
    // sentences the check found unsupported: still in the answer (flagged), or left out of it
    const plural = (n) => `${n} sentence${n > 1 ? "s" : ""}`;
    const notes = [
      [(ev.grounding && ev.grounding.unsupported) || [], (n) => `⚠ ${plural(n)} not supported by the passages read`],
      [(ev.grounding && ev.grounding.left_out) || [],
        (n) => `${plural(n)} of the draft left out: no passage read supports ${n > 1 ? "them" : "it"}`],
    ];
    for (const [sentences, label] of notes) {
      if (!sentences.length) continue;
      this.root.insertBefore(el("details", { class: "grounding" },
        el("summary", { text: label(sentences.length) }),
        ...sentences.map((s) => el("p", { text: s }))), this.sources);
    }
    // numbered source cards, as the answer cites them ([1], [2], ...); older answers: their ids
    const sources = ev.sources && ev.sources.length ? ev.sources
      : (ev.citations || []).map((paper, i) => ({ n: i + 1, paper_id: paper, title: `arXiv:${paper}`,
        authors: [], year: null, url: `https://arxiv.org/abs/${paper}`, passage: passages[paper] }));
    const meta = answerMeta(ev);
    if (meta) this.root.append(el("div", { class: "meta muted small", text: meta }));
    if (sources.length) {
      this.sources.hidden = false;
      this.sources.replaceChildren(el("span", { class: "muted", text: "Sources:" }));
      for (const s of sources) {
        const who = s.authors.length ? s.authors.slice(0, 3).join(", ") + (s.authors.length > 3 ? " et al." : "") : "";
        const meta = [who, s.year].filter(Boolean).join(" · ");
        this.sources.append(el("div", { class: "source-card" },
          el("span", { class: "source-n", text: `[${s.n}]` }),
          el("div", { class: "source-body" },
            el("button", { class: "cite link", type: "button", title: "Show the cited passage",
              text: s.title, onclick: () => openPassage(s.paper_id, s.passage || passages[s.paper_id]) }),
            meta ? el("div", { class: "muted small", text: meta }) : null),
          el("div", { class: "source-actions small" },
            el("a", { href: s.url, target: "_blank", rel: "noopener noreferrer",
              title: "Open on arXiv", text: `arXiv:${s.paper_id} ↗` }),
            el("button", { class: "link interview-btn", type: "button", title: "Interview this paper",
              text: "Interview", onclick: () => openInterview(s.paper_id, s.title) }))));
      }
    }
  }

  error(message) {
    this.answer.setAttribute("aria-busy", "false");
    this.status.setAttribute("role", "alert");
    this.root.classList.add("failed");
    this.status.className = "status bad";
    this.status.textContent = "Error: " + message;
    if (!this.root.contains(this.status)) this.root.append(this.status);
  }
}

// Which model wrote an answer, how long it took, the tokens it used (what of it is known).
function answerMeta(ev) {
  const parts = [];
  if (ev.model) parts.push(ev.model);
  if (ev.seconds != null) parts.push(`${ev.seconds.toFixed(1)} s`);
  if (ev.tokens_in != null || ev.tokens_out != null) {
    parts.push(`${(ev.tokens_in || 0).toLocaleString("en")} tokens in, ${(ev.tokens_out || 0).toLocaleString("en")} out`);
  }
  return parts.join(" · ");
}

// ---------------------------------------------------------------- sending and streaming
async function send(text, replaces = null) {
  if (state.sending || !text.trim()) return;
  state.sending = true;
  $("send").disabled = true;
  let view = null;
  try {
    const chat = state.current || (await newChat());
    if (replaces) {
      // the edited (or regenerated) question and everything after it make way for the new turn
      const from = document.querySelector(`#messages .msg.user[data-id="${replaces}"]`);
      while (from && from.nextElementSibling) from.nextElementSibling.remove();
      if (from) from.remove();
    }
    const question = addUserMessage(text);
    view = new AnswerView().live();
    scrollDown(); // the reader just asked: show the question and where its answer comes
    const abort = new AbortController();
    state.stream = { chatId: chat.chat_id, abort }; // opening another chat meanwhile leaves this answer
    const res = await fetch(`/api/chats/${chat.chat_id}/messages`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", "X-CSRF-Token": state.csrf },
      body: JSON.stringify(replaces ? { content: text, replaces } : { content: text }),
      signal: abort.signal,
    });
    if (!res.ok) await handle(res);
    await streamAnswer(chat, res, view, abort, question);
  } catch (e) {
    if (state.stream && state.stream.abort.signal.aborted) return; // the page left this chat
    if (view) view.error(e.message); else alert(e.message);
    state.stream = null;
    state.sending = false;
    $("send").disabled = false;
    $("send").hidden = false;
    $("stop").hidden = true;
  }
}

// Reads an answer's events into its view. The stop button (and Esc) stop it; opening another chat
// leaves it (the server finishes and saves it), and opening this chat again follows it anew.
async function streamAnswer(chat, res, view, abort, question = null) {
  state.sending = true;
  state.stream = { chatId: chat.chat_id, abort };
  $("send").hidden = true;
  $("stop").hidden = false;
  $("stop").disabled = false;
  let finished = false;
  try {
    await readEvents(res, (type, data) => following(() => {
      if (type === "level") setLevel(data.level);
      else if (type === "step_started") view.stepStarted(data);
      else if (type === "step_finished") view.stepFinished(data);
      else if (type === "token") view.token(data.text);
      else if (type === "final") {
        view.final(data);
        finished = true;
        const asked = question || view.root.previousElementSibling;
        if (asked && data.question_id) setQuestionId(asked, data.question_id);
        view.lastAnswer();
      } else if (type === "error") { view.error(data.message); finished = true; }
    }));
  } catch (e) {
    if (abort.signal.aborted) return; // this page left the answer; it is still being written
    throw e;
  } finally {
    if (state.stream && state.stream.abort === abort) {
      state.stream = null;
      state.sending = false;
      $("send").hidden = false;
      $("send").disabled = false;
      $("stop").hidden = true;
    }
  }
  if (!finished) view.error("the connection was lost; the answer is saved when it is done — reopen the chat");
  await loadChats();
  const fresh = state.chats.find((c) => c.chat_id === chat.chat_id);
  if (fresh && state.current && state.current.chat_id === chat.chat_id) {
    Object.assign(state.current, fresh);
    showChatHead(state.current);
  }
}

function leaveStream() {
  if (!state.stream) return;
  state.stream.abort.abort();
  state.stream = null;
  state.sending = false;
  $("send").hidden = false;
  $("send").disabled = false;
  $("stop").hidden = true;
}

async function stopAnswer() {
  if (!state.stream) return;
  $("stop").disabled = true;
  try {
    await api(`/api/chats/${state.stream.chatId}/stop`, { method: "POST" });
  } catch (e) {
    if (e.status !== 409) alert(e.message); // 409: it had just finished
  }
}

async function readEvents(res, onEvent) {
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

// ---------------------------------------------------------------- cited passage panel
async function openPassage(paper, chunkId) {
  if (state.interview && !$("interview-panel").hidden) closeInterview();
  const panel = $("passage-panel");
  const body = $("passage-body");
  panel.hidden = false;
  $("app-view").classList.add("with-panel");
  $("passage-title").textContent = `arXiv:${paper}`;
  $("passage-link").href = `https://arxiv.org/abs/${paper}`;
  body.replaceChildren(el("p", { class: "muted", text: "Loading…" }));
  try {
    if (!chunkId) {
      const meta = await api(`/api/papers/${paper}`);
      $("passage-title").textContent = meta.title;
      body.replaceChildren(el("div", { class: "where", text: "Abstract" }), el("div", { class: "hit", text: meta.abstract || "" }));
      return;
    }
    const seq = chunkId.slice(chunkId.lastIndexOf("#") + 1);
    const p = await api(`/api/papers/${paper}/chunks/${seq}`);
    $("passage-title").textContent = p.title;
    const part = (chunk, cls, label) => chunk
      ? [el("div", { class: "where", text: `${label} · page ${chunk.page ?? "?"}` }), el("div", { class: cls, text: chunk.text })]
      : [];
    body.replaceChildren(
      ...part(p.prior, "ctx", "Before"),
      ...part(p.chunk, "hit", `Cited passage ${p.paper_id}#${p.chunk.seq}`),
      ...part(p.next, "ctx", "After"));
  } catch (e) {
    body.replaceChildren(el("p", { class: "error", text: e.message }));
  }
}

function closePassage() {
  $("passage-panel").hidden = true;
  $("app-view").classList.remove("with-panel");
}

// ---------------------------------------------------------------- interview a paper
// The page keeps the transcript and asks for one round at a time: the journalist's question (or
// the reader's own, typed at any time and used in the next round), then the author's answer.
const INTERVIEW_ROUNDS = 5;

function openInterview(paperId, title) {
  if (state.interview && state.interview.running) return;
  closePassage();
  state.interview = { paperId, title, exchanges: [], running: false, abort: null, own: [], halted: false };
  $("interview-title").textContent = `Interview: ${title}`;
  $("interview-log").replaceChildren();
  $("interview-download").disabled = true;
  $("interview-panel").hidden = false;
  $("app-view").classList.add("with-panel");
  nextRound();
}

function closeInterview() {
  const iv = state.interview;
  if (iv && iv.running) stopRound().finally(() => iv.abort && iv.abort.abort());
  if (iv) iv.halted = true;
  $("interview-panel").hidden = true;
  $("app-view").classList.remove("with-panel");
}

async function nextRound() {
  const iv = state.interview;
  if (!iv || iv.running || iv.halted) return;
  const own = iv.own.shift() || null;
  if (!own && iv.exchanges.filter((e) => e.asker === "journalist").length >= INTERVIEW_ROUNDS) {
    $("interview-status").textContent = "The journalist is done; ask the author yourself.";
    return;
  }
  iv.running = true;
  iv.abort = new AbortController();
  $("interview-stop").hidden = false;
  $("interview-stop").disabled = false;
  $("interview-status").textContent = own ? "The author reads the paper…" : "The journalist thinks of a question…";
  const item = el("div", { class: "exchange" });
  const answer = el("div", { class: "answer" });
  let text = "";
  let answered = false;
  $("interview-log").append(item);
  try {
    const res = await fetch(`/api/papers/${iv.paperId}/interview`, {
      method: "POST", credentials: "same-origin", signal: iv.abort.signal,
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", "X-CSRF-Token": state.csrf },
      body: JSON.stringify({ earlier: iv.exchanges, question: own, level: (state.current && state.current.level) || "MSc" }),
    });
    if (!res.ok) await handle(res);
    await readEvents(res, (type, data) => {
      if (type === "question") {
        item.append(el("div", { class: `q ${data.asker}`, text: `${data.asker === "you" ? "You" : "Journalist"}: ${data.text}` }),
          el("div", { class: "who muted small", text: "Author:" }), answer);
        $("interview-status").textContent = "The author answers from the paper…";
      } else if (type === "token") {
        text += data.text;
        answer.textContent = text;
      } else if (type === "answer") {
        answered = true;
        iv.exchanges.push(data.exchange);
        answer.innerHTML = markdown(data.exchange.answer || "(no answer)");
        if (data.exchange.stopped) item.append(el("div", { class: "stopped-note small", text: "Stopped: unfinished." }));
        const loose = data.exchange.unsupported || [];
        if (loose.length) item.append(el("details", { class: "grounding" },
          el("summary", { text: `⚠ ${loose.length} sentence${loose.length > 1 ? "s" : ""} not supported by the passages` }),
          ...loose.map((u) => el("p", { class: "small", text: u }))));
        item.append(el("details", { class: "passages" },
          el("summary", { text: `Passages the answer was written from (${data.exchange.passages.length})` }),
          ...data.exchange.passages.map((p) => el("p", { class: "small" },
            el("b", { text: `[${p.n}] ` }), el("span", { class: "muted", text: `page ${p.page ?? "?"} · ` }), p.text))));
        $("interview-download").disabled = false;
        if (data.exchange.stopped) iv.halted = true;
      } else if (type === "error") {
        item.append(el("div", { class: "status bad", text: "Error: " + data.message }));
        iv.halted = true;
      }
    });
  } catch (e) {
    if (!iv.abort.signal.aborted) item.append(el("div", { class: "status bad", text: "Error: " + e.message }));
    iv.halted = true;
    if (!answered) iv.halted = true; // a round that ended without its answer is not asked again by itself
  } finally {
    iv.running = false;
    $("interview-stop").hidden = true;
    $("interview-status").textContent = iv.halted ? "Stopped. Ask your own question to go on." : "";
  }
  if (state.interview === iv) nextRound();
}

async function stopRound() {
  const iv = state.interview;
  if (!iv || !iv.running) return;
  iv.halted = true;
  $("interview-stop").disabled = true;
  try {
    await api(`/api/papers/${iv.paperId}/interview/stop`, { method: "POST" });
  } catch (e) {
    if (e.status !== 409) alert(e.message);
  }
}

function askAuthor(event) {
  event.preventDefault();
  const iv = state.interview;
  const box = $("interview-question");
  const text = box.value.trim();
  if (!iv || !text) return;
  box.value = "";
  iv.own.push(text);
  iv.halted = false;
  if (iv.running) $("interview-status").textContent = "Your question comes next.";
  else nextRound();
}

async function downloadTranscript() {
  const iv = state.interview;
  if (!iv || !iv.exchanges.length) return;
  const res = await fetch(`/api/papers/${iv.paperId}/interview/transcript.md`, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
    body: JSON.stringify({ exchanges: iv.exchanges }),
  });
  if (!res.ok) { try { await handle(res); } catch (e) { alert(e.message); } return; }
  const url = URL.createObjectURL(await res.blob());
  const link = el("a", { href: url, download: `interview-${iv.paperId.replace(/\W/g, "-")}.md` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// ---------------------------------------------------------------- phone-width menu
function closeMenu() { $("app-view").classList.remove("menu-open"); }

// ---------------------------------------------------------------- wiring
function wire() {
  // older chats: a button under the list, or scrolling the list to its end
  $("chat-list").after(el("button", { id: "more-chats", class: "link", type: "button", text: "More chats",
    hidden: "", onclick: () => moreChats() }));
  $("chat-list").addEventListener("scroll", (e) => {
    const list = e.currentTarget;
    if (list.scrollTop + list.clientHeight >= list.scrollHeight - 40) moreChats();
  });
  $("auth-form").addEventListener("submit", submitAuth);
  $("logout").addEventListener("click", logout);
  $("new-chat").addEventListener("click", () => newChat().catch((e) => alert(e.message)));
  $("menu").addEventListener("click", () => $("app-view").classList.toggle("menu-open"));
  $("scrim").addEventListener("click", closeMenu);
  $("panel-close").addEventListener("click", closePassage);
  $("level-select").addEventListener("change", async (e) => {
    const level = e.target.value || null; // "" is auto: null lets the next question be judged again
    if (!state.current) { setLevel(level); return; }
    try {
      const chat = await api(`/api/chats/${state.current.chat_id}`, { method: "PATCH", body: { level } });
      state.current.level = chat.level;
      setLevel(chat.level);
    } catch (err) { alert(err.message); }
  });
  $("messages").addEventListener("click", (e) => {
    const link = e.target.closest("a.cite-link");
    if (!link || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault(); // a plain click shows the passage; the panel links to arXiv
    openPassage(link.dataset.paper, link.dataset.chunk);
  });
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const box = $("question");
    const text = box.value;
    if (!text.trim() || state.sending) return;
    box.value = "";
    send(text);
  });
  $("stop").addEventListener("click", stopAnswer);
  $("interview-form").addEventListener("submit", askAuthor);
  $("interview-stop").addEventListener("click", stopRound);
  $("interview-close").addEventListener("click", closeInterview);
  $("interview-download").addEventListener("click", () => downloadTranscript().catch((e) => alert(e.message)));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !e.defaultPrevented) {
      if (state.stream) stopAnswer();
      else if (state.interview && state.interview.running) stopRound();
      else if (!$("passage-panel").hidden) closePassage();
    } else if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k" && state.user) {
      e.preventDefault(); // the browser's own Ctrl+K (search bar) would take the focus away
      newChat().then(() => $("question").focus()).catch((err) => alert(err.message));
    }
  });
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
}

async function boot() {
  wire();
  const session = await api("/api/auth/session");
  state.csrf = session.csrf_token;
  state.auth = session.auth;
  if (session.user) await enter(session);
  else { checkHealth(); showAuth(); }
}

document.addEventListener("DOMContentLoaded", () => {
  boot().catch((e) => {
    const banner = $("banner");
    banner.textContent = "chatpapers cannot start: " + e.message;
    banner.className = "banner bad";
    banner.hidden = false;
  });
});
