// The examples run: compiled against the package's own type declarations
// (imported by its name, as a user would), then run against a real tollgate
// serve with no model: the refund waits for an operator, and the tool
// answers so.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startServe } from "./helpers.mjs";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(pkg, "examples", ".out");

function runNode(file, env) {
  return new Promise((res) => {
    execFile(process.execPath, [file], { env, cwd: pkg }, (err, stdout, stderr) => res({ code: err ? err.code : 0, stdout, stderr }));
  });
}

describe("examples", () => {
  let srv;
  before(async () => {
    execFileSync(process.execPath, [join(pkg, "node_modules", "typescript", "bin", "tsc"), "-p", "examples/tsconfig.json", "--noEmit", "false", "--outDir", out, "--rootDir", join(pkg, "examples")], { cwd: pkg, stdio: "inherit" });
    srv = await startServe("sqlite", { policies: [["refund.*", "approval"]] });
  });
  after(async () => {
    await srv?.stop();
    rmSync(out, { recursive: true, force: true });
  });

  for (const name of ["openai-agents", "ai"]) {
    it(`${name} runs against tollgate serve and tells the model the refund waits for approval`, async () => {
      const env = { ...process.env, TOLLGATE_URL: srv.unixUrl };
      delete env.OPENAI_API_KEY;
      delete env.TOLLGATE_TOKEN;
      const r = await runNode(join(out, `${name}.js`), env);
      assert.equal(r.code, 0, r.stderr);
      const first = JSON.parse(r.stdout.split("\n")[0]);
      assert.equal(first.executed, false);
      assert.equal(first.tollgate, "pending");
    });
  }
});
