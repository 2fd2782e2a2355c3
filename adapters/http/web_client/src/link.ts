// The page's one ACP connection: the official SDK's ClientApp over a WebSocket to /acp of
// the server that served the page. Browsers cannot set Authorization on a WebSocket, so
// the token travels as a subprotocol, "iac-code.bearer.<base64url(utf8(token))>", next to
// "acp" (the protocol the server selects). It reconnects by itself; see Controller.opened.
import {
  type AnyMessage,
  type ClientContext,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  client,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type Stream,
} from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

export type Notification = { method: string; params: unknown };

export interface LinkEvents {
  // Every notification from the agent (session/update and extensions), as it arrived.
  notify(message: Notification): void;
  // A permission request; resolves with the answer. `signal` aborts when it is withdrawn.
  permission(request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  // A question for the user (a form); resolves with the answer.
  elicit(request: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse>;
  opened(agent: ClientContext): Promise<void>;
  closed(everOpened: boolean): void;
}

// How a Link reaches the agent and waits between attempts: the page's WebSocket and timer,
// or a test's stand-ins.
export interface Dialer {
  dial(protocols: string[]): Stream;
  later(run: () => void, milliseconds: number): void;
}

export const SUBPROTOCOL = "acp";
const BEARER_PREFIX = "iac-code.bearer.";

export function bearerSubprotocol(token: string): string {
  const bytes = new TextEncoder().encode(token);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return BEARER_PREFIX + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function socketUrl(): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/acp`;
}

export const pageDialer: Dialer = {
  dial: (protocols) => createWebSocketStream(socketUrl(), { protocols }),
  later: (run, milliseconds) => void setTimeout(run, milliseconds),
};

// The wait before attempt `attempt` (1 for the first retry): doubling from half a second,
// at most five seconds, so a restarting server is found again soon without being hammered.
export function reconnectDelay(attempt: number): number {
  return Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
}

// True when the server takes `token` (or needs none): the transport answers a plain GET
// /acp with 401 only for a missing or wrong token.
export async function tokenAccepted(token: string | null): Promise<boolean> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const ask = () => fetch("/acp", { headers, cache: "no-store" });
  // Once more on a network error: a kept-alive connection to a server since restarted.
  const response = await ask().catch(ask);
  return response.status !== 401;
}

// A notification is a message with a method and no id; `$/cancel_request` is the SDK's own.
function isAgentNotification(message: AnyMessage): message is AnyMessage & Notification {
  return (
    "method" in message &&
    typeof message.method === "string" &&
    !("id" in message) &&
    message.method !== "$/cancel_request"
  );
}

export class Link {
  private attempt = 0;
  private stopped = false;
  agent: ClientContext | null = null;

  constructor(
    private readonly token: string | null,
    private readonly events: LinkEvents,
    private readonly dialer: Dialer = pageDialer,
  ) {}

  start(): void {
    void this.run();
  }

  // Connects, and again whenever the connection ends, until stopped: whatever one attempt
  // throws, the next one is scheduled.
  private async run(): Promise<void> {
    let everOpened = false;
    try {
      everOpened = await this.open();
    } catch (error) {
      console.warn("connection attempt failed", error);
    }
    this.agent = null;
    if (this.stopped) return;
    this.events.closed(everOpened);
    this.attempt += 1;
    this.dialer.later(() => void this.run(), reconnectDelay(this.attempt));
  }

  stop(): void {
    this.stopped = true;
  }

  // One connection, from its handshake to its end; whether it was ever initialized.
  private async open(): Promise<boolean> {
    const protocols = this.token ? [SUBPROTOCOL, bearerSubprotocol(this.token)] : [SUBPROTOCOL];
    const stream = this.dialer.dial(protocols);
    const events = this.events;
    // session/update carries kinds the SDK's stable schema does not know (sub-agents): the
    // page reads every notification itself, before the SDK. One the page cannot take is
    // logged and skipped, not allowed to end the connection.
    const readable = stream.readable.pipeThrough(
      new TransformStream<AnyMessage, AnyMessage>({
        transform(message, controller) {
          if (!isAgentNotification(message)) {
            controller.enqueue(message);
            return;
          }
          try {
            events.notify({ method: message.method, params: message.params });
          } catch (error) {
            console.warn("notification not applied", message.method, error);
          }
        },
      }),
    );
    const app = client({ name: "iac-code-web" })
      .onRequest("session/request_permission", (ctx) => events.permission(ctx.params, ctx.signal))
      .onRequest("elicitation/create", (ctx) => events.elicit(ctx.params, ctx.signal));
    const connection = app.connect({ readable, writable: stream.writable });
    let everOpened = false;
    try {
      await connection.agent.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: {
          fs: { readTextFile: false, writeTextFile: false },
          terminal: false,
          session: { notices: {} }, // notices as themselves, not as their agent-text fallback
          subagents: {}, // a sub-agent's run as a child session, shown inside its parent's call
          elicitation: { form: {} }, // questions as forms (the model's ask_user, MCP servers')
          // A prompt sent while a turn runs waits in the session's queue (docs/protocol.md).
          _meta: { iac_code: { promptQueueing: true } },
        },
        clientInfo: { name: "iac-code-web", version: "0.1.0" },
      });
      everOpened = true;
      this.attempt = 0;
      this.agent = connection.agent;
      await events.opened(connection.agent);
    } catch (error) {
      console.warn("connection failed", error);
      connection.close();
    }
    await connection.closed;
    return everOpened;
  }
}
