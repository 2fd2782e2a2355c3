// The open session's title and settings: rename, mode and options, context used,
// background tasks, and fork, close and delete.
import { useState } from "preact/hooks";
import type { Controller } from "../controller";
import type { SessionView } from "../state";

export function SessionHeader({ controller: c, view }: { controller: Controller; view: SessionView }) {
  const [renaming, setRenaming] = useState(false);
  const [title, setTitle] = useState("");
  const [open, setOpen] = useState(false);
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
            <label for="rename" class="visually-hidden">
              New title
            </label>
            <input id="rename" value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
            <button type="submit">Save</button>
          </form>
        ) : (
          <h2 id="session-title">{view.title || "Untitled session"}</h2>
        )}
        <button
          type="button"
          class="narrow-only"
          aria-expanded={open ? "true" : "false"}
          aria-controls="session-settings"
          onClick={() => setOpen(!open)}
        >
          Settings
        </button>
        <span class="role">{roleText(view.role)}</span>
      </div>
      <div id="session-settings" class="settings">
        <p class="cwd">{view.cwd}</p>
        <Controls controller={c} view={view} />
        <Tasks view={view} />
        <Actions
          controller={c}
          onRename={() => {
            setTitle(view.title ?? "");
            setRenaming(true);
          }}
        />
      </div>
    </header>
  );
}

function roleText(role: string): string {
  if (role === "controller") return "You control this session";
  if (role === "observer") return "Observing: another client controls";
  return "";
}

function Controls({ controller: c, view }: { controller: Controller; view: SessionView }) {
  const usage = view.usage;
  return (
    <div class="controls">
      {view.modes.length > 0 && (
        <span class="control">
          <label for="mode">Mode</label>
          <select id="mode" value={view.currentMode} onChange={(e) => void c.setMode(e.currentTarget.value)}>
            {view.modes.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
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
                <option key={o.value} value={o.value}>
                  {o.name}
                </option>
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
  );
}

function Tasks({ view }: { view: SessionView }) {
  if (view.tasks.length === 0) return null;
  return (
    <details class="tasks">
      <summary>Background tasks ({view.tasks.filter((t) => t.state === "running").length} running)</summary>
      <ul>
        {view.tasks.map((t) => (
          <li key={t.id}>
            <code>{t.id}</code> {t.command}{" "}
            <span class="tool-status">
              {t.state}
              {t.exitCode != null ? ` (exit ${t.exitCode})` : ""}
            </span>
            {t.lastLines ? <pre class="tool-output">{t.lastLines}</pre> : null}
          </li>
        ))}
      </ul>
    </details>
  );
}

// Deleting asks once more; closing and forking do not (a closed session is still listed).
function Actions({ controller: c, onRename }: { controller: Controller; onRename: () => void }) {
  const [deleting, setDeleting] = useState(false);
  return (
    <div class="actions">
      <button type="button" onClick={onRename}>
        Rename
      </button>
      <button type="button" onClick={() => void c.fork()}>
        Fork
      </button>
      <button type="button" onClick={() => void c.close()}>
        Close
      </button>
      {deleting ? (
        <>
          <button type="button" class="danger" onClick={() => void c.remove()}>
            Delete for good
          </button>
          <button type="button" onClick={() => setDeleting(false)}>
            Keep
          </button>
        </>
      ) : (
        <button type="button" class="danger" onClick={() => setDeleting(true)}>
          Delete
        </button>
      )}
    </div>
  );
}
