import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { canonicalJson, episodeEventId, hashScope } from "../src/canonical.ts";

// The shared fixture sits beside the repository (../shared), as CI lays it out.
const fixturePath = new URL("../../../../../../shared/contract/conformance.v1.json", import.meta.url);

test("the shared conformance fixture hashes to its expectedEventId", () => {
  const fixture = JSON.parse(readFileSync(fixturePath, "utf8"));
  assert.equal(episodeEventId(fixture.episodeInput), fixture.expectedEventId);
  // positive control: one changed field changes the id
  assert.notEqual(episodeEventId({ ...fixture.episodeInput, turnIndex: 8 }), fixture.expectedEventId);
});

test("hashScope matches the contract's documented example", () => {
  assert.ok(hashScope(["discord", "account-1", "user-42"]).startsWith("d2097b10"));
  assert.equal(hashScope([" discord\u00a0", "account-1", "user-42"]), hashScope(["discord", "account-1", "user-42"]));
  assert.notEqual(hashScope(["discord", "account-1", "user-43"]), hashScope(["discord", "account-1", "user-42"]));
});

test("canonical JSON sorts keys by UTF-16 code units, drops undefined, keeps null", () => {
  assert.equal(canonicalJson({ b: 1, a: [true, null], "\u{1f600}": "x", "\uffff": 2, c: undefined }), '{"a":[true,null],"b":1,"\u{1f600}":"x","\uffff":2}');
});
