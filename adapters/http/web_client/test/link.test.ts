import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import type { AnyMessage, ClientContext, Stream } from "@agentclientprotocol/sdk";
import { bearerSubprotocol, type Dialer, Link, type LinkEvents, type Notification, reconnectDelay } from "../src/link";

// The agent's end of one connection: what the page sends, and a way to answer or hang up.
class FakeAgent {
  readonly received: AnyMessage[] = [];
  private toPage!: ReadableStreamDefaultController<AnyMessage>;
  readonly stream: Stream;

  constructor(private readonly behaviour: "accept" | "refuse" | "hang up") {
    const readable = new ReadableStream<AnyMessage>({
      start: (controller) => {
        this.toPage = controller;
      },
    });
    const writable = new WritableStream<AnyMessage>({ write: (message) => this.take(message) });
    this.stream = { readable, writable };
  }

  send(message: AnyMessage): void {
    this.toPage.enqueue(message);
  }

  hangUp(): void {
    this.toPage.close();
  }

  private take(message: AnyMessage): void {
    this.received.push(message);
    if (!("method" in message) || message.method !== "initialize" || !("id" in message)) return;
    if (this.behaviour === "accept") {
      this.send({
        jsonrpc: "2.0",
        id: message.id,
        result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] },
      });
    } else if (this.behaviour === "refuse") {
      this.send({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: "not now" } });
    } else {
      this.hangUp();
    }
  }
}

// Dials the agents it is given, in order, and keeps the retries it is asked to schedule
// (run by the test, one at a time: no real timer).
class FakeDialer implements Dialer {
  readonly protocols: string[][] = [];
  readonly delays: number[] = [];
  private retries: (() => void)[] = [];

  constructor(private readonly agents: (FakeAgent | Error)[]) {}

  dial(protocols: string[]): Stream {
    this.protocols.push(protocols);
    const next = this.agents.shift();
    if (next === undefined) throw new Error("no agent left to dial");
    if (next instanceof Error) throw next;
    return next.stream;
  }

  later(run: () => void, milliseconds: number): void {
    this.delays.push(milliseconds);
    this.retries.push(run);
  }

  retry(): void {
    const run = this.retries.shift();
    assert.ok(run, "no retry was scheduled");
    run();
  }
}

// What the link told the page, and a way to wait until it has told it something.
class Recorder implements LinkEvents {
  readonly log: string[] = [];
  readonly notifications: Notification[] = [];
  agent: ClientContext | null = null;
  private waiters: (() => void)[] = [];

  constructor(private readonly failOn: string[] = []) {}

  notify(message: Notification): void {
    if (this.failOn.includes(message.method)) throw new Error(`cannot show ${message.method}`);
    this.notifications.push(message);
    this.record(`notify ${message.method}`);
  }

  permission(): Promise<never> {
    return Promise.reject(new Error("not asked in these tests"));
  }

  elicit(): Promise<never> {
    return Promise.reject(new Error("not asked in these tests"));
  }

  async opened(agent: ClientContext): Promise<void> {
    this.agent = agent;
    this.record("opened");
  }

  closed(everOpened: boolean): void {
    this.record(`closed ${everOpened ? "after opening" : "before opening"}`);
  }

  async until(count: number): Promise<void> {
    await this.untilTrue(() => this.log.length >= count);
  }

  // Checked after each event, and each time the test's own promises settle.
  async untilTrue(done: () => boolean): Promise<void> {
    while (!done())
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setImmediate(resolve);
      });
  }

  private record(line: string): void {
    this.log.push(line);
    for (const wake of this.waiters.splice(0)) wake();
  }
}

describe("reconnectDelay", () => {
  test("doubles from half a second up to five seconds, and stays there", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 20].map(reconnectDelay), [500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });
});

describe("bearerSubprotocol", () => {
  test("is the token's UTF-8 in base64url, without padding", () => {
    assert.equal(bearerSubprotocol("s3cret"), "iac-code.bearer.czNjcmV0");
    assert.equal(bearerSubprotocol("é?>"), "iac-code.bearer.w6k_Pg");
  });
});

