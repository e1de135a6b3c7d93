// Icons drawn as inline SVG, not emoji: a machine without an emoji font (a minimal Linux desktop,
// this project's own headless Chromium) showed 👍 / 👎 / 📥 as empty boxes.
const SVG = "http://www.w3.org/2000/svg";

// A thumb, 24×24, stroked in the text's colour; `down` is the same thumb turned over (app.css).
const THUMB = "M7 22V11m-5 2v7a2 2 0 0 0 2 2h13.4a2 2 0 0 0 2-1.7l1.4-9A2 2 0 0 0 18.8 9H14V5a3 3 0 0 0-3-3l-4 9";

export function thumb(down = false) {
  const svg = document.createElementNS(SVG, "svg");
  for (const [k, v] of Object.entries({ viewBox: "0 0 24 24", width: "16", height: "16", fill: "none",
    stroke: "currentColor", "stroke-width": "2", "stroke-linecap": "round", "stroke-linejoin": "round",
    "aria-hidden": "true", class: "icon-svg" })) svg.setAttribute(k, v);
  if (down) svg.classList.add("turned");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", THUMB);
  svg.append(path);
  return svg;
}
