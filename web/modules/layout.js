// The page's frame: which view the main area shows (a chat or the inbox), the phone-width menu
// that slides the sidebar over it, and the side panel's column.
import { $ } from "./dom.js";
import { state } from "./state.js";

export function closeMenu() { $("app-view").classList.remove("menu-open"); }

export function toggleMenu() { $("app-view").classList.toggle("menu-open"); }

// "chat" or "inbox"; the sidebar marks where the reader is
export function showView(view) {
  state.view = view;
  $("chat-view").hidden = view !== "chat";
  $("inbox-view").hidden = view !== "inbox";
  const entry = $("inbox-open");
  if (view === "inbox") entry.setAttribute("aria-current", "page");
  else entry.removeAttribute("aria-current");
  closeMenu();
}

export function withPanel(shown) { $("app-view").classList.toggle("with-panel", shown); }
