// One assistant message: its steps (collapsible), the answer as Markdown, the grounding notes,
// the numbered source cards, and its actions (copy, regenerate).
import { following, send } from "./chat.js";
import { $, el } from "./dom.js";
import { markdown } from "./markdown.js";
import { sourceCard } from "./sources.js";
import { state } from "./state.js";

export class AnswerView {
  constructor() {
    this.text = "";
    this.stepItems = new Map();
    this.steps = el("details", { class: "steps", open: "" }, el("summary", { text: "Agent steps" }), el("ol"));
    this.status = el("div", { class: "status", text: "Thinking…" });
    this.answer = el("div", { class: "answer" });
    this.sources = el("div", { class: "sources", hidden: "" });
    this.actions = el("div", { class: "actions small", hidden: "" },
      el("button", { class: "link copy", type: "button", text: "Copy", title: "Copy the answer as Markdown",
        onclick: (e) => this.copy(e.currentTarget) }));
    this.root = el("div", { class: "msg assistant" }, this.steps, this.answer, this.status, this.sources,
      this.actions);
    this.steps.hidden = true;
    $("messages").append(this.root);
    this.pending = false;
    this.done = false;
    this.passages = {};
  }

  load(message) {
    this.steps.open = false;
    for (const step of message.steps) this.stepFinished(step);
    this.final({ answer: message.content, citations: message.citations, passages: message.passages,
      sources: message.sources, grounding: message.grounding, abstained: message.abstained,
      model: message.model, seconds: message.seconds, tokens_in: message.tokens_in,
      tokens_out: message.tokens_out, stopped: message.stopped, message_id: message.message_id });
  }

