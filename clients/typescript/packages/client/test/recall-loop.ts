// For bench/scripts/ts_recall.py: reads one JSON request body per line on stdin, recalls it through the
// typed client, writes the client's wall time around the call (ms) per line on stdout.
import { createInterface } from "node:readline";

import { EngramClient } from "../src/index.ts";

const [baseUrl, apiKey] = process.argv.slice(2) as [string, string];
const client = new EngramClient({ baseUrl, apiKey, timeoutMs: 30_000 });
process.stdout.write("ready\n");
for await (const line of createInterface({ input: process.stdin })) {
  const body = JSON.parse(line);
  const started = performance.now();
  const answer = await client.call("post", "/v1/recall", { body });
  const ms = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ ms, ids: answer.memories.map((m) => m.id) })}\n`);
}
