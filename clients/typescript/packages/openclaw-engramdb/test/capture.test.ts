// Conformance matrix, Capture rows: only the latest completed pair, bounded, no tool or system text, no secrets or paths.
import { strict as assert } from "node:assert";
import { test } from "node:test";

import { capture, latestPair, type Message, TURN_CHARS } from "../src/capture.ts";

const text = (value: string) => [{ type: "text", text: value }];

test("from a mixed history only the latest completed user/assistant pair is kept", () => {
  const history: Message[] = [
    { role: "system", content: "SYSTEM-PROMPT never stored" },
    { role: "user", content: text("old question") },
    { role: "assistant", content: text("old answer"), stopReason: "stop" },
    { role: "user", content: text("Which files are in the repo?") },
    { role: "assistant", content: [{ type: "toolCall", name: "ls", arguments: {} }], stopReason: "toolUse" },
    { role: "toolResult", content: text("TOOL-OUTPUT secret listing") },
    { role: "assistant", content: text("There are three files."), stopReason: "stop" },
  ];
  const captured = capture(history);
  assert.ok(typeof captured !== "string");
  assert.equal(captured.user, "Which files are in the repo?");
  assert.equal(captured.assistant, "There are three files.");
  assert.equal(captured.turnIndex, 1);
  assert.ok(!JSON.stringify(captured).includes("TOOL-OUTPUT") && !JSON.stringify(captured).includes("SYSTEM-PROMPT"));
});

test("partial or failed turns are ignored", () => {
  for (const stopReason of ["error", "aborted", "length", "toolUse"]) {
    const failed: Message[] = [
      { role: "user", content: text("Tell me a story") },
      { role: "assistant", content: text("Once upon"), stopReason },
    ];
    assert.equal(typeof capture(failed), "string", stopReason);
  }
  assert.equal(typeof capture([{ role: "user", content: text("only a question") }]), "string");
  assert.equal(latestPair([{ role: "user", content: text("q") }, { role: "assistant", content: text("a"), stopReason: "stop" }])?.[1], "a"); // control
});

test("fake secrets, command output and local paths are never captured", () => {
  const secrets = [
    "my key is sk-proj-abcdefghijklmnop1234567890",
    "token: ghp_abcdefghijklmnopqrstuvwxyz0123",
    "export DATABASE_PASSWORD=hunter2hunter2",
    "see /home/alice/.ssh/id_rsa for it",
    "$ ls -la\ntotal 0\ndrwx alice",
    "postgres://admin:s3cr3t@db.internal/prod",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
  ];
  for (const secret of secrets) {
    const captured = capture([
      { role: "user", content: text(`Remember this please.\n${secret}`) },
      { role: "assistant", content: text("Noted."), stopReason: "stop" },
    ]);
    assert.ok(typeof captured !== "string", secret);
    for (const word of ["abcdefghijklmnop", "hunter2", "id_rsa", "drwx", "s3cr3t", "MIIEvQ"]) {
      assert.ok(!captured.user.includes(word), `${word} kept from ${secret}`);
    }
    assert.match(captured.user, /\[redacted:[a-z_]+\]/);
    assert.match(captured.user, /Remember this please\./); // the rest is kept (positive control)
  }
});

test("text is normalised and bounded; recall's own block is never stored back", () => {
  const long = "word ".repeat(3000);
  const captured = capture([
    { role: "user", content: text(`<engramdb-memory>\nOLD MEMORY\n</engramdb-memory>\n  Hello\r\n\r\n\r\n\r\nthere\u0007  `) },
    { role: "assistant", content: text(long), stopReason: "stop" },
  ]);
  assert.ok(typeof captured !== "string");
  assert.equal(captured.user, "Hello\n\nthere");
  assert.ok(captured.assistant.length <= TURN_CHARS && captured.assistant.endsWith("…"));
});
