import { memo } from "preact/compat";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import type { Controller } from "../app";
import { loadRemoteImage, markdownBlocks, renderMarkdown } from "../markdown";
import { type Entry, type Permission, type Question, type SessionView, type ToolCall, unifiedDiff } from "../state";

export function SessionPane({ controller: c, view }: { controller: Controller; view: SessionView }) {
  const permissions = c.permissions; // another session's too: it waits for an answer
  return (
    <main class="session" aria-labelledby="session-title">
      <SessionHeader controller={c} view={view} />
      {c.error && <p class="error" role="alert">{c.error}</p>}
      <Conversation
        view={view}
        entries={view.entries}
        rev={view.rev}
        onRewind={(id) => void c.rewind(id)}
        onCancelChild={(id) => void c.cancelChild(id)}
      />
      {view.undoToken && (
        <p class="undo" role="status">
          Rewound.{" "}
          <button type="button" onClick={() => void c.undoRewind()}>Undo rewind</button>
        </p>
      )}
      {c.questions.map((q) => (
        <QuestionCard key={q.id} question={q} />
      ))}
      {permissions.map((p) => (
        <PermissionCard key={p.id} permission={p} elsewhere={p.sessionId !== view.sessionId} />
      ))}
      <PromptBox controller={c} view={view} />
    </main>
  );
}

function SessionHeader({ controller: c, view }: { controller: Controller; view: SessionView }) {
  const [renaming, setRenaming] = useState(false);
  const [title, setTitle] = useState("");
  const [open, setOpen] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const usage = view.usage;
  return (
    <header class={`session-header ${open ? "open" : ""}`}>
      <div class="title-row">
        {renaming ? (
          <form
            onSubmit={(event) => {
              event.preventDefault();
              setRenaming(false);
              void c.rename(title);
            }}
          >
            <label for="rename" class="visually-hidden">New title</label>
            <input id="rename" value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
            <button type="submit">Save</button>
          </form>
        ) : (
          <h2 id="session-title">{view.title || "Untitled session"}</h2>
        )}
        <button type="button" class="narrow-only" aria-expanded={open ? "true" : "false"} aria-controls="session-settings" onClick={() => setOpen(!open)}>
          Settings
        </button>
        <span class="role">{view.role === "controller" ? "You control this session" : view.role === "observer" ? "Observing: another client controls" : ""}</span>
      </div>
      <div id="session-settings" class="settings">
      <p class="cwd">{view.cwd}</p>
      <div class="controls">
        {view.modes.length > 0 && (
          <span class="control">
            <label for="mode">Mode</label>
            <select id="mode" value={view.currentMode} onChange={(e) => void c.setMode(e.currentTarget.value)}>
              {view.modes.map((m) => (
                <option key={m.id} value={m.id}>{m.name}</option>
              ))}
            </select>
          </span>
        )}
        {view.configOptions
          .filter((o) => o.category !== "mode")
          .map((option) => (
            <span class="control" key={option.id}>
              <label for={`option-${option.id}`}>{option.name}</label>
              <select
                id={`option-${option.id}`}
                value={option.currentValue}
                onChange={(e) => void c.setOption(option.id, e.currentTarget.value)}
              >
                {option.options.map((o) => (
                  <option key={o.value} value={o.value}>{o.name}</option>
                ))}
              </select>
            </span>
          ))}
        {usage?.size ? (
          <span class="usage">
            <meter min={0} max={usage.size} value={usage.used ?? 0} aria-label="Context used" />
            {`${Math.round(((usage.used ?? 0) / usage.size) * 100)}% context`}
            {usage.cost ? ` · ${usage.cost.amount.toFixed(4)} ${usage.cost.currency}` : ""}
          </span>
        ) : null}
      </div>
      {view.tasks.length > 0 && (
        <details class="tasks">
          <summary>Background tasks ({view.tasks.filter((t) => t.state === "running").length} running)</summary>
          <ul>
            {view.tasks.map((t) => (
              <li key={t.id}>
                <code>{t.id}</code> {t.command} <span class="tool-status">{t.state}{t.exitCode != null ? ` (exit ${t.exitCode})` : ""}</span>
                {t.lastLines ? <pre class="tool-output">{t.lastLines}</pre> : null}
              </li>
            ))}
          </ul>
        </details>
      )}
      <div class="actions">
        <button type="button" onClick={() => { setTitle(view.title ?? ""); setRenaming(true); }}>Rename</button>
        <button type="button" onClick={() => void c.fork()}>Fork</button>
        <button type="button" onClick={() => void c.close()}>Close</button>
        {deleting ? (
          <>
            <button type="button" class="danger" onClick={() => void c.remove()}>
              Delete for good
            </button>
            <button type="button" onClick={() => setDeleting(false)}>Keep</button>
          </>
        ) : (
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Delete
          </button>
        )}
      </div>
      </div>
    </header>
  );
}

