/**
 * The recent-write cache, as the Python SDK's (`engramdb.sdk.recall.RecentWrites`): a session's
 * latest writes (128), so a memory is recallable before the server has it (the server slow, away,
 * or the write still in the outbox). It is searched by words within the session's exact scope; its
 * hits are merged with the server's by id (the server's copy wins) and keep up to half the slots.
 */
import type { components } from "@engramdb/client";

type Memory = components["schemas"]["RecalledMemory"];
export const RECENT_WRITES = 128;
const WORD = /[\p{L}\p{N}_]+/gu;
const STOPWORDS = new Set(
  ("a an and are as at be but by do does did for from has have how i in is it its me my no not of on or our so that " +
    "the their them then there these they this to was we were what when where which who why will with you your").split(" "),
);

/** A write this process queued, as recall shows it. */
export interface Cached {
  id: string; // the eventId; a fact's outbox key until the server names its factId
  source: "EPISODE" | "MEMORY_FACT";
  text: string;
  userId: string;
  sessionId: string;
  trustClass: string;
  slot?: string | undefined; // a fact's subject and kind: a newer fact of the slot displaces it
}

/** The lower-cased content words of `text`. */
export function terms(text: string): Set<string> {
  return new Set([...text.toLowerCase().matchAll(WORD)].map((m) => m[0]).filter((w) => w.length > 1 && !STOPWORDS.has(w)));
}

export class RecentWrites {
  readonly #items = new Map<string, Cached>();

  get size(): number {
    return this.#items.size;
  }

  add(memory: Cached): void {
    for (const [key, kept] of this.#items) if (memory.slot && kept.slot === memory.slot) this.#items.delete(key);
    this.#items.delete(memory.id);
    this.#items.set(memory.id, memory);
    for (const key of this.#items.keys()) {
      if (this.#items.size <= RECENT_WRITES) break;
      this.#items.delete(key); // the oldest first
    }
  }

  /** The server has named a queued fact: cache it under its factId, so merging finds it. */
  rename(from: string, to: string): void {
    const kept = this.#items.get(from);
    if (!kept) return;
    this.#items.delete(from);
    this.#items.set(to, { ...kept, id: to });
  }

  /** Cached memories of `userId` sharing words with `query`, best first, as recalled memories. */
  search(query: string, userId: string, limit: number, excludeSessionId?: string): Memory[] {
    const wanted = terms(query);
    if (!wanted.size) return [];
    const scored: Array<[number, Cached]> = [];
    for (const kept of [...this.#items.values()].reverse()) {
      if (kept.userId !== userId || (excludeSessionId && kept.source === "EPISODE" && kept.sessionId === excludeSessionId)) continue;
      const words = terms(kept.text);
      const overlap = [...wanted].filter((w) => words.has(w)).length / wanted.size;
      if (overlap > 0) scored.push([overlap, kept]);
    }
    scored.sort((a, b) => b[0] - a[0]); // stable: the newest first among equals
    return scored.slice(0, limit).map(([score, m]) => ({
      id: m.id,
      source: m.source,
      text: m.text,
      score: Math.round(score * 1000) / 1000,
      trustClass: m.trustClass,
      status: "active",
      origin: "stated",
    })) as Memory[];
  }

  clear(): void {
    this.#items.clear();
  }
}

/** Merge by id: the server's copy wins; writes it did not return keep up to half the slots. */
export function withRecent(remote: readonly Memory[], cached: readonly Memory[], limit: number): Memory[] {
  const known = new Set(remote.map((m) => m.id));
  const fresh = cached.filter((m) => !known.has(m.id));
  let keepFresh = Math.min(fresh.length, Math.max(1, Math.floor(limit / 2)));
  const keepRemote = Math.min(remote.length, limit - keepFresh);
  keepFresh = Math.min(fresh.length, limit - keepRemote);
  return [...remote.slice(0, keepRemote), ...fresh.slice(0, keepFresh)];
}
