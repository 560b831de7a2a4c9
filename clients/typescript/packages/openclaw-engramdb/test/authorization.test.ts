// Conformance matrix, Authorization and Contract rows: what may write and recall, and under which scope.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { EngramClient, EngramError } from "@engramdb/client";

import { OpenClawMemory } from "../src/memory.ts";
import { verdictOf } from "../src/scope.ts";
import { config, direct, episodesOf, KEY, turn, unique, URL_ } from "./helpers.ts";

const REFUSED: Array<[string, Record<string, unknown>]> = [
  ["group session", { sessionKey: "agent:main:discord:group:42" }],
  ["channel session", { sessionKey: "agent:main:slack:channel:c1" }],
  ["cron session", { sessionKey: "agent:main:cron:nightly" }],
  ["heartbeat session", { sessionKey: "agent:main:heartbeat" }],
  ["hook session", { sessionKey: "agent:main:hook:gmail" }],
  ["subagent session", { sessionKey: "agent:main:subagent:7" }],
  ["active-memory session", { sessionKey: "agent:main:active-memory:x" }],
  ["node session", { sessionKey: "agent:main:node:n1" }],
  ["incognito session", { sessionKey: "agent:main:incognito:x" }],
  ["global session", { sessionKey: "global" }],
  ["cron trigger", { trigger: "cron" }],
  ["heartbeat trigger", { trigger: "heartbeat" }],
  ["no trigger", { trigger: undefined }],
  ["group chat type", { channelContext: { chat: { id: "g", type: "group" } } }],
  ["missing sender", { chatId: undefined }],
  ["blank sender", { chatId: "  " }],
  ["missing session id", { sessionId: undefined }],
  ["malformed session id", { sessionId: "a b" }],
  ["ambiguous session id", { sessionId: "unknown" }],
  ["missing agent", { agentId: undefined }],
];

test("group, cron, hook, subagent and malformed contexts neither recall nor write", async () => {
  const memory = new OpenClawMemory(config());
  for (const [label, change] of REFUSED) {
    const ctx = { ...direct(unique("refused")), ...change };
    assert.equal(verdictOf(ctx).ok, false, label);
    assert.equal(await memory.afterTurn(turn("I keep my bike in the shed.", "Noted."), true, ctx), undefined, label);
    assert.equal(await memory.recall("bike", ctx), "", label);
  }
  assert.deepEqual(memory.outbox.pending(), []); // nothing queued on disk either
  // positive control: the same turn in a direct chat with a person is written
  const sender = unique("allowed");
  assert.ok(await memory.afterTurn(turn("I keep my bike in the shed.", "Noted."), true, direct(sender)));
  assert.equal((await episodesOf(sender)).length, 1);
});

test("the participant is the sender, hashed by the server: one sender's memory never reaches another", async () => {
  const memory = new OpenClawMemory(config());
  const [alice, bob] = [unique("alice"), unique("bob")];
  await memory.afterTurn(turn("My locker code word is heliotrope.", "Noted."), true, direct(alice));
  const forAlice = await memory.recall("what is my locker code word?", direct(alice));
  assert.match(forAlice, /heliotrope/); // positive control
  assert.equal(await memory.recall("what is my locker code word?", direct(bob)), "");
  const [stored] = await episodesOf(alice);
  assert.match(String(stored?.event.participantScopeHash), /^[0-9a-f]{64}$/);
  assert.ok(!JSON.stringify(stored).includes(alice)); // the raw sender id is not stored
  assert.equal((await episodesOf(bob)).length, 0);
});

test("repeated delivery of the same turn upserts one episode with the TypeScript-computed id", async () => {
  const memory = new OpenClawMemory(config());
  const ctx = direct(unique("repeat"));
  const first = await memory.afterTurn(turn("I water the ferns on Sundays.", "Noted."), true, ctx);
  const again = await memory.afterTurn(turn("I water the ferns on Sundays.", "Noted."), true, ctx);
  assert.ok(first && first === again);
  const stored = await episodesOf(String(ctx.chatId));
  assert.deepEqual(stored.map((e) => e.event.eventId), [first]);
});

test("a blank agentId or profileId, a blank or missing participant is refused by the server; the plugin's body is accepted", async () => {
  const memory = new OpenClawMemory(config({ flushTimeoutMs: 0 }));
  const sender = unique("blank");
  const id = await memory.afterTurn(turn("I swim on Mondays.", "Noted."), true, direct(sender));
  const [name] = memory.outbox.pending();
  const body = JSON.parse(readFileSync(join(memory.outbox.dir, String(name)), "utf8")).body as Record<string, unknown>;
  const client = new EngramClient({ baseUrl: URL_, apiKey: KEY });
  for (const [field, value] of [["agentId", " "], ["profileId", ""], ["userId", " "], ["userId", undefined]] as const) {
    const broken = { ...body, [field]: value };
    await assert.rejects(client.call("post", "/v1/episodes", { body: broken as never }), (e: unknown) => e instanceof EngramError && e.status >= 400 && e.status < 500, `${field}=${JSON.stringify(value)}`);
  }
  await memory.outbox.drain(); // positive control: the plugin's own body, as queued, is stored
  assert.deepEqual((await episodesOf(sender)).map((e) => e.event.eventId), [id]);
});
