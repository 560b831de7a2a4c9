/**
 * The durable outbox: a write is a file on the host's disk before anything is sent, removed only
 * after the server's success. Delivery retries with backoff; entries left by a crash, a shutdown
 * or a server that was away are replayed by the next process. The server upserts by eventId, so a
 * replay of a write that did land is stored once.
 */
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { EngramError } from "@engramdb/client";

/** Rename, tolerating an entry another delivery already moved or removed. */
function moveAside(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch {
    // gone already
  }
}

export interface Entry {
  id: string; // the episode's eventId
  kind: "episode";
  body: object; // the write body, as the server takes it
}

export type Send = (entry: Entry) => Promise<void>;

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
  #sequence = 0;

  constructor(options: OutboxOptions, send: Send) {
    this.#options = { attempts: 4, backoffMs: 250, ...options };
    this.dir = options.dir;
    this.rejectedDir = join(options.dir, "rejected");
    this.#send = send;
    mkdirSync(this.rejectedDir, { recursive: true });
  }

  /** The pending entries' file names, oldest first. */
  pending(): string[] {
    return readdirSync(this.dir)
      .filter((name) => name.endsWith(".json"))
      .sort();
  }

  /** Write the entry to disk (atomically) before any delivery; false if already pending or full. */
  append(entry: Entry): boolean {
    const pending = this.pending();
    if (pending.some((name) => name.endsWith(`-${entry.id}.json`))) return false;
    if (pending.length >= this.#options.maxPending) return false;
    const name = `${String(Date.now()).padStart(15, "0")}-${String(this.#sequence++).padStart(6, "0")}-${entry.id}.json`;
    const temporary = join(this.dir, `.${name}.${process.pid}.tmp`);
    writeFileSync(temporary, JSON.stringify(entry), { flush: true });
    renameSync(temporary, join(this.dir, name));
    return true;
  }

  /** Deliver every pending entry (one drain at a time); resolves when the drain ends. */
  drain(): Promise<void> {
    this.#draining ??= this.#drainAll().finally(() => {
      this.#draining = undefined;
    });
    return this.#draining;
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

  async #drainAll(): Promise<void> {
    for (const name of this.pending()) {
      if (!(await this.#deliver(name))) return; // the server is away: keep the rest for later
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
    for (let attempt = 0; attempt < this.#options.attempts; attempt++) {
      try {
        await this.#send(entry);
        rmSync(path, { force: true }); // removed only after the server's success
        return true;
      } catch (error) {
        if (error instanceof EngramError && !error.retryable) {
          moveAside(path, join(this.rejectedDir, name));
          return true;
        }
        if (attempt + 1 < this.#options.attempts) {
          await new Promise((resolve) => setTimeout(resolve, this.#options.backoffMs * 2 ** attempt));
        }
      }
    }
    return false;
  }
}
