// The inbox: the papers that arrived since the last visit (or a chosen day), ranked for the
// reader, each with why it is there, 👍 / 👎, "More like this", Ask (a new chat about the paper)
// and Interview. A reader with no topics and no ratings gets the first-visit flow instead
// (modules/start.js); "Your interests" and the feed are modules/interests.js.
import { api } from "./api.js";
import { dayText, paperCard } from "./cards.js";
import { send } from "./chat.js";
import { newChat, renderChatList } from "./chats.js";
import { $, el } from "./dom.js";
import { resetInterests, showInterests } from "./interests.js";
import { openInterview } from "./interview.js";
import { showView } from "./layout.js";
import { showStart } from "./start.js";
import { state } from "./state.js";

const PAGE = 50; // papers per page of GET /api/inbox
const SIMILAR = 10; // papers shown for "More like this"
const RANKED_BY = { model: "your ratings", topics: "your topics", newest: "newest" };

// A window's start as the server takes it: the local midnight of a day picked (YYYY-MM-DD)
function localMidnight(day) {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y, m - 1, d).toISOString();
}

// the local day of a time, as a date input's value
function inputDay(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function whenText(iso) {
  return new Date(iso).toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit" });
}

const firstVisit = (profile) => !profile.topics.length && !profile.liked && !profile.disliked;

export function resetInbox() {
  state.inbox = null;
  $("inbox-list").replaceChildren();
  $("inbox-start").replaceChildren();
  resetInterests();
}

export async function openInbox() {
  showView("inbox");
  renderChatList(); // no chat is marked while the inbox is in front
  // the window stays while the page does: coming back to the inbox shows the same papers
  await loadInbox({ since: state.inbox ? state.inbox.since : null });
}

// Loads the first page of a window (`since`: an ISO time; null: since the last visit) and shows
// it, or the first-visit flow for a reader the inbox knows nothing of.
export async function loadInbox({ since = null } = {}) {
  const box = state.inbox || (state.inbox = { started: false });
  $("inbox-window").textContent = "Loading…";
  const query = new URLSearchParams({ limit: PAGE });
  if (since) query.set("since", since);
  let page;
  try {
    page = await api(`/api/inbox?${query}`);
  } catch (e) {
    $("inbox-window").textContent = "The inbox cannot be shown: " + e.message;
    return;
  }
  Object.assign(box, { since: page.since, rankedBy: page.ranked_by, total: page.total, papers: page.papers,
    profile: page.profile, similar: null });
  showInterests(page.profile);
  $("inbox-since").value = inputDay(new Date(page.since));
  $("inbox-since").max = inputDay(new Date());
  if (firstVisit(page.profile) && !box.started) {
    $("inbox-main").hidden = true;
    $("inbox-start").hidden = false;
    showStart($("inbox-start"), { onDone: finishStart });
    return;
  }
  $("inbox-start").hidden = true;
  $("inbox-main").hidden = false;
  renderInbox();
}

// The first visit is done (or skipped): the ranked inbox of the same window.
async function finishStart() {
  state.inbox.started = true;
  $("inbox-start").replaceChildren();
  await loadInbox({ since: state.inbox.since });
  $("inbox-scroll").scrollTop = 0;
}

export function reloadInbox() {
  if (state.inbox && !$("inbox-main").hidden) return loadInbox({ since: state.inbox.since });
  return Promise.resolve();
}

function renderInbox() {
  const box = state.inbox;
  const shown = box.papers.length;
  $("inbox-window").textContent = `New since ${whenText(box.since)} · ${box.total} paper${box.total === 1 ? "" : "s"}`;
  $("inbox-ranked").textContent = RANKED_BY[box.rankedBy] || box.rankedBy;
  $("inbox-rerank").hidden = true;
  $("inbox-similar-head").hidden = true;
  $("inbox-list").replaceChildren(...box.papers.map(inboxCard));
  const empty = $("inbox-empty");
  empty.hidden = box.total > 0;
  if (!box.total) {
    empty.replaceChildren(
      el("p", { text: `Nothing new since ${dayText(box.since)}; pick an earlier day.` }),
      el("button", { class: "secondary", type: "button", text: "Show the last 30 days",
        onclick: () => loadInbox({ since: new Date(Date.now() - 30 * 864e5).toISOString() }) }));
  }
  $("inbox-more").hidden = shown >= box.total;
}

function inboxCard(p) {
  return paperCard(p, { source: "inbox", actions: [
    el("button", { class: "link more-like", type: "button", text: "More like this",
      "aria-label": `More papers like “${p.title}”`, onclick: () => showSimilar(p) }),
    el("button", { class: "link ask", type: "button", text: "Ask", title: "A new chat about this paper",
      "aria-label": `Ask about “${p.title}” in a new chat`, onclick: () => askAbout(p).catch((e) => alert(e.message)) }),
    el("button", { class: "link interview-btn", type: "button", text: "Interview", title: "Interview this paper",
      "aria-label": `Interview “${p.title}”`, onclick: () => openInterview(p.paper_id, p.title) }),
  ] });
}

async function moreInbox() {
  const box = state.inbox;
  const more = $("inbox-more");
  more.disabled = true;
  try {
    // the same window (`since` as the first page had it): the pages fit together
    const query = new URLSearchParams({ since: box.since, limit: PAGE, offset: box.papers.length });
    const page = await api(`/api/inbox?${query}`);
    box.papers.push(...page.papers);
    box.total = page.total;
    $("inbox-list").append(...page.papers.map(inboxCard));
    more.hidden = box.papers.length >= box.total;
  } catch (e) {
    alert(e.message);
  } finally {
    more.disabled = false;
  }
}

// "More like this": the list shows the papers nearest to one, until "Back to the inbox".
async function showSimilar(paper) {
  const box = state.inbox;
  let similar;
  try {
    similar = await api(`/api/inbox/similar/${paper.paper_id}?k=${SIMILAR}`);
  } catch (e) {
    alert(e.message);
    return;
  }
  if (!box.similar) box.scrolled = $("inbox-scroll").scrollTop; // where the reader was in the inbox
  box.similar = { of: paper, papers: similar };
  const head = $("inbox-similar-head");
  head.replaceChildren(
    el("button", { class: "link back", type: "button", text: "← Back to the inbox", onclick: backToInbox }),
    el("span", { text: ` Papers like “${paper.title}”` }));
  head.hidden = false;
  $("inbox-list").replaceChildren(...similar.map(inboxCard));
  $("inbox-empty").hidden = similar.length > 0;
  if (!similar.length) $("inbox-empty").replaceChildren(el("p", { text: "No similar papers in the corpus." }));
  $("inbox-more").hidden = true;
  $("inbox-scroll").scrollTop = 0;
  head.querySelector(".back").focus();
}

function backToInbox() {
  const box = state.inbox;
  box.similar = null;
  renderInbox();
  $("inbox-scroll").scrollTop = box.scrolled || 0;
}

// Ask: a new chat named after the paper, whose first question names the paper's title (the
// agent reads a paper a question names).
async function askAbout(paper) {
  await newChat({ title: paper.title.slice(0, 200) });
  await send(`What does the paper “${paper.title}” propose, and how does it work?`);
}

export function wireInbox() {
  $("inbox-open").addEventListener("click", () => openInbox().catch((e) => alert(e.message)));
  $("inbox-since").addEventListener("change", (e) => {
    if (e.target.value) loadInbox({ since: localMidnight(e.target.value) });
  });
  $("inbox-more").addEventListener("click", moreInbox);
  $("inbox-rerank").addEventListener("click", () => reloadInbox());
  // a rating changes the ranking, but the list does not reorder under the reader's hand
  document.addEventListener("rated", (e) => {
    const box = state.inbox;
    if (!box || state.view !== "inbox" || $("inbox-main").hidden) return;
    box.profile = e.detail.profile;
    showInterests(e.detail.profile);
    if (!box.similar) $("inbox-rerank").hidden = false;
  });
}
