// Model output as HTML that cannot act: Markdown by marked, code by highlight.js, then
// DOMPurify. No script, no event handler, no `javascript:` link survives; a remote image
// becomes a button that loads it when clicked (Conversation's click handler).
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { Marked } from "marked";

for (const [name, language] of Object.entries({ bash, diff, javascript, json, python, typescript, xml, yaml })) {
  hljs.registerLanguage(name, language);
}
hljs.registerAliases(["sh", "shell", "console"], { languageName: "bash" });
hljs.registerAliases(["js"], { languageName: "javascript" });
hljs.registerAliases(["ts"], { languageName: "typescript" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["html"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

const SAFE_LINK = /^(?:https?:|mailto:|#)/i;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }) {
      const language = (lang || "").split(/\s/)[0].toLowerCase();
      const body = hljs.getLanguage(language)
        ? hljs.highlight(text, { language, ignoreIllegals: true }).value
        : escapeHtml(text);
      return `<pre><code class="hljs">${body}</code></pre>`;
    },
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") || "";
    if (!SAFE_LINK.test(href.trim())) node.removeAttribute("href");
    node.setAttribute("rel", "noopener noreferrer");
    node.setAttribute("target", "_blank");
  }
  if (node.tagName === "IMG") {
    const src = node.getAttribute("src") || "";
    if (!/^data:image\//i.test(src)) {
      node.setAttribute("data-remote-src", /^https:/i.test(src) ? src : "");
      node.removeAttribute("src");
    }
  }
});

const PURIFY = {
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed", "svg", "math"],
  FORBID_ATTR: ["style", "srcset"],
  ALLOW_DATA_ATTR: false,
  ADD_ATTR: ["target"],
};

export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false }) as string;
  const clean = DOMPurify.sanitize(html, PURIFY) as unknown as string;
  return withImageButtons(clean);
}

// An <img> without src (a remote one) is shown as a button naming its host.
function withImageButtons(html: string): string {
  if (!html.includes("data-remote-src")) return html;
  const template = document.createElement("template");
  template.innerHTML = html;
  for (const image of Array.from(template.content.querySelectorAll("img[data-remote-src]"))) {
    const src = image.getAttribute("data-remote-src") || "";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "remote-image";
    if (src) {
      button.dataset.src = src;
      button.textContent = `Load image from ${new URL(src).host}${image.getAttribute("alt") ? `: ${image.getAttribute("alt")}` : ""}`;
    } else {
      button.disabled = true;
      button.textContent = `Image not shown (not https): ${image.getAttribute("alt") || ""}`;
    }
    image.replaceWith(button);
  }
  return template.innerHTML;
}

export function loadRemoteImage(button: HTMLButtonElement): void {
  const src = button.dataset.src;
  if (!src || !/^https:/i.test(src)) return;
  const image = document.createElement("img");
  image.src = src;
  image.alt = button.textContent || "";
  image.referrerPolicy = "no-referrer";
  button.replaceWith(image);
}

// A message cut into its top-level blocks (at blank lines outside code fences), so a
// streaming reply re-renders only its last, growing block: the finished ones keep their
// HTML (Markdown components memoise by block text).
export function markdownBlocks(text: string): string[] {
  const blocks: string[] = [];
  let start = 0;
  let fence: string | null = null;
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    const lineEnd = end < 0 ? text.length : end;
    const line = text.slice(at, lineEnd);
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (marker) {
      if (fence === null) fence = marker[1][0];
      else if (marker[1][0] === fence) fence = null;
    } else if (fence === null && line.trim() === "" && at > start) {
      blocks.push(text.slice(start, at));
      start = lineEnd + 1;
    }
    if (end < 0) break;
    at = end + 1;
  }
  if (start < text.length) blocks.push(text.slice(start));
  return blocks.filter((block) => block.trim() !== "");
}
