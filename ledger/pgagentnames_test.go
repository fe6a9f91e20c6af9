package ledger

import (
	"errors"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// agentNames is the map of roles to names, as the owner reads it.
func agentNames(t *testing.T, owner *rawConn) string {
	t.Helper()
	var s string
	if err := owner.QueryRow(`SELECT coalesce(string_agg(role || '=' || agent || ' by ' || added_by, ', ' ORDER BY role, agent), '')
		FROM tollgate_private.agent_names`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPostgresAgentCannotAllowItselfAName: the map of roles to names is
// an operator's. An agent's role calling allow or revoke, through the
// ledger or in SQL, reading or writing the private table, or calling the
// trigger's check, is refused with permission denied (exit 77), and the
// map does not change; an operator's role allows and revokes.
func TestPostgresAgentCannotAllowItselfAName(t *testing.T) {
	r := newPGRoles(t)
	owner, bot1 := rawDB(t, r.owner), openAt(t, r.bot1)
	role := roleOf(r.bot1)
	before := agentNames(t, owner)
	if _, err := bot1.AllowAgent(ctx, role, "backup-bot"); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("an agent's role allowed itself a name: %v, want exit 77", err)
	}
	if _, err := bot1.RevokeAgent(ctx, role, "bot1"); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("an agent's role revoked a name: %v, want exit 77", err)
	}
	raw := rawDB(t, r.bot1)
	for _, q := range []string{
		`SELECT tollgate_agent_allow('` + role + `', 'backup-bot')`,
		`SELECT tollgate_agent_revoke('` + role + `', 'bot1')`,
		`SELECT * FROM tollgate_agent_names()`,
		`INSERT INTO tollgate_private.agent_names (role, agent) VALUES ('` + role + `', 'backup-bot')`,
		`DELETE FROM tollgate_private.agent_names`,
		`UPDATE tollgate_private.agent_names SET agent = 'backup-bot'`,
		`SELECT tollgate_private.agent_name_allowed('backup-bot')`,
	} {
		_, err := raw.DB.Exec(q)
		if code := pgCode(err); code != "42501" {
			t.Errorf("%s: %v (%s), want permission denied", q, err, code)
		}
	}
	if after := agentNames(t, owner); after != before {
		t.Errorf("the map changed: %q, was %q", after, before)
	}
	alice := openAt(t, r.alice)
	if added, err := alice.AllowAgent(ctx, role, "backup-bot"); err != nil || !added {
		t.Fatalf("an operator's allow: %v %v", added, err)
	}
	if added, err := alice.AllowAgent(ctx, role, "backup-bot"); err != nil || added {
		t.Errorf("allowed twice: %v %v, want no change the second time", added, err)
	}
	if _, err := alice.AllowAgent(ctx, "no_such_role", "x"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a role that does not exist: %v, want invalid input", err)
	}
	names, err := alice.AgentNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range names {
		found = found || n.Role == role && n.Agent == "backup-bot" && n.AddedBy == roleOf(r.alice)
	}
	if !found {
		t.Errorf("the list %+v lacks %s=backup-bot added by alice's role", names, role)
	}
	if gone, err := alice.RevokeAgent(ctx, role, "backup-bot"); err != nil || !gone {
		t.Errorf("an operator's revoke: %v %v", gone, err)
	}
	if after := agentNames(t, owner); after != before {
		t.Errorf("allow then revoke left %q, was %q", after, before)
	}
}

// TestPostgresDefaultAgentIsTheRole: a guard or record that names no
// agent (guard with no --agent, the Python client's default) is recorded
// under the login role's name, which the database lets the role use, so
// the honest default keeps working; a store's DefaultAgent says so.
func TestPostgresDefaultAgentIsTheRole(t *testing.T) {
	owner := pgtest.DB(t)
	openAt(t, owner)
	u := pgtest.Role(t, owner, "plain", "tollgate_agent")
	s := openAt(t, u)
	role := roleOf(u)
	if s.DefaultAgent() != role {
		t.Errorf("DefaultAgent %q, want the role %q", s.DefaultAgent(), role)
	}
	if _, err := s.Guard(ctx, "run:nameless", Payload{"run", "t", "b"}, GuardOptions{}); err != nil {
		t.Fatalf("a guard naming no agent: %v", err)
	}
	if _, err := s.Record(ctx, "run:nameless-record", Payload{"run", "t", "b"}, RecordOptions{}); err != nil {
		t.Fatalf("a record naming no agent: %v", err)
	}
	d, err := s.Status(ctx, "run:nameless")
	if err != nil || d.Agent != role {
		t.Errorf("the key's agent: %q %v, want the role %q", d.Agent, err, role)
	}
}

// TestSQLiteHasNoAgentNames: the map is PostgreSQL's; a SQLite ledger
// says why there is none, and its default agent name stays empty.
func TestSQLiteHasNoAgentNames(t *testing.T) {
	sqliteOnly(t)
	s, _ := openTest(t)
	if _, err := s.AllowAgent(ctx, "bot1", "x"); !errors.Is(err, ErrNoAgentNames) || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Errorf("allow on SQLite: %v, want ErrNoAgentNames", err)
	}
	if _, err := s.AgentNames(ctx); !errors.Is(err, ErrNoAgentNames) {
		t.Errorf("list on SQLite: %v", err)
	}
	if s.DefaultAgent() != "" {
		t.Errorf("DefaultAgent on SQLite: %q", s.DefaultAgent())
	}
}
