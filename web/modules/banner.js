// The banner above the page: what /health says is wrong (no database, no model, no papers), or
// why the page cannot start.
import { $ } from "./dom.js";

export async function checkHealth() {
  const banner = $("banner");
  let report;
  try {
    const res = await fetch("/health", { headers: { Accept: "application/json" } });
    report = await res.json();
  } catch {
    report = null;
  }
  const notes = [];
  let bad = false;
  if (!report) { notes.push("The server does not answer."); bad = true; }
  else {
    if (!report.database.ok) { notes.push(report.database.detail); bad = true; }
    // signed-in users get the details (how to configure one); others the plain fact
    if (!report.llm.ok) notes.push("No language model is configured, so questions cannot be answered yet" +
      (report.llm.detail === "no language model is configured" ? "." : ": " + report.llm.detail));
    if (report.database.ok && report.papers === 0) notes.push("The corpus is empty: run `chatpapers ingest --category cs` first.");
  }
  banner.textContent = notes.join(" ");
  banner.classList.toggle("bad", bad);
  banner.hidden = notes.length === 0;
  return report;
}

export function showFatal(message) {
  const banner = $("banner");
  banner.textContent = "chatpapers cannot start: " + message;
  banner.className = "banner bad";
  banner.hidden = false;
}
