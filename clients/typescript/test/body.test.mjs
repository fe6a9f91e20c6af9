// A body given as data is sent as the same text the Python client sends
// for the same data (json.dumps with sorted keys, no spaces, non-ASCII
// kept), so an action guarded from either language has one digest and a
// retry from the other is not a key conflict.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { canonicalJSON } from "../dist/index.js";

const samples = [
  { amount: 40, currency: "EUR", entry: "le-4411" },
  { z: [3, 2, 1], a: { y: null, b: true, a: false }, m: "" },
  { text: "naïve café – ünïcødé 🎉 \u2028 \u007f", quote: "\"\\/<>&", ctl: "\n\t\r\b\f\u0001" },
  [{ b: 1, a: -2 }, "x", 0, 10 ** 15, -7],
  { "\uff01": 1, "😀": 2, "\ud7ff": 3, "\ue000": 4, "a😀": 5, "a\uffff": 6 },
  { nested: { deeper: { deepest: ["é", { k: "v" }] } }, "key with space": 1, "": 2, "Ä": 3, "a": 4 },
];

describe("body text", () => {
  it("matches the Python client's json.dumps(sort_keys=True, separators=(',', ':'), ensure_ascii=False)", () => {
    const py = execFileSync("python3", ["-c", [
      "import json, sys",
      "for s in json.load(sys.stdin):",
      "    print(json.dumps(json.dumps(s, sort_keys=True, separators=(',', ':'), ensure_ascii=False)))",
    ].join("\n")], { input: JSON.stringify(samples), encoding: "utf8" });
    const want = py.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(samples.map(canonicalJSON), want);
  });
});
