/** The plugin's settings (`plugins.entries.engramdb.config` in openclaw.json), checked and defaulted. */
import { homedir } from "node:os";
import { join } from "node:path";

export interface MemoryConfig {
  baseUrl: string;
  apiKey: string | undefined;
  agentId: string | undefined; // default: the OpenClaw agent's id
  profileId: string;
  recallTimeoutMs: number; // fail-open budget before the prompt; reference 300 ms, clamped 50 ms - 30 s
  recallLimit: number; // 1-20, reference 8
  flushTimeoutMs: number; // how long a completed turn waits for its delivery before the run goes on
  outboxDir: string;
  maxPending: number; // the outbox's bound
}

export const RECALL_TIMEOUT_MS = { default: 300, min: 50, max: 30_000 };

function clamp(value: unknown, fallback: number, min: number, max: number): number {
  const n = typeof value === "number" && Number.isFinite(value) ? value : fallback;
  return Math.min(max, Math.max(min, Math.round(n)));
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/** The state folder OpenClaw uses (OPENCLAW_STATE_DIR, else ~/.openclaw). */
export function stateDir(): string {
  return text(process.env.OPENCLAW_STATE_DIR) ?? join(homedir(), ".openclaw");
}

export function parseConfig(raw: Record<string, unknown> | undefined): MemoryConfig {
  const config = raw ?? {};
  return {
    baseUrl: text(config.baseUrl) ?? text(process.env.ENGRAM_URL) ?? "http://127.0.0.1:8765",
    apiKey: text(config.apiKey) ?? text(process.env.ENGRAM_API_KEY),
    agentId: text(config.agentId),
    profileId: text(config.profileId) ?? "default",
    recallTimeoutMs: clamp(config.recallTimeoutMs, RECALL_TIMEOUT_MS.default, RECALL_TIMEOUT_MS.min, RECALL_TIMEOUT_MS.max),
    recallLimit: clamp(config.recallLimit, 8, 1, 20),
    flushTimeoutMs: clamp(config.flushTimeoutMs, 2_000, 0, 30_000),
    outboxDir: text(config.outboxDir) ?? join(stateDir(), "engramdb", "outbox"),
    maxPending: clamp(config.maxPending, 512, 1, 100_000),
  };
}
