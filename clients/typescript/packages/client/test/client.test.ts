// The typed REST client against the live server the pytest driver started (ENGRAM_URL, ENGRAM_KEY).
import { strict as assert } from "node:assert";
import { test } from "node:test";

import { EngramClient, EngramError, episodeEventId } from "../src/index.ts";

const baseUrl = process.env.ENGRAM_URL ?? "";
const apiKey = process.env.ENGRAM_KEY ?? "";
const client = new EngramClient({ baseUrl, apiKey });
const userId = `client-${process.pid}-${Date.now()}`;
const scope = { agentId: "main", profileId: "default", privacyScope: "private", sandboxEligible: false, userId } as const;

test("health, scope resolution, an episode written with its TypeScript id, read back and recalled", async () => {
  const health = await client.call("get", "/healthz");
  assert.equal(typeof health.version, "string");
  const resolved = await client.call("post", "/v1/scope/resolve", { body: scope });
  const hash = resolved.scope.participantScopeHash;
  assert.match(String(hash), /^[0-9a-f]{64}$/);
  const ids = { runtime: "custom", agentId: "main", profileId: "default", externalSessionId: "ts-1", turnIndex: 0 } as const;
  const turn = { userText: "I grow chillies on the balcony.", assistantText: "Noted." };
  const written = await client.call("post", "/v1/episodes", {
    body: {
      ...ids,
      ...turn,
      ...scope,
      schemaVersion: 1,
      eventType: "episode",
      summary: turn.userText,
      conversationKind: "direct",
      visibility: "participant",
      trustClass: "mixed",
      originClass: "conversation",
      observedAt: new Date().toISOString(),
      provenance: "ts-client-test",
    },
  });
  assert.equal(written.id, episodeEventId({ ...ids, ...turn }));
  const read = await client.call("get", "/v1/episodes/{event_id}", {
    path: { event_id: written.id },
    query: { ...resolved.scope },
  });
  assert.equal(read.event.userText, turn.userText);
  const recalled = await client.call("post", "/v1/recall", { body: { query: "what grows on the balcony", scope } });
  assert.ok(recalled.memories.some((m) => m.id === written.id));
  assert.match(recalled.context, /chillies/);
});

test("a refusal is the server's problem JSON as an EngramError; an unreachable server is retryable", async () => {
  await assert.rejects(
    client.call("post", "/v1/recall", { body: { query: "", scope } }),
    (error: unknown) => error instanceof EngramError && error.status === 422 && error.code === "invalid_input" && !error.retryable,
  );
  await assert.rejects(
    new EngramClient({ baseUrl, apiKey: "egm.t1.nokey.nosecret" }).call("post", "/v1/recall", { body: { query: "x", scope } }),
    (error: unknown) => error instanceof EngramError && error.status === 401,
  );
  await assert.rejects(
    new EngramClient({ baseUrl: "http://127.0.0.1:9", timeoutMs: 2_000 }).call("get", "/healthz"),
    (error: unknown) => error instanceof EngramError && error.status === 0 && error.retryable,
  );
});
