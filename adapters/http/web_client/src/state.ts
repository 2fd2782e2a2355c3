// What the page knows of the session it shows, built from session/update notifications.
// Updates change this state at once; the screen is redrawn at most once per animation
// frame (App's scheduler), so thousands of small chunks cost a handful of renders.
import type {
  ContentBlock,
  LoadSessionResponse,
  PlanEntry,
  SessionConfigOption,
  SessionConfigSelectOptions,
  ToolCallContent,
  ToolCallLocation,
  ToolCallStatus,
  ToolCallUpdate,
  ToolKind,
} from "@agentclientprotocol/sdk";
import type { SessionNotification, SubagentUpdate } from "@agentclientprotocol/sdk/unstable";
import { asNumber, asString, iacCode, isRecord, type Queued, queued, type Task, tasks } from "./wire";

export type Entry =
  | { kind: "user"; key: string; text: string; messageId?: string | null }
  | { kind: "agent"; key: string; text: string; messageId?: string | null }
  | { kind: "thought"; key: string; text: string; messageId?: string | null }
  | { kind: "tool"; key: string; call: ToolCall }
  | { kind: "plan"; key: string; entries: PlanEntry[] }
  | { kind: "notice"; key: string; text: string; level: string }
  | { kind: "subagent"; key: string; child: SessionView; title: string; state: string; agent?: string };

type TextKind = "user" | "agent" | "thought";
type ToolEntry = Entry & { kind: "tool" };
type SubagentEntry = Entry & { kind: "subagent" };

// A tool call as the page shows it: its first announcement with every later update merged in.
export type ToolCall = {
  toolCallId: string;
  title: string;
  kind?: ToolKind;
  status?: ToolCallStatus;
  locations: ToolCallLocation[];
  content: ToolCallContent[];
  rawInput?: unknown;
  rawOutput?: unknown;
};

export type Command = { name: string; description: string; hint?: string };
export type Choice = { value: string; name: string };
export type ConfigOption = { id: string; name: string; currentValue: string; options: Choice[]; category?: string };
export type Mode = { id: string; name: string };
export type Usage = { used?: number; size?: number; cost?: { amount: number; currency: string } };
export type { Queued, Task };

// What session/new, session/load and session/fork answer: the settings the view shows.
export type Opened = Pick<LoadSessionResponse, "modes" | "configOptions" | "_meta">;

export class SessionView {
  entries: Entry[] = [];
  title: string | null = null;
  cwd = "";
  modes: Mode[] = [];
  currentMode = "";
  configOptions: ConfigOption[] = [];
  commands: Command[] = [];
  usage: Usage | null = null;
  role = "";
  turn = "idle";
  pending = 0; // this tab's prompts not yet answered (queued ones included)
  queue: Queued[] = [];
  steeringWaiting = 0;
  undoToken: string | null = null;
  tasks: Task[] = [];
  lastSeq = 0;
  rev = 0;
  private children = new Map<string, SubagentEntry>();
  private tools = new Map<string, ToolEntry>();
  private counter = 0;

  constructor(readonly sessionId: string) {}

  // This tab's turn (the wire tells an attaching client the turn's state once, and no end of
  // another client's turn: those show as their updates arrive).
  get running(): boolean {
    return this.pending > 0;
  }

  apply(params: SessionNotification): void {
    const update = params.update;
    const meta = isRecord(params._meta?.iac_code) ? iacCode(params._meta) : iacCode(update._meta);
    const seq = asNumber(meta.seq);
    if (seq !== undefined) this.lastSeq = Math.max(this.lastSeq, seq);
    const turn = isRecord(meta.turn) ? asString(meta.turn.state) : undefined;
    if (turn) this.turn = turn;
    this.rev += 1;
    switch (update.sessionUpdate) {
      case "user_message_chunk":
        this.appendText("user", update.content, update.messageId);
        break;
      case "agent_message_chunk":
        this.appendText("agent", update.content, update.messageId);
        break;
      case "agent_thought_chunk":
        this.appendText("thought", update.content, update.messageId);
        break;
      case "tool_call":
      case "tool_call_update":
        this.toolCall(update);
        break;
      case "plan":
        this.entries.push({ kind: "plan", key: this.key(), entries: update.entries ?? [] });
        break;
      case "available_commands_update":
        this.commands = (update.availableCommands ?? []).map((c) => ({
          name: c.name,
          description: c.description ?? "",
          hint: c.input?.hint,
        }));
        break;
      case "current_mode_update":
        this.currentMode = update.currentModeId;
        break;
      case "config_option_update":
        this.configOptions = selectOptions(update.configOptions);
        break;
      case "usage_update":
        this.usage = { used: update.used, size: update.size, cost: update.cost ?? undefined };
        break;
      case "session_info_update": {
        const ours = iacCode(update._meta);
        if (update.title !== undefined) this.title = update.title;
        this.queue = queued(ours.queue) ?? this.queue;
        const waiting = isRecord(ours.steering) ? asNumber(ours.steering.waiting) : undefined;
        if (waiting !== undefined) this.steeringWaiting = waiting;
        const rewoundTo = isRecord(ours.rewound) ? asString(ours.rewound.toMessageId) : undefined;
        if (rewoundTo) this.cutFrom(rewoundTo);
        this.tasks = tasks(ours.tasks) ?? this.tasks;
        break;
      }
      case "subagent_update":
        this.subagent(update);
        break;
      case "notice":
        this.entries.push({
          kind: "notice",
          key: this.key(),
          text: [update.title, update.description].filter(Boolean).join(": "),
          level: String(update.severity ?? "info"),
        });
        break;
      default:
        break;
    }
  }

