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

// TestPostgresMigrateGrandfathersAgentNames: a deployment whose agents
// named themselves otherwise than their roles (bot1's role as
// "legacy-bot") keeps working after tollgate migrate to schema 28: every
// (role, agent) pair its payloads hold is allowed, by "schema 28", and
// no other name is; the owner's own pairs are not listed (it is exempt).
func TestPostgresMigrateGrandfathersAgentNames(t *testing.T) {
	r := newPGRolesAt(t, agentNamesSchema-2)
	role := roleOf(r.bot1)
	raw := rawDB(t, r.bot1).DB
	for key, agent := range map[string]string{"run:legacy": "legacy-bot", "run:short": "bot1"} {
		if got := callFn(t, raw, honestFn(key, Payload{"run", "t", "b"}, agent)); got.code != "" || got.permit == "" {
			t.Fatalf("at schema %d, bot1's role as %s: %+v", agentNamesSchema-2, agent, got)
		}
	}
	if _, err := r.admin.Guard(ctx, "run:owners", Payload{"run", "t", "b"}, GuardOptions{Agent: "owner-bot"}); err != nil {
		t.Fatal(err)
	}
	migrated := openAt(t, r.owner) // migrates
	names, err := migrated.AgentNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, n.Role+"="+n.Agent+" by "+n.AddedBy)
	}
	want := role + "=bot1 by schema 28, " + role + "=legacy-bot by schema 28"
	if strings.Join(got, ", ") != want {
		t.Errorf("after migrate the map is %q, want %q", strings.Join(got, ", "), want)
	}
	bot1 := openAt(t, r.bot1)
	if a, err := bot1.Guard(ctx, "run:legacy-2", Payload{"run", "t", "b"}, GuardOptions{Agent: "legacy-bot"}); err != nil || a.Verdict != Permitted {
		t.Errorf("bot1's role as legacy-bot after migrate: %+v %v, want its permit", a, err)
	}
	if _, err := bot1.Guard(ctx, "run:other", Payload{"run", "t", "b"}, GuardOptions{Agent: "other-bot"}); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("bot1's role as a name it never used: %v, want exit 77", err)
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
