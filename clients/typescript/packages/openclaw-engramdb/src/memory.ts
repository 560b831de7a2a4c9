/**
 * The adapter runtime: recall before the prompt (fail-open, bounded; prefetched when OpenClaw gives
 * an earlier hook), an episode per completed turn and the last pair before a compaction, explicit
 * facts, all through the durable outbox, and only where the context allows memory (scope.ts).
 * Session boundaries release what a session held; `close` stops the worker within its budget.
 */
import { readFileSync } from "node:fs";

import { canonicalJson, type components, EngramClient, episodeEventId, type Json, sha256Hex } from "@engramdb/client";

import { capture, type Message } from "./capture.ts";
import type { MemoryConfig } from "./config.ts";
import { factFields, factKey, type MemoryAction } from "./facts.ts";
import { Outbox, type Entry } from "./outbox.ts";
import { render, searchBoth } from "./recall.ts";
import { withRecent } from "./recent.ts";
import { type HookContext, verdictOf, type Allowed } from "./scope.ts";
import { type SessionState, Sessions } from "./sessions.ts";

export const RUNTIME = "openclaw";
export const SHUTDOWN_MS = 2_000; // the reference's flush budget at shutdown (and OpenClaw's session_end drain)
type Memory = components["schemas"]["RecalledMemory"];
type WriteResponse = components["schemas"]["WriteResponse"];

export interface Logger {
  info?: (message: string) => void;
  warn?: (message: string) => void;
}

/** What an explicit write did: the fact (its id once the server has it), or why nothing was written. */
export type Written = { queued: true; factId?: string; status?: string } | { queued: false; reason: string };

export class OpenClawMemory {
  readonly config: MemoryConfig;
  readonly client: EngramClient;
  readonly outbox: Outbox;
  readonly sessions = new Sessions();
  readonly #log: Logger;
  readonly #answers = new Map<string, WriteResponse>(); // a fact entry's server answer, until read

  constructor(config: MemoryConfig, log: Logger = {}) {
    this.config = config;
    this.#log = log;
    this.client = new EngramClient({ baseUrl: config.baseUrl, apiKey: config.apiKey, timeoutMs: 10_000 });
    this.outbox = new Outbox({ dir: config.outboxDir, maxPending: config.maxPending }, (entry, signal) => this.#send(entry, signal));
    if (this.outbox.degraded) log.warn?.(`engramdb: memory writes disabled, recall still works: ${this.outbox.degraded}`);
  }

  #scope(allowed: Allowed): components["schemas"]["ScopeFields"] {
    return { agentId: allowed.agentId, profileId: this.config.profileId, privacyScope: "private", sandboxEligible: false, userId: allowed.userId };
  }

  async #send(entry: Entry, signal: AbortSignal): Promise<void> {
    if (entry.kind === "fact") {
      const body = entry.body as components["schemas"]["FactWrite"];
      const answer = await this.client.call("post", "/v1/facts", { body, query: { origin: entry.origin ?? "stated" }, signal });
      if (this.#answers.size < 1_000) this.#answers.set(entry.id, answer);
      return;
    }
    await this.client.call("post", "/v1/episodes", { body: entry.body as components["schemas"]["EpisodeWrite"], signal });
  }

