// One chat: its head (title, level, downloads), its messages, sending a question and following
// the answer's events as they stream, stopping it, editing and resending a question.
import { api, handle, readEvents } from "./api.js";
import { AnswerView } from "./answer.js";
import { loadChats, newChat, renderChatList } from "./chats.js";
import { $, el } from "./dom.js";
import { closeMenu, showView } from "./layout.js";
import { state } from "./state.js";

export function showChatHead(chat) {
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

export function setLevel(level) {
  const badge = $("level-badge");
  badge.textContent = level || "auto";
  badge.className = "badge " + (level || "");
}

// Shows `chat` (null: a new one, not created until its first question); `reveal` brings the chat
// view to the front (deleting the open chat from behind the inbox does not).
export function showChat(chat, { reveal = true } = {}) {
  if (state.stream && (!chat || state.stream.chatId !== chat.chat_id)) leaveStream();
  state.current = chat;
  showChatHead(chat);
  const box = $("messages");
  box.replaceChildren($("empty-hint") || el("div"));
  $("empty-hint").hidden = Boolean(chat && chat.message_count);
  if (reveal) showView("chat");
  closeMenu();
  renderChatList();
}

export async function openChat(chatId) {
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

export function following(update) {
  const follow = atBottom();
  update();
  if (follow) scrollDown();
}

// ---------------------------------------------------------------- sending and streaming
export async function send(text, replaces = null) {
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

export async function stopAnswer() {
  if (!state.stream) return;
  $("stop").disabled = true;
  try {
    await api(`/api/chats/${state.stream.chatId}/stop`, { method: "POST" });
  } catch (e) {
    if (e.status !== 409) alert(e.message); // 409: it had just finished
  }
}

export function wireChat() {
  $("level-select").addEventListener("change", async (e) => {
    const level = e.target.value || null; // "" is auto: null lets the next question be judged again
    if (!state.current) { setLevel(level); return; }
    try {
      const chat = await api(`/api/chats/${state.current.chat_id}`, { method: "PATCH", body: { level } });
      state.current.level = chat.level;
      setLevel(chat.level);
    } catch (err) { alert(err.message); }
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
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
}
