// A paper as a card (the inbox, "more like this", the first visit's papers to rate): title linked
// to arXiv, authors, date, categories, the abstract's first lines, why it is there, 👍 / 👎 and
// the actions the view adds. Everything the server sent goes in as text.
import { el } from "./dom.js";
import { ratingButtons } from "./ratings.js";
import { state } from "./state.js";

export function shortAuthors(authors, first = 3) {
  if (!authors || !authors.length) return "";
  return authors.slice(0, first).join(", ") + (authors.length > first ? " et al." : "");
}

export function dayText(iso) {
  if (!iso) return "";
  return new Date(iso).toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

// `compact`: the first visit's cards, quick to judge (no actions, the abstract cut shorter);
// `actions`: buttons for the card's footer.
export function paperCard(p, { source, compact = false, actions = [] } = {}) {
  state.ratings.set(p.paper_id, p.rating || 0);
  const meta = el("div", { class: "paper-meta small" });
  const who = shortAuthors(p.authors);
  if (who) meta.append(el("span", { class: "authors", text: who }));
  if (p.published) meta.append(el("time", { datetime: p.published, text: dayText(p.published) }));
  for (const c of (p.categories || []).slice(0, compact ? 2 : 4)) meta.append(el("span", { class: "cat", text: c }));
  return el("article", { class: compact ? "paper-card compact" : "paper-card", "data-paper": p.paper_id },
    el("h3", { class: "paper-title" },
      el("a", { href: p.url, target: "_blank", rel: "noopener noreferrer", text: p.title })),
    meta,
    p.abstract_head ? el("p", { class: "abstract", text: p.abstract_head }) : null,
    p.why && p.why.text ? el("p", { class: "why small", text: p.why.text }) : null,
    el("div", { class: "card-actions small" },
      ratingButtons(p.paper_id, p.title, { source, rating: p.rating || 0 }), ...actions));
}
