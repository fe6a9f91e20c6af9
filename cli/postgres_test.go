package cli_test

import (
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
	want(t, run(t, owner, "", "migrate"), cli.ExitOK)
	want(t, run(t, owner, "", "policy", "set", "refund", "--mode", "approval", "--ttl", "1h", "--operator", "root"), cli.ExitOK)
	agent := pgtest.Role(t, owner, "bot", "tollgate_agent")
	operator := pgtest.Role(t, owner, "alice", "tollgate_operator")
	for _, u := range []string{agent, operator} {
		homes.Store(u, t.TempDir())
	}
	want(t, run(t, owner, "", "policy", "set", "job", "--mode", "auto", "--operator", "root"), cli.ExitOK)
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