  opened(result: Opened): void {
    this.modes = (result.modes?.availableModes ?? []).map((m) => ({ id: m.id, name: m.name }));
    this.currentMode = result.modes?.currentModeId ?? "";
    this.configOptions = selectOptions(result.configOptions);
    this.role = asString(iacCode(result._meta).role) ?? this.role;
    this.rev += 1;
  }

  // What session/set_config_option answers: every option, as it now stands.
  configured(options: SessionConfigOption[]): void {
    this.configOptions = selectOptions(options);
    this.rev += 1;
  }

  said(text: string): void {
    this.entries.push({ kind: "user", key: this.key(), text });
    this.rev += 1;
  }

  clear(): void {
    this.entries = [];
    this.tools.clear();
    this.lastSeq = 0;
    this.rev += 1;
  }

  private key(): string {
    this.counter += 1;
    return `e${this.counter}`;
  }

  // A child session's own updates (its sessionId, the parent's in _meta): into its entry.
  applyChild(params: SessionNotification): boolean {
    const entry = this.children.get(params.sessionId);
    if (!entry) return false;
    entry.child.apply(params);
    this.rev += 1;
    return true;
  }

  private subagent(update: SubagentUpdate): void {
    const id = update.sessionId;
    const known = this.children.get(id);
    const previous: SubagentEntry = known ?? {
      kind: "subagent",
      key: this.key(),
      child: new SessionView(id),
      title: "",
      state: "",
    };
    if (!known) this.entries.push(previous);
    const state =
      update.state?.state === "idle" ? (update.state.stopReason ?? "done") : (update.state?.state ?? "running");
    const entry: SubagentEntry = {
      ...previous,
      title: update.title ?? previous.title,
      state: String(state),
      agent: asString(iacCode(update._meta).agent) ?? previous.agent,
    };
    this.children.set(id, entry);
    this.entries = this.entries.map((e) => (e.key === entry.key ? entry : e));
  }

  // A rewind: the transcript from that prompt on (included) is gone.
  private cutFrom(messageId: string): void {
    const at = this.entries.findIndex((e) => e.kind === "user" && e.messageId === messageId);
    if (at < 0) return;
    for (const gone of this.entries.splice(at)) if (gone.kind === "tool") this.tools.delete(gone.call.toolCallId);
  }

  private appendText(kind: TextKind, content: ContentBlock | undefined, messageId?: string | null): void {
    const text = content?.type === "text" ? String(content.text ?? "") : content?.type ? `[${content.type}]` : "";
    const last = this.entries[this.entries.length - 1];
    if (last && last.kind === kind && (messageId === undefined || last.messageId === messageId)) {
      last.text += text;
      return;
    }
    this.entries.push({ kind, key: this.key(), text, messageId });
  }

  // `tool_call` announces a call, `tool_call_update` changes it: each field it gives
  // replaces the one shown (a `tool_call` for a known id is taken as an update).
  private toolCall(update: ToolCallUpdate): void {
    let entry = this.tools.get(update.toolCallId);
    if (!entry) {
      entry = {
        kind: "tool",
        key: this.key(),
        call: { toolCallId: update.toolCallId, title: update.title ?? "tool", locations: [], content: [] },
      };
      this.tools.set(update.toolCallId, entry);
      this.entries.push(entry);
    }
    const call = { ...entry.call };
    if (update.title != null) call.title = update.title;
    if (update.kind != null) call.kind = update.kind;
    if (update.status != null) call.status = update.status;
    if (update.locations != null) call.locations = update.locations;
    if (update.content != null) call.content = update.content;
    if (update.rawInput !== undefined) call.rawInput = update.rawInput;
    if (update.rawOutput !== undefined) call.rawOutput = update.rawOutput;
    entry.call = call;
  }
}

// The select options only (the page shows no boolean option), their groups flattened.
function selectOptions(options: SessionConfigOption[] | null | undefined): ConfigOption[] {
  if (!Array.isArray(options)) return [];
  const selects: ConfigOption[] = [];
  for (const o of options) {
    if (o?.type !== "select") continue;
    selects.push({
      id: o.id,
      name: o.name,
      category: o.category ?? undefined,
      currentValue: o.currentValue,
      options: flatten(o.options),
    });
  }
  return selects;
}

function flatten(options: SessionConfigSelectOptions | undefined): Choice[] {
  const out: Choice[] = [];
  for (const option of options ?? []) {
    if ("options" in option && Array.isArray(option.options)) out.push(...flatten(option.options));
    else if ("value" in option && option.value !== undefined)
      out.push({ value: option.value, name: option.name ?? option.value });
  }
  return out;
}
