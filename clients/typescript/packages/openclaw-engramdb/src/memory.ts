/**
 * The adapter runtime: recall before the prompt (fail-open, bounded), an episode per completed turn
 * through the durable outbox, both only where the context allows memory (scope.ts).
 */
import { type components, EngramClient, episodeEventId } from "@engramdb/client";

import { capture, type Message } from "./capture.ts";
import type { MemoryConfig } from "./config.ts";
import { Outbox, type Entry } from "./outbox.ts";
import { type HookContext, verdictOf, type Allowed } from "./scope.ts";

export const RUNTIME = "openclaw";
const QUERY_CHARS = 4_000;

export interface Logger {
  info?: (message: string) => void;
  warn?: (message: string) => void;
}

export class OpenClawMemory {
  readonly config: MemoryConfig;
  readonly client: EngramClient;
  readonly outbox: Outbox;
  readonly #log: Logger;

  constructor(config: MemoryConfig, log: Logger = {}) {
    this.config = config;
    this.#log = log;
    this.client = new EngramClient({ baseUrl: config.baseUrl, apiKey: config.apiKey, timeoutMs: 10_000 });
    this.outbox = new Outbox({ dir: config.outboxDir, maxPending: config.maxPending }, (entry) => this.#send(entry));
  }

  #scope(allowed: Allowed): components["schemas"]["ScopeFields"] {
    return {
      agentId: allowed.agentId,
      profileId: this.config.profileId,
      privacyScope: "private",
      sandboxEligible: false,
      userId: allowed.userId,
    };
  }

  async #send(entry: Entry): Promise<void> {
    await this.client.call("post", "/v1/episodes", { body: entry.body as components["schemas"]["EpisodeWrite"] });
  }

  /** The memory block to prepend to this turn's prompt, or "" (refused, nothing found, error, timeout). */
  async recall(query: string, ctx: HookContext, options: { excludeSession?: boolean } = {}): Promise<string> {
    const verdict = verdictOf(ctx, this.config.agentId);
    if (!verdict.ok || !query.trim()) return "";
    const abort = new AbortController();
    const request = this.client
      .call("post", "/v1/recall", {
        body: {
          query: query.slice(0, QUERY_CHARS),
          scope: this.#scope(verdict),
          limit: this.config.recallLimit,
          ...(options.excludeSession === false ? {} : { excludeSessionId: verdict.sessionId }),
        },
        signal: abort.signal,
      })
      .then((answer) => answer.context)
      .catch((error: unknown) => {
        this.#log.warn?.(`engramdb: recall failed open: ${String(error)}`);
        return "";
      });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => {
        abort.abort();
        resolve("");
      }, this.config.recallTimeoutMs);
    });
    const context = await Promise.race([request, late]);
    clearTimeout(timer);
    return context ? `<engramdb-memory>\n${context}\n</engramdb-memory>` : "";
  }

  /** Queue the completed turn's episode on disk, then deliver it within the flush budget. */
  async afterTurn(messages: readonly Message[], success: boolean, ctx: HookContext): Promise<string | undefined> {
    const verdict = verdictOf(ctx, this.config.agentId);
    if (!success || !verdict.ok) return undefined;
    const captured = capture(messages);
    if (typeof captured === "string") return undefined;
    const fields = {
      runtime: RUNTIME,
      agentId: verdict.agentId,
      profileId: this.config.profileId,
      externalSessionId: verdict.sessionId,
      turnIndex: captured.turnIndex,
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
      provenance: "openclaw:agent_end",
    };
    this.outbox.append({ id: eventId, kind: "episode", body });
    await this.outbox.flush(this.config.flushTimeoutMs);
    return eventId;
  }
}
