// The transcript: messages, thoughts, tool calls, plans, notices and sub-agents, kept
// scrolled to the bottom while the user has not scrolled up.
import { memo } from "preact/compat";
import { useLayoutEffect, useRef } from "preact/hooks";
import { loadRemoteImage } from "../markdown";
import type { Entry, SessionView, ToolCall } from "../state";
import { Markdown } from "./markdown_view";
import { ToolCallView } from "./tool_call_view";

type ConversationProps = {
  view: SessionView;
  entries: Entry[];
  rev: number; // changes with every update: the entries array is changed in place
  onRewind: (messageId: string) => void;
  onCancelChild: (sessionId: string) => void;
};

export function Conversation(props: ConversationProps) {
  const { view, entries, onRewind, onCancelChild } = props;
  const scroller = useRef<HTMLElement>(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  });
  return (
    // Focusable, as a scrolling region must be for the keyboard; its click handler only
    // catches the remote-image buttons inside, which the keyboard operates as buttons.
    // biome-ignore lint/a11y/useKeyWithClickEvents: see above
    <section
      class="conversation"
      aria-label="Conversation"
      aria-busy={view.running ? "true" : "false"}
      ref={scroller}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is reached by the keyboard
      tabIndex={0}
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
      onClick={(e) => {
        const target = e.target;
        if (target instanceof HTMLButtonElement && target.classList.contains("remote-image")) loadRemoteImage(target);
      }}
    >
      {entries.length === 0 && <p class="hint">Nothing said yet.</p>}
      {entries.map((entry) => (
        <EntryView
          key={entry.key}
          entry={entry}
          text={"text" in entry ? entry.text : ""}
          call={entry.kind === "tool" ? entry.call : undefined}
          childRev={entry.kind === "subagent" ? entry.child.rev : undefined}
          onRewind={view.running ? undefined : onRewind}
          onCancelChild={onCancelChild}
        />
      ))}
    </section>
  );
}

// Memoised on what changes: an entry's text grows in place, so the text (and a tool's
// call, a sub-agent's revision) is passed beside the entry for the comparison to see it.
type EntryProps = {
  entry: Entry;
  text: string;
  call?: ToolCall;
  onRewind?: (messageId: string) => void;
  onCancelChild?: (sessionId: string) => void;
  childRev?: number;
};

const EntryView = memo(function EntryView({ entry, text, call, onRewind, onCancelChild }: EntryProps) {
  switch (entry.kind) {
    case "user": {
      const messageId = entry.messageId;
      return (
        <article class="message user" aria-label="You">
          <p class="who">
            You
            {messageId && onRewind && (
              <button
                type="button"
                class="rewind"
                aria-label="Rewind to before this prompt"
                onClick={() => onRewind(messageId)} // undoable: no confirmation
              >
                Rewind
              </button>
            )}
          </p>
          <div class="text">{text}</div>
        </article>
      );
    }
    case "agent":
      return (
        <article class="message agent" aria-label="Agent">
          <Markdown text={text} />
        </article>
      );
    case "thought":
      return (
        <details class="thought">
          <summary>Thinking</summary>
          <Markdown text={text} />
        </details>
      );
    case "tool":
      return <ToolCallView call={call ?? entry.call} />;
    case "plan":
      return (
        <section class="plan" aria-label="Plan">
          <h3>Plan</h3>
          <ol>
            {entry.entries.map((p, i) => (
              <li key={i} class={`plan-${p.status}`}>
                <span class="status">{p.status.replace("_", " ")}</span> {p.content}
              </li>
            ))}
          </ol>
        </section>
      );
    case "subagent":
      return (
        <details class="subagent" open={entry.state === "running"}>
          <summary>
            Sub-agent{entry.agent ? ` (${entry.agent})` : ""}: {entry.title}{" "}
            <span class="tool-status">{entry.state}</span>
          </summary>
          {entry.state === "running" && onCancelChild && (
            <button type="button" onClick={() => onCancelChild(entry.child.sessionId)}>
              Stop this sub-agent
            </button>
          )}
          <div class="subagent-body">
            {entry.child.entries.map((child) => (
              <EntryView
                key={child.key}
                entry={child}
                text={"text" in child ? child.text : ""}
                call={child.kind === "tool" ? child.call : undefined}
              />
            ))}
          </div>
        </details>
      );
    case "notice":
      return (
        <p
          class={`notice ${entry.level}`}
          role={entry.level === "error" || entry.level === "warning" ? "alert" : undefined}
        >
          {entry.text}
        </p>
      );
  }
});
