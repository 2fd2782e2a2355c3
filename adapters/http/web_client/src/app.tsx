import type {
  ClientContext,
  CreateElicitationRequest,
  CreateElicitationResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
} from "@agentclientprotocol/sdk";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Link, tokenAccepted, type Notification } from "./link";
import { SessionView, type Permission, type Question } from "./state";
import { storeToken, storedToken, takeTokenFromLink } from "./token";
import { SignIn } from "./views/sign_in";
import { Sessions, type SessionInfo } from "./views/sessions";
import { SessionPane } from "./views/session_pane";

type Phase = "checking" | "signin" | "connecting" | "open" | "reconnecting";

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

export class Controller {
  link: Link | null = null;
  agent: ClientContext | null = null;
  phase: Phase = "checking";
  signInError = "";
  sessions: SessionInfo[] = [];
  nextCursor: string | null = null;
  listFilter = { cwd: "", title: "", hours: 0 };
  listError = "";
  view: SessionView | null = null;
  permissions: Permission[] = [];
  questions: Question[] = [];
  status = "";
  error = "";
  showList = false; // on a narrow screen, the list over an open session
  private permissionIds = 0;
  private everConnected = false;

  constructor(readonly redraw: () => void) {}

  async begin(): Promise<void> {
    takeTokenFromLink();
    const token = storedToken();
    if (await tokenAccepted(token).catch(() => true)) {
      this.connect(token);
    } else {
      storeToken(null);
      this.phase = "signin";
      this.signInError = token ? "That token was refused." : "";
      this.redraw();
    }
  }

  async signIn(token: string): Promise<void> {
    let accepted: boolean;
    try {
      accepted = await tokenAccepted(token);
    } catch {
      this.signInError = "The server cannot be reached; try again.";
      this.redraw();
      return;
    }
    if (!accepted) {
      this.signInError = "That token was refused.";
      this.redraw();
      return;
    }
    storeToken(token);
    this.signInError = "";
    this.everConnected = false; // a new sign-in, not a reconnect
    this.status = "";
    this.connect(token);
  }

  private connect(token: string | null): void {
    this.phase = "connecting";
    this.redraw();
    this.link = new Link(token, {
      notify: (message) => this.notified(message),
      permission: (request, signal) => this.askPermission(request, signal),
      elicit: (request, signal) => this.askQuestion(request, signal),
      opened: (agent) => this.opened(agent),
      closed: (everOpened) => {
        if (!everOpened) void this.checkToken(token);
        this.agent = null;
        this.phase = "reconnecting";
        this.status = "Connection lost; reconnecting…";
        for (const permission of this.permissions) permission.answer(null);
        this.permissions = [];
        for (const question of this.questions) question.answer({ action: "cancel" });
        this.questions = [];
        if (this.view) this.view.pending = 0;
        this.redraw();
      },
    });
    this.link.start();
  }

  // A socket that would not open: if the token is what is refused now (the server
  // restarted with another), sign in again rather than retry for ever.
  private async checkToken(token: string | null): Promise<void> {
    if (!token || (await tokenAccepted(token).catch(() => true))) return;
    this.link?.stop();
    storeToken(null);
    this.phase = "signin";
    this.signInError = "The server no longer accepts this token: sign in again.";
    this.redraw();
  }

  private async opened(agent: ClientContext): Promise<void> {
    this.agent = agent;
    const again = this.everConnected;
    this.everConnected = true;
    this.phase = "open";
    this.redraw();
    await this.refreshList();
    if (this.view) await this.reattach(this.view);
    if (again) {
      this.status = "Reconnected.";
      this.error = ""; // what failed with the lost connection (a prompt's answer) is moot
    }
    this.redraw();
  }

  private notified(message: Notification): void {
    if (message.method !== "session/update") return;
    const view = this.view;
    if (!view) return;
    if (message.params?.sessionId !== view.sessionId) {
      if (message.params?._meta?.iac_code?.parentSessionId === view.sessionId && view.applyChild(message.params)) this.redraw();
      return;
    }
    const title = view.title;
    view.apply(message.params);
    if (view.title !== title) this.retitled(view);
    this.redraw();
  }

  // The list shows the new title without asking the server again.
  private retitled(view: SessionView): void {
    this.sessions = this.sessions.map((s) => (s.sessionId === view.sessionId ? { ...s, title: view.title } : s));
  }

