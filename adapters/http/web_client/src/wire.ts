// What the wire carries beyond the SDK's types: our `_meta.iac_code` extensions and the
// results of our extension methods (docs/protocol.md), read from `unknown` by narrowing.
// The SDK types `_meta` as `{ [key: string]: unknown }`, rightly: any peer may put anything
// there, so nothing here trusts a shape it has not checked.
import type { SessionNotification } from "@agentclientprotocol/sdk/unstable";

export type Fields = Record<string, unknown>;

export function isRecord(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === "number" ? value : undefined;
}

// `_meta.iac_code` of a message or of a result: empty when absent or not an object.
export function iacCode(meta: unknown): Fields {
  return isRecord(meta) && isRecord(meta.iac_code) ? meta.iac_code : {};
}

// The JSON-RPC envelope of a `session/update`, checked; what each update kind holds is the
// SDK's type (the page reads updates before the SDK's parser, see Link, and the server's
// tests hold every update it sends to the unstable schema those types are generated from).
export function asSessionNotification(params: unknown): SessionNotification | null {
  if (!isRecord(params) || typeof params.sessionId !== "string") return null;
  const update = params.update;
  if (!isRecord(update) || typeof update.sessionUpdate !== "string") return null;
  return params as SessionNotification;
}

// A prompt waiting in the session's queue (session_info_update's `queue`).
export type Queued = { id: string; preview: string; queuedBy?: string };

export function queued(value: unknown): Queued[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((item) => ({
    id: String(item.id ?? ""),
    preview: String(item.preview ?? ""),
    queuedBy: asString(item.queuedBy),
  }));
}

// A background task of the session (session_info_update's `tasks`).
export type Task = { id: string; command: string; state: string; exitCode?: number | null; lastLines?: string };

export function tasks(value: unknown): Task[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((item) => ({
    id: String(item.id ?? ""),
    command: String(item.command ?? ""),
    state: String(item.state ?? ""),
    exitCode: asNumber(item.exitCode) ?? null,
    lastLines: asString(item.lastLines),
  }));
}

// Why a request failed, when the agent said (`error.data.reason`, e.g. cursor_expired).
export function errorReason(error: unknown): string | undefined {
  return isRecord(error) && isRecord(error.data) ? asString(error.data.reason) : undefined;
}

// An error as one line for the page: its message, and its data when it has some.
export function describe(error: unknown): string {
  if (!isRecord(error)) return String(error);
  const data = error.data ? ` (${typeof error.data === "string" ? error.data : JSON.stringify(error.data)})` : "";
  return `${asString(error.message) ?? String(error)}${data}`;
}
