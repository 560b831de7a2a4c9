/**
 * Recall as RushDB's adapters do it: episodes and active facts are searched separately (two requests
 * under the same full scope), so a burst of episodes never crowds the current facts out, and the
 * current session's episodes can be left out without touching facts. The hits are merged by id and
 * formatted as the server formats them (historical, untrusted data).
 */
import { type components, type EngramClient, formatContext } from "@engramdb/client";

type Memory = components["schemas"]["RecalledMemory"];
type Scope = components["schemas"]["ScopeFields"];
export const QUERY_CHARS = 4_000;

export interface RecallAsk {
  query: string;
  scope: Scope;
  limit: number;
  excludeSessionId?: string | undefined; // episodes of this session are left out (facts are not)
}

/** Both searches; each source's hits, or an error (the caller fails open). */
export async function searchBoth(client: EngramClient, ask: RecallAsk, signal: AbortSignal): Promise<Memory[]> {
  const common = { query: ask.query.slice(0, QUERY_CHARS), scope: ask.scope, limit: ask.limit };
  const [episodes, facts] = await Promise.all([
    client.call("post", "/v1/recall", {
      body: { ...common, sources: ["EPISODE"], ...(ask.excludeSessionId ? { excludeSessionId: ask.excludeSessionId } : {}) },
      signal,
    }),
    client.call("post", "/v1/recall", { body: { ...common, sources: ["MEMORY_FACT"] }, signal }), // current facts only
  ]);
  return merge(episodes.memories, facts.memories, ask.limit);
}

/** At most `limit` hits by score, merged by id; facts keep up to half of the slots. */
export function merge(episodes: readonly Memory[], facts: readonly Memory[], limit: number): Memory[] {
  const keptFacts = facts.slice(0, Math.max(Math.ceil(limit / 2), limit - episodes.length));
  const seen = new Set(keptFacts.map((m) => m.id));
  const rest = episodes.filter((m) => !seen.has(m.id)).slice(0, limit - keptFacts.length);
  return [...keptFacts, ...rest].sort((a, b) => b.score - a.score);
}

/** The block to prepend to a prompt, or "" when nothing was found. */
export function render(memories: readonly Memory[]): string {
  const context = formatContext(memories);
  return context ? `<engramdb-memory>\n${context}\n</engramdb-memory>` : "";
}
