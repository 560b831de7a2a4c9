// Conformance matrix, lifecycle hooks, fired through the plugin entry by OpenClaw's own hook names and
// event shapes (the names are type-checked against the installed openclaw package), against the live server.
import { strict as assert } from "node:assert";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { test } from "node:test";

import plugin, { memoryFor } from "../src/index.ts";
import { OpenClawMemory } from "../src/memory.ts";
import { blackHole, config, direct, episodesOf, recordingProxy, tempDir, turn, unique } from "./helpers.ts";

type Handler = (event: unknown, ctx: unknown) => unknown;

/** The plugin as OpenClaw's loader registers it: its hooks by name, its settings from openclaw.json. */
function loaded(settings: Record<string, unknown>) {
  const hooks = new Map<string, Handler[]>();
  const warnings: string[] = [];
  const api = {
    pluginConfig: { apiKey: config().apiKey, recallTimeoutMs: 5_000, ...settings },
    logger: { info: () => undefined, warn: (m: string) => warnings.push(m), error: () => undefined, debug: () => undefined },
    on: (name: string, handler: Handler) => hooks.set(name, [...(hooks.get(name) ?? []), handler]),
    registerTool: () => undefined,
  };
  plugin.register(api as never);
  const memory = memoryFor(api as never); // the instance the hooks run on
  const fire = async (name: string, event: unknown, ctx: unknown): Promise<unknown> => {
    const handlers = hooks.get(name);
    assert.ok(handlers?.length, `no handler for ${name}`);
    return (await Promise.all(handlers.map((h) => h(event, ctx))))[0];
  };
  return { fire, hooks, warnings, memory };
}

const connections = (server: Server) => new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)));
/** Wait (at most 5 s) until `check` holds: requests made in the background arrive when they arrive. */
async function until(check: () => boolean | Promise<boolean>): Promise<boolean> {
  for (let waited = 0; waited < 5_000; waited += 20) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
const pending = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".json"));
const agentEnd = (messages: unknown[]) => ({ messages, success: true, durationMs: 5 });
const history = (n: number) => Array.from({ length: n }, (_, i) => turn(`question ${i} about the garden`, `answer ${i}`)).flat();

test("the entry registers OpenClaw's hooks for every lifecycle row", () => {
  const { hooks } = loaded({ baseUrl: "http://127.0.0.1:9", outboxDir: join(tempDir(), "outbox") });
  const expected = ["before_model_resolve", "before_prompt_build", "agent_end", "before_compaction", "session_start", "session_end", "gateway_stop"];
  assert.deepEqual([...hooks.keys()].sort(), expected.sort());
});

test("start-up: a failure to set up the outbox degrades safely (recall works, writes are refused)", async () => {
  const file = join(tempDir(), "not-a-folder");
  writeFileSync(file, "x");
  const sender = unique("degraded");
  await new OpenClawMemory(config()).afterTurn(turn("My boat is called Heron.", "Noted."), true, direct(sender));
  const broken = new OpenClawMemory(config({ outboxDir: join(file, "outbox") }));
  assert.match(String(broken.outbox.degraded), /cannot be set up/);
  assert.match(await broken.recall("what is my boat called", direct(sender)), /Heron/); // recall still works
  assert.equal(await broken.afterTurn(turn("My car is blue.", "Noted."), true, direct(sender)), undefined);
  assert.equal((await broken.memoryAction({ action: "add", subject: "user", kind: "car", text: "The car is blue." }, direct(sender))).queued, false);
  assert.equal((await episodesOf(sender)).length, 1); // only the control's turn
});

test("completed turn: exactly one bounded episode per successful primary turn", async () => {
  const dir = join(tempDir(), "outbox");
  const { fire } = loaded({ baseUrl: "http://127.0.0.1:9", outboxDir: dir, flushTimeoutMs: 0 }); // nothing delivered: the queue shows it
  const ctx = direct(unique("turns"));
  await fire("agent_end", agentEnd(turn("x".repeat(50_000), "Noted.")), ctx);
  await fire("agent_end", agentEnd(turn("x".repeat(50_000), "Noted.")), ctx); // the same turn again
  await fire("agent_end", { ...agentEnd(turn("Is it Tuesday?", "Error")), success: false }, ctx); // a failed run
  await fire("agent_end", agentEnd(turn("It is Tuesday.", "Noted.")), { ...ctx, trigger: "cron" }); // not a person's turn
  const queued = pending(dir).map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")).body as Record<string, unknown>);
  assert.equal(queued.length, 1);
  assert.ok(String(queued[0]?.userText).length <= 4_000);
});

