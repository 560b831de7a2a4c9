/**
 * For the cross-language test (tests/typescript/test_ids.py): reads a JSON array of cases on stdin,
 * writes the TypeScript contract's answer for each as a JSON array on stdout.
 */
import { readFileSync } from "node:fs";

import { canonicalJson, episodeEventId, factEventId, hashScope, type Json } from "../src/canonical.ts";

type Case =
  | { kind: "episode"; input: Parameters<typeof episodeEventId>[0] }
  | { kind: "fact"; input: Parameters<typeof factEventId>[0] }
  | { kind: "scope"; input: { parts: string[]; salt: string } }
  | { kind: "canonical"; input: Json };

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
      return canonicalJson(c.input);
  }
});
process.stdout.write(JSON.stringify(answers));
