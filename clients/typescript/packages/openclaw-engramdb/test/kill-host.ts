// A host process for the kill test: queues one turn and delivers it through `process.argv[2]` (a proxy
// that lets the request reach the server but never answers), so the test can kill it mid-delivery.
import { OpenClawMemory } from "../src/memory.ts";
import { config, direct, turn } from "./helpers.ts";

const [baseUrl, outboxDir, sender] = process.argv.slice(2) as [string, string, string];
const memory = new OpenClawMemory(config({ baseUrl, outboxDir, flushTimeoutMs: 30_000 }));
process.stdout.write("queued\n");
await memory.afterTurn(turn("I keep spare keys under the blue pot.", "Noted."), true, direct(sender, `kill-${sender}`));