test("pre-compaction: the last eligible pair is queued, not the transcript, under the session's admitted context", async () => {
  const dir = join(tempDir(), "outbox");
  const { fire } = loaded({ outboxDir: dir });
  const sender = unique("compaction");
  const ctx = direct(sender);
  const transcript = [{ role: "system", content: "You are helpful." }, ...history(10)];
  const hookCtx = { agentId: "main", sessionKey: ctx.sessionKey, sessionId: ctx.sessionId }; // no sender: as OpenClaw sends it
  await fire("before_compaction", { messageCount: 21, messages: transcript }, hookCtx);
  assert.deepEqual(await episodesOf(sender), []); // a session no person's turn admitted gets nothing
  await fire("agent_end", agentEnd(history(1)), ctx);
  await fire("before_compaction", { messageCount: 21, messages: transcript }, hookCtx);
  const file = join(tempDir(), "session.jsonl"); // the runtimes that pass the transcript file instead
  writeFileSync(file, transcript.map((message) => JSON.stringify({ type: "message", message })).join("\n"));
  await fire("before_compaction", { messageCount: -1, sessionFile: file }, hookCtx);
  const compacted = [{ role: "compactionSummary", summary: "ten questions about the garden" }, ...turn("question 10 about the garden", "answer 10")];
  await fire("agent_end", agentEnd(compacted), ctx); // the next turn counts on, though the transcript is shorter
  const stored = (await episodesOf(sender)).map((e) => [e.event.userText, e.event.turnIndex]);
  const expected = [["question 0 about the garden", 0], ["question 10 about the garden", 10], ["question 9 about the garden", 9]];
  assert.deepEqual(stored.sort(), expected);
  assert.deepEqual(pending(dir), []);
});

test("session switch: the session id and turn counter change; a stale prefetched recall is not used", async () => {
  const proxy = await recordingProxy();
  try {
    const { fire } = loaded({ baseUrl: proxy.url, outboxDir: join(tempDir(), "outbox") });
    const sender = unique("switch");
    const key = `agent:main:direct:${sender}`;
    const inA = { ...direct(sender, `a-${sender}`), sessionKey: key };
    const inB = { ...inA, sessionId: `b-${sender}` };
    const recalls = () => proxy.requests.filter((r) => r.path === "/v1/recall").length;
    await fire("agent_end", agentEnd(history(1)), inA);
    await fire("agent_end", agentEnd(history(2)), inA);
    await fire("before_model_resolve", { prompt: "what grows in my garden?" }, inA); // a prefetch: 2 searches
    assert.ok(await until(() => recalls() === 2));
    await fire("session_start", { sessionId: inB.sessionId, sessionKey: key }, { sessionId: inB.sessionId, sessionKey: key });
    await fire("before_prompt_build", { prompt: "what grows in my garden?", messages: [] }, inB);
    assert.equal(recalls(), 4); // the stale prefetch was dropped: the new session searched again
    await fire("before_model_resolve", { prompt: "and the roses?" }, inB);
    await fire("before_prompt_build", { prompt: "and the roses?", messages: [] }, inB);
    assert.equal(recalls(), 6); // positive control: a prefetch of the same session is used, not repeated
    await fire("agent_end", agentEnd(turn("I planted tulips.", "Nice.")), inB);
    const stored = (await episodesOf(sender)).map((e) => [e.event.externalSessionId, e.event.turnIndex]);
    assert.deepEqual(stored.sort(), [[inA.sessionId, 0], [inA.sessionId, 1], [inB.sessionId, 0]].sort());
  } finally {
    proxy.close();
  }
});

test("session end: a bounded flush runs and what the session held is released", async () => {
  const hung = await blackHole();
  try {
    const dir = join(tempDir(), "outbox");
    const { fire } = loaded({ baseUrl: hung.url, outboxDir: dir, flushTimeoutMs: 300 });
    const ctx = direct(unique("ending"));
    const hookCtx = { agentId: "main", sessionKey: ctx.sessionKey, sessionId: ctx.sessionId };
    await fire("agent_end", agentEnd(history(1)), ctx);
    await fire("before_compaction", { messageCount: 4, messages: history(2) }, hookCtx);
    assert.equal(pending(dir).length, 2); // control: the session is known, so compaction queues its pair
    const started = performance.now();
    await fire("session_end", { sessionId: ctx.sessionId, sessionKey: ctx.sessionKey, messageCount: 4, reason: "idle" }, hookCtx);
    assert.ok(performance.now() - started < 2_000); // bounded by flushTimeoutMs, not the 10 s request timeout
    assert.equal(pending(dir).length, 2); // undelivered, still on disk
    await fire("before_compaction", { messageCount: 6, messages: history(3) }, hookCtx);
    assert.equal(pending(dir).length, 2); // released: the ended session's context is gone
  } finally {
    hung.server.closeAllConnections();
    hung.server.close();
  }
});

test("shutdown: the worker stops within its budget; pending events stay on disk for the next process", async () => {
  const hung = await blackHole();
  const dir = join(tempDir(), "outbox");
  const sender = unique("shutdown");
  try {
    const { fire, memory } = loaded({ baseUrl: hung.url, outboxDir: dir, flushTimeoutMs: 50 });
    await fire("agent_end", agentEnd(turn("The spare key is in the drawer.", "Noted.")), direct(sender));
    assert.ok(await until(async () => (await connections(hung.server)) >= 1)); // the delivery is in flight, unanswered
    assert.ok(memory.outbox.running); // control: the worker waits on it
    const started = performance.now();
    await fire("gateway_stop", { reason: "shutdown" }, {});
    const took = performance.now() - started;
    assert.ok(took >= 1_900 && took < 4_000, `${took} ms`); // the 2 s budget, not the 10 s request timeout
    assert.equal(memory.outbox.running, false); // the worker stopped: its request was cut short
    assert.equal(pending(dir).length, 1);
  } finally {
    hung.server.closeAllConnections();
    hung.server.close();
  }
  const next = new OpenClawMemory(config({ outboxDir: dir })); // the next start, the server back
  await next.outbox.drain();
  assert.deepEqual(pending(dir), []);
  assert.deepEqual((await episodesOf(sender)).map((e) => e.event.userText), ["The spare key is in the drawer."]);
});
