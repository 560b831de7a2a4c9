/** What the server answered when it did not succeed: its problem JSON, and whether to retry. */
export class EngramError extends Error {
  readonly status: number; // 0 when the server was not reached
  readonly code: string;
  readonly field: string | undefined;
  readonly retryable: boolean;

  constructor(status: number, code: string, message: string, field?: string) {
    super(`${status} ${code}: ${message}`);
    this.name = "EngramError";
    this.status = status;
    this.code = code;
    this.field = field;
    this.retryable = status === 0 || status === 429 || status === 503 || status === 504 || status >= 500;
  }
}

/** The error for a response that is not a success, from its problem JSON when it has one. */
export async function problemOf(response: Response): Promise<EngramError> {
  const text = await response.text();
  try {
    const problem = JSON.parse(text) as { code?: string; message?: string; field?: string };
    return new EngramError(response.status, problem.code ?? "unknown", problem.message ?? text, problem.field);
  } catch {
    return new EngramError(response.status, "unknown", text.slice(0, 200));
  }
}
