// For tests/typescript/test_capture_rules.py: reads [[user, assistant], ...] on stdin, writes what the
// plugin's capture keeps of each pair ({user, assistant, summary} or {refused}) as a JSON array.
import { readFileSync } from "node:fs";

import { capture } from "../src/capture.ts";

const pairs = JSON.parse(readFileSync(0, "utf8")) as Array<[string, string]>;
const kept = pairs.map(([user, assistant]) => {
  const result = capture([
    { role: "user", content: [{ type: "text", text: user }] },
    { role: "assistant", content: [{ type: "text", text: assistant }], stopReason: "stop" },
  ]);
  return typeof result === "string" ? { refused: true } : { user: result.user, assistant: result.assistant, summary: result.summary };
});
process.stdout.write(JSON.stringify(kept));
