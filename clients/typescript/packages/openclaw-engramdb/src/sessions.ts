/**
 * What the plugin keeps per OpenClaw session key while a conversation runs: the context a person's
 * turn was admitted with (hooks that carry no sender, such as `before_compaction`, act under it and
 * under nothing else), the session's id and turn counter, the last captured pair (so a retry, or the
 * same pair again before compaction, maps to the same episode), a prefetched recall and the
 * session's recent writes. A new session id under the same key is a session switch: a fresh
 * counter, the prefetch dropped (the recent writes stay recallable, as the SDK's do).
 */
import type { components } from "@engramdb/client";

import { RecentWrites } from "./recent.ts";
import type { Allowed, HookContext } from "./scope.ts";

export interface Prefetch {
  query: string;
  answer: Promise<Array<components["schemas"]["RecalledMemory"]>>;
  abort: AbortController;
}

export interface SessionState {
  sessionId: string;
  ctx: HookContext; // the admitted context of the session's latest person's turn
  verdict: Allowed;
  nextTurn: number;
  last?: { digest: string; eventId: string; turnIndex: number } | undefined;
  prefetch?: Prefetch | undefined;
  recent: RecentWrites; // the session's latest writes, recallable before the server has them
}

export class Sessions {
  readonly #byKey = new Map<string, SessionState>();

  get size(): number {
    return this.#byKey.size;
  }

  get(sessionKey: string | undefined): SessionState | undefined {
    return sessionKey ? this.#byKey.get(sessionKey) : undefined;
  }

  /** The state for an admitted turn; a new session id under its key switches the session first. */
  admit(ctx: HookContext, verdict: Allowed): SessionState {
    const key = ctx.sessionKey as string; // the verdict required it
    const known = this.#byKey.get(key);
    if (known && known.sessionId === verdict.sessionId) {
      known.ctx = ctx;
      known.verdict = verdict;
      return known;
    }
    known?.prefetch?.abort.abort();
    const recent = known?.recent ?? new RecentWrites(); // the participant's writes stay recallable across a switch
    const fresh: SessionState = { sessionId: verdict.sessionId, ctx, verdict, nextTurn: 0, recent };
    this.#byKey.set(key, fresh);
    return fresh;
  }

  /** OpenClaw moved `sessionKey` to `sessionId` (session_start, or session_end's next session). */
  switchTo(sessionKey: string | undefined, sessionId: string | undefined): void {
    const known = this.get(sessionKey);
    if (!known || !sessionId || known.sessionId === sessionId) return;
    known.prefetch?.abort.abort();
    Object.assign(known, { sessionId, verdict: { ...known.verdict, sessionId }, nextTurn: 0, last: undefined, prefetch: undefined });
    known.ctx = { ...known.ctx, sessionId };
  }

  /** Forget the session (its end): the prefetch is cancelled, nothing of it is kept. */
  release(sessionKey: string | undefined, sessionId?: string): void {
    const known = this.get(sessionKey);
    if (!known || (sessionId && known.sessionId !== sessionId)) return;
    known.prefetch?.abort.abort();
    known.recent.clear();
    this.#byKey.delete(sessionKey as string);
  }

  clear(): void {
    for (const key of [...this.#byKey.keys()]) this.release(key);
  }
}
