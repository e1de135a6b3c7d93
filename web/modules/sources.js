// What an answer cites: its numbered source cards (title, authors, arXiv link, Interview, 👍 / 👎)
// and the panel that shows a cited passage with its neighbours.
import { api } from "./api.js";
import { shortAuthors } from "./cards.js";
import { $, el } from "./dom.js";
import { closeInterview, openInterview } from "./interview.js";
import { withPanel } from "./layout.js";
import { ratingButtons } from "./ratings.js";
import { state } from "./state.js";

// One numbered source of an answer; `passages` maps a paper to the passage the answer cites.
export function sourceCard(s, passages) {
  const meta = [shortAuthors(s.authors), s.year].filter(Boolean).join(" · ");
  return el("div", { class: "source-card" },
    el("span", { class: "source-n", text: `[${s.n}]` }),
    el("div", { class: "source-body" },
      el("button", { class: "cite link", type: "button", title: "Show the cited passage",
        text: s.title, onclick: () => openPassage(s.paper_id, s.passage || passages[s.paper_id]) }),
      meta ? el("div", { class: "muted small", text: meta }) : null),
    el("div", { class: "source-actions small" },
      el("a", { href: s.url, target: "_blank", rel: "noopener noreferrer",
        title: "Open on arXiv", text: `arXiv:${s.paper_id} ↗` }),
      el("button", { class: "link interview-btn", type: "button", title: "Interview this paper",
        text: "Interview", onclick: () => openInterview(s.paper_id, s.title) }),
      // the answer does not know the reader's ratings: what this page saw, else unrated
      ratingButtons(s.paper_id, s.title, { source: "card", rating: state.ratings.get(s.paper_id) || 0 })));
}

// ---------------------------------------------------------------- cited passage panel
export async function openPassage(paper, chunkId) {
  if (state.interview && !$("interview-panel").hidden) closeInterview();
  const panel = $("passage-panel");
  const body = $("passage-body");
  panel.hidden = false;
  withPanel(true);
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

export function closePassage() {
  $("passage-panel").hidden = true;
  withPanel(false);
}

export function wireSources() {
  $("panel-close").addEventListener("click", closePassage);
  $("messages").addEventListener("click", (e) => {
    const link = e.target.closest("a.cite-link");
    if (!link || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault(); // a plain click shows the passage; the panel links to arXiv
    openPassage(link.dataset.paper, link.dataset.chunk);
  });
}
