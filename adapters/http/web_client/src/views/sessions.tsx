// The session list: start a session, filter the list, open one, load more.
import { useState } from "preact/hooks";
import type { Controller } from "../controller";

export function Sessions({ controller: c }: { controller: Controller }) {
  const [cwd, setCwd] = useState("");
  const titleFilter = c.listFilter.title.trim().toLowerCase();
  const since = c.listFilter.hours ? Date.now() - c.listFilter.hours * 3_600_000 : 0;
  const shown = c.sessions.filter(
    (s) =>
      (!titleFilter || (s.title ?? "").toLowerCase().includes(titleFilter) || s.sessionId.includes(titleFilter)) &&
      (!since || (s.updatedAt != null && Date.parse(s.updatedAt) >= since)),
  );
  return (
    <nav class="sidebar" aria-label="Session list">
      <form
        class="new-session"
        onSubmit={(event) => {
          event.preventDefault();
          if (cwd.trim()) void c.newSession(cwd.trim());
        }}
      >
        <label for="new-cwd">Directory</label>
        <input id="new-cwd" placeholder="/path/to/project" value={cwd} onInput={(e) => setCwd(e.currentTarget.value)} />
        <button type="submit">Start session</button>
      </form>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          void c.refreshList();
        }}
      >
        <label for="filter-title">Filter by title</label>
        <input
          id="filter-title"
          type="search"
          value={c.listFilter.title}
          onInput={(e) => {
            c.listFilter.title = e.currentTarget.value;
            c.redraw();
          }}
        />
        <label for="filter-updated">Updated</label>
        <select
          id="filter-updated"
          value={String(c.listFilter.hours)}
          onChange={(e) => {
            c.listFilter.hours = Number(e.currentTarget.value);
            c.redraw();
          }}
        >
          <option value="0">Any time</option>
          <option value="1">In the last hour</option>
          <option value="24">In the last day</option>
          <option value="168">In the last week</option>
        </select>
        <label for="filter-cwd">Filter by directory</label>
        <input
          id="filter-cwd"
          type="search"
          placeholder="/absolute/path"
          value={c.listFilter.cwd}
          onInput={(e) => (c.listFilter.cwd = e.currentTarget.value)}
        />
        <button type="submit">Apply</button>
      </form>
      <h2 id="sessions-heading">Sessions</h2>
      {c.listError && (
        <p class="error" role="alert">
          {c.listError}
        </p>
      )}
      <ul aria-label="Sessions" class="session-list">
        {shown.map((s) => (
          <li key={s.sessionId} class={c.view?.sessionId === s.sessionId ? "current" : ""}>
            <button
              type="button"
              aria-current={c.view?.sessionId === s.sessionId ? "true" : undefined}
              onClick={() => void c.open(s)}
            >
              <span class="title">{s.title || "Untitled session"}</span>
              <span class="meta">
                {s.cwd}
                {s.updatedAt ? ` · ${new Date(s.updatedAt).toLocaleString()}` : ""}
              </span>
            </button>
          </li>
        ))}
      </ul>
      {shown.length === 0 && <p class="hint">No sessions{titleFilter || since ? " match" : " yet"}.</p>}
      {c.nextCursor && (
        <button type="button" class="more" onClick={() => void c.refreshList(true)}>
          More sessions
        </button>
      )}
    </nav>
  );
}