type ConversationProps = {
  view: SessionView;
  entries: Entry[];
  rev: number;
  onRewind: (messageId: string) => void;
  onCancelChild: (sessionId: string) => void;
};

function Conversation(props: ConversationProps) {
  const { view, entries, onRewind, onCancelChild } = props;
  const scroller = useRef<HTMLElement>(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  });
  return (
    <section
      class="conversation"
      aria-label="Conversation"
      aria-busy={view.running ? "true" : "false"}
      ref={scroller}
      tabIndex={0}
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
      onClick={(e) => {
        const target = e.target as HTMLElement;
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
    case "user":
      return (
        <article class="message user" aria-label="You">
          <p class="who">
            You
            {entry.messageId && onRewind && (
              <button
                type="button"
                class="rewind"
                aria-label="Rewind to before this prompt"
                onClick={() => onRewind(entry.messageId!)} // undoable: no confirmation
              >
                Rewind
              </button>
            )}
          </p>
          <div class="text">{text}</div>
        </article>
      );
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
      return <ToolCallView call={call!} />;
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
            Sub-agent{entry.agent ? ` (${entry.agent})` : ""}: {entry.title} <span class="tool-status">{entry.state}</span>
          </summary>
          {entry.state === "running" && onCancelChild && (
            <button type="button" onClick={() => onCancelChild(entry.child.sessionId)}>Stop this sub-agent</button>
          )}
          <div class="subagent-body">
            {entry.child.entries.map((child) => (
              <EntryView key={child.key} entry={child} text={"text" in child ? child.text : ""} call={child.kind === "tool" ? child.call : undefined} />
            ))}
          </div>
        </details>
      );
    case "notice":
      return (
        <p class={`notice ${entry.level}`} role={entry.level === "error" || entry.level === "warning" ? "alert" : undefined}>
          {entry.text}
        </p>
      );
  }
});

function Markdown({ text }: { text: string }) {
  return (
    <div class="markdown">
      {markdownBlocks(text).map((block, i) => (
        <MarkdownBlock key={i} text={block} />
      ))}
    </div>
  );
}

const MarkdownBlock = memo(function MarkdownBlock({ text }: { text: string }) {
  return <div class="md-block" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
});

function ToolCallView({ call }: { call: ToolCall }) {
  return (
    <section class={`tool ${call.status ?? "pending"}`} aria-label={`Tool call: ${call.title}`}>
      <header>
        <span class="tool-title">{call.title}</span>
        <span class="tool-status">{call.status ?? "pending"}</span>
      </header>
      {call.locations.length > 0 && (
        <ul class="locations">
          {call.locations.map((l, i) => (
            <li key={i}>{l.path}{l.line ? `:${l.line}` : ""}</li>
          ))}
        </ul>
      )}
      {call.content.map((content, i) => (
        <ToolContent key={i} content={content} />
      ))}
    </section>
  );
}

