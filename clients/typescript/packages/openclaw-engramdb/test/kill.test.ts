// Conformance matrix, Delivery row: host kill mid-delivery, every turn lands exactly once.
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { createServer, request } from "node:http";
import { join } from "node:path";
import { test } from "node:test";

import { OpenClawMemory } from "../src/memory.ts";
import { URL_, config, episodesOf, tempDir, unique } from "./helpers.ts";

test("a host killed while its write is in flight loses nothing and duplicates nothing", async () => {
  let forwarded = 0;
  let landed: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (landed = resolve));
  // Forwards each request to the server, lets it answer there, and never answers the host.
  const proxy = createServer((incoming) => {
    const upstream = new URL(incoming.url ?? "/", URL_);
    const out = request(upstream, { method: incoming.method, headers: incoming.headers }, (answer) => {
      answer.resume();
      answer.on("end", () => {
        forwarded++;
        landed();
      });
    });
    incoming.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const address = proxy.address();
  assert.ok(address && typeof address !== "string");
  const dir = join(tempDir(), "outbox");
  const sender = unique("killed");
  const host = spawn(process.execPath, [new URL("./kill-host.ts", import.meta.url).pathname, `http://127.0.0.1:${address.port}`, dir, sender], {
    env: process.env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  await reached; // the server has stored the episode; the host still waits for its answer
  host.kill("SIGKILL");
  await new Promise((resolve) => host.once("exit", resolve));
  proxy.closeAllConnections();
  proxy.close();
  assert.equal(forwarded, 1);
  const replay = new OpenClawMemory(config({ outboxDir: dir })); // the next process
  assert.equal(replay.outbox.pending().length, 1); // the entry outlived the kill
  await replay.outbox.drain();
  assert.deepEqual(replay.outbox.pending(), []);
  const stored = await episodesOf(sender);
  assert.equal(stored.length, 1); // exactly once, though it was sent twice
  assert.equal(stored[0]?.event.userText, "I keep spare keys under the blue pot.");
});
