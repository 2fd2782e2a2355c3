// The page's state and what the user can do: sign-in, the connection, the session list and
// the open session. Views read it and call its methods; it asks for a redraw after every
// change (App coalesces those into one render a frame). It imports no view.
import type { ClientContext, ListSessionsRequest, LoadSessionRequest, SessionInfo } from "@agentclientprotocol/sdk";
import { Asks } from "./asks";
import { Link, type Notification, tokenAccepted } from "./link";
import { type Opened, SessionView } from "./state";
import { storedToken, storeToken, takeTokenFromLink } from "./token";
import { asSessionNotification, asString, describe, errorReason, iacCode, isRecord } from "./wire";

export type Phase = "checking" | "signin" | "connecting" | "open" | "reconnecting";
export type ListFilter = { cwd: string; title: string; hours: number };

// What the page's session list shows of a session, and what opening one needs.
type Listed = Pick<SessionInfo, "sessionId" | "cwd" | "title" | "updatedAt">;

export class Controller {
  link: Link | null = null;
  agent: ClientContext | null = null;
  phase: Phase = "checking";
  signInError = "";
  sessions: Listed[] = [];
  nextCursor: string | null = null;
  listFilter: ListFilter = { cwd: "", title: "", hours: 0 };
  listError = "";
  view: SessionView | null = null;
  readonly asks: Asks;
  status = "";
  error = "";
  showList = false; // on a narrow screen, the list over an open session
  private everConnected = false;

  constructor(readonly redraw: () => void) {
    this.asks = new Asks(redraw);
  }

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
      permission: (request, signal) => this.asks.permission(request, signal),
      elicit: (request, signal) => this.asks.question(request, signal),
      opened: (agent) => this.opened(agent),
      closed: (everOpened) => this.closed(token, everOpened),
    });
    this.link.start();
  }

  private closed(token: string | null, everOpened: boolean): void {
    if (!everOpened) void this.checkToken(token);
    this.agent = null;
    this.phase = "reconnecting";
    this.status = "Connection lost; reconnecting…";
    this.asks.dropAll();
    if (this.view) this.view.pending = 0;
    this.redraw();
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
    const params = asSessionNotification(message.params);
    if (!view || !params) return;
    if (params.sessionId !== view.sessionId) {
      if (iacCode(params._meta).parentSessionId === view.sessionId && view.applyChild(params)) this.redraw();
      return;
    }
    const title = view.title;
    view.apply(params);
    if (view.title !== title) this.retitled(view);
    this.redraw();
  }

  // The list shows the new title without asking the server again.
  private retitled(view: SessionView): void {
    this.sessions = this.sessions.map((s) => (s.sessionId === view.sessionId ? { ...s, title: view.title } : s));
  }

  async refreshList(more = false): Promise<void> {
    if (!this.agent) return;
    const params: ListSessionsRequest = {};
    if (this.listFilter.cwd.trim()) params.cwd = this.listFilter.cwd.trim();
    if (more && this.nextCursor) params.cursor = this.nextCursor;
    try {
      const page = await this.agent.request("session/list", params);
      const sessions = page.sessions ?? [];
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
      const result = await agent.request("session/new", { cwd, mcpServers: [] });
      this.show(new SessionView(result.sessionId), cwd, result);
      await this.refreshList();
    });
  }

  async open(info: Listed): Promise<void> {
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
      const result = await agent.request("session/load", { sessionId: info.sessionId, cwd: info.cwd, mcpServers: [] });
      this.show(view, info.cwd, result);
    });
  }

  // After a reconnect: only what was missed, by the journal cursor; the whole history
  // again if the server no longer has it all.
  private async reattach(view: SessionView): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    const params: LoadSessionRequest = { sessionId: view.sessionId, cwd: view.cwd, mcpServers: [] };
    if (view.lastSeq > 0) params._meta = { iac_code: { after: view.lastSeq } };
    try {
      view.opened(await agent.request("session/load", params));
    } catch (error) {
      const reason = errorReason(error);
      if (reason !== "cursor_expired" && reason !== "cursor_ahead") throw error;
      view.clear();
      view.opened(await agent.request("session/load", { sessionId: view.sessionId, cwd: view.cwd, mcpServers: [] }));
    }
  }

  private show(view: SessionView, cwd: string, result: Opened): void {
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
      const result = await this.agent.request("session/prompt", {
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
  async steer(prompt: string): Promise<void> {
    await this.onView(async (agent, view) => {
      // its user_message_chunk comes back to every client, this one too
      const result = await agent.request<unknown>("_session/steering", {
        sessionId: view.sessionId,
        prompt: [{ type: "text", text: prompt }],
      });
      if (isRecord(result) && result.outcome === "failed") {
        this.status = `Not delivered: ${asString(result.reason) ?? "the turn ended"}`;
      }
    });
  }

  async rewind(messageId: string): Promise<void> {
    await this.onView(async (agent, view) => {
      const result = await agent.request<unknown>("_iac_code/session/rewind", {
        sessionId: view.sessionId,
        toMessageId: messageId,
        files: "keep",
      });
      view.undoToken = (isRecord(result) ? asString(result.undoToken) : undefined) ?? null;
    });
  }

  async undoRewind(): Promise<void> {
    await this.onView(async (agent, view) => {
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
    await this.onView(async (agent, view) => {
      await agent.request("session/set_mode", { sessionId: view.sessionId, modeId });
      view.currentMode = modeId;
    });
  }

  async setOption(configId: string, value: string): Promise<void> {
    await this.onView(async (agent, view) => {
      const result = await agent.request("session/set_config_option", { sessionId: view.sessionId, configId, value });
      view.configured(result.configOptions);
    });
  }

  async rename(title: string): Promise<void> {
    await this.onView(async (agent, view) => {
      const result = await agent.request<unknown>("_iac_code/session/rename", { sessionId: view.sessionId, title });
      view.title = (isRecord(result) ? asString(result.title) : undefined) ?? title;
      this.retitled(view);
    });
  }

  async fork(): Promise<void> {
    const view = this.view;
    if (!view) return;
    let forkId = "";
    await this.act(async (agent) => {
      // session/fork is unstable: the SDK's stable client does not type it
      const result = await agent.request<unknown>("session/fork", {
        sessionId: view.sessionId,
        cwd: view.cwd,
        mcpServers: [],
      });
      forkId = (isRecord(result) ? asString(result.sessionId) : undefined) ?? "";
    });
    if (forkId)
      await this.open({ sessionId: forkId, cwd: view.cwd, title: view.title ? `${view.title} (fork)` : null });
    await this.refreshList();
  }

  async close(): Promise<void> {
    await this.onView(async (agent, view) => {
      await this.detach(agent, view);
      this.view = null;
    });
  }

  async remove(): Promise<void> {
    await this.onView(async (agent, view) => {
      await agent.request("session/delete", { sessionId: view.sessionId });
      this.view = null;
      await this.refreshList();
    });
  }

  // A step on the open session (the views offer these only while one is open).
  private async onView(step: (agent: ClientContext, view: SessionView) => Promise<void>): Promise<void> {
    await this.act(async (agent) => {
      const view = this.view;
      if (view) await step(agent, view);
    });
  }

  // A step that needs the connection; what it throws is shown as the page's error.
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
