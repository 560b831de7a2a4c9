// Conformance matrix, Delivery and Recall rows, against the live server.
import { strict as assert } from "node:assert";
import { writeFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { EngramError } from "@engramdb/client";

import { OpenClawMemory } from "../src/memory.ts";
import { Outbox, type Entry } from "../src/outbox.ts";
import { blackHole, config, deadUrl, direct, episodesOf, tempDir, turn, unique } from "./helpers.ts";

const entry = (id: string): Entry => ({ id, kind: "episode", body: { id } });

test("the append is on disk before anything is sent; removal only after the server's success", async () => {
  const dir = tempDir();
  const seen: string[][] = [];
  const outbox = new Outbox({ dir, maxPending: 10, backoffMs: 1 }, async () => {
    seen.push(readdirSync(dir).filter((n) => n.endsWith(".json")));
  });
  outbox.append(entry("a"));
  await outbox.drain();
  assert.equal(seen[0]?.length, 1); // the file existed while it was being sent
  assert.deepEqual(outbox.pending(), []);
});

test("a transient failure retries without loss or duplicate; a malformed entry is isolated; the queue is bounded", async () => {
  const dir = tempDir();
  let calls = 0;
  const sent: string[] = [];
  const outbox = new Outbox({ dir, maxPending: 3, backoffMs: 1 }, async (e) => {
    if (++calls <= 2) throw new EngramError(503, "backend_unavailable", "busy");
    sent.push(e.id);
  });
  assert.ok(outbox.append(entry("a")) && outbox.append(entry("b")));
  assert.equal(outbox.append(entry("a")), false); // already pending
  writeFileSync(join(dir, "000000000000000-000000-bad.json"), "{not json");
  assert.ok(outbox.append(entry("c")) === false); // bounded: 3 pending already (a, b, bad)
  await outbox.drain();
  assert.deepEqual(sent, ["a", "b"]);
  assert.deepEqual(outbox.pending(), []);
  assert.deepEqual(readdirSync(outbox.rejectedDir), ["000000000000000-000000-bad.json"]);
});

test("an entry stays on disk after a shutdown timeout and a restart replays it (server down for a whole session)", async () => {
  const sender = unique("offline");
  const dir = join(tempDir(), "outbox");
  const away = new OpenClawMemory(config({ baseUrl: await deadUrl(), outboxDir: dir, flushTimeoutMs: 50 }));
  const ctx = direct(sender);
  const ids = [];
  for (const [i, said] of ["I bake rye bread.", "I cycle to work.", "I read in Welsh."].entries()) {
    const history = [...turn("earlier", "ok"), ...turn(said, "Noted.")].slice(i === 0 ? 2 : 0);
    ids.push(await away.afterTurn(history, true, ctx));
  }
  assert.equal(away.outbox.pending().length, 3); // nothing lost while the server was away
  assert.equal((await episodesOf(sender)).length, 0);
  const back = new OpenClawMemory(config({ outboxDir: dir })); // a later process, the server back
  await back.outbox.drain();
  assert.deepEqual(back.outbox.pending(), []);
  const stored = (await episodesOf(sender)).map((e) => e.event.eventId).sort();
  assert.deepEqual(stored, [...ids].sort()); // each exactly once
});

test("recall honours its timeout and fails open to an empty context", async () => {
  const hung = await blackHole();
  try {
    const memory = new OpenClawMemory(config({ baseUrl: hung.url, recallTimeoutMs: 100 }));
    const started = performance.now();
    assert.equal(await memory.recall("anything", direct(unique("timeout"))), "");
    assert.ok(performance.now() - started < 5_000); // bounded by the budget, not the 10 s request timeout
    const dead = new OpenClawMemory(config({ baseUrl: await deadUrl() }));
    assert.equal(await dead.recall("anything", direct(unique("dead"))), "");
  } finally {
    hung.server.closeAllConnections();
    hung.server.close();
  }
  const live = new OpenClawMemory(config()); // positive control: the live server recalls
  const sender = unique("live");
  await live.afterTurn(turn("My cat is called Biscuit.", "Noted."), true, direct(sender));
  assert.match(await live.recall("what is my cat called", direct(sender)), /Biscuit[\s\S]*<\/engramdb-memory>$/);
});
