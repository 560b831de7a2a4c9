/**
 * For the cross-language test (tests/typescript/test_ids.py): reads a JSON array of cases on stdin,
 * writes the TypeScript contract's answer for each as a JSON array on stdout.
 *
 * A canonical case's objects arrive as `{"pairs": [[key, value], ...]}` and are rebuilt here, so no
 * random key passes through JSON.parse: Node 26.10's parser misreads some escaped one-character keys
 * (`[{"\\":{}},[{"\u2028":{}}]]` gives the inner key as a backslash), and the test is about our
 * canonical JSON, not the engine's parser.
 */
import { readFileSync } from "node:fs";

import { canonicalJson, episodeEventId, factEventId, hashScope, type Json } from "../src/canonical.ts";

type Case =
  | { kind: "episode"; input: Parameters<typeof episodeEventId>[0] }
  | { kind: "fact"; input: Parameters<typeof factEventId>[0] }
  | { kind: "scope"; input: { parts: string[]; salt: string } }
  | { kind: "canonical"; input: Paired };

type Paired = null | boolean | number | string | Paired[] | { pairs: Array<[string, Paired]> };

function rebuilt(value: Paired): Json {
  if (Array.isArray(value)) return value.map(rebuilt);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(value.pairs.map(([key, inner]) => [key, rebuilt(inner)]));
  }
  return value;
}

const cases = JSON.parse(readFileSync(0, "utf8")) as Case[];
const answers = cases.map((c) => {
  switch (c.kind) {
    case "episode":
      return episodeEventId(c.input);
    case "fact":
      return factEventId(c.input);
    case "scope":
      return hashScope(c.input.parts, c.input.salt);
    case "canonical":
      return canonicalJson(rebuilt(c.input));
  }
});
process.stdout.write(JSON.stringify(answers));
