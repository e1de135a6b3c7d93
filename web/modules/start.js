// The inbox's first visit: a profile in under a minute. 1. what the reader follows (a few
// topics, or their library imported); 2. rate the papers the server finds most informative
// (active learning: GET /api/inbox/suggestions), with a count; Done (at any time, and by itself
// after ten) shows the ranked inbox.
import { api } from "./api.js";
import { paperCard } from "./cards.js";
import { $, el } from "./dom.js";
import { importLibrary, parseTopics } from "./interests.js";
import { state } from "./state.js";

const TO_RATE = 10;
const PAUSE_MS = 600; // after the tenth rating: the reader sees it land before the inbox comes

let leaving = null; // ends the step-2 listener when the flow is left

export function showStart(section, { onDone }) {
  if (leaving) leaving.abort();
  leaving = new AbortController();
  const done = () => { leaving.abort(); onDone(); };
  section.replaceChildren(
    el("h3", { text: "Set up your inbox" }),
    el("p", { class: "muted", text: "Two quick steps: say what you follow, then rate a few papers. " +
      "Your inbox then ranks each day's new papers for you." }),
    stepOne(section, done));
  section.querySelector("textarea").focus();
}

function stepOne(section, done) {
  const topics = el("textarea", { id: "start-topics", rows: "4", maxlength: "12000",
    placeholder: "e.g. vision transformers\nspeech recognition, knowledge distillation" });
  const file = el("input", { id: "start-library", type: "file", accept: ".bib,.bibtex,.ris,.txt,text/plain" });
  const report = el("div", { class: "library-report small", role: "status" });
  const error = el("p", { class: "error", role: "alert" });
  let imported = null;
  topics.addEventListener("input", () => { error.textContent = ""; });
  file.addEventListener("change", async () => {
    imported = (await importLibrary(file.files[0], report)) || imported;
  });
  const form = el("form", { class: "start-step" },
    el("h4", { text: "1. What do you follow?" }),
    el("label", { for: "start-topics", text: "A few topics: one a line, or separated by commas" }),
    topics,
    el("label", { for: "start-library", class: "or",
      text: "…or import your library: a BibTeX or RIS export from Zotero, Mendeley or the like" }),
    file, report, error,
    el("div", { class: "row" },
      el("button", { type: "submit", id: "start-continue", text: "Continue" }),
      el("button", { type: "button", class: "link", text: "Skip: show the newest papers", onclick: done })));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.textContent = "";
    const wanted = parseTopics(topics.value);
    if (!wanted.length && !(imported && imported.matched.length)) {
      error.textContent = "Type a topic or two, or import your library.";
      return;
    }
    const button = form.querySelector("#start-continue");
    button.disabled = true;
    try {
      if (wanted.length) await api("/api/inbox/topics", { method: "PUT", body: { topics: wanted } });
      const next = await stepTwo(done);
      const followed = [wanted.length ? `you follow ${wanted.join(", ")}` : null,
        imported ? `${imported.matched.length} papers of your library are rated up` : null].filter(Boolean).join("; ");
      form.replaceWith(el("p", { class: "start-done small", text: `1. ✓ ${followed}` }), next);
      section.scrollIntoView({ block: "start" });
    } catch (err) {
      error.textContent = err.message;
      button.disabled = false;
    }
  });
  return form;
}

async function stepTwo(done) {
  const papers = await api(`/api/inbox/suggestions?n=${TO_RATE}`);
  const ids = new Set(papers.map((p) => p.paper_id));
  const progress = el("p", { id: "start-progress", class: "progress", role: "status" });
  const finish = el("button", { type: "button", id: "start-done", text: "Done", onclick: done });
  const count = () => {
    const rated = [...ids].filter((id) => state.ratings.get(id)).length;
    progress.textContent = `${rated} of ${papers.length} rated`;
    return rated;
  };
  count();
  document.addEventListener("rated", (e) => {
    if (!ids.has(e.detail.paperId)) return;
    if (count() >= TO_RATE) setTimeout(() => { if (!leaving.signal.aborted) done(); }, PAUSE_MS);
  }, { signal: leaving.signal });
  const step = el("div", { class: "start-step" },
    el("h4", { text: papers.length ? `2. Rate these ${papers.length}` : "2. Rate a few papers" }),
    el("p", { class: "muted small", text: papers.length
      ? "Thumbs up what you would read, thumbs down what you would not: each rating teaches your ranking. Rate as many as you like."
      : "Nothing in the corpus to suggest yet: the inbox shows the newest papers until you rate some." }),
    // the count and Done stay in sight while the reader goes down the list
    el("div", { class: "start-bar" }, progress, finish),
    el("div", { class: "paper-list" }, ...papers.map((p) => paperCard(p, { source: "start", compact: true }))));
  return step;
}