  /** The verdict for a person's turn; an allowed one records the session (a new id switches it). */
  #admit(ctx: HookContext): { verdict: Allowed; state: SessionState } | undefined {
    const verdict = verdictOf(ctx, this.config.agentId);
    return verdict.ok ? { verdict, state: this.sessions.admit(ctx, verdict) } : undefined;
  }

  // -- recall ----------------------------------------------------------------------------

  #search(verdict: Allowed, query: string, excludeSession: boolean): { answer: Promise<Memory[]>; abort: AbortController } {
    const abort = new AbortController();
    const ask = { query, scope: this.#scope(verdict), limit: this.config.recallLimit, excludeSessionId: excludeSession ? verdict.sessionId : undefined };
    const answer = searchBoth(this.client, ask, abort.signal);
    answer.catch(() => undefined); // awaited (or dropped) later; never an unhandled rejection
    return { answer, abort };
  }

  /** Start recall for the turn's prompt early (OpenClaw's `before_model_resolve`); `recall` uses it. */
  prefetch(query: string, ctx: HookContext): void {
    const admitted = query.trim() ? this.#admit(ctx) : undefined;
    if (!admitted || this.outbox.closed) return;
    admitted.state.prefetch?.abort.abort();
    admitted.state.prefetch = { query, ...this.#search(admitted.verdict, query, true) };
  }

  /** The memory block to prepend to this turn's prompt, or "" (refused, nothing found, error, timeout). */
  async recall(query: string, ctx: HookContext, options: { excludeSession?: boolean; admit?: boolean } = {}): Promise<string> {
    const verdict = options.admit === false ? verdictOf(ctx, this.config.agentId) : this.#admit(ctx)?.verdict;
    if (!verdict?.ok || !query.trim() || this.outbox.closed) return "";
    const state = this.sessions.get(ctx.sessionKey);
    const admitted = options.admit !== false && state !== undefined;
    const prefetched = admitted && state.prefetch?.query === query ? state.prefetch : undefined;
    if (admitted) state.prefetch = undefined; // used once; one for another query is stale
    const flight = prefetched ?? this.#search(verdict, query, options.excludeSession !== false);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Memory[]>((resolve) => {
      timer = setTimeout(() => {
        flight.abort.abort();
        resolve([]);
      }, this.config.recallTimeoutMs);
    });
    const found = await Promise.race([flight.answer, late]).catch((error: unknown) => {
      this.#log.warn?.(`engramdb: recall failed open: ${String(error)}`);
      return [] as Memory[];
    });
    clearTimeout(timer);
    const exclude = options.excludeSession === false ? undefined : verdict.sessionId;
    const cached = state?.recent.search(query, verdict.userId, this.config.recallLimit, exclude) ?? [];
    return render(withRecent(found, cached, this.config.recallLimit));
  }

  // -- episodes --------------------------------------------------------------------------

  /** Queue the completed turn's episode on disk, then deliver it within the flush budget. */
  async afterTurn(messages: readonly Message[], success: boolean, ctx: HookContext): Promise<string | undefined> {
    const admitted = success ? this.#admit(ctx) : undefined;
    return admitted ? this.#queueLastPair(messages, admitted.state, "openclaw:agent_end") : undefined;
  }

  /**
   * Before OpenClaw compacts a session: queue its transcript's last eligible pair (not the
   * transcript), under the context the session's last person's turn was admitted with. The hook
   * carries no sender, so a session this plugin has not admitted gets nothing.
   */
  async beforeCompaction(messages: readonly unknown[] | undefined, sessionFile: string | undefined, ctx: HookContext): Promise<string | undefined> {
    const state = this.sessions.get(ctx.sessionKey);
    if (!state || (ctx.sessionId && ctx.sessionId !== state.sessionId)) return undefined;
    const transcript = (messages ?? (sessionFile ? readTranscript(sessionFile) : [])) as Message[];
    return this.#queueLastPair(transcript, state, "openclaw:before_compaction");
  }

  async #queueLastPair(messages: readonly Message[], state: SessionState, provenance: string): Promise<string | undefined> {
    const captured = capture(messages);
    if (typeof captured === "string") return undefined;
    const digest = sha256Hex(canonicalJson([captured.user, captured.assistant]));
    if (state.last?.digest === digest) return state.last.eventId; // a retry, or the same pair again
    const turnIndex = Math.max(captured.turnIndex, state.nextTurn); // a compacted transcript counts fewer turns
    const verdict = state.verdict;
    const fields = {
      runtime: RUNTIME,
      agentId: verdict.agentId,
      profileId: this.config.profileId,
      externalSessionId: verdict.sessionId,
      turnIndex,
      userText: captured.user,
      assistantText: captured.assistant,
    } as const;
    const eventId = episodeEventId(fields);
    const body: components["schemas"]["EpisodeWrite"] = {
      ...fields,
      ...this.#scope(verdict),
      schemaVersion: 1,
      eventType: "episode",
      eventId,
      summary: captured.summary,
      conversationKind: "direct",
      visibility: "participant",
      trustClass: "mixed",
      originClass: "conversation",
      observedAt: new Date().toISOString(),
      provenance,
    };
    if (!this.outbox.append({ id: eventId, kind: "episode", body }) && !this.outbox.pending().some((n) => n.endsWith(`-${eventId}.json`))) {
      this.#log.warn?.(`engramdb: turn not queued: ${this.outbox.degraded ?? "the outbox is full"}`);
      return undefined;
    }
    Object.assign(state, { nextTurn: turnIndex + 1, last: { digest, eventId, turnIndex } });
    const shown = [captured.summary, ...(captured.user === captured.summary ? [] : [`User: ${captured.user}`]), `Assistant: ${captured.assistant}`];
    state.recent.add({ id: eventId, source: "EPISODE", text: shown.join("\n"), userId: verdict.userId, sessionId: verdict.sessionId, trustClass: "mixed" });
    await this.outbox.flush(this.config.flushTimeoutMs);
    return eventId;
  }

  // -- facts -----------------------------------------------------------------------------

  /** An explicit write: `add`, or `replace` naming the fact it replaces; anything else writes nothing. */
  async memoryAction(request: MemoryAction, ctx: HookContext, origin: "stated" | "derived" = "stated"): Promise<Written> {
    const verdict = verdictOf(ctx, this.config.agentId);
    if (!verdict.ok) return { queued: false, reason: verdict.reason };
    const fields = factFields(request);
    if (typeof fields === "string") return { queued: false, reason: fields };
    const last = this.sessions.get(ctx.sessionKey)?.last?.eventId;
    const body: Record<string, Json> = {
      ...fields,
      ...(this.#scope(verdict) as Record<string, Json>),
      runtime: RUNTIME,
      sourceEventId: last ?? `${verdict.sessionId}:remember`,
      validFrom: new Date().toISOString(),
      visibility: "participant",
      provenance: origin === "derived" ? "openclaw:memory_store" : "openclaw:remember",
    };
    const id = factKey(body);
    if (!this.outbox.append({ id, kind: "fact", body, origin }) && !this.outbox.pending().some((n) => n.endsWith(`-${id}.json`))) {
      return { queued: false, reason: this.outbox.degraded ?? "the outbox is full" };
    }
    const recent = origin === "stated" ? this.sessions.get(ctx.sessionKey)?.recent : undefined; // a model's fact awaits review
    const slot = `${fields.subjectKey}\u0000${fields.kind}`;
    recent?.add({ id, source: "MEMORY_FACT", text: String(fields.text), userId: verdict.userId, sessionId: verdict.sessionId, trustClass: "trusted", slot });
    await this.outbox.flush(this.config.flushTimeoutMs);
    const answer = this.#answers.get(id);
    this.#answers.delete(id);
    if (answer) recent?.rename(id, answer.id);
    return answer ? { queued: true, factId: answer.id, status: answer.memory.status } : { queued: true };
  }

  // -- boundaries ------------------------------------------------------------------------

  /** OpenClaw started `sessionId` under `sessionKey` (`session_start`): a switch if the key had another. */
  sessionStarted(sessionKey: string | undefined, sessionId: string | undefined): void {
    this.sessions.switchTo(sessionKey, sessionId);
  }

  /** A session ended (`session_end`): flush within the budget, release what the session held. */
  async endSession(sessionKey: string | undefined, sessionId: string | undefined, ms = this.config.flushTimeoutMs): Promise<boolean> {
    const delivered = await this.outbox.flush(ms);
    this.sessions.release(sessionKey, sessionId);
    return delivered;
  }

  /** Shutdown (`gateway_stop`): flush for at most `ms`, stop the worker; what is left stays on disk. */
  async close(ms = SHUTDOWN_MS): Promise<boolean> {
    this.sessions.clear();
    return this.outbox.close(ms);
  }
}

/** The messages of an OpenClaw transcript file (JSON lines; a message line holds `message`). */
export function readTranscript(path: string): Message[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return []; // no transcript to read: nothing to queue
  }
  const messages: Message[] = [];
  for (const line of text.split("\n")) {
    try {
      const entry = JSON.parse(line) as { type?: unknown; message?: Message; role?: unknown };
      if (entry?.message && typeof entry.message === "object") messages.push(entry.message);
      else if (entry?.role) messages.push(entry as Message);
    } catch {
      // a torn last line, or not JSON: not a message
    }
  }
  return messages;
}
