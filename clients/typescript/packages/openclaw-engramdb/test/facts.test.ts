// Conformance matrix: Contract (a replaced fact is deactivated), the explicit-write hook, and Recall
// (episodes and active facts searched separately, the full scope in each request), against the live server.
import { strict as assert } from "node:assert";
import { test } from "node:test";

import { BLOCK_CAP, EngramClient, formatContext, HEADING } from "@engramdb/client";

import { OpenClawMemory } from "../src/memory.ts";
import { storeTool } from "../src/tools.ts";
import { config, deadUrl, direct, factsOf, KEY, recordingProxy, turn, unique, URL_ } from "./helpers.ts";

const fact = (text: string, replaces?: string) => ({ action: replaces ? "replace" : "add", subject: "user", kind: "database", text, replaces });

test("replacing a fact deactivates the old one and the new one carries supersedesFactId", async () => {
  const memory = new OpenClawMemory(config());
  const ctx = direct(unique("replace"));
  const old = await memory.memoryAction(fact("The user prefers MongoDB."), ctx);
  assert.ok(old.queued && old.factId && old.status === "active", JSON.stringify(old));
  const now = await memory.memoryAction(fact("The user prefers PostgreSQL.", old.factId), ctx);
  assert.ok(now.queued && now.factId && now.factId !== old.factId, JSON.stringify(now));
  const stored = new Map((await factsOf(String(ctx.chatId))).map((f) => [f.id, f]));
  assert.equal(stored.get(old.factId)?.status, "superseded");
  assert.equal(stored.get(old.factId)?.supersededByFactId, now.factId);
  assert.equal(stored.get(now.factId)?.status, "active"); // positive control: the new one is current
  assert.equal(stored.get(now.factId)?.event.supersedesFactId, old.factId);
});

test("explicit write: a trusted add produces a fact, unsupported actions produce nothing", async () => {
  const memory = new OpenClawMemory(config());
  const ctx = direct(unique("explicit"));
  for (const request of [
    { ...fact("The user edits with Helix."), action: "remove" },
    { ...fact("The user edits with Helix."), action: "update" },
    { ...fact("The user edits with Vim."), action: "replace" }, // names no fact to replace
    { ...fact("   "), action: "add" }, // nothing to store
  ]) {
    const written = await memory.memoryAction(request, ctx);
    assert.equal(written.queued, false, request.action);
  }
  assert.deepEqual(memory.outbox.pending(), []);
  assert.deepEqual(await factsOf(String(ctx.chatId)), []);
  const added = await memory.memoryAction({ action: "add", subject: "user", kind: "editor", text: "The user edits with Helix." }, ctx);
  assert.ok(added.queued && added.factId, JSON.stringify(added)); // positive control
  const [stored] = await factsOf(String(ctx.chatId));
  assert.equal(stored?.id, added.factId);
  assert.equal(stored?.status, "active");
  assert.equal(stored?.origin, "stated");
  assert.equal(stored?.event.trustClass, "trusted");
  assert.equal(stored?.event.runtime, "openclaw");
});

test("memory_store: the model's fact is written derived (the trust policy applies); a sandboxed call writes nothing", async () => {
  const memory = new OpenClawMemory(config());
  const sender = unique("tool");
  const ctx = { agentId: "main", sessionKey: `agent:main:direct:${sender}`, sessionId: sender, requesterSenderId: sender };
  const args = { action: "add", subject: "user", kind: "tea", text: "The user likes genmaicha." };
  const sandboxed = await storeTool(memory, { ...ctx, sandboxed: true }).execute("call-1", args);
  assert.equal(sandboxed.details.queued, false);
  assert.deepEqual(await factsOf(sender), []);
  const stored = await storeTool(memory, ctx).execute("call-2", args);
  assert.ok(stored.details.queued && stored.details.factId, JSON.stringify(stored.details));
  const [kept] = await factsOf(sender);
  assert.equal(kept?.origin, "derived");
  assert.equal(kept?.status, "pending_review"); // the tenant's default policy parks a model's fact for review
});

