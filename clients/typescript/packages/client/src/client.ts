/**
 * The typed REST client: every operation of the server's OpenAPI document (`schema.ts`, generated
 * by `python -m engramdb.devtools.typescript`), its path, query and body typed from that document.
 */
import { EngramError, problemOf } from "./errors.ts";
import type { paths } from "./schema.ts";

type Method = "get" | "post" | "put" | "patch" | "delete";
export type Path = keyof paths;
export type MethodOf<P extends Path> = {
  [M in Method]: paths[P][M] extends undefined | never ? never : M;
}[Method];
type Op<P extends Path, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : undefined;
export type Result<O> = O extends { responses: infer R } ? JsonOf<R[Extract<keyof R, 200 | 201 | 202>]> : never;
type BodyOf<O> = O extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type PathParamsOf<O> = O extends { parameters: { path?: infer Q } } ? Q : never;

export interface CallInit<O> {
  path?: PathParamsOf<O>;
  query?: QueryOf<O>;
  body?: BodyOf<O>;
  signal?: AbortSignal;
}

export interface ClientOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs?: number; // per request; default 10 s
}

function fill(path: string, params: Record<string, unknown> | undefined): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params?.[name] ?? "")));
}

function search(query: Record<string, unknown> | undefined): string {
  const pairs = Object.entries(query ?? {}).filter(([, value]) => value !== undefined && value !== null);
  return pairs.length ? `?${new URLSearchParams(pairs.map(([k, v]) => [k, String(v)]))}` : "";
}

export class EngramClient {
  readonly baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#headers = { "content-type": "application/json", accept: "application/json" };
    if (options.apiKey) this.#headers.authorization = `Bearer ${options.apiKey}`;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** Call one operation; EngramError when the server refuses or cannot be reached. */
  async call<P extends Path, M extends MethodOf<P>>(
    method: M,
    path: P,
    init: CallInit<Op<P, M>> = {},
  ): Promise<Result<Op<P, M>>> {
    const url = `${this.baseUrl}${fill(path, init.path as Record<string, unknown>)}${search(init.query as Record<string, unknown>)}`;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, {
        method: method.toUpperCase(),
        headers: this.#headers,
        body: init.body === undefined ? null : JSON.stringify(init.body),
        signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
      });
    } catch (error) {
      throw new EngramError(0, "unreachable", error instanceof Error ? error.message : String(error));
    }
    if (!response.ok) throw await problemOf(response);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as Result<Op<P, M>>;
  }
}
