import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import { type Entry, SessionView } from "../src/state";

const SESSION = "sess_1";

function note(update: SessionUpdate, meta?: Record<string, unknown>, sessionId = SESSION): SessionNotification {
  return { sessionId, update, ...(meta ? { _meta: { iac_code: meta } } : {}) };
}

function said(
  kind: "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk",
  text: string,
  messageId?: string,
) {
  return note({ sessionUpdate: kind, content: { type: "text", text }, ...(messageId ? { messageId } : {}) });
}

function viewOf(...updates: SessionNotification[]): SessionView {
  const view = new SessionView(SESSION);
  for (const update of updates) view.apply(update);
  return view;
}

const texts = (entries: Entry[]) => entries.map((e) => ("text" in e ? `${e.kind}:${e.text}` : e.kind));

describe("SessionView.apply: messages", () => {
  test("chunks of one message make one entry", () => {
    const view = viewOf(said("agent_message_chunk", "Hel", "m1"), said("agent_message_chunk", "lo", "m1"));
    assert.deepEqual(texts(view.entries), ["agent:Hello"]);
  });

  test("a new message id starts a new entry, as does another kind", () => {
    const view = viewOf(
      said("user_message_chunk", "hi", "u1"),
      said("agent_thought_chunk", "hm", "t1"),
      said("agent_message_chunk", "one", "m1"),
      said("agent_message_chunk", "two", "m2"),
    );
    assert.deepEqual(texts(view.entries), ["user:hi", "thought:hm", "agent:one", "agent:two"]);
  });

  test("a chunk without a message id joins the message before it", () => {
    const view = viewOf(said("agent_message_chunk", "a", "m1"), said("agent_message_chunk", "b"));
    assert.deepEqual(texts(view.entries), ["agent:ab"]);
  });

  test("content other than text is named, not dropped", () => {
    const view = viewOf(
      note({ sessionUpdate: "agent_message_chunk", content: { type: "image", data: "", mimeType: "image/png" } }),
    );
    assert.deepEqual(texts(view.entries), ["agent:[image]"]);
  });

  test("the page's own prompt is shown at once", () => {
    const view = new SessionView(SESSION);
    view.said("do it");
    assert.deepEqual(texts(view.entries), ["user:do it"]);
  });

  test("a notice is its title and description, at its severity", () => {
    const view = viewOf(note({ sessionUpdate: "notice", severity: "warning", title: "Slow", description: "retrying" }));
    assert.deepEqual(view.entries[0], { kind: "notice", key: "e1", text: "Slow: retrying", level: "warning" });
  });

  test("a plan is shown as sent", () => {
    const entries = [{ content: "read", status: "completed" as const, priority: "high" as const }];
    const view = viewOf(note({ sessionUpdate: "plan", entries }));
    assert.deepEqual(view.entries[0], { kind: "plan", key: "e1", entries });
  });
});

