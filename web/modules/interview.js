// Interview a paper: the page keeps the transcript and asks for one round at a time: the
// journalist's question (or the reader's own, typed at any time and used in the next round), then
// the author's answer.
import { api, handle, readEvents } from "./api.js";
import { $, el } from "./dom.js";
import { withPanel } from "./layout.js";
import { markdown } from "./markdown.js";
import { closePassage } from "./sources.js";
import { state } from "./state.js";

const INTERVIEW_ROUNDS = 5;

export function openInterview(paperId, title) {
  if (state.interview && state.interview.running) return;
  closePassage();
  state.interview = { paperId, title, exchanges: [], running: false, abort: null, own: [], halted: false };
  $("interview-title").textContent = `Interview: ${title}`;
  $("interview-log").replaceChildren();
  $("interview-download").disabled = true;
  $("interview-panel").hidden = false;
  withPanel(true);
  nextRound();
}

export function closeInterview() {
  const iv = state.interview;
  if (iv && iv.running) stopRound().finally(() => iv.abort && iv.abort.abort());
  if (iv) iv.halted = true;
  $("interview-panel").hidden = true;
  withPanel(false);
}

async function nextRound() {
  const iv = state.interview;
  if (!iv || iv.running || iv.halted) return;
  const own = iv.own.shift() || null;
  if (!own && iv.exchanges.filter((e) => e.asker === "journalist").length >= INTERVIEW_ROUNDS) {
    $("interview-status").textContent = "The journalist is done; ask the author yourself.";
    return;
  }
  iv.running = true;
  iv.abort = new AbortController();
  $("interview-stop").hidden = false;
  $("interview-stop").disabled = false;
  $("interview-status").textContent = own ? "The author reads the paper…" : "The journalist thinks of a question…";
  const item = el("div", { class: "exchange" });
  const answer = el("div", { class: "answer" });
  let text = "";
  let answered = false;
  $("interview-log").append(item);
  try {
    const res = await fetch(`/api/papers/${iv.paperId}/interview`, {
      method: "POST", credentials: "same-origin", signal: iv.abort.signal,
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", "X-CSRF-Token": state.csrf },
      body: JSON.stringify({ earlier: iv.exchanges, question: own, level: (state.current && state.current.level) || "MSc" }),
    });
    if (!res.ok) await handle(res);
    await readEvents(res, (type, data) => {
      if (type === "question") {
        item.append(el("div", { class: `q ${data.asker}`, text: `${data.asker === "you" ? "You" : "Journalist"}: ${data.text}` }),
          el("div", { class: "who muted small", text: "Author:" }), answer);
        $("interview-status").textContent = "The author answers from the paper…";
      } else if (type === "token") {
        text += data.text;
        answer.textContent = text;
      } else if (type === "answer") {
        answered = true;
        iv.exchanges.push(data.exchange);
        answer.innerHTML = markdown(data.exchange.answer || "(no answer)");
        if (data.exchange.stopped) item.append(el("div", { class: "stopped-note small", text: "Stopped: unfinished." }));
        const loose = data.exchange.unsupported || [];
        if (loose.length) item.append(el("details", { class: "grounding" },
          el("summary", { text: `⚠ ${loose.length} sentence${loose.length > 1 ? "s" : ""} not supported by the passages` }),
          ...loose.map((u) => el("p", { class: "small", text: u }))));
        item.append(el("details", { class: "passages" },
          el("summary", { text: `Passages the answer was written from (${data.exchange.passages.length})` }),
          ...data.exchange.passages.map((p) => el("p", { class: "small" },
            el("b", { text: `[${p.n}] ` }), el("span", { class: "muted", text: `page ${p.page ?? "?"} · ` }), p.text))));
        $("interview-download").disabled = false;
        if (data.exchange.stopped) iv.halted = true;
      } else if (type === "error") {
        item.append(el("div", { class: "status bad", text: "Error: " + data.message }));
        iv.halted = true;
      }
    });
  } catch (e) {
    if (!iv.abort.signal.aborted) item.append(el("div", { class: "status bad", text: "Error: " + e.message }));
    iv.halted = true;
    if (!answered) iv.halted = true; // a round that ended without its answer is not asked again by itself
  } finally {
    iv.running = false;
    $("interview-stop").hidden = true;
    $("interview-status").textContent = iv.halted ? "Stopped. Ask your own question to go on." : "";
  }
  if (state.interview === iv) nextRound();
}

export async function stopRound() {
  const iv = state.interview;
  if (!iv || !iv.running) return;
  iv.halted = true;
  $("interview-stop").disabled = true;
  try {
    await api(`/api/papers/${iv.paperId}/interview/stop`, { method: "POST" });
  } catch (e) {
    if (e.status !== 409) alert(e.message);
  }
}

function askAuthor(event) {
  event.preventDefault();
  const iv = state.interview;
  const box = $("interview-question");
  const text = box.value.trim();
  if (!iv || !text) return;
  box.value = "";
  iv.own.push(text);
  iv.halted = false;
  if (iv.running) $("interview-status").textContent = "Your question comes next.";
  else nextRound();
}

async function downloadTranscript() {
  const iv = state.interview;
  if (!iv || !iv.exchanges.length) return;
  const res = await fetch(`/api/papers/${iv.paperId}/interview/transcript.md`, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
    body: JSON.stringify({ exchanges: iv.exchanges }),
  });
  if (!res.ok) { try { await handle(res); } catch (e) { alert(e.message); } return; }
  const url = URL.createObjectURL(await res.blob());
  const link = el("a", { href: url, download: `interview-${iv.paperId.replace(/\W/g, "-")}.md` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function wireInterview() {
  $("interview-form").addEventListener("submit", askAuthor);
  $("interview-stop").addEventListener("click", stopRound);
  $("interview-close").addEventListener("click", closeInterview);
  $("interview-download").addEventListener("click", () => downloadTranscript().catch((e) => alert(e.message)));
}
