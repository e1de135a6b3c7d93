// "Your interests" (the topics followed, an imported library, whether cited papers count) and
// the private Atom feed's URL. The first visit imports a library the same way.
import { api } from "./api.js";
import { $, el } from "./dom.js";
import { reloadInbox } from "./inbox.js";
import { state } from "./state.js";

const MAX_LIBRARY_BYTES = 5 * 1024 * 1024; // the server's limit (inbox/library.py)

// "a, b\nc" → ["a", "b", "c"]: one a line, or separated by commas
export function parseTopics(text) {
  return text.split(/[\n,]/).map((t) => t.trim()).filter(Boolean);
}

// The form shows what the server knows, except what the reader is still typing.
let shownTopics = "";
export function showInterests(profile) {
  const box = $("topics-text");
  const topics = profile.topics.join("\n");
  if (box.value === shownTopics) box.value = topics;
  shownTopics = topics;
  $("implicit-toggle").checked = profile.implicit;
  const rated = `${profile.liked} up and ${profile.disliked} down`;
  $("profile-note").textContent = `You follow ${profile.topics.length} topic${profile.topics.length === 1 ? "" : "s"} and rated ${rated}.`;
  // a URL just made stays shown until the reader leaves it
  const made = profile.has_feed && !$("feed-show").hidden ? $("feed-url").value : null;
  showFeed(profile.has_feed, made);
}

// Signed out: nothing of this account stays in the form (a feed URL above all).
export function resetInterests() {
  shownTopics = "";
  $("topics-text").value = "";
  $("topics-note").textContent = "";
  $("library-report").replaceChildren();
  $("feed-url").value = "";
  $("feed-show").hidden = true;
  for (const tool of document.querySelectorAll("#inbox-view details.tool")) tool.open = false;
}

async function saveTopics(event) {
  event.preventDefault();
  const note = $("topics-note");
  note.className = "muted small";
  try {
    const profile = await api("/api/inbox/topics", { method: "PUT", body: { topics: parseTopics($("topics-text").value) } });
    $("topics-text").value = shownTopics = profile.topics.join("\n");
    note.textContent = `Saved: ${profile.topics.length} topic${profile.topics.length === 1 ? "" : "s"}.`;
    showInterests(profile);
    await reloadInbox();
  } catch (e) {
    note.className = "error small";
    note.textContent = e.message;
  }
}

// Sends a BibTeX or RIS file as it is (the server reads its encoding) and shows what matched
// and what did not, with the reason. Returns the server's report, or null on an error.
export async function importLibrary(file, report) {
  if (!file) return null;
  if (file.size > MAX_LIBRARY_BYTES) {
    report.replaceChildren(el("p", { class: "error", text: "The file is larger than 5 MB." }));
    return null;
  }
  report.replaceChildren(el("p", { class: "muted", text: `Reading ${file.name}…` }));
  try {
    const out = await api("/api/inbox/library", { method: "POST", text: file });
    report.replaceChildren(...libraryReport(out));
    return out;
  } catch (e) {
    report.replaceChildren(el("p", { class: "error", text: `${file.name}: ${e.message}` }));
    return null;
  }
}

function libraryReport(out) {
  const format = out.format === "ris" ? "RIS" : "BibTeX";
  const kept = new Set(out.matched.map((m) => m.paper_id)).size - out.rated; // rated before: unchanged
  const parts = [el("p", { class: "matched", text: `Matched ${out.matched.length} of ${out.entries} ${format} entries; ` +
    `${out.rated} newly rated up` + (kept > 0 ? ` (${kept} you had rated keep${kept > 1 ? "" : "s"} your rating).` : ".") +
    (out.unreadable ? ` ${out.unreadable} block${out.unreadable > 1 ? "s" : ""} could not be read.` : "") })];
  if (out.unmatched.length) {
    parts.push(el("p", { text: `Not matched (${out.unmatched.length}):` }),
      el("ul", { class: "unmatched" }, ...out.unmatched.map((u) =>
        el("li", {}, el("span", { text: u.title || "(no title)" }), el("span", { class: "muted", text: ` — ${u.reason}` })))));
  }
  return parts;
}

// ---------------------------------------------------------------- the feed
// The server keeps only a hash of the feed's token: its URL is shown once, when it is made.
function showFeed(hasFeed, url = null) {
  $("feed-state").textContent = url ? "Your feed URL (copy it into your feed reader now: it is shown only once):"
    : hasFeed ? "You have a feed URL. A new one replaces it." : "You have no feed URL.";
  $("feed-new").textContent = hasFeed ? "New feed URL" : "Get a feed URL";
  $("feed-revoke").hidden = !hasFeed;
  $("feed-show").hidden = !url;
  if (url) $("feed-url").value = url;
}

async function newFeed() {
  try {
    const { url } = await api("/api/inbox/feed", { method: "POST" });
    showFeed(true, url);
    if (state.inbox && state.inbox.profile) state.inbox.profile.has_feed = true;
    $("feed-url").select();
  } catch (e) { alert(e.message); }
}

async function revokeFeed() {
  try {
    await api("/api/inbox/feed", { method: "DELETE" });
    showFeed(false);
    if (state.inbox && state.inbox.profile) state.inbox.profile.has_feed = false;
  } catch (e) { alert(e.message); }
}

async function copyFeed() {
  const button = $("feed-copy");
  try {
    await navigator.clipboard.writeText($("feed-url").value);
    button.textContent = "Copied";
  } catch {
    $("feed-url").select(); // the reader copies it by hand
    button.textContent = "Select and copy";
  }
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

export function wireInterests() {
  $("topics-form").addEventListener("submit", saveTopics);
  $("library-file").addEventListener("change", async (e) => {
    const out = await importLibrary(e.target.files[0], $("library-report"));
    e.target.value = ""; // the same file can be imported again
    if (out) await reloadInbox();
  });
  $("implicit-toggle").addEventListener("change", async (e) => {
    try {
      const profile = await api("/api/inbox/settings", { method: "PUT", body: { implicit: e.target.checked } });
      showInterests(profile);
      await reloadInbox();
    } catch (err) {
      e.target.checked = !e.target.checked;
      alert(err.message);
    }
  });
  $("feed-new").addEventListener("click", newFeed);
  $("feed-revoke").addEventListener("click", revokeFeed);
  $("feed-copy").addEventListener("click", copyFeed);
}