function ToolContent({ content }: { content: any }) {
  if (content?.type === "diff") {
    const lines = unifiedDiff(content.oldText ?? "", content.newText ?? "");
    return (
      <figure class="diff">
        <figcaption>{content.oldText == null ? "New file " : "Changes to "}{content.path}</figcaption>
        <pre aria-label={`Diff of ${content.path}`}>
          {lines.map((line, i) => (
            <span key={i} class={line.sign === "+" ? "add" : line.sign === "-" ? "del" : "ctx"}>
              {line.sign}{line.text}{"\n"}
            </span>
          ))}
        </pre>
      </figure>
    );
  }
  if (content?.type === "terminal") return <p class="terminal">Terminal {content.terminalId}</p>;
  if (content?.type === "content" && content.content?.type === "text") {
    return <pre class="tool-output">{content.content.text}</pre>;
  }
  return null;
}

function PermissionCard({ permission, elsewhere }: { permission: Permission; elsewhere: boolean }) {
  const call = permission.toolCall ?? {};
  return (
    <section class="permission" role="dialog" aria-labelledby={`perm-${permission.id}`}>
      <h3 id={`perm-${permission.id}`}>Permission: {call.title ?? "a tool"}</h3>
      {elsewhere && <p class="hint">In another session ({permission.sessionId})</p>}
      {call.rawInput !== undefined && <pre class="tool-input">{JSON.stringify(call.rawInput, null, 2)}</pre>}
      <div class="options">
        {permission.options.map((option) => (
          <button
            key={option.optionId}
            type="button"
            class={option.kind.startsWith("allow") ? "allow" : "reject"}
            onClick={() => permission.answer(option.optionId)}
          >
            {option.name}
          </button>
        ))}
      </div>
    </section>
  );
}

// A form for `elicitation/create`: its requestedSchema is a flat object (docs/protocol.md).
function QuestionCard({ question }: { question: Question }) {
  const properties: Record<string, any> = question.schema?.properties ?? {};
  const [values, setValues] = useState<Record<string, unknown>>({});
  const set = (name: string, value: unknown) => setValues({ ...values, [name]: value });
  return (
    <form
      class="permission question"
      role="dialog"
      aria-labelledby={`q-${question.id}`}
      onSubmit={(event) => {
        event.preventDefault();
        question.answer({ action: "accept", content: values });
      }}
    >
      <h3 id={`q-${question.id}`}>{question.message || "A question"}</h3>
      {Object.entries(properties).map(([name, field]) => (
        <Field key={name} id={`q-${question.id}-${name}`} name={name} field={field} value={values[name]} set={set} />
      ))}
      <div class="options">
        <button type="submit" class="allow">Answer</button>
        <button type="button" onClick={() => question.answer({ action: "decline" })}>Decline</button>
        <button type="button" class="reject" onClick={() => question.answer({ action: "cancel" })}>Dismiss</button>
      </div>
    </form>
  );
}

function Field(props: { id: string; name: string; field: any; value: unknown; set: (name: string, value: unknown) => void }) {
  const { id, name, field, value, set } = props;
  const label = field.title ?? (name === "answer" ? "Answer" : name);
  const choices: { const: string; title?: string }[] | undefined = field.oneOf;
  if (choices) {
    return (
      <fieldset>
        <legend>{label}</legend>
        {choices.map((choice) => (
          <label key={choice.const} class="choice">
            <input type="radio" name={id} checked={value === choice.const} onChange={() => set(name, choice.const)} />
            {choice.title ?? choice.const}
          </label>
        ))}
      </fieldset>
    );
  }
  if (field.type === "array") {
    const options: string[] = field.items?.enum ?? [];
    const picked = Array.isArray(value) ? (value as string[]) : [];
    return (
      <fieldset>
        <legend>{label}</legend>
        {options.map((option) => (
          <label key={option} class="choice">
            <input
              type="checkbox"
              checked={picked.includes(option)}
              onChange={(e) => set(name, e.currentTarget.checked ? [...picked, option] : picked.filter((p) => p !== option))}
            />
            {option}
          </label>
        ))}
      </fieldset>
    );
  }
  if (field.type === "boolean") {
    return (
      <label class="choice">
        <input type="checkbox" checked={value === true} onChange={(e) => set(name, e.currentTarget.checked)} />
        {label}
      </label>
    );
  }
  const numeric = field.type === "number" || field.type === "integer";
  return (
    <p class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type={numeric ? "number" : "text"}
        step={field.type === "integer" ? 1 : undefined}
        value={value === undefined ? "" : String(value)}
        onInput={(e) => set(name, numeric ? Number(e.currentTarget.value) : e.currentTarget.value)}
      />
    </p>
  );
}

