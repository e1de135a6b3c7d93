// chatpapers chat page: plain JS, no build step. Talks to the JSON API under /api and reads answers
// as Server-Sent Events from the response of POST /api/chats/{id}/messages. This entry module
// wires the page together; the parts live in modules/:
//   state.js      the shared, mutable state        api.js        fetch helper, CSRF, SSE reader
//   dom.js        $ and el()                        markdown.js   Markdown + maths, sanitized
//   banner.js     what /health says is wrong        layout.js     views, phone menu, side panel
//   auth.js       sign-in and sign-out              chats.js      the sidebar's chat list
//   chat.js       one chat: send, stream, stop      answer.js     one answer: steps, text, sources
//   sources.js    source cards, cited passages      interview.js  interview a paper
//   ratings.js    👍 / 👎 on any card               cards.js      a paper as a card
//   inbox.js      the ranked inbox                  start.js      the inbox's first visit
//   interests.js  topics, library import, feed    icons.js      drawn icons (thumbs), not emoji
import { api, onSignedOut } from "./modules/api.js";
import { enter, showAuth, wireAuth } from "./modules/auth.js";
import { checkHealth, showFatal } from "./modules/banner.js";
import { stopAnswer, wireChat } from "./modules/chat.js";
import { newChat, wireChats } from "./modules/chats.js";
import { $ } from "./modules/dom.js";
import { wireInbox } from "./modules/inbox.js";
import { wireInterests } from "./modules/interests.js";
import { stopRound, wireInterview } from "./modules/interview.js";
import { closeMenu, toggleMenu } from "./modules/layout.js";
import { markdown } from "./modules/markdown.js";
import { closePassage, wireSources } from "./modules/sources.js";
import { state } from "./modules/state.js";

// The page's renderer, for checks in a browser's console (and the page tests): a module's
// functions are not globals.
window.markdown = markdown;

function wire() {
  onSignedOut(showAuth);
  wireChats();
  wireAuth();
  wireChat();
  wireSources();
  wireInterview();
  wireInbox();
  wireInterests();
  for (const button of document.querySelectorAll(".menu-btn")) button.addEventListener("click", toggleMenu);
  $("scrim").addEventListener("click", closeMenu);
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
}

async function boot() {
  wire();
  const session = await api("/api/auth/session");
  state.csrf = session.csrf_token;
  state.auth = session.auth;
  if (session.user) await enter(session);
  else { checkHealth(); showAuth(); }
}

// A module runs once the document is parsed (it is deferred), before DOMContentLoaded.
boot().catch((e) => showFatal(e.message));