test("recall searches episodes and active facts separately, each under the full scope", async () => {
  const proxy = await recordingProxy();
  try {
    const memory = new OpenClawMemory(config({ baseUrl: proxy.url }));
    const sender = unique("separate");
    const ctx = direct(sender);
    const old = await memory.memoryAction(fact("The user prefers MongoDB."), ctx);
    await memory.memoryAction(fact("The user prefers PostgreSQL.", old.queued ? old.factId : undefined), ctx);
    const history: ReturnType<typeof turn> = [];
    for (let i = 0; i < 12; i++) {
      history.push(...turn(`Which database should project ${i} use? The database question again.`, "Any database works."));
      await memory.afterTurn(history, true, direct(sender, `other-${sender}`));
    }
    proxy.requests.length = 0;
    const block = await memory.recall(`which database does the user prefer ${"and why ".repeat(1_500)}`, ctx);
    assert.ok(block.includes(HEADING)); // marked historical and untrusted
    assert.match(block, /PostgreSQL/); // the current fact, though twelve episodes match the words better
    assert.doesNotMatch(block, /MongoDB/); // the superseded one is not recalled ...
    assert.ok((await factsOf(sender)).some((f) => String(f.event.text).includes("MongoDB"))); // ... though it is stored
    assert.ok((block.match(/\[Memory \d+;/g) ?? []).length <= memory.config.recallLimit);
    const asked = proxy.requests.filter((r) => r.path === "/v1/recall").map((r) => r.body);
    assert.equal(asked.length, 2);
    assert.ok(asked.every((b) => String(b.query).length <= 4_000 && b.limit === memory.config.recallLimit)); // capped
    const scope = { agentId: "main", profileId: "default", privacyScope: "private", sandboxEligible: false, userId: sender };
    const bySource = Object.fromEntries(asked.map((b) => [JSON.stringify(b.sources), b]));
    assert.deepEqual(bySource['["EPISODE"]']?.scope, scope);
    assert.equal(bySource['["EPISODE"]']?.excludeSessionId, ctx.sessionId); // this session's episodes left out
    assert.deepEqual(bySource['["MEMORY_FACT"]']?.scope, scope);
    assert.equal(bySource['["MEMORY_FACT"]']?.excludeSessionId, undefined); // facts are not session-bound
    assert.equal(bySource['["MEMORY_FACT"]']?.includeHistory, undefined); // current facts only
  } finally {
    proxy.close();
  }
});

test("the plugin formats recalled memories exactly as the server's context block", async () => {
  const memory = new OpenClawMemory(config());
  const sender = unique("format");
  await memory.afterTurn(turn("My bike is a green Brompton, \u2028 \"folded\" daily.", "Noted."), true, direct(sender));
  await memory.memoryAction({ action: "add", subject: "user", kind: "bike", text: "The user rides a Brompton." }, direct(sender));
  const client = new EngramClient({ baseUrl: URL_, apiKey: KEY });
  const scope = { agentId: "main", profileId: "default", privacyScope: "private", sandboxEligible: false, userId: sender } as const;
  const answer = await client.call("post", "/v1/recall", { body: { query: "what bike does the user ride", scope, limit: 8 } });
  assert.equal(answer.memories.length, 2); // both kinds in the block compared
  assert.equal(formatContext(answer.memories), answer.context);
  const long = Array.from({ length: 10 }, (_, i) => ({ ...answer.memories[0], id: `m${i}`, text: `${i} ${"word ".repeat(1_300)}` }));
  const capped = formatContext(long as typeof answer.memories);
  assert.ok(capped.length <= BLOCK_CAP && capped.includes("[Memory 1;") && !capped.includes("[Memory 3;")); // whole memories only
});

test("recent writes are recalled before the server has them, within the participant, merged by id", async () => {
  const away = new OpenClawMemory(config({ baseUrl: await deadUrl(), flushTimeoutMs: 50, recallTimeoutMs: 200 }));
  const [sender, other] = [unique("recent"), unique("other")];
  const ctx = direct(sender);
  await away.afterTurn(turn("My cat is called Biscuit.", "Noted."), true, ctx);
  await away.memoryAction({ action: "add", subject: "user", kind: "boat", text: "The user's boat is called Heron." }, ctx);
  assert.equal(away.outbox.pending().length, 2); // nothing delivered: the server is away
  assert.match(await away.recall("what is my boat called", ctx), /Heron/);
  assert.match(await away.recall("what is my cat called", ctx, { excludeSession: false }), /Biscuit/);
  assert.doesNotMatch(await away.recall("what is my cat called", ctx), /Biscuit/); // this session's episodes left out
  assert.equal(await away.recall("what is my boat called", { ...ctx, chatId: other }), ""); // another sender, same session
  const live = new OpenClawMemory(config());
  await live.afterTurn(turn("Hello there.", "Hi."), true, ctx);
  await live.memoryAction({ action: "add", subject: "user", kind: "boat", text: "The user's boat is called Heron." }, ctx);
  const block = await live.recall("what is my boat called", ctx);
  assert.equal(block.match(/Heron/g)?.length, 1); // the server's hit and the cached write are one memory
});