function PromptBox({ controller: c, view }: { controller: Controller; view: SessionView }) {
  const [text, setText] = useState("");
  const [picked, setPicked] = useState(0);
  const slash = /^\/(\S*)$/.exec(text);
  const matches = slash ? view.commands.filter((cmd) => cmd.name.startsWith(slash[1])).slice(0, 8) : [];
  const active = matches[Math.min(picked, Math.max(0, matches.length - 1))];
  const hintFor = /^\/(\S+)\s/.exec(text);
  const hint = hintFor ? view.commands.find((cmd) => cmd.name === hintFor[1])?.hint : undefined;
  const send = () => {
    const value = text.trim();
    if (!value) return;
    setText("");
    void c.prompt(value); // while a turn runs: queued after it
  };
  const steer = () => {
    const value = text.trim();
    if (!value) return;
    setText("");
    void c.steer(value);
  };
  const choose = (name: string) => {
    setText(`/${name} `);
    setPicked(0);
  };
  return (
    <form
      class="prompt"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      {view.queue.length > 0 && (
        <ol class="queue" aria-label="Queued prompts">
          {view.queue.map((q) => (
            <li key={q.id}>{q.preview}{q.queuedBy ? ` (${q.queuedBy})` : ""}</li>
          ))}
        </ol>
      )}
      {view.steeringWaiting > 0 && <p class="hint">{view.steeringWaiting} message(s) waiting to reach the agent</p>}
      {matches.length > 0 && (
        <ul class="commands" role="listbox" id="command-list" aria-label="Slash commands">
          {matches.map((cmd) => (
            <li
              key={cmd.name}
              id={`cmd-${cmd.name}`}
              role="option"
              aria-selected={cmd === active ? "true" : "false"}
              onMouseDown={(e) => {
                e.preventDefault();
                choose(cmd.name);
              }}
            >
              <strong>/{cmd.name}</strong> {cmd.description}
              {cmd.hint ? <em> {cmd.hint}</em> : null}
            </li>
          ))}
        </ul>
      )}
      <label for="prompt" class="visually-hidden">Prompt</label>
      <textarea
        id="prompt"
        rows={2}
        value={text}
        placeholder={hint ?? "Ask, or type / for commands"}
        aria-autocomplete="list"
        aria-controls={matches.length ? "command-list" : undefined}
        aria-activedescendant={active ? `cmd-${active.name}` : undefined}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setPicked(0);
        }}
        onKeyDown={(e) => {
          if (matches.length && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
            e.preventDefault();
            setPicked((picked + (e.key === "ArrowDown" ? 1 : matches.length - 1)) % matches.length);
          } else if (matches.length && active && (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey))) {
            e.preventDefault();
            choose(active.name);
          } else if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            send();
          } else if (e.key === "Escape" && view.running) {
            void c.cancel();
          }
        }}
      />
      {hint && <p class="hint" id="command-hint">{`/${hintFor![1]} ${hint}`}</p>}
      <div class="prompt-actions">
        {view.running ? (
          <>
            <button type="button" class="cancel" onClick={() => void c.cancel()}>Cancel</button>
            <button type="button" onClick={steer} title="Tell the agent now, inside the running turn">Steer</button>
            <button type="submit" title="Run after the current turn">Queue</button>
          </>
        ) : (
          <button type="submit">Send</button>
        )}
      </div>
    </form>
  );
}
