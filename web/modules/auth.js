// Signing in, creating an account and signing out; entering the app with a session.
import { api } from "./api.js";
import { checkHealth } from "./banner.js";
import { openChat, showChat } from "./chat.js";
import { loadChats } from "./chats.js";
import { $ } from "./dom.js";
import { resetInbox } from "./inbox.js";
import { state } from "./state.js";

export function showAuth() {
  state.user = null;
  state.ratings.clear(); // the next account's ratings are its own
  resetInbox();
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

export async function enter(session) {
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

export function wireAuth() {
  $("auth-form").addEventListener("submit", submitAuth);
  $("logout").addEventListener("click", logout);
}