describe("SessionView.apply: tool calls", () => {
  test("an update changes the call it names, in place, and keeps what it does not give", () => {
    const view = viewOf(
      note({ sessionUpdate: "tool_call", toolCallId: "t1", title: "Read a.py", kind: "read", status: "pending" }),
      said("agent_message_chunk", "meanwhile", "m1"),
      note({
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "42" } }],
        rawOutput: { lines: 1 },
      }),
    );
    assert.deepEqual(
      view.entries.map((e) => e.kind),
      ["tool", "agent"],
    );
    const entry = view.entries[0];
    assert.equal(entry.kind, "tool");
    if (entry.kind !== "tool") return;
    assert.deepEqual(entry.call, {
      toolCallId: "t1",
      title: "Read a.py",
      kind: "read",
      status: "completed",
      locations: [],
      content: [{ type: "content", content: { type: "text", text: "42" } }],
      rawOutput: { lines: 1 },
    });
  });

  test("each update gives the entry a new call object, so a memoised view redraws", () => {
    const view = viewOf(note({ sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit" }));
    const entry = view.entries[0];
    if (entry.kind !== "tool") return assert.fail("not a tool entry");
    const before = entry.call;
    view.apply(note({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" }));
    assert.notEqual(entry.call, before);
    assert.equal(entry.call.status, "in_progress");
  });

  test("an update of a call never announced is shown as a call", () => {
    const view = viewOf(note({ sessionUpdate: "tool_call_update", toolCallId: "t9", status: "failed" }));
    assert.equal(view.entries.length, 1);
    const entry = view.entries[0];
    assert.ok(entry.kind === "tool" && entry.call.title === "tool" && entry.call.status === "failed");
  });
});

describe("SessionView.apply: our _meta", () => {
  test("the journal cursor is the highest seq seen, from the params or the update", () => {
    const view = viewOf(
      note({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a" } }, { seq: 7 }),
      note({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "b" } }, { seq: 5 }),
      note({
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: "c" },
        _meta: { iac_code: { seq: 9 } },
      }),
    );
    assert.equal(view.lastSeq, 9);
  });

  test("the turn's state comes from the first update an attaching client gets", () => {
    const view = viewOf(note({ sessionUpdate: "session_info_update" }, { turn: { state: "running" } }));
    assert.equal(view.turn, "running");
  });

  test("a seq that is not a number is not a cursor", () => {
    const view = viewOf(note({ sessionUpdate: "session_info_update" }, { seq: "12" }));
    assert.equal(view.lastSeq, 0);
  });

  test("session info: title, queue, steering and tasks", () => {
    const view = viewOf(
      note({
        sessionUpdate: "session_info_update",
        title: "Fix the build",
        _meta: {
          iac_code: {
            queue: [{ id: "queued_1", preview: "add a test", queuedBy: "zed" }],
            steering: { waiting: 2 },
            tasks: [{ id: "t1", command: "npm run dev", state: "running", exitCode: null, lastLines: "ready" }],
          },
        },
      }),
    );
    assert.equal(view.title, "Fix the build");
    assert.deepEqual(view.queue, [{ id: "queued_1", preview: "add a test", queuedBy: "zed" }]);
    assert.equal(view.steeringWaiting, 2);
    assert.deepEqual(view.tasks, [
      { id: "t1", command: "npm run dev", state: "running", exitCode: null, lastLines: "ready" },
    ]);
  });

  test("session info without our fields leaves them as they were", () => {
    const view = viewOf(
      note({
        sessionUpdate: "session_info_update",
        title: "T",
        _meta: { iac_code: { queue: [{ id: "q", preview: "p" }] } },
      }),
      note({ sessionUpdate: "session_info_update", updatedAt: "2026-01-01T00:00:00Z" }),
    );
    assert.equal(view.title, "T");
    assert.equal(view.queue.length, 1);
  });

  test("a rewind drops the transcript from that prompt on, the prompt included", () => {
    const view = viewOf(
      said("user_message_chunk", "first", "u1"),
      said("agent_message_chunk", "one", "m1"),
      said("user_message_chunk", "second", "u2"),
      note({ sessionUpdate: "tool_call", toolCallId: "t1", title: "Run" }),
      note({
        sessionUpdate: "session_info_update",
        _meta: { iac_code: { rewound: { toMessageId: "u2", messageCount: 2 } } },
      }),
    );
    assert.deepEqual(texts(view.entries), ["user:first", "agent:one"]);
    // The cut call is forgotten: an update naming it again is a new entry, not a hidden one.
    view.apply(note({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" }));
    assert.deepEqual(texts(view.entries), ["user:first", "agent:one", "tool"]);
  });

  test("a rewind to a prompt the page does not have changes nothing", () => {
    const view = viewOf(
      said("user_message_chunk", "first", "u1"),
      note({ sessionUpdate: "session_info_update", _meta: { iac_code: { rewound: { toMessageId: "u7" } } } }),
    );
    assert.deepEqual(texts(view.entries), ["user:first"]);
  });
});

describe("SessionView: sub-agents", () => {
  const announce = note({
    sessionUpdate: "subagent_update",
    sessionId: "child_1",
    title: "Look around",
    state: { state: "running" },
    _meta: { iac_code: { agent: "researcher" } },
  });

  test("an announced child is an entry; its own updates go into it", () => {
    const view = viewOf(announce);
    const childUpdate = note(
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "found it" } },
      { parentSessionId: SESSION },
      "child_1",
    );
    assert.equal(view.applyChild(childUpdate), true);
    const entry = view.entries[0];
    if (entry.kind !== "subagent") return assert.fail("not a sub-agent entry");
    assert.equal(entry.title, "Look around");
    assert.equal(entry.agent, "researcher");
    assert.equal(entry.state, "running");
    assert.deepEqual(texts(entry.child.entries), ["agent:found it"]);
  });

  test("an unknown child's updates are not taken", () => {
    const view = new SessionView(SESSION);
    assert.equal(view.applyChild(said("agent_message_chunk", "x")), false);
  });

  test("its end shows why it stopped, and 'done' when it does not say", () => {
    const view = viewOf(announce);
    view.apply(
      note({
        sessionUpdate: "subagent_update",
        sessionId: "child_1",
        state: { state: "idle", stopReason: "cancelled" },
      }),
    );
    const ended = view.entries[0];
    assert.ok(ended.kind === "subagent" && ended.state === "cancelled" && ended.title === "Look around");
    view.apply(note({ sessionUpdate: "subagent_update", sessionId: "child_1", state: { state: "idle" } }));
    const done = view.entries[0];
    assert.ok(done.kind === "subagent" && done.state === "done" && done.agent === "researcher");
    assert.equal(view.entries.length, 1);
  });
});

describe("SessionView: settings", () => {
  test("commands, mode, usage", () => {
    const view = viewOf(
      note({
        sessionUpdate: "available_commands_update",
        availableCommands: [
          { name: "compact", description: "Shrink the history" },
          { name: "tasks", description: "Background tasks", input: { hint: "kill <id>" } },
        ],
      }),
      note({ sessionUpdate: "current_mode_update", currentModeId: "plan" }),
      note({ sessionUpdate: "usage_update", used: 10, size: 100, cost: { amount: 0.5, currency: "USD" } }),
    );
    assert.deepEqual(view.commands, [
      { name: "compact", description: "Shrink the history", hint: undefined },
      { name: "tasks", description: "Background tasks", hint: "kill <id>" },
    ]);
    assert.equal(view.currentMode, "plan");
    assert.deepEqual(view.usage, { used: 10, size: 100, cost: { amount: 0.5, currency: "USD" } });
  });

  test("opened: modes, select options (groups flattened, booleans left out) and our role", () => {
    const view = new SessionView(SESSION);
    view.opened({
      modes: { currentModeId: "ask", availableModes: [{ id: "ask", name: "Ask", description: "asks first" }] },
      configOptions: [
        {
          type: "select",
          id: "model",
          name: "Model",
          category: "model",
          currentValue: "fast",
          options: [
            {
              group: "g",
              name: "Claude",
              options: [
                { value: "fast", name: "Fast" },
                { value: "deep", name: "Deep" },
              ],
            },
          ],
        },
        { type: "boolean", id: "verbose", name: "Verbose", currentValue: false },
      ],
      _meta: { iac_code: { role: "controller" } },
    });
    assert.deepEqual(view.modes, [{ id: "ask", name: "Ask" }]);
    assert.equal(view.currentMode, "ask");
    assert.deepEqual(view.configOptions, [
      {
        id: "model",
        name: "Model",
        category: "model",
        currentValue: "fast",
        options: [
          { value: "fast", name: "Fast" },
          { value: "deep", name: "Deep" },
        ],
      },
    ]);
    assert.equal(view.role, "controller");
  });

  test("a reopen without our role keeps the one known", () => {
    const view = new SessionView(SESSION);
    view.opened({ _meta: { iac_code: { role: "observer" } } });
    view.opened({});
    assert.equal(view.role, "observer");
  });

  test("clear: nothing shown, the cursor back to the start", () => {
    const view = viewOf(
      note({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a" } }, { seq: 3 }),
    );
    view.clear();
    assert.deepEqual(view.entries, []);
    assert.equal(view.lastSeq, 0);
  });

  test("every update, known kind or not, counts as a change", () => {
    const view = new SessionView(SESSION);
    view.apply(
      note({ sessionUpdate: "compaction_summary_chunk", compactionId: "c1", content: { type: "text", text: "x" } }),
    );
    assert.equal(view.rev, 1);
    assert.deepEqual(view.entries, []);
  });
});
