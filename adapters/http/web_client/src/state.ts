// What the page knows of the session it shows, built from session/update notifications.
// Updates change this state at once; the screen is redrawn at most once per animation
// frame (App's scheduler), so thousands of small chunks cost a handful of renders.

export type Entry =
  | { kind: "user"; key: string; text: string; messageId?: string }
  | { kind: "agent"; key: string; text: string; messageId?: string }
  | { kind: "thought"; key: string; text: string; messageId?: string }
  | { kind: "tool"; key: string; call: ToolCall }
  | { kind: "plan"; key: string; entries: PlanEntry[] }
  | { kind: "notice"; key: string; text: string; level: string }
  | { kind: "subagent"; key: string; child: SessionView; title: string; state: string; agent?: string };

export type Task = { id: string; command: string; state: string; exitCode?: number | null; lastLines?: string };

export type ToolCall = {
  toolCallId: string;
  title: string;
  kind?: string;
  status?: string;
  locations: { path: string; line?: number | null }[];
  content: any[];
  rawInput?: unknown;
  rawOutput?: unknown;
};

export type PlanEntry = { content: string; status: string; priority?: string };
export type Command = { name: string; description: string; hint?: string };
export type ConfigOption = { id: string; name: string; currentValue: string; options: { value: string; name: string }[]; category?: string };
export type Permission = {
  id: number;
  sessionId: string;
  toolCall: any;
  options: { optionId: string; name: string; kind: string }[];
  answer: (optionId: string | null) => void;
};

export class SessionView {
  entries: Entry[] = [];
  title: string | null = null;
  cwd = "";
  modes: { id: string; name: string }[] = [];
  currentMode = "";
  configOptions: ConfigOption[] = [];
  commands: Command[] = [];
  usage: { used?: number; size?: number; cost?: { amount: number; currency: string } } | null = null;
  role = "";
  turn = "idle";
  pending = 0; // this tab's prompts not yet answered (queued ones included)
  queue: { id: string; preview: string; queuedBy?: string }[] = [];
  steeringWaiting = 0;
  undoToken: string | null = null;
  tasks: Task[] = [];
  private children = new Map<string, Entry & { kind: "subagent" }>();
  lastSeq = 0;
  rev = 0;
  private tools = new Map<string, Entry & { kind: "tool" }>();
  private counter = 0;

  constructor(readonly sessionId: string) {}

  // This tab's turn (the wire tells an attaching client the turn's state once, and no end of
  // another client's turn: those show as their updates arrive).
  get running(): boolean {
    return this.pending > 0;
  }

