// The client's view of the wire against the OpenAPI document the server
// serves at /v1/openapi.json (and keeps in the repository): the answers'
// field names, the request bodies' fields and the headers, so the client
// cannot drift from the server.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ANSWER_FIELDS } from "../dist/index.js";
import { getJSON, repoRoot, startServe } from "./helpers.mjs";

/** The properties of a schema, following $ref and allOf. */
function props(doc, schema) {
  if (schema.$ref) return props(doc, doc.components.schemas[schema.$ref.split("/").pop()]);
  const out = new Set(Object.keys(schema.properties ?? {}));
  for (const s of schema.allOf ?? []) for (const p of props(doc, s)) out.add(p);
  return out;
}

/** The schema of an operation's answer for a status and media type. */
function answerSchema(doc, path, method, status) {
  const r = doc.paths[path][method].responses[status];
  assert.ok(r, `${method.toUpperCase()} ${path} answers ${status}`);
  return r.content["application/json"].schema;
}

describe("the client against the served OpenAPI document", () => {
  let srv;
  let doc;
  before(async () => {
    srv = await startServe("sqlite");
    doc = await getJSON(srv.sock, "/v1/openapi.json");
  });
  after(async () => {
    await srv?.stop();
  });

  it("is the document kept in the repository", () => {
    assert.deepEqual(doc, JSON.parse(readFileSync(join(repoRoot, "service", "openapi.json"), "utf8")));
  });

  for (const [kind, path, method, status] of [
    ["guard", "/v1/guard", "post", "200"],
    ["guard", "/v1/guard", "post", "202"],
    ["report", "/v1/report", "post", "200"],
    ["status", "/v1/actions/{key}", "get", "200"],
    ["epoch", "/v1/epoch", "get", "200"],
    ["whoami", "/v1/whoami", "get", "200"],
  ]) {
    it(`declares exactly the fields of ${method.toUpperCase()} ${path} ${status}`, () => {
      const want = [...props(doc, answerSchema(doc, path, method, status))].sort();
      assert.deepEqual([...ANSWER_FIELDS[kind]].sort(), want);
    });
  }

  it("sends only request fields and headers the document names", () => {
    const guard = doc.paths["/v1/guard"].post;
    const guardBody = props(doc, guard.requestBody.content["application/json"].schema);
    for (const f of ["payload", "context", "lease", "redact", "agent"]) assert.ok(guardBody.has(f), `GuardRequest has ${f}`);
    const headers = new Set((guard.parameters ?? []).map((p) => (p.$ref ? doc.components.parameters[p.$ref.split("/").pop()] : p)).filter((p) => p.in === "header").map((p) => p.name));
    assert.ok(headers.has("Idempotency-Key"), "Idempotency-Key is a guard header");
    assert.ok(headers.has("Tollgate-Attempt"), "Tollgate-Attempt is a guard header");
    const report = props(doc, doc.paths["/v1/report"].post.requestBody.content["application/json"].schema);
    for (const f of ["key", "permit", "outcome", "ref", "latency", "result"]) assert.ok(report.has(f), `ReportRequest has ${f}`);
    const problem = props(doc, doc.components.schemas.Problem);
    for (const f of ["type", "status", "exit_code", "error"]) assert.ok(problem.has(f), `Problem has ${f}`);
  });
});
