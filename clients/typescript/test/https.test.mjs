// The https:// path (fetch over TLS) against tollgate serve with a
// certificate of the test's own: trusted through NODE_EXTRA_CA_CERTS, the
// call reaches the server and gets its answer; not trusted, the client
// refuses to talk and does not retry.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServe } from "./helpers.mjs";

const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "index.js");

/** Runs one client call in a fresh node (NODE_EXTRA_CA_CERTS is read at start) and returns what it threw or answered. */
function callIn(env, url) {
  const script = `
    const { Client } = await import(${JSON.stringify(dist)});
    const c = new Client({ url: ${JSON.stringify(url)}, token: "tg_not-a-token", retryForMs: 0 });
    const t0 = Date.now();
    try { console.log(JSON.stringify({ ok: await c.epochInfo() })); }
    catch (e) { console.log(JSON.stringify({ name: e.name, status: e.status, message: e.message, ms: Date.now() - t0 })); }`;
  return new Promise((res, rej) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (err) return rej(new Error(stderr || String(err)));
      res(JSON.parse(stdout.trim().split("\n").pop()));
    });
  });
}

describe("https", () => {
  let srv;
  before(async () => {
    srv = await startServe("sqlite", { tls: true });
  });
  after(async () => {
    await srv?.stop();
  });

  it("reaches tollgate serve over TLS and reads its answer (401 for a token it does not know)", async () => {
    assert.match(srv.tcpUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    const r = await callIn({ NODE_EXTRA_CA_CERTS: srv.ca }, srv.tcpUrl);
    assert.equal(r.name, "Unauthenticated", JSON.stringify(r));
    assert.equal(r.status, 401);
  });

  it("refuses a certificate it does not trust, without retrying", async () => {
    const r = await callIn({ NODE_EXTRA_CA_CERTS: "" }, srv.tcpUrl);
    assert.equal(r.name, "TollgateError", JSON.stringify(r));
    assert.match(r.message, /a retry will not help/);
    assert.equal(r.status, undefined);
  });
});
