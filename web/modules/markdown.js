// Answers as Markdown with maths. The vendored libraries are classic scripts that run before the
// modules and leave globals: marked (Markdown → HTML), DOMPurify (removes what a model could
// inject) and katex (maths → MathML).
/* global marked, DOMPurify, katex */

// An answer shows text, never controls: a prompt-injected answer could otherwise fake a sign-in
// form. (marked makes an <input> only for a GFM task list's checkbox; the item's text stays.)
// No <style> (restyling the page is faking it) and no remote images (a beacon that tells another
// site who read which answer): the CSP stops both too, but the answer should not carry them.
const ANSWER_HTML = {
  FORBID_TAGS: ["form", "input", "button", "textarea", "select", "option", "optgroup", "datalist", "style"],
  FORBID_ATTR: ["action", "formaction", "form", "style", "srcset"],
};

function sameOriginOrData(url) {
  if (/^data:image\//i.test(url)) return true;
  try {
    return new URL(url, location.href).origin === location.origin;
  } catch {
    return false;
  }
}

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "IMG" && !sameOriginOrData(node.getAttribute("src") || "")) {
    node.remove();
  }
});

// Maths: $…$, \(…\) inline and $$…$$, \[…\] displayed, outside code. KaTeX writes MathML, which the
// browser lays out itself: no inline styles (the CSP allows none) and no fonts to serve. A "$"
// followed by a digit or next to a space is money, not maths ("$5 and $10").
const MATH = /(```[\s\S]*?```|`[^`\n]*`)|\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|\$(?![\s\d])([^$\n]+?)(?<!\s)\$(?!\d)/g;

function withMaths(text) {
  const rendered = [];
  const masked = text.replace(MATH, (whole, code, display1, display2, inline1, inline2) => {
    if (code !== undefined || typeof katex === "undefined") return whole;
    const display = display1 !== undefined || display2 !== undefined;
    const tex = display1 ?? display2 ?? inline1 ?? inline2;
    rendered.push(katex.renderToString(tex, { displayMode: display, output: "mathml", throwOnError: false }));
    return `\uE000${rendered.length - 1}\uE001`; // private-use characters: marked leaves them alone
  });
  return { text: masked, rendered };
}

export function markdown(text) {
  // marked turns Markdown into HTML; DOMPurify removes anything a model could inject.
  const { text: prepared, rendered } = withMaths(text || "");
  const html = marked.parse(prepared, { gfm: true, breaks: false })
    .replace(/\uE000(\d+)\uE001/g, (_, i) => rendered[Number(i)] ?? "");
  return DOMPurify.sanitize(html, ANSWER_HTML);
}
