package ledger

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// pgRoles is a PostgreSQL ledger with some of every kind of fact, and
// the URLs of its owner, two agents' login roles and an operator's.
type pgRoles struct {
	owner, bot1, bot2, alice string
	admin                    *Store
}

func newPGRoles(t *testing.T) pgRoles {
	t.Helper()
	r := pgRoles{owner: pgtest.DB(t)}
	r.admin = openAt(t, r.owner)
	setRules(t, r.admin)
	r.bot1 = pgtest.Role(t, r.owner, "bot1", "tollgate_agent")
	r.bot2 = pgtest.Role(t, r.owner, "bot2", "tollgate_agent")
	r.alice = pgtest.Role(t, r.owner, "alice", "tollgate_operator")
	return r
}

// setRules makes "ask" need an approval and "run" run at once.
func setRules(t *testing.T, s *Store) {
	t.Helper()
	for _, rule := range []approvals.Rule{{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, {Pattern: "run", Mode: approvals.Auto}} {
		if _, err := s.SetPolicy(ctx, rule, "root"); err != nil {
			t.Fatal(err)
		}
	}
}

// writeFacts writes a payload, a request, a permit, a conflict and a
// report as agent, and a decision as operator: k:ask approved, k:run
// succeeded.
func writeFacts(t *testing.T, agent, operator *Store) {
	t.Helper()
	if _, err := agent.Guard(ctx, "k:ask", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Guard(ctx, "k:run", Payload{"run", "t", "a secret"}, GuardOptions{Agent: "bot1"})
	if err != nil || a.PermitID == "" {
		t.Fatalf("auto guard: %+v %v", a, err)
	}
	var ce *ConflictError
	if _, err := agent.Guard(ctx, "k:run", Payload{"run", "t", "other"}, GuardOptions{Agent: "bot1"}); !errors.As(err, &ce) {
		t.Fatalf("a changed payload: %v, want a conflict", err)
	}
	if _, err := agent.Report(ctx, "k:run", a.PermitID, Succeeded, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := operator.Approve(ctx, "k:ask", "alice", ""); err != nil {
		t.Fatal(err)
	}
}

func openAt(t *testing.T, u string) *Store {
	t.Helper()
	s, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// psqlPath finds the psql binary: on PATH or in Debian's versioned folder.
func psqlPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("psql"); err == nil {
		return p
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/psql"); len(m) > 0 {
		return m[len(m)-1]
	}
	if os.Getenv("TOLLGATE_REQUIRE_PG") != "" {
		t.Fatal("psql is not installed (postgresql-client)")
	}
	t.Skip("psql is not installed")
	return ""
}

// psqlErrorLine is one error psql reports for a line of its script.
var psqlErrorLine = regexp.MustCompile(`(?m)^psql:<stdin>:(\d+): ERROR:\s+(.*)$`)

// psqlErrors runs script (one statement a line) through psql as the role
// u names, going on after each error, and returns the error psql printed
// for each line that failed.
func psqlErrors(t *testing.T, u, script string) map[int]string {
	t.Helper()
	cmd := exec.Command(psqlPath(t), "-X", "-q", "-v", "ON_ERROR_STOP=0", "-f", "-", u)
	cmd.Stdin = strings.NewReader(script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("psql: %v: %s", err, stderr.String())
	}
	out := map[int]string{}
	for _, m := range psqlErrorLine.FindAllStringSubmatch(stderr.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		out[n] = m[2]
	}
	return out
}

// relation is a table or view of a PostgreSQL ledger, as the owner sees it.
type relation struct {
	name, kind, col string
}

// ledgerRelations lists every table and view of the ledger's two schemas.
func ledgerRelations(t *testing.T, owner string) []relation {
	t.Helper()
	rows, err := rawDB(t, owner).Query(`SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relkind::text,
			(SELECT quote_ident(a.attname) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum = 1)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('public', 'tollgate_private') AND c.relkind IN ('r', 'p', 'v') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []relation
	for rows.Next() {
		var r relation
		if err := rows.Scan(&r.name, &r.kind, &r.col); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// tableSums is every table's row count and a digest of its rows, read as
// the owner: what a refused write must leave exactly as it was.
func tableSums(t *testing.T, owner string, rels []relation) map[string]string {
	t.Helper()
	db := rawDB(t, owner)
	out := map[string]string{}
	for _, r := range rels {
		if r.kind == "v" {
			continue
		}
		var n int64
		var sum string
		if err := db.QueryRow("SELECT count(*), coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM "+r.name+" t").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		out[r.name] = strconv.FormatInt(n, 10) + " " + sum
	}
	return out
}

// TestPostgresDirectWritesRefusedThroughPsql: schema 10 leaves the roles
// EXECUTE and SELECT only (SPEC 8). Each role tries, through psql, every
// INSERT, UPDATE, DELETE and TRUNCATE on every table and view of the
// ledger; the database refuses each one as a privilege it does not hold,
// and every table's rows and the chain head are as they were.
func TestPostgresDirectWritesRefusedThroughPsql(t *testing.T) {
	r := newPGRoles(t)
	alice := openAt(t, r.alice)
	writeFacts(t, openAt(t, r.bot1), alice)

	rels := ledgerRelations(t, r.owner)
	names := map[string]bool{}
	for _, rel := range rels {
		names[strings.TrimPrefix(strings.TrimPrefix(rel.name, "public."), "tollgate_private.")] = true
	}
	for _, ft := range append(factTables, factTable{name: "intents"}, factTable{name: "events"}, factTable{name: "chain_head"},
		factTable{name: "action_index"}, factTable{name: "tollgate_schema"}) {
		if !names[ft.name] {
			t.Fatalf("the ledger has no relation %s among %v: the test would not try it", ft.name, rels)
		}
	}
	var script strings.Builder
	var stmts []string
	for _, rel := range rels {
		try := []string{"INSERT INTO " + rel.name + " DEFAULT VALUES", "UPDATE " + rel.name + " SET " + rel.col + " = " + rel.col,
			"DELETE FROM " + rel.name}
		if rel.kind != "v" { // a view is never truncated; its table is, below
			try = append(try, "TRUNCATE "+rel.name+" CASCADE")
		}
		for _, q := range try {
			stmts = append(stmts, q)
			script.WriteString(q + ";\n")
		}
	}
	before, err := r.admin.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sums := tableSums(t, r.owner, rels)
	for _, who := range []struct{ name, url string }{{"agent", r.bot1}, {"operator", r.alice}} {
		errs := psqlErrors(t, who.url, script.String())
		for i, q := range stmts {
			if e, ok := errs[i+1]; !ok || !strings.Contains(e, "permission denied") {
				t.Errorf("%s: %s: %q, want permission denied", who.name, q, e)
			}
		}
	}
	after, err := r.admin.Head(ctx)
	if err != nil || after != before {
		t.Fatalf("the head moved: %+v -> %+v (%v)", before, after, err)
	}
	for name, sum := range tableSums(t, r.owner, rels) {
		if sums[name] != sum {
			t.Errorf("%s changed: %s -> %s", name, sums[name], sum)
		}
	}
	if rep, err := alice.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// operatorFacts are the fact tables only an operator's role writes on
// PostgreSQL: decisions and votes, reconciliations, rules, epochs,
// reviews, the operator registry and the signatures over them.
var operatorFacts = map[string]bool{
	"decisions": true, "votes": true, "reconciliations": true, "policy_rules": true, "epochs": true,
	"conflict_reviews": true, "fenced_reviews": true, "operators": true, "signatures": true,
	"archives": true, "set_aside": true, "agent_tokens": true, "principal_names": true,
}

// TestPostgresFactFunctionsKeepTheirLists: which role may write which
// fact is which insert function it may execute. An agent's role writes
// the facts of guard, record and report and is refused every operator
// fact; an operator's writes them all; no role writes the ledger's
// identity, and no list of columns that chooses a row's number or its
// writer (db_role) is taken.
func TestPostgresFactFunctionsKeepTheirLists(t *testing.T) {
	r := newPGRoles(t)
	code := func(db *rawConn, table string, cols ...string) string {
		t.Helper()
		vals := make([]string, len(cols))
		_, err := db.Exec("SELECT "+insertFactFn+table+"($1, $2)", cols, vals)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%s%s: %v, want a refusal", insertFactFn, table, err)
		}
		return pe.Code
	}
	const (
		refused  = "42501" // insufficient_privilege: no EXECUTE on the table's function
		admitted = "42703" // undefined_column: past the grant, the columns are not the table's
		missing  = "42883" // undefined_function: no role writes it
	)
	agent, operator := rawDB(t, r.bot1), rawDB(t, r.alice)
	for _, ft := range factTables {
		agentWant, operatorWant := admitted, admitted
		switch {
		case ft.name == "ledger_meta":
			agentWant, operatorWant = missing, missing
		case operatorFacts[ft.name]:
			agentWant = refused
		}
		if got := code(agent, ft.name, "no_such_column"); got != agentWant {
			t.Errorf("agent, %s: %s, want %s", ft.name, got, agentWant)
		}
		if got := code(operator, ft.name, "no_such_column"); got != operatorWant {
			t.Errorf("operator, %s: %s, want %s", ft.name, got, operatorWant)
		}
	}
	for _, c := range []struct{ table, cols string }{
		{"decisions", "action_key, decision, operator, reason, at_ms, db_role"},
		{"payloads", "action_key, payload_sha256, canonical, redacted, kind, kind_sha256, target_sha256, body_sha256, agent, recorded_ms, context_sha256, context, db_role"},
		{"conflicts", "id, action_key, stored_sha256, attempted_sha256, attempted, redacted, differs, agent, at_ms"},
		{"votes", "id, action_key, decision, operator, name_key, reason, at_ms"},
	} {
		if got := code(operator, c.table, strings.Split(c.cols, ", ")...); got != admitted {
			t.Errorf("operator choosing %s: %s, want %s", c.cols, got, admitted)
		}
	}
	if _, err := agent.Exec("SELECT tollgate_make_insert_fact('decisions', 'tollgate_agent')"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("an agent remaking an insert function: %v", err)
	}
}

// TestPostgresBodiesHiddenFromOtherAgents: one agent's payload bodies are
// hidden from another agent's role (SPEC 8) while digests and states stay
// visible: bot2 reads bot1's body as NULL and cannot reach the table
// behind the view, yet its status of bot1's key answers, and its changed
// payload for that key is a conflict that names the field. Each sees its
// own bodies, the operator every body; verify refuses a role that cannot
// read them all, by name, and proves the ledger for the operator.
func TestPostgresBodiesHiddenFromOtherAgents(t *testing.T) {
	r := newPGRoles(t)
	bot1, bot2, alice := openAt(t, r.bot1), openAt(t, r.bot2), openAt(t, r.alice)
	const secret = "card 4111-1111-1111-1111"
	if a, err := bot1.Guard(ctx, "k:pay", Payload{"run", "acct-1", secret}, GuardOptions{Agent: "bot1"}); err != nil || a.PermitID == "" {
		t.Fatalf("bot1's guard: %+v %v", a, err)
	}
	var ce *ConflictError
	if _, err := bot2.Guard(ctx, "k:pay", Payload{"run", "acct-1", "bot2's own body"}, GuardOptions{Agent: "bot2"}); !errors.As(err, &ce) ||
		strings.Join(ce.Differs, ",") != "body" {
		t.Fatalf("bot2's changed payload for bot1's key: %v, want a conflict naming the body", err)
	}
	if a, err := bot2.Guard(ctx, "k:pay", Payload{"run", "acct-1", secret}, GuardOptions{Agent: "bot2"}); err != nil || !a.Replayed {
		t.Fatalf("bot2's identical retry of bot1's key: %+v %v", a, err)
	}

	body := func(u, q string) (string, bool) {
		t.Helper()
		var v *string
		if err := rawDB(t, u).QueryRow(q).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if v == nil {
			return "", false
		}
		return *v, true
	}
	const payloadQ = "SELECT canonical FROM payloads WHERE action_key = 'k:pay'"
	const attemptQ = "SELECT attempted FROM conflicts WHERE action_key = 'k:pay'"
	if v, ok := body(r.bot2, payloadQ); ok {
		t.Fatalf("bot2 reads bot1's body: %q", v)
	}
	if v, ok := body(r.bot1, attemptQ); ok {
		t.Fatalf("bot1 reads bot2's attempted body: %q", v)
	}
	for _, c := range []struct{ who, u, q string }{{"bot1", r.bot1, payloadQ}, {"alice", r.alice, payloadQ}, {"bot2", r.bot2, attemptQ}, {"alice", r.alice, attemptQ}} {
		if v, ok := body(c.u, c.q); !ok || v == "" {
			t.Fatalf("%s: %s: %q %v, want the body", c.who, c.q, v, ok)
		}
	}
	if v, _ := body(r.bot2, "SELECT body_sha256 || ' ' || payload_sha256 || ' ' || agent || ' ' || db_role FROM payloads WHERE action_key = 'k:pay'"); !strings.Contains(v, "bot1") {
		t.Fatalf("bot2 must still see the digests and who wrote them: %q", v)
	}
	for _, q := range []string{"SELECT canonical FROM tollgate_private.payloads", "SELECT attempted FROM tollgate_private.conflicts"} {
		if _, err := rawDB(t, r.bot2).Exec(q); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("bot2: %s: %v, want permission denied", q, err)
		}
	}

	d, err := bot2.Status(ctx, "k:pay")
	if err != nil || d.State != StateExecuting || d.SHA256 == "" || d.Payload != nil || d.Agent != "bot1" {
		t.Fatalf("bot2's status of bot1's key: %+v %v", d, err)
	}
	for _, c := range []struct {
		who string
		s   *Store
	}{{"bot1", bot1}, {"alice", alice}} {
		if d, err := c.s.Status(ctx, "k:pay"); err != nil || d.Payload == nil || d.Payload.Body != secret {
			t.Fatalf("%s's status: %+v %v, want the body", c.who, d.Payload, err)
		}
	}
	if _, err := bot2.Verify(ctx); !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), "operator") {
		t.Fatalf("verify as bot2: %v, want a refusal that says who may verify", err)
	}
	if rep, err := alice.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify as the operator: %+v %v", rep, err)
	}
}
