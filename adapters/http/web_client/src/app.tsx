// The page: sign-in, or the session list beside the open session. What it shows is the
// Controller's state; this file only lays it out and schedules redraws.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Controller } from "./controller";
import { SessionPane } from "./views/session_pane";
import { Sessions } from "./views/sessions";
import { SignIn } from "./views/sign_in";

// Redraws at most once per animation frame, however many updates arrived.
function useFrameRedraw(): () => void {
  const [, setTick] = useState(0);
  const pending = useRef(false);
  return useMemo(
    () => () => {
      if (pending.current) return;
      pending.current = true;
      requestAnimationFrame(() => {
        pending.current = false;
        setTick((t) => t + 1);
      });
    },
    [],
  );
}

export function App() {
  const redraw = useFrameRedraw();
  const controller = useMemo(() => new Controller(redraw), [redraw]);
  useEffect(() => {
    void controller.begin();
    window.iacCode = controller;
    return () => controller.link?.stop();
  }, [controller]);
  const c = controller;
  if (c.phase === "checking") return <p class="splash">Connecting…</p>;
  if (c.phase === "signin") return <SignIn error={c.signInError} onSignIn={(token) => c.signIn(token)} />;
  return (
    <div class={`layout ${c.view ? "has-session" : ""} ${c.showList ? "show-list" : ""}`}>
      <header class="topbar">
        <h1>iac-code</h1>
        {c.view && (
          <button
            type="button"
            class="narrow-only"
            aria-expanded={c.showList ? "true" : "false"}
            onClick={() => {
              c.showList = !c.showList;
              c.redraw();
            }}
          >
            Sessions
          </button>
        )}
        <p class={`connection ${c.phase}`} role="status" aria-live="polite">
          {c.phase === "open" ? c.status || "Connected" : c.phase === "connecting" ? "Connecting…" : c.status}
        </p>
      </header>
      <Sessions controller={c} />
      {c.view ? (
        <SessionPane controller={c} view={c.view} />
      ) : (
        <main class="empty" aria-label="No session">
          <p>Open a session from the list, or start one in a directory.</p>
          {c.error && (
            <p class="error" role="alert">
              {c.error}
            </p>
          )}
        </main>
      )}
    </div>
  );
}
