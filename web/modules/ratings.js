// 👍 / 👎 on a paper, from any card (an answer's sources, the inbox, the first visit): two toggle
// buttons (aria-pressed) that PUT the rating, the pressed one pressed again clears it. Every pair
// for the same paper on the page follows, and a "rated" event on document tells the views that
// count ratings or re-rank.
import { api } from "./api.js";
import { el } from "./dom.js";
import { thumb } from "./icons.js";
import { state } from "./state.js";

function show(group, rating) {
  group.dataset.rating = String(rating);
  group.querySelector(".up").setAttribute("aria-pressed", String(rating === 1));
  group.querySelector(".down").setAttribute("aria-pressed", String(rating === -1));
}

// `source` is what the server records the rating came from: "card", "inbox" or "start".
export function ratingButtons(paperId, title, { source, rating = 0 }) {
  const group = el("span", { class: "rating", role: "group", "aria-label": `Rate “${title}”`,
    "data-paper": paperId });
  const up = el("button", { type: "button", class: "rate up", "aria-label": "Thumbs up: relevant to me",
    title: "Relevant to me: more like this in my inbox", onclick: () => press(1) });
  const down = el("button", { type: "button", class: "rate down", "aria-label": "Thumbs down: not for me",
    title: "Not for me: fewer like this", onclick: () => press(-1) });
  up.append(thumb());
  down.append(thumb(true));
  group.append(up, down);
  show(group, rating);

  async function press(value) {
    const next = Number(group.dataset.rating) === value ? 0 : value;
    up.disabled = down.disabled = true;
    try {
      const out = await api(`/api/inbox/ratings/${paperId}`, { method: "PUT", body: { rating: next, source } });
      state.ratings.set(paperId, out.rating);
      for (const other of document.querySelectorAll(".rating[data-paper]")) {
        if (other.dataset.paper === paperId) show(other, out.rating);
      }
      document.dispatchEvent(new CustomEvent("rated",
        { detail: { paperId, rating: out.rating, profile: out.profile, source } }));
    } catch (e) {
      alert(e.message);
    } finally {
      up.disabled = down.disabled = false;
    }
  }
  return group;
}
