/**
 * The durable outbox: a write is a file on the host's disk before anything is sent, removed only
 * after the server's success. Delivery retries with backoff; entries left by a crash, a shutdown
 * or a server that was away are replayed by the next process. The server upserts by id (an
 * episode's eventId; a fact's factId, computed from its content), so a replay of a write that did
 * land is stored once. `close` stops the worker within its budget: a request still in flight is
 * cut short and its entry stays on disk for the next process.
 */
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { EngramError } from "@engramdb/client";

const STOP_GRACE_MS = 250; // an aborted request settles at once; this only bounds a misbehaving one

/** Rename, tolerating an entry another delivery already moved or removed. */
function moveAside(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch {
    // gone already
  }
}

export interface Entry {
  id: string; // the episode's eventId; for a fact, a digest of its body (the server computes the factId)
  kind: "episode" | "fact";
  body: object; // the write body, as the server takes it
  origin?: "stated" | "derived"; // a fact's: derived when a model's tool call wrote it
}

export type Send = (entry: Entry, signal: AbortSignal) => Promise<void>;

export interface OutboxOptions {
  dir: string;
  maxPending: number; // appends beyond it are refused (bounded queue)
  attempts?: number; // per drain; reference 4
  backoffMs?: number; // 250 * 2^n
}

export class Outbox {
  readonly dir: string;
  readonly rejectedDir: string;
  readonly #options: Required<OutboxOptions>;
  readonly #send: Send;
  #draining: Promise<void> | undefined;
  #running = false;
  #again = false; // entries may have been appended since the running drain listed them
  #sequence = 0;
  readonly #stop = new AbortController();
  /** Why writes are refused: the outbox folder could not be set up (recall still works). */
  readonly degraded: string | undefined;

  constructor(options: OutboxOptions, send: Send) {
    this.#options = { attempts: 4, backoffMs: 250, ...options };
    this.dir = options.dir;
    this.rejectedDir = join(options.dir, "rejected");
    this.#send = send;
    try {
      mkdirSync(this.rejectedDir, { recursive: true });
    } catch (error) {
      this.degraded = `the outbox ${options.dir} cannot be set up: ${String(error)}`; // writes would not be durable
    }
  }

  /** The pending entries' file names, oldest first. */
  pending(): string[] {
    if (this.degraded) return [];
    return readdirSync(this.dir)
      .filter((name) => name.endsWith(".json"))
      .sort();
  }

  /** Write the entry to disk (atomically) before any delivery; false if already pending or full. */
  append(entry: Entry): boolean {
    if (this.degraded) return false;
    const pending = this.pending();
    if (pending.some((name) => name.endsWith(`-${entry.id}.json`))) return false;
    if (pending.length >= this.#options.maxPending) return false;
    const name = `${String(Date.now()).padStart(15, "0")}-${String(this.#sequence++).padStart(6, "0")}-${entry.id}.json`;
    const temporary = join(this.dir, `.${name}.${process.pid}.tmp`);
    writeFileSync(temporary, JSON.stringify(entry), { flush: true });
    renameSync(temporary, join(this.dir, name));
    return true;
  }

  /** Whether a drain is under way (the worker is running). */
  get running(): boolean {
    return this.#running;
  }

  get closed(): boolean {
    return this.#stop.signal.aborted;
  }

  /** Deliver every pending entry (one drain at a time); resolves when the drain ends. An entry
   * appended while a drain runs is taken by that drain, even one that is just ending. */
  drain(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.#again = true;
    if (!this.#running) {
      this.#running = true;
      this.#draining = this.#drainAll();
    }
    return this.#draining ?? Promise.resolve();
  }

  /** Drain, but wait at most `ms`: what is not delivered by then stays on disk. True if none is left. */
  async flush(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    });
    await Promise.race([this.drain(), late]);
    clearTimeout(timer);
    return this.pending().length === 0;
  }

  /** Flush for at most `ms`, then stop the worker: an unanswered request is cut short, nothing more
   * is sent, and what is undelivered stays on disk. True if nothing was left. */
  async close(ms: number): Promise<boolean> {
    const delivered = await this.flush(ms);
    this.#stop.abort(); // the drain's request and backoff end now; it sends nothing more
    await Promise.race([this.#draining, sleep(STOP_GRACE_MS)]);
    return delivered && this.pending().length === 0;
  }

  async #drainAll(): Promise<void> {
    try {
      while (this.#again && !this.closed) {
        this.#again = false;
        for (const name of this.pending()) {
          if (this.closed || !(await this.#deliver(name))) return; // the server is away: keep the rest for later
        }
      }
    } finally {
      this.#running = false; // synchronously as the drain ends: the next drain() starts a new one
    }
  }

  async #deliver(name: string): Promise<boolean> {
    const path = join(this.dir, name);
    let entry: Entry;
    try {
      entry = JSON.parse(readFileSync(path, "utf8")) as Entry;
      if (typeof entry?.id !== "string" || typeof entry.body !== "object") throw new Error("not an entry");
    } catch {
      moveAside(path, join(this.rejectedDir, name)); // a malformed entry is isolated, not retried forever
      return true;
    }
    for (let attempt = 0; attempt < this.#options.attempts && !this.closed; attempt++) {
      try {
        await this.#send(entry, this.#stop.signal);
        rmSync(path, { force: true }); // removed only after the server's success
        return true;
      } catch (error) {
        if (error instanceof EngramError && !error.retryable) {
          moveAside(path, join(this.rejectedDir, name));
          return true;
        }
        if (attempt + 1 < this.#options.attempts && !this.closed) {
          await sleep(this.#options.backoffMs * 2 ** attempt, undefined, { signal: this.#stop.signal }).catch(() => undefined);
        }
      }
    }
    return false;
  }
}
