// Test harness: a real `tollgate serve` on a Unix socket and loopback TCP,
// over a SQLite file or a PostgreSQL database of the test's own, and the
// tollgate CLI run as a subprocess for the operator's side (policy,
// approve, reject, epoch).
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import { tmpdir, userInfo } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository's root (the Go module). */
export const repoRoot = resolve(here, "..", "..", "..");

let built;
/** The tollgate binary: TOLLGATE_BIN, else one built once from the repository into a temporary folder. */
export function tollgateBin() {
  if (process.env.TOLLGATE_BIN) return process.env.TOLLGATE_BIN;
  if (!built) {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-ts-bin-"));
    built = join(dir, "tollgate");
    execFileSync("go", ["build", "-o", built, "."], { cwd: repoRoot, stdio: "inherit" });
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return built;
}

/** The backends to test on: SQLite always, PostgreSQL when TOLLGATE_TEST_PG is set (required when TOLLGATE_REQUIRE_PG=1). */
export function backends() {
  const pg = process.env.TOLLGATE_TEST_PG;
  if (!pg && process.env.TOLLGATE_REQUIRE_PG === "1") {
    throw new Error("TOLLGATE_REQUIRE_PG=1 but TOLLGATE_TEST_PG is not set: the PostgreSQL tests cannot be skipped");
  }
  return pg ? ["sqlite", "postgres"] : ["sqlite"];
}

/** Runs the tollgate CLI with --json; resolves {code, json, stderr}. */
export function cli(db, args, env = {}) {
  return new Promise((res) => {
    execFile(tollgateBin(), ["--db", db, ...args, "--json"], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      let json;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      res({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, json, stderr });
    });
  });
}

/** Runs the CLI and fails unless it exits 0. */
export async function cliOK(db, args) {
  const r = await cli(db, args);
  if (r.code !== 0) throw new Error(`tollgate ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.json;
}

/** A fresh ledger: a SQLite file in dir, or a PostgreSQL database made for it (dropped by the returned cleanup). */
function newLedger(backend, dir) {
  if (backend === "sqlite") return { db: join(dir, "ledger.db"), drop: () => {} };
  const admin = process.env.TOLLGATE_TEST_PG;
  const name = "tg_ts_" + randomBytes(6).toString("hex");
  execFileSync("psql", [admin, "-qXc", `CREATE DATABASE ${name}`], { stdio: ["ignore", "ignore", "inherit"] });
  const u = new URL(admin);
  u.pathname = "/" + name;
  return {
    db: u.href,
    drop: () => {
      try {
        execFileSync("psql", [admin, "-qXc", `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`], { stdio: "ignore" });
      } catch {
        // The cluster is shared and disposable; a database left behind harms no test.
      }
    },
  };
}

/**
 * Starts `tollgate serve` over a fresh ledger, listening on a Unix socket
 * (this user admitted with --socket-user) and on 127.0.0.1 (tokens only).
 * extra are more serve flags (e.g. --rate). policies are [pattern, mode]
 * set before the server starts.
 */
export async function startServe(backend, { extra = [], policies = [], tls = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-ts-"));
  const ledger = newLedger(backend, dir);
  for (const [pattern, mode] of policies) await cliOK(ledger.db, ["policy", "set", pattern, "--mode", mode]);
  const sock = join(dir, "s.sock");
  let ca;
  if (tls) {
    // A certificate for 127.0.0.1 of the test's own; the client trusts it through NODE_EXTRA_CA_CERTS.
    ca = join(dir, "cert.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", join(dir, "key.pem"), "-out", ca,
      "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "ignore" });
    extra = [...extra, "--tls-cert", ca, "--tls-key", join(dir, "key.pem")];
  }
  const args = ["--db", ledger.db, "serve", "--listen", "unix:" + sock, "--socket-user", userInfo().username, "--listen", "127.0.0.1:0", ...extra];
  const proc = spawn(tollgateBin(), args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const listening = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error("tollgate serve did not start within 20s: " + stderr)), 20_000);
    proc.stderr.on("data", (b) => {
      stderr += b.toString();
      const m = [...stderr.matchAll(/listening on (\S+)/g)].map((x) => x[1]);
      if (m.length >= 2) {
        clearTimeout(timer);
        res(m);
      }
    });
    proc.on("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`tollgate serve exited ${code}: ${stderr}`));
    });
  });
  const tcp = listening.find((a) => !a.startsWith("unix:"));
  return {
    backend,
    db: ledger.db,
    dir,
    sock,
    unixUrl: "unix://" + sock,
    tcpUrl: (tls ? "https://" : "http://") + tcp,
    ca,
    stderr: () => stderr,
    cli: (a, env) => cli(ledger.db, a, env),
    cliOK: (a) => cliOK(ledger.db, a),
    async stop() {
      if (proc.exitCode === null) {
        const gone = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await gone;
      }
      ledger.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A GET over the Unix socket, as raw JSON (for the OpenAPI document). */
export function getJSON(sock, path) {
  return new Promise((res, rej) => {
    http
      .get({ socketPath: sock, path, headers: { Host: "tollgate" } }, (r) => {
        let b = "";
        r.on("data", (c) => (b += c));
        r.on("end", () => {
          try {
            res(JSON.parse(b));
          } catch (e) {
            rej(e);
          }
        });
      })
      .on("error", rej);
  });
}

/**
 * A relay on a Unix socket in front of the server's socket that forwards
 * each request and, for the first `drop` connections, discards the answer
 * and resets the caller's connection once the server has answered: the
 * answer is lost after the request was sent. requests records each request
 * head (method, path, headers) as it passed.
 */
export async function lossyRelay(target, dir, drop = 1) {
  const path = join(dir, "relay-" + randomBytes(4).toString("hex") + ".sock");
  const requests = [];
  let dropped = 0;
  const conns = new Set();
  const server = net.createServer((client) => {
    conns.add(client);
    client.on("close", () => conns.delete(client));
    const upstream = net.connect(target);
    const lose = dropped < drop;
    if (lose) dropped++;
    let head = "";
    client.on("data", (b) => {
      if (!head.includes("\r\n\r\n")) {
        head += b.toString("latin1");
        if (head.includes("\r\n\r\n")) requests.push(parseHead(head));
      }
      upstream.write(b);
    });
    upstream.on("data", (b) => {
      if (lose) {
        // The server answered (and committed); the caller never hears it.
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(b);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("close", () => upstream.destroy());
  });
  await new Promise((r) => server.listen(path, r));
  return { url: "unix://" + path, requests, close: () => new Promise((r) => {
    server.close(r);
    for (const c of conns) c.destroy();
  }) };
}

function parseHead(head) {
  const [line, ...rest] = head.split("\r\n\r\n")[0].split("\r\n");
  const headers = {};
  for (const l of rest) {
    const i = l.indexOf(":");
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const [method, p] = line.split(" ");
  return { method, path: p, headers };
}

/** A unique logical key segment for this run. */
export function uniq(prefix) {
  return `${prefix}:${randomBytes(5).toString("hex")}`;
}

export { existsSync };
