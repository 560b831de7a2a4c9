/** Shared by the plugin's tests: the live server the pytest driver started, temp folders, contexts. */
import { mkdtempSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { EngramClient } from "@engramdb/client";

import { parseConfig, type MemoryConfig } from "../src/config.ts";
import type { Message } from "../src/capture.ts";
import type { HookContext } from "../src/scope.ts";

export const URL_ = process.env.ENGRAM_URL ?? "";
export const KEY = process.env.ENGRAM_KEY ?? "";
if (!URL_ || !KEY) throw new Error("run through tests/typescript (it starts the server and sets ENGRAM_URL, ENGRAM_KEY)");

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "engramdb-openclaw-"));
}

export function config(overrides: Record<string, unknown> = {}): MemoryConfig {
  return parseConfig({ baseUrl: URL_, apiKey: KEY, outboxDir: join(tempDir(), "outbox"), recallTimeoutMs: 5_000, ...overrides });
}

let counter = 0;
/** A direct chat with `sender`, a fresh session each call unless given. */
export function direct(sender: string, session?: string): HookContext {
  const id = session ?? `s-${process.pid}-${Date.now()}-${counter++}`;
  return { agentId: "main", sessionKey: `agent:main:direct:${id}`, sessionId: id, trigger: "user", chatId: sender };
}

export function turn(user: string, assistant: string): Message[] {
  return [
    { role: "user", content: [{ type: "text", text: user }] },
    { role: "assistant", content: [{ type: "text", text: assistant }], stopReason: "stop" },
  ];
}

/** The episodes stored for `userId` (agent main, profile default), as the server lists them. */
export async function episodesOf(userId: string): Promise<Array<{ event: Record<string, unknown> }>> {
  const client = new EngramClient({ baseUrl: URL_, apiKey: KEY });
  const scope = { agentId: "main", profileId: "default", userId, privacyScope: "private", sandboxEligible: false } as const;
  const resolved = await client.call("post", "/v1/scope/resolve", { body: scope });
  const listed = await client.call("get", "/v1/episodes", { query: { ...resolved.scope, limit: 50 } as never });
  return (listed as unknown as { episodes: Array<{ event: Record<string, unknown> }> }).episodes;
}

/** A loopback server that accepts connections and never answers (a hung server). */
export async function blackHole(): Promise<{ url: string; server: Server }> {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { url: `http://127.0.0.1:${address.port}`, server };
}

/** A URL nothing listens on (a server that is down). */
export async function deadUrl(): Promise<string> {
  const { url, server } = await blackHole();
  await new Promise((resolve) => server.close(resolve));
  return url;
}

export const unique = (label: string): string => `${label}-${process.pid}-${Date.now()}-${counter++}`;

/** The facts stored for `userId` (agent main, profile default), retired ones too, as the server lists them. */
export async function factsOf(userId: string): Promise<Array<Record<string, unknown> & { event: Record<string, unknown> }>> {
  const client = new EngramClient({ baseUrl: URL_, apiKey: KEY });
  const scope = { agentId: "main", profileId: "default", userId, privacyScope: "private", sandboxEligible: false } as const;
  const resolved = await client.call("post", "/v1/scope/resolve", { body: scope });
  const query = { ...resolved.scope, limit: 50, includeHistory: true, includePending: true } as never;
  const listed = await client.call("get", "/v1/facts", { query });
  return (listed as unknown as { facts: Array<Record<string, unknown> & { event: Record<string, unknown> }> }).facts;
}

export interface Recorded {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

/** A loopback proxy to the live server that records each request (the filters actually sent). */
export async function recordingProxy(): Promise<{ url: string; requests: Recorded[]; close: () => void }> {
  const requests: Recorded[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: incoming.method ?? "", path: (incoming.url ?? "").split("?")[0] ?? "", body: text ? JSON.parse(text) : {} });
      const upstream = request(new URL(incoming.url ?? "/", URL_), { method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      upstream.on("error", () => outgoing.destroy());
      upstream.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