  apply(params: any): void {
    const update = params?.update;
    if (!update) return;
    const meta = params?._meta?.iac_code ?? update?._meta?.iac_code;
    if (typeof meta?.seq === "number") this.lastSeq = Math.max(this.lastSeq, meta.seq);
    if (meta?.turn?.state) this.turn = meta.turn.state;
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
        this.toolCall(update, true);
        break;
      case "tool_call_update":
        this.toolCall(update, false);
        break;
      case "plan":
        this.entries.push({ kind: "plan", key: this.key(), entries: update.entries ?? [] });
        break;
      case "available_commands_update":
        this.commands = (update.availableCommands ?? []).map((c: any) => ({
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
        const ours = update._meta?.iac_code ?? {};
        if (update.title !== undefined) this.title = update.title;
        if (Array.isArray(ours.queue)) this.queue = ours.queue;
        if (typeof ours.steering?.waiting === "number") this.steeringWaiting = ours.steering.waiting;
        if (ours.rewound?.toMessageId) this.cutFrom(ours.rewound.toMessageId);
        if (Array.isArray(ours.tasks)) this.tasks = ours.tasks;
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

  opened(result: any): void {
    this.modes = (result?.modes?.availableModes ?? []).map((m: any) => ({ id: m.id, name: m.name }));
    this.currentMode = result?.modes?.currentModeId ?? "";
    this.configOptions = selectOptions(result?.configOptions);
    this.role = result?._meta?.iac_code?.role ?? this.role;
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
  applyChild(params: any): boolean {
    const entry = this.children.get(params?.sessionId);
    if (!entry) return false;
    entry.child.apply(params);
    this.rev += 1;
    return true;
  }

  private subagent(update: any): void {
    const id = update.sessionId;
    let entry = this.children.get(id);
    if (!entry) {
      entry = { kind: "subagent", key: this.key(), child: new SessionView(id), title: "", state: "" };
      this.children.set(id, entry);
      this.entries.push(entry);
    }
    const state = update.state?.state === "idle" ? update.state?.stopReason ?? "done" : update.state?.state ?? "running";
    this.children.set(id, (entry = { ...entry, title: update.title ?? entry.title, state, agent: update._meta?.iac_code?.agent ?? entry.agent }));
    this.entries = this.entries.map((e) => (e.key === entry!.key ? entry! : e));
  }

  // A rewind: the transcript from that prompt on (included) is gone.
  private cutFrom(messageId: string): void {
    const at = this.entries.findIndex((e) => e.kind === "user" && e.messageId === messageId);
    if (at < 0) return;
    for (const gone of this.entries.splice(at)) if (gone.kind === "tool") this.tools.delete(gone.call.toolCallId);
  }

  private appendText(kind: "user" | "agent" | "thought", content: any, messageId?: string): void {
    const text = content?.type === "text" ? String(content.text ?? "") : content?.type ? `[${content.type}]` : "";
    const last = this.entries[this.entries.length - 1];
    if (last && last.kind === kind && (messageId === undefined || last.messageId === messageId)) {
      last.text += text;
      return;
    }
    this.entries.push({ kind, key: this.key(), text, messageId });
  }

  private toolCall(update: any, fresh: boolean): void {
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
    if (update.content != null) call.content = fresh ? update.content : update.content;
    if (update.rawInput !== undefined) call.rawInput = update.rawInput;
    if (update.rawOutput !== undefined) call.rawOutput = update.rawOutput;
    entry.call = call;
  }
}

function selectOptions(options: any): ConfigOption[] {
  if (!Array.isArray(options)) return [];
  return options
    .filter((o) => o?.type === "select")
    .map((o) => ({
      id: o.id,
      name: o.name,
      category: o.category ?? undefined,
      currentValue: o.currentValue,
      options: flatten(o.options),
    }));
}

function flatten(options: any[]): { value: string; name: string }[] {
  const out: { value: string; name: string }[] = [];
  for (const option of options ?? []) {
    if (Array.isArray(option?.options)) out.push(...flatten(option.options));
    else if (option?.value !== undefined) out.push({ value: option.value, name: option.name ?? option.value });
  }
  return out;
}

// Unified diff of one file, line by line (a small LCS: tool diffs are small).
export function unifiedDiff(oldText: string, newText: string): { sign: " " | "+" | "-"; text: string }[] {
  const a = oldText.split("\n");
  const b = newText.split("\n");
  if (a.length * b.length > 4_000_000) {
    return [...a.map((text) => ({ sign: "-" as const, text })), ...b.map((text) => ({ sign: "+" as const, text }))];
  }
  const n = a.length;
  const m = b.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const lines: { sign: " " | "+" | "-"; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      lines.push({ sign: " ", text: a[i] });
      i++;
      j++;
    } else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      lines.push({ sign: "-", text: a[i++] }); // what goes before what comes
    } else {
      lines.push({ sign: "+", text: b[j++] });
    }
  }
  const last = lines[lines.length - 1];
  if (last && last.sign === " " && last.text === "") lines.pop(); // both ended with a newline
  return lines;
}

export type Question = {
  id: number;
  sessionId: string;
  message: string;
  schema: any;
  answer: (response: { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> }) => void;
};