  private askPermission(request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    return new Promise((resolve) => {
      const id = ++this.permissionIds;
      const done = (optionId: string | null) => {
        this.permissions = this.permissions.filter((p) => p.id !== id);
        resolve(optionId === null ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId } });
        this.redraw();
      };
      this.permissions = [
        ...this.permissions,
        { id, sessionId: request.sessionId, toolCall: request.toolCall, options: request.options as any, answer: done },
      ];
      signal.addEventListener("abort", () => done(null), { once: true });
      this.redraw();
    });
  }

  private askQuestion(request: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> {
    return new Promise((resolve) => {
      const id = ++this.permissionIds;
      const asked = request as any;
      const done = (response: { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> }) => {
        if (!this.questions.some((q) => q.id === id)) return;
        this.questions = this.questions.filter((q) => q.id !== id);
        resolve(response as CreateElicitationResponse);
        this.redraw();
      };
      this.questions = [
        ...this.questions,
        { id, sessionId: asked.sessionId ?? "", message: asked.message ?? "", schema: asked.requestedSchema ?? {}, answer: done },
      ];
      signal.addEventListener("abort", () => done({ action: "cancel" }), { once: true });
      this.redraw();
    });
  }

  async refreshList(more = false): Promise<void> {
    if (!this.agent) return;
    const params: Record<string, string> = {};
    if (this.listFilter.cwd.trim()) params.cwd = this.listFilter.cwd.trim();
    if (more && this.nextCursor) params.cursor = this.nextCursor;
    try {
      const page: any = await this.agent.request("session/list", params);
      const sessions: SessionInfo[] = page.sessions ?? [];
      this.sessions = more ? [...this.sessions, ...sessions] : sessions;
      this.nextCursor = page.nextCursor ?? null;
      this.listError = "";
    } catch (error) {
      this.listError = describe(error);
    }
    this.redraw();
  }

  async newSession(cwd: string): Promise<void> {
    await this.act(async (agent) => {
      const result: any = await agent.request("session/new", { cwd, mcpServers: [] });
      this.show(new SessionView(result.sessionId), result, cwd);
      await this.refreshList();
    });
  }

  async open(info: SessionInfo): Promise<void> {
    this.showList = false;
    await this.act(async (agent) => {
      // Leaving a session detaches from it, unless this tab's turn runs there: the last
      // client's close would cancel that turn.
      const left = this.view;
      if (left && left.sessionId !== info.sessionId && left.pending === 0) await this.detach(agent, left);
      const view = new SessionView(info.sessionId);
      view.cwd = info.cwd;
      view.title = info.title ?? null;
      this.view = view;
      this.redraw();
      const result: any = await agent.request("session/load", { sessionId: info.sessionId, cwd: info.cwd, mcpServers: [] });
      this.show(view, result, info.cwd);
    });
  }

  // After a reconnect: only what was missed, by the journal cursor; the whole history
  // again if the server no longer has it all.
  private async reattach(view: SessionView): Promise<void> {
    const agent = this.agent!;
    const params: any = { sessionId: view.sessionId, cwd: view.cwd, mcpServers: [] };
    if (view.lastSeq > 0) params._meta = { iac_code: { after: view.lastSeq } };
    try {
      const result: any = await agent.request("session/load", params);
      view.opened(result);
    } catch (error) {
      const reason = (error as any)?.data?.reason;
      if (reason !== "cursor_expired" && reason !== "cursor_ahead") throw error;
      view.clear();
      view.opened(await agent.request("session/load", { sessionId: view.sessionId, cwd: view.cwd, mcpServers: [] }));
    }
  }

  private show(view: SessionView, result: any, cwd: string): void {
    view.cwd = cwd;
    view.opened(result);
    this.view = view;
    this.error = "";
    this.redraw();
  }

  private async detach(agent: ClientContext, view: SessionView): Promise<void> {
    await agent.request("session/close", { sessionId: view.sessionId }).catch(() => undefined);
  }

  async prompt(text: string): Promise<void> {
    const view = this.view;
    if (!view || !this.agent) return;
    view.pending += 1;
    view.said(text); // the agent echoes a prompt to the other attached clients only
    this.redraw();
    try {
      const result: any = await this.agent.request("session/prompt", {
        sessionId: view.sessionId,
        prompt: [{ type: "text", text }],
      });
      this.status = result?.stopReason === "cancelled" ? "Turn cancelled." : "";
    } catch (error) {
      if (this.phase === "open") this.error = describe(error);
    } finally {
      view.pending = Math.max(0, view.pending - 1);
      this.redraw();
    }
  }

  // Said while the agent works: joins the running turn at its next safe point.
  async steer(text: string): Promise<void> {
    await this.act(async (agent) => {
      const view = this.view!; // its user_message_chunk comes back to every client, this one too
      const result: any = await agent.request("_session/steering", {
        sessionId: view.sessionId,
        prompt: [{ type: "text", text }],
      });
      if (result?.outcome === "failed") this.status = `Not delivered: ${result.reason ?? "the turn ended"}`;
    });
  }

  async rewind(messageId: string): Promise<void> {
    await this.act(async (agent) => {
      const view = this.view!;
      const result: any = await agent.request("_iac_code/session/rewind", {
        sessionId: view.sessionId,
        toMessageId: messageId,
        files: "keep",
      });
      view.undoToken = result?.undoToken ?? null;
    });
  }

  async undoRewind(): Promise<void> {
    await this.act(async (agent) => {
      const view = this.view!;
      const undoToken = view.undoToken;
      view.undoToken = null;
      await agent.request("_iac_code/session/rewind_undo", { sessionId: view.sessionId, undoToken });
    });
  }

  async cancelChild(childId: string): Promise<void> {
    if (this.agent) await this.agent.notify("session/cancel", { sessionId: childId });
  }

  async cancel(): Promise<void> {
    if (this.view && this.agent) await this.agent.notify("session/cancel", { sessionId: this.view.sessionId });
  }

  async setMode(modeId: string): Promise<void> {
    await this.act(async (agent) => {
      const view = this.view!;
      await agent.request("session/set_mode", { sessionId: view.sessionId, modeId });
      view.currentMode = modeId;
    });
  }

  async setOption(configId: string, value: string): Promise<void> {
    await this.act(async (agent) => {
      const view = this.view!;
      const result: any = await agent.request("session/set_config_option", { sessionId: view.sessionId, configId, value });
      view.opened({ ...result, modes: { availableModes: view.modes, currentModeId: view.currentMode }, _meta: { iac_code: { role: view.role } } });
    });
  }

  async rename(title: string): Promise<void> {
    await this.act(async (agent) => {
      const view = this.view!;
      const result: any = await agent.request("_iac_code/session/rename", { sessionId: view.sessionId, title });
      view.title = result?.title ?? title;
      this.retitled(view);
    });
  }

  async fork(): Promise<void> {
    const view = this.view;
    if (!view) return;
    let forkId = "";
    await this.act(async (agent) => {
      const result: any = await agent.request("session/fork", { sessionId: view.sessionId, cwd: view.cwd, mcpServers: [] });
      forkId = result.sessionId;
    });
    if (forkId) await this.open({ sessionId: forkId, cwd: view.cwd, title: view.title ? `${view.title} (fork)` : null });
    await this.refreshList();
  }

  async close(): Promise<void> {
    await this.act(async (agent) => {
      await this.detach(agent, this.view!);
      this.view = null;
    });
  }

  async remove(): Promise<void> {
    await this.act(async (agent) => {
      await agent.request("session/delete", { sessionId: this.view!.sessionId });
      this.view = null;
      await this.refreshList();
    });
  }

  private async act(step: (agent: ClientContext) => Promise<void>): Promise<void> {
    if (!this.agent) {
      this.error = "Not connected.";
      this.redraw();
      return;
    }
    try {
      await step(this.agent);
      this.error = "";
    } catch (error) {
      this.error = describe(error);
    }
    this.redraw();
  }
}

function describe(error: unknown): string {
  const e = error as any;
  const data = e?.data ? ` (${typeof e.data === "string" ? e.data : JSON.stringify(e.data)})` : "";
  return `${e?.message ?? String(error)}${data}`;
}

export function App() {
  const redraw = useFrameRedraw();
  const controller = useMemo(() => new Controller(redraw), []);
  useEffect(() => {
    void controller.begin();
    (window as any).iacCode = controller; // for the browser tests' and the benchmark's probes
    return () => controller.link?.stop();
  }, []);
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
          {c.error && <p class="error" role="alert">{c.error}</p>}
        </main>
      )}
    </div>
  );
}