  async copy(button) {
    try {
      await navigator.clipboard.writeText(this.text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  }

  // The newest answer can be written again: its question is sent again in its place.
  lastAnswer() {
    for (const old of document.querySelectorAll("#messages .regenerate")) old.remove();
    const question = this.root.previousElementSibling;
    if (!question || !question.dataset.id) return;
    this.actions.append(el("button", { class: "link regenerate", type: "button", text: "Regenerate",
      title: "Answer this question again", onclick: () => {
        if (!state.sending) send(question.querySelector(".text").textContent, Number(question.dataset.id));
      } }));
  }

  // Screen readers hear the answer being written, and only it: the region is this answer (busy
  // until it is final, so it is read once, whole), not the whole conversation.
  live() {
    for (const old of document.querySelectorAll("#messages .answer[aria-live]")) {
      old.removeAttribute("aria-live");
      old.removeAttribute("aria-busy");
    }
    this.answer.setAttribute("aria-live", "polite");
    this.answer.setAttribute("aria-busy", "true");
    return this;
  }

  countSteps() {
    this.steps.querySelector("summary").textContent = `Agent steps (${this.stepItems.size})`;
  }

  stepStarted(ev) {
    this.steps.hidden = false;
    const item = el("li", { class: "step" },
      el("div", {}, el("span", { class: "k", text: "Thought: " }), ev.thought || ""),
      el("div", {}, el("span", { class: "k", text: "Action: " }), el("code", { text: ev.tool }), " ",
        el("code", { text: JSON.stringify(ev.arguments) })),
      el("div", { class: "running", text: "running…" }));
    this.stepItems.set(ev.index, item);
    this.steps.querySelector("ol").append(item);
    this.countSteps();
    this.status.textContent = `Using ${ev.tool}…`;
  }

  stepFinished(ev) {
    let item = this.stepItems.get(ev.index);
    if (!item) {
      // steps of a saved message come without their start (thought is stored with the step)
      this.stepStarted({ index: ev.index, thought: ev.thought || "", tool: ev.tool, arguments: ev.arguments });
      item = this.stepItems.get(ev.index);
    }
    item.querySelector(".running").replaceWith(
      el("div", { class: "obs" }, el("span", { class: "k", text: "Observation: " }), ev.observation,
        el("span", { class: "muted", text: ` (${Math.round(ev.duration_ms)} ms)` })));
    item.classList.toggle("error", Boolean(ev.error));
    this.status.textContent = "Thinking…";
  }

  token(text) {
    this.text += text;
    this.status.textContent = "Writing…";
    if (!this.pending) {
      this.pending = true;
      requestAnimationFrame(() => {
        this.pending = false;
        if (!this.done) following(() => this.renderAnswer(this.text)); // the final text wins
      });
    }
  }

  renderAnswer(text) {
    this.answer.innerHTML = markdown(text);
    for (const link of this.answer.querySelectorAll("a[href]")) {
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      const m = link.getAttribute("href").match(/^https:\/\/arxiv\.org\/abs\/(.+)$/);
      if (m) {
        link.classList.add("cite-link");
        link.dataset.paper = m[1];
        if (this.passages[m[1]]) link.dataset.chunk = this.passages[m[1]];
      }
    }
  }

  final(ev) {
    this.done = true;
    this.text = ev.answer;
    const passages = (this.passages = ev.passages || {});
    this.renderAnswer(ev.answer);
    this.answer.setAttribute("aria-busy", "false");
    this.status.remove();
    this.steps.open = false;
    this.actions.hidden = false;
    if (ev.abstained) this.root.classList.add("abstained");
    if (ev.stopped) {
      this.root.classList.add("stopped");
      this.root.insertBefore(el("div", { class: "stopped-note small", role: "note",
        text: ev.answer ? "Stopped: the answer is unfinished." : "Stopped before the answer was written." }),
      this.sources);
    }
    // sentences the check found unsupported: still in the answer (flagged), or left out of it
    const plural = (n) => `${n} sentence${n > 1 ? "s" : ""}`;
    const notes = [
      [(ev.grounding && ev.grounding.unsupported) || [], (n) => `⚠ ${plural(n)} not supported by the passages read`],
      [(ev.grounding && ev.grounding.left_out) || [],
        (n) => `${plural(n)} of the draft left out: no passage read supports ${n > 1 ? "them" : "it"}`],
    ];
    for (const [sentences, label] of notes) {
      if (!sentences.length) continue;
      this.root.insertBefore(el("details", { class: "grounding" },
        el("summary", { text: label(sentences.length) }),
        ...sentences.map((s) => el("p", { text: s }))), this.sources);
    }
    // numbered source cards, as the answer cites them ([1], [2], ...); older answers: their ids
    const sources = ev.sources && ev.sources.length ? ev.sources
      : (ev.citations || []).map((paper, i) => ({ n: i + 1, paper_id: paper, title: `arXiv:${paper}`,
        authors: [], year: null, url: `https://arxiv.org/abs/${paper}`, passage: passages[paper] }));
    const meta = answerMeta(ev);
    if (meta) this.root.append(el("div", { class: "meta muted small", text: meta }));
    if (sources.length) {
      this.sources.hidden = false;
      this.sources.replaceChildren(el("span", { class: "muted", text: "Sources:" }));
      for (const s of sources) this.sources.append(sourceCard(s, passages));
    }
  }

  error(message) {
    this.answer.setAttribute("aria-busy", "false");
    this.status.setAttribute("role", "alert");
    this.root.classList.add("failed");
    this.status.className = "status bad";
    this.status.textContent = "Error: " + message;
    if (!this.root.contains(this.status)) this.root.append(this.status);
  }
}

// Which model wrote an answer, how long it took, the tokens it used (what of it is known).
function answerMeta(ev) {
  const parts = [];
  if (ev.model) parts.push(ev.model);
  if (ev.seconds != null) parts.push(`${ev.seconds.toFixed(1)} s`);
  if (ev.tokens_in != null || ev.tokens_out != null) {
    parts.push(`${(ev.tokens_in || 0).toLocaleString("en")} tokens in, ${(ev.tokens_out || 0).toLocaleString("en")} out`);
  }
  return parts.join(" · ");
}
