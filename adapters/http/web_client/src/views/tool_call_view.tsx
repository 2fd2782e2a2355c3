// A tool call: its title and status, the files it touches, and what it produced (text,
// a terminal, or a file's changes as a unified diff).
import type { ToolCallContent } from "@agentclientprotocol/sdk";
import { unifiedDiff } from "../diff";
import type { ToolCall } from "../state";

export function ToolCallView({ call }: { call: ToolCall }) {
  return (
    <section class={`tool ${call.status ?? "pending"}`} aria-label={`Tool call: ${call.title}`}>
      <header>
        <span class="tool-title">{call.title}</span>
        <span class="tool-status">{call.status ?? "pending"}</span>
      </header>
      {call.locations.length > 0 && (
        <ul class="locations">
          {call.locations.map((l, i) => (
            <li key={i}>
              {l.path}
              {l.line ? `:${l.line}` : ""}
            </li>
          ))}
        </ul>
      )}
      {call.content.map((content, i) => (
        <ToolContent key={i} content={content} />
      ))}
    </section>
  );
}

function ToolContent({ content }: { content: ToolCallContent }) {
  if (content.type === "diff") {
    const lines = unifiedDiff(content.oldText ?? "", content.newText ?? "");
    return (
      // Labelled as a figure: a label on the bare pre is one assistive technology ignores.
      <figure class="diff" aria-label={`Diff of ${content.path}`}>
        <figcaption>
          {content.oldText == null ? "New file " : "Changes to "}
          {content.path}
        </figcaption>
        <pre>
          {lines.map((line, i) => (
            <span key={i} class={line.sign === "+" ? "add" : line.sign === "-" ? "del" : "ctx"}>
              {line.sign}
              {line.text}
              {"\n"}
            </span>
          ))}
        </pre>
      </figure>
    );
  }
  if (content.type === "terminal") return <p class="terminal">Terminal {content.terminalId}</p>;
  if (content.type === "content" && content.content?.type === "text") {
    return <pre class="tool-output">{content.content.text}</pre>;
  }
  return null;
}