describe("Link", () => {
  // The link logs each connection that fails; here they fail on purpose.
  beforeEach(() => mock.method(console, "warn", () => undefined));
  afterEach(() => mock.restoreAll());

  test("offers the acp subprotocol, and the token beside it when there is one", async () => {
    const events = new Recorder();
    const dialer = new FakeDialer([new FakeAgent("accept")]);
    new Link("s3cret", events, dialer).start();
    await events.until(1);
    assert.deepEqual(dialer.protocols, [["acp", "iac-code.bearer.czNjcmV0"]]);

    const anonymous = new Recorder();
    const plain = new FakeDialer([new FakeAgent("accept")]);
    new Link(null, anonymous, plain).start();
    await anonymous.until(1);
    assert.deepEqual(plain.protocols, [["acp"]]);
  });

  test("a connection that never opens is tried again, each time after a longer wait", async () => {
    const events = new Recorder();
    const dialer = new FakeDialer([new FakeAgent("hang up"), new FakeAgent("refuse"), new Error("no network")]);
    new Link(null, events, dialer).start();
    await events.until(1);
    dialer.retry();
    await events.until(2);
    dialer.retry();
    await events.until(3);
    assert.deepEqual(events.log, ["closed before opening", "closed before opening", "closed before opening"]);
    assert.deepEqual(dialer.delays, [500, 1000, 2000]);
  });

  test("once open, the agent is handed over; when it ends, the wait starts short again", async () => {
    const failing = new FakeAgent("hang up");
    const agent = new FakeAgent("accept");
    const events = new Recorder();
    const dialer = new FakeDialer([failing, agent, new FakeAgent("hang up")]);
    const link = new Link(null, events, dialer);
    link.start();
    await events.until(1);
    dialer.retry();
    await events.until(2);
    assert.equal(events.log[1], "opened");
    assert.equal(link.agent, events.agent);
    const initialize = agent.received.find((m) => "method" in m && m.method === "initialize");
    assert.ok(initialize && "params" in initialize);
    assert.deepEqual(initialize.params, {
      protocolVersion: 1,
      clientCapabilities: {
        fs: { readTextFile: false, writeTextFile: false },
        terminal: false,
        session: { notices: {} },
        subagents: {},
        elicitation: { form: {} },
        _meta: { iac_code: { promptQueueing: true } },
      },
      clientInfo: { name: "iac-code-web", version: "0.1.0" },
    });
    agent.hangUp();
    await events.until(3);
    assert.equal(events.log[2], "closed after opening");
    assert.equal(link.agent, null);
    assert.deepEqual(dialer.delays, [500, 500]);
  });

  test("stopped, it neither reports the end nor tries again", async () => {
    const agent = new FakeAgent("accept");
    const events = new Recorder();
    const dialer = new FakeDialer([agent]);
    const link = new Link(null, events, dialer);
    link.start();
    await events.until(1);
    link.stop();
    agent.hangUp();
    // The link lets go of the agent just before it would report the end and retry.
    await events.untilTrue(() => link.agent === null);
    assert.deepEqual(events.log, ["opened"]);
    assert.deepEqual(dialer.delays, []);
  });

  test("every notification reaches the page, kinds the SDK does not know included", async () => {
    const agent = new FakeAgent("accept");
    const events = new Recorder();
    new Link(null, events, new FakeDialer([agent])).start();
    await events.until(1);
    const update = { sessionId: "s", update: { sessionUpdate: "something_new", detail: 1 } };
    agent.send({ jsonrpc: "2.0", method: "session/update", params: update });
    agent.send({ jsonrpc: "2.0", method: "_iac_code/ping", params: { n: 2 } });
    await events.until(3);
    assert.deepEqual(events.notifications, [
      { method: "session/update", params: update },
      { method: "_iac_code/ping", params: { n: 2 } },
    ]);
  });

  test("a notification the page fails on is skipped; the connection goes on", async () => {
    const agent = new FakeAgent("accept");
    const events = new Recorder(["bad"]);
    new Link(null, events, new FakeDialer([agent])).start();
    await events.until(1);
    agent.send({ jsonrpc: "2.0", method: "bad", params: {} });
    agent.send({ jsonrpc: "2.0", method: "good", params: {} });
    await events.until(2);
    assert.deepEqual(events.log, ["opened", "notify good"]);
  });
});
