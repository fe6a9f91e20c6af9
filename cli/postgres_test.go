package cli_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// TestPostgresRolesFromTheShell: 'tollgate migrate' as the schema's owner
// creates the ledger and its roles; an agent's login role guards, and its
// attempt to approve, reconcile or change policy is refused by the
// database with exit 77; an operator's login role approves.
func TestPostgresRolesFromTheShell(t *testing.T) {
	owner := pgtest.DB(t)
	homes.Store(owner, t.TempDir())
	m := run(t, owner, "", "migrate", "--json")
	want(t, m, cli.ExitOK)
	// The version it reports is the one the database records, not the
	// SQLite build's (PostgreSQL's migrations are numbered on their own).
	db, err := sql.Open("pgx", owner)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored float64
	if err := db.QueryRow("SELECT max(version) FROM tollgate_schema").Scan(&stored); err != nil || m.json(t)["schema_version"] != stored {
		t.Fatalf("migrate reports schema version %v, the database records %v (%v)", m.json(t)["schema_version"], stored, err)
	}
	want(t, run(t, owner, "", "policy", "set", "refund", "--mode", "approval", "--ttl", "1h", "--operator", "root"), cli.ExitOK)
	agent := pgtest.Role(t, owner, "bot", "tollgate_agent")
	operator := pgtest.Role(t, owner, "alice", "tollgate_operator")
	for _, u := range []string{agent, operator} {
		homes.Store(u, t.TempDir())
	}
	want(t, run(t, owner, "", "policy", "set", "job", "--mode", "auto", "--operator", "root"), cli.ExitOK)
	// guardArgs names the agent cron-bot, which is not the role's name:
	// an operator allows it (schema 28).
	want(t, run(t, operator, "", "agents", "allow", loginRole(t, agent), "cron-bot"), cli.ExitOK)
	want(t, run(t, agent, "", guardArgs("refund:pg-1")...), cli.ExitRetry)
	// An action whose outcome the agent does not know: uncertain.
	r := run(t, agent, "", "guard", "job:pg-2", "--json", "--agent", "bot", "--kind", "job", "--target", "t", "--body", "b")
	want(t, r, cli.ExitOK)
	want(t, run(t, agent, "", "report", "job:pg-2", "--permit", r.json(t)["permit_id"].(string), "--outcome", "unknown"), cli.ExitOK)
	for _, args := range [][]string{
		{"approve", "refund:pg-1", "--operator", "mallory"},
		{"reconcile", "job:pg-2", "--result", "executed", "--note", "done", "--operator", "mallory"},
		{"policy", "set", "*", "--mode", "auto", "--operator", "mallory"},
	} {
		r := run(t, agent, "", args...)
		if r.code != cli.ExitNotPermitted {
			t.Fatalf("%v as the agent: exit %d, want %d: %s", args, r.code, cli.ExitNotPermitted, r.stderr)
		}
		if !strings.Contains(r.stderr, "the database refused this role") {
			t.Fatalf("%v as the agent: %s", args, r.stderr)
		}
	}
	want(t, run(t, operator, "", "approve", "refund:pg-1", "--operator", "alice"), cli.ExitOK)
	want(t, run(t, operator, "", "reconcile", "job:pg-2", "--result", "executed", "--note", "checked", "--operator", "alice"), cli.ExitOK)
	want(t, run(t, agent, "", guardArgs("refund:pg-1")...), cli.ExitOK)
	want(t, run(t, agent, "", "verify"), cli.ExitOK)
}

// TestMigrateFromFileToPostgres: 'migrate --from FILE' copies a file
// ledger with signed decisions, conflicts, reconciliations and fenced
// calls into an empty PostgreSQL database; verify on the copy reports the
// same ledger id and head, status answers alike, and the copy goes on
// taking writes. A second copy into the same database is refused.
func TestMigrateFromFileToPostgres(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ledger.db")
	// A signed ledger: alice's key registered, every rule and decision
	// signed (the signatures table holds blobs).
	key := run(t, file, "", "operator", "init", "--json")
	want(t, key, cli.ExitOK)
	want(t, run(t, file, "", "operators", "add", "alice", key.json(t)["public_key"].(string)), cli.ExitOK)
	want(t, run(t, file, "", "policy", "set", "refund", "--mode", "approval", "--ttl", "1h"), cli.ExitOK)
	want(t, run(t, file, "", "policy", "set", "job", "--mode", "auto"), cli.ExitOK)
	want(t, run(t, file, "", "guard", "refund:m-1", "--kind", "refund", "--target", "a", "--body", "40", "--agent", "bot"), cli.ExitRetry)
	want(t, run(t, file, "", "approve", "refund:m-1", "--operator", "alice"), cli.ExitOK)
	r := run(t, file, "", "guard", "job:m-2", "--json", "--kind", "job", "--target", "a", "--body", "b", "--agent", "bot")
	want(t, r, cli.ExitOK)
	want(t, run(t, file, "", "report", "job:m-2", "--permit", r.json(t)["permit_id"].(string), "--outcome", "unknown"), cli.ExitOK)
	want(t, run(t, file, "", "reconcile", "job:m-2", "--result", "executed", "--note", "seen", "--operator", "alice"), cli.ExitOK)
	want(t, run(t, file, "", "record", "refund:m-1", "--kind", "refund", "--target", "a", "--body", "41"), cli.ExitConflict)
	src := run(t, file, "", "verify", "--json")
	want(t, src, cli.ExitOK)

	u := pgtest.DB(t)
	homes.Store(u, filepath.Dir(file)) // the same operator key
	r = run(t, u, "", "migrate", "--from", file, "--json")
	want(t, r, cli.ExitOK)
	dst := run(t, u, "", "verify", "--json")
	want(t, dst, cli.ExitOK)
	for _, k := range []string{"ledger_id", "events", "chain_head", "facts", "payloads"} {
		if a, b := src.json(t)[k], dst.json(t)[k]; a != b {
			t.Fatalf("%s: the file says %v, the copy %v", k, a, b)
		}
	}
	for _, key := range []string{"refund:m-1", "job:m-2"} {
		a, b := run(t, file, "", "status", key, "--json").json(t), run(t, u, "", "status", key, "--json").json(t)
		if a["state"] != b["state"] || a["payload_sha256"] != b["payload_sha256"] {
			t.Fatalf("%s: file %v, copy %v", key, a, b)
		}
	}
	if r := run(t, u, "", "operators", "list"); !strings.Contains(r.stdout, "alice") || strings.Contains(r.stdout, "unsigned") {
		t.Fatalf("the copy's operators: %s", r.stdout)
	}
	// The signed auto rule still grants on the copy; the same key decides.
	want(t, run(t, u, "", "guard", "job:m-3", "--kind", "job", "--target", "a", "--body", "c", "--agent", "bot"), cli.ExitOK)
	want(t, run(t, u, "", "guard", "refund:m-4", "--kind", "refund", "--target", "a", "--body", "5", "--agent", "bot"), cli.ExitRetry)
	want(t, run(t, u, "", "approve", "refund:m-4"), cli.ExitOK)
	want(t, run(t, u, "", "verify"), cli.ExitOK)
	if r := run(t, u, "", "migrate", "--from", file); r.code != cli.ExitInvalid || !strings.Contains(r.stderr, "empty database") {
		t.Fatalf("a second copy: %d %s", r.code, r.stderr)
	}
}
