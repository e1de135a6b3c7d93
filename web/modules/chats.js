// The sidebar's chat list: a page at a time (newest first), rename, delete, a new chat.
import { api, handle } from "./api.js";
import { showChat, showChatHead, openChat } from "./chat.js";
import { $, el } from "./dom.js";
import { CHAT_PAGE, state } from "./state.js";

async function fetchChats(query) {
  const res = await fetch(`/api/chats?${new URLSearchParams(query)}`, {
    headers: { Accept: "application/json" }, credentials: "same-origin",
  });
  const chats = await handle(res);
  return { chats, next: res.headers.get("X-Next-Cursor") };
}

export async function loadChats() {
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

export function renderChatList() {
  const list = $("chat-list");
  list.replaceChildren();
  for (const chat of state.chats) {
    // the open chat is marked while it is shown (not while the inbox covers it)
    const active = state.view === "chat" && state.current && state.current.chat_id === chat.chat_id;
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
  // the inbox stays in front if it is: only the chat behind it empties
  if (state.current && state.current.chat_id === chat.chat_id) showChat(null, { reveal: state.view === "chat" });
  renderChatList();
}

// A new chat, shown at once; `title` names it (a chat about one paper: the inbox's Ask). The
// picker is the new chat's only while no chat is shown (a level picked before the first question);
// a chat shown holds its own level there, judged or picked, and the next chat starts at auto, as
// `/new` does in the terminal (a BSc question in a new chat after a PhD one was answered as PhD).
export async function newChat({ title } = {}) {
  const level = state.current ? null : $("level-select").value || null;
  const chat = await api("/api/chats", { method: "POST", body: title ? { level, title } : { level } });
  state.chats.unshift(chat);
  showChat(chat);
  renderChatList();
  return chat;
}

export function wireChats() {
  // older chats: a button under the list, or scrolling the list to its end
  $("chat-list").after(el("button", { id: "more-chats", class: "link", type: "button", text: "More chats",
    hidden: "", onclick: () => moreChats() }));
  $("chat-list").addEventListener("scroll", (e) => {
    const list = e.currentTarget;
    if (list.scrollTop + list.clientHeight >= list.scrollHeight - 40) moreChats();
  });
  $("new-chat").addEventListener("click", () => newChat().catch((e) => alert(e.message)));
}
