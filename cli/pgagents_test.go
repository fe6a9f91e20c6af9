package cli_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// loginRole is the role a test URL logs in as.
func loginRole(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		t.Fatalf("no role in %q: %v", u, err)
	}
	return p.User.Username()
}

// TestPostgresAgentsFromTheShell: on PostgreSQL an agent's role that
// guards under a name not its own is refused with exit 77 and the rule's
// remedy; with no --agent it guards under its role's name; an operator's
// role allows the name with `tollgate agents allow`, lists it, and
// revokes it, after which the name is refused again. The agent's role
// cannot run `agents allow` (exit 77). On SQLite the commands speak of
// the service's principals, and a list creates no ledger.
func TestPostgresAgentsFromTheShell(t *testing.T) {
	owner := pgtest.DB(t)
	homes.Store(owner, t.TempDir())
	want(t, run(t, owner, "", "migrate"), cli.ExitOK)
	want(t, run(t, owner, "", "policy", "set", "job", "--mode", "auto", "--operator", "root"), cli.ExitOK)
	agent := pgtest.Role(t, owner, "bot", "tollgate_agent")
	operator := pgtest.Role(t, owner, "alice", "tollgate_operator")
	for _, u := range []string{agent, operator} {
		homes.Store(u, t.TempDir())
	}
	role := loginRole(t, agent)
	job := func(key string, agentArgs ...string) []string {
		return append([]string{"guard", key, "--kind", "job", "--target", "t", "--body", "b"}, agentArgs...)
	}
	r := run(t, agent, "", job("job:as-backup", "--agent", "backup-bot")...)
	if r.code != cli.ExitNotPermitted || !strings.Contains(r.stderr, "the role "+role+" may not act as agent backup-bot") ||
		!strings.Contains(r.stderr, "tollgate agents allow "+role+" backup-bot") {
		t.Fatalf("the agent's role as backup-bot: exit %d, want %d naming the rule: %s", r.code, cli.ExitNotPermitted, r.stderr)
	}
	want(t, run(t, agent, "", job("job:nameless")...), cli.ExitOK)
	if s := run(t, agent, "", "status", "job:nameless", "--json"); s.json(t)["agent"] != role {
		t.Errorf("a guard with no --agent is recorded as %v, want the role %s", s.json(t)["agent"], role)
	}
	if r := run(t, agent, "", "agents", "allow", role, "backup-bot"); r.code != cli.ExitNotPermitted {
		t.Errorf("the agent's role allowing itself a name: exit %d, want %d: %s", r.code, cli.ExitNotPermitted, r.stderr)
	}
	a := run(t, operator, "", "agents", "allow", role, "backup-bot", "--json")
	want(t, a, cli.ExitOK)
	if a.json(t)["allowed"] != true {
		t.Errorf("allow answered %s", a.stdout)
	}
	if l := run(t, operator, "", "agents", "list"); !strings.Contains(l.stdout, role) || !strings.Contains(l.stdout, "backup-bot") {
		t.Errorf("agents list: %s", l.stdout)
	}
	want(t, run(t, agent, "", job("job:as-backup", "--agent", "backup-bot")...), cli.ExitOK)
	want(t, run(t, operator, "", "agents", "revoke", role, "backup-bot"), cli.ExitOK)
	if r := run(t, agent, "", job("job:as-backup-2", "--agent", "backup-bot")...); r.code != cli.ExitNotPermitted {
		t.Errorf("after revoke: exit %d, want %d: %s", r.code, cli.ExitNotPermitted, r.stderr)
	}

	// On SQLite there are no login roles: the commands speak of the
	// service's principals (a token's name, a socket's Unix user).
	file := filepath.Join(t.TempDir(), "ledger.db")
	if r := run(t, file, "", "agents", "list"); r.code != cli.ExitNotFound {
		t.Errorf("agents list on a missing SQLite ledger: exit %d, want %d: %s", r.code, cli.ExitNotFound, r.stderr)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("agents list on SQLite created the ledger file: %v", err)
	}
	want(t, run(t, file, "", "agents", "allow", "bot", "x", "--operator", "root"), cli.ExitOK)
	if r := run(t, file, "", "agents", "list"); !strings.Contains(r.stdout, "bot") || !strings.Contains(r.stdout, "x") {
		t.Errorf("agents list on SQLite: %s", r.stdout)
	}
}
