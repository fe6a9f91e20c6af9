package ledger

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// boundClock sets the database's bound on a fact's time back to its
// default of 60 s (pgtest lifts it for tests on an injected clock), as
// a superuser: a database-wide setting of a custom parameter is a
// superuser's (or a role granted SET on it), never an agent's.
func boundClock(t *testing.T, owner string) {
	t.Helper()
	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if _, err := rawDB(t, pgtest.Admin(t)).Exec("ALTER DATABASE " + name + " SET tollgate.clock_skew_ms = '60000'"); err != nil {
		t.Fatal(err)
	}
}

// forge calls a fact's insert function as the role db connects as, with
// the row's columns and values as text, and returns the SQLSTATE it was
// refused with ("" when it was stored).
func forge(t *testing.T, db *rawConn, table string, row map[string]any) string {
	t.Helper()
	ft := factTableNamed(table)
	cols := strings.Split(ft.cols, ", ")
	if ft.intID {
		cols = cols[1:] // the database numbers the row
	}
	vals := make([]*string, len(cols))
	for i, c := range cols {
		v, ok := row[c]
		if !ok {
			t.Fatalf("forge %s: no value for %s", table, c)
		}
		if v != nil {
			s := fmt.Sprint(v)
			vals[i] = &s
		}
	}
	_, err := db.Exec("SELECT "+insertFactFn+table+"($1, $2)", cols, vals)
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &pe):
		return pe.Code
	}
	t.Fatalf("forge %s: %v", table, err)
	return ""
}

// TestPostgresEnforcesPolicyAgainstForgery: on PostgreSQL the rules are
// applied where the guard's transaction runs (schema 11), so an agent's
// role calling the fact functions itself, through its own connection,
// gets nothing the rules do not give: an 'auto' evaluation of its own
// key under an approval rule, a deny rule or a condition its context
// fails; an evaluation at a time of its choosing, to open a schedule
// window; a permit for a key recorded but not evaluated, pending,
// expired, denied or rejected; a report under another agent's permit.
// Each is refused (TG002) with every table as it was, verify proves the
// ledger, and the honest guard, approve and report still work.
func TestPostgresEnforcesPolicyAgainstForgery(t *testing.T) {
	r := newPGRoles(t)
	boundClock(t, r.owner)
	// The hour 12 hours from now: a window that is closed now and open
	// then, whatever the hour the test runs at.
	open := (time.Now().UTC().Hour() + 12) % 24
	var ids = map[string]int64{}
	for _, rule := range []approvals.Rule{
		{Pattern: "pay.*", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "pay.*", Mode: approvals.Auto, Condition: "context.amount <= 50"},
		{Pattern: "wire", Mode: approvals.Deny},
		{Pattern: "email", Mode: approvals.Auto, Condition: fmt.Sprintf(`now.getHours("UTC") == %d`, open)},
		{Pattern: "email", Mode: approvals.Deny},
		{Pattern: "brief", Mode: approvals.Approval, TTL: time.Second},
	} {
		got, err := r.admin.SetPolicy(ctx, rule, "root")
		if err != nil {
			t.Fatal(err)
		}
		ids[rule.Pattern+"|"+rule.Condition] = got.ID
	}
	autoPay := ids["pay.*|context.amount <= 50"]
	var autoEmail int64
	for k, id := range ids {
		if strings.HasPrefix(k, "email|now") {
			autoEmail = id
		}
	}
	bot1, bot2, alice := openAt(t, r.bot1), openAt(t, r.bot2), openAt(t, r.alice)
	raw1, raw2 := rawDB(t, r.bot1), rawDB(t, r.bot2)

	// The keys the forgeries are about, each recorded honestly.
	record := func(key, kind string, c Context) {
		t.Helper()
		if _, err := bot1.Record(ctx, key, Payload{kind, "acct-1", "b"}, RecordOptions{Agent: "bot1", Context: c}); err != nil {
			t.Fatal(err)
		}
	}
	record("k:big", "pay.card", Context{"amount": 5000.0})
	record("k:over", "pay.card", Context{"amount": 50.01})
	record("k:wire", "wire", nil)
	record("k:email", "email", nil)
	record("k:bare", "pay.card", Context{"amount": 1.0})
	guard := func(s *Store, key, kind string, c Context) Answer {
		t.Helper()
		a, err := s.Guard(ctx, key, Payload{kind, "acct-1", "b"}, GuardOptions{Agent: "bot1", Context: c})
		if err != nil {
			t.Fatalf("guard %s: %v", key, err)
		}
		return a
	}
	if a := guard(bot1, "k:pending", "pay.card", Context{"amount": 900.0}); a.State != StatePending {
		t.Fatalf("k:pending: %+v", a)
	}
	if a := guard(bot1, "k:denied", "wire", nil); a.State != StateDenied {
		t.Fatalf("k:denied: %+v", a)
	}
	if a := guard(bot1, "k:rejected", "pay.card", Context{"amount": 900.0}); a.State != StatePending {
		t.Fatalf("k:rejected: %+v", a)
	}
	if _, err := alice.Reject(ctx, "k:rejected", "alice", "no"); err != nil {
		t.Fatal(err)
	}
	if a := guard(bot1, "k:expired", "brief", nil); a.State != StatePending {
		t.Fatalf("k:expired: %+v", a)
	}
	run := guard(bot1, "k:run", "pay.card", Context{"amount": 10.0})
	if run.PermitID == "" || run.Rule == nil || run.Rule.RuleID != autoPay {
		t.Fatalf("an honest small payment: %+v, want a permit by rule %d", run, autoPay)
	}
	time.Sleep(1100 * time.Millisecond) // k:expired's request runs out

	now := time.Now().UnixMilli()
	eval := func(key, mode string, rule int64, pattern string, at int64) map[string]any {
		var id any
		if rule != 0 {
			id = rule
		}
		ttl := 0
		if mode == "approval" {
			ttl = 3_600_000
		}
		return map[string]any{"action_key": key, "mode": mode, "ttl_ms": ttl, "rule_id": id, "pattern": pattern, "at_ms": at, "approvers": 1, "explain": ""}
	}
	permit := func(key string) map[string]any {
		return map[string]any{"action_key": key, "permit_id": newUUID(), "agent": "bot1", "issued_ms": now, "lease_ms": now + 600_000}
	}
	var permitRun string
	if err := raw2.QueryRow("SELECT permit_id FROM permits WHERE action_key = 'k:run'").Scan(&permitRun); err != nil {
		t.Fatal(err)
	}
	forgeries := []struct {
		name, table string
		row         map[string]any
	}{
		{"an auto evaluation under an approval rule", "policy_evals", eval("k:big", "auto", autoPay, "pay.*", now)},
		{"an auto evaluation naming no rule", "policy_evals", eval("k:big", "auto", 0, "(no rule matches)", now)},
		{"an auto evaluation under a deny rule", "policy_evals", eval("k:wire", "auto", ids["wire|"], "wire", now)},
		{"an auto evaluation of an amount over the condition's limit", "policy_evals", eval("k:over", "auto", autoPay, "pay.*", now)},
		{"an auto evaluation in a closed schedule window", "policy_evals", eval("k:email", "auto", autoEmail, "email", now)},
		{"an evaluation at a time of the agent's choosing, the window open", "policy_evals", eval("k:email", "auto", autoEmail, "email", now+12*3_600_000)},
		{"an approval evaluation of a denied kind", "policy_evals", eval("k:wire", "approval", 0, "(no rule matches)", now)},
		{"a permit for a key recorded and never evaluated", "permits", permit("k:bare")},
		{"a permit for a key pending approval", "permits", permit("k:pending")},
		{"a permit for a key whose request expired", "permits", permit("k:expired")},
		{"a permit for a key denied by policy", "permits", permit("k:denied")},
		{"a permit for a rejected key", "permits", permit("k:rejected")},
		{"an approval request for a denied key", "approval_requests",
			map[string]any{"action_key": "k:wire", "agent": "bot1", "requested_ms": now, "expires_ms": now + 3_600_000}},
		{"another agent's report under the permit it read", "reports", map[string]any{"action_key": "k:run", "permit_id": permitRun,
			"outcome": "failed", "ref": "", "latency_ms": 1, "kind": "accepted", "at_ms": now, "result": ""}},
		{"a report under an invented permit id", "reports", map[string]any{"action_key": "k:run", "permit_id": newUUID(),
			"outcome": "failed", "ref": "", "latency_ms": 1, "kind": "accepted", "at_ms": now, "result": ""}},
	}
	rels := ledgerRelations(t, r.owner)
	before := tableSums(t, r.owner, rels)
	for _, f := range forgeries {
		db := raw1
		if f.table == "reports" {
			db = raw2
		}
		if code := forge(t, db, f.table, f.row); code != "TG002" {
			t.Errorf("%s: SQLSTATE %q, want TG002 (refused by the ledger's rules)", f.name, code)
		}
	}
	for name, sum := range tableSums(t, r.owner, rels) {
		if before[name] != sum {
			t.Errorf("%s changed: %s -> %s", name, before[name], sum)
		}
	}
	// The same report through bot2's own tollgate: refused by the
	// database, not merely by bot2's client.
	if _, err := bot2.Report(ctx, "k:run", run.PermitID, Failed, ReportOptions{}); !errors.Is(err, ErrNotPermitted) {
		t.Fatalf("bot2's report under bot1's permit: %v, want ErrNotPermitted", err)
	}

	// The honest paths: each key gets what its rules say.
	if _, err := bot1.Report(ctx, "k:run", run.PermitID, Succeeded, ReportOptions{}); err != nil {
		t.Fatalf("the permit holder's report: %v", err)
	}
	for _, c := range []struct {
		key, kind string
		c         Context
		state     State
		rule      int64
	}{
		{"k:big", "pay.card", Context{"amount": 5000.0}, StatePending, ids["pay.*|"]},
		{"k:over", "pay.card", Context{"amount": 50.01}, StatePending, ids["pay.*|"]},
		{"k:wire", "wire", nil, StateDenied, ids["wire|"]},
		{"k:email", "email", nil, StateDenied, ids["email|"]},
		{"k:bare", "pay.card", Context{"amount": 1.0}, StateExecuting, autoPay},
	} {
		a := guard(bot1, c.key, c.kind, c.c)
		if a.State != c.state || a.Rule == nil || a.Rule.RuleID != c.rule {
			t.Errorf("%s: %+v, want %s by rule %d", c.key, a, c.state, c.rule)
		}
	}
	if _, err := alice.Approve(ctx, "k:pending", "alice", ""); err != nil {
		t.Fatal(err)
	}
	if a := guard(bot1, "k:pending", "pay.card", Context{"amount": 900.0}); a.PermitID == "" {
		t.Fatalf("the approved key: %+v, want its permit", a)
	}
	if rep, err := alice.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestPostgresBoundsTheClock: a fact's time is the database's, within
// the bound its owner set; an agent cannot widen the bound with its own
// SET, and the owner can (a test on an injected clock lifts it).
func TestPostgresBoundsTheClock(t *testing.T) {
	r := newPGRoles(t)
	boundClock(t, r.owner)
	bot := openAt(t, r.bot1)
	if _, err := bot.Record(ctx, "k:run", Payload{"run", "t", "b"}, RecordOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, r.bot1)
	if _, err := raw.Exec("SET tollgate.clock_skew_ms = '-1'"); err != nil {
		t.Fatal(err)
	}
	ago := time.Now().Add(-time.Hour).UnixMilli()
	row := map[string]any{"action_key": "k:run", "mode": "auto", "ttl_ms": 0, "rule_id": nil, "pattern": "run", "at_ms": ago, "approvers": 1, "explain": ""}
	var id int64
	if err := raw.QueryRow("SELECT id FROM policy_rules WHERE pattern = 'run'").Scan(&id); err != nil {
		t.Fatal(err)
	}
	row["rule_id"] = id
	if code := forge(t, raw, "policy_evals", row); code != "TG002" {
		t.Fatalf("an evaluation an hour ago: %q, want TG002", code)
	}
	// The agent's clock an hour behind: its guard is refused, fails
	// closed, and stores nothing.
	late, err := Open(ctx, r.bot1, Options{Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	if _, err := late.Guard(ctx, "k:late", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"}); !errors.Is(err, ErrNotPermitted) {
		t.Fatalf("a guard on a clock an hour behind: %v, want ErrNotPermitted", err)
	}
	if _, err := bot.Status(ctx, "k:late"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("k:late after the refused guard: %v, want not found", err)
	}
	if a, err := bot.Guard(ctx, "k:run", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil || a.PermitID == "" {
		t.Fatalf("the guard on the database's clock: %+v %v", a, err)
	}
}

// TestPostgresRefusesConditionsItCannotEvaluate: a condition outside the
// subset the database evaluates is refused when set on PostgreSQL, as
// invalid input naming the construct and its position, with nothing
// stored; SQLite, which evaluates every condition in process, keeps it.
func TestPostgresRefusesConditionsItCannotEvaluate(t *testing.T) {
	s, _ := openTest(t)
	rule := approvals.Rule{Pattern: "pay.*", Mode: approvals.Auto, Condition: `context.items.all(i, i != "x")`}
	_, err := s.SetPolicy(ctx, rule, "root")
	if !onPostgres {
		if err != nil {
			t.Fatalf("SQLite: %v", err)
		}
		return
	}
	if !errors.Is(err, ErrInvalidInput) || !errors.Is(err, approvals.ErrNotPortable) || !strings.Contains(err.Error(), "at 1:18") {
		t.Fatalf("PostgreSQL: %v, want invalid input naming the macro at 1:18", err)
	}
	if rules, err := s.Policies(ctx); err != nil || len(rules) != 0 {
		t.Fatalf("rules after the refusal: %+v %v", rules, err)
	}
}

// TestPostgresVerifyRederivesConditions: verify derives each condition's
// translation again from the rule's text. A translation that lies (an
// operator's role storing "true" for "context.amount <= 50" through the
// functions it holds) and a condition rule with none are both reported.
func TestPostgresVerifyRederivesConditions(t *testing.T) {
	r := newPGRoles(t)
	if _, err := r.admin.SetPolicy(ctx, approvals.Rule{Pattern: "pay.*", Mode: approvals.Auto, Condition: "context.amount <= 50"}, "root"); err != nil {
		t.Fatal(err)
	}
	if rep, err := r.admin.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify of honest rules: %+v %v", rep.Problems, err)
	}
	op := rawDB(t, r.alice)
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	var lying, bare int64
	for _, c := range []struct {
		pattern string
		id      *int64
	}{{"wire.a", &lying}, {"wire.b", &bare}} {
		if err := op.QueryRow("SELECT id FROM "+insertFactFn+"policy_rules($1, $2)",
			strings.Split("pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority", ", "),
			[]string{c.pattern, "auto", "0", "alice", now, "1", "context.amount <= 50", "0"}).Scan(c.id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := op.Exec("SELECT tollgate_set_condition($1, $2)", lying, `{"v":1,"reads":[],"expr":["b",true]}`); err != nil {
		t.Fatal(err)
	}
	rep, err := r.admin.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var saw []string
	for _, p := range rep.Problems {
		saw = append(saw, p.Table+" "+p.Row+": "+p.Rule)
	}
	all := strings.Join(saw, "\n")
	if !strings.Contains(all, fmt.Sprintf("policy_conditions rule_id=%d: the stored translation", lying)) ||
		!strings.Contains(all, fmt.Sprintf("policy_rules id=%d: no translation", bare)) {
		t.Fatalf("verify's problems:\n%s\nwant the lying translation of rule %d and the missing one of rule %d", all, lying, bare)
	}
}

// TestRedactedTargetMeetsItsRule: a redacted payload keeps no target, yet
// a rule on the target decides it alike on both engines: on PostgreSQL
// the guard names the target to its own transaction and the database
// takes it only when its digest is the payload's.
func TestRedactedTargetMeetsItsRule(t *testing.T) {
	s, _ := openTest(t)
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "delete.*", Mode: approvals.Auto, Condition: `action.target.startsWith("test-")`}, "root"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, target string
		state       State
	}{{"k:test", "test-9", StateExecuting}, {"k:real", "acme", StatePending}} {
		a, err := s.Guard(ctx, c.key, Payload{"delete.tenant", c.target, "b"}, GuardOptions{Agent: "bot", Redact: true})
		if err != nil || a.State != c.state {
			t.Fatalf("%s: %+v %v, want %s", c.key, a, err, c.state)
		}
	}
}

// TestAgentConditionReadsTheIntentsAgent: action.agent is the agent whose
// intent the key is (its stored payload names it), not whoever guards it
// later, so the decision is the same on both engines; PostgreSQL, which
// evaluates from the stored payload, would otherwise refuse the guard.
func TestAgentConditionReadsTheIntentsAgent(t *testing.T) {
	s, _ := openTest(t)
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "run", Mode: approvals.Auto, Condition: `action.agent == "bot"`}, "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, "k:1", Payload{"run", "t", "b"}, RecordOptions{Agent: "bot"}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Guard(ctx, "k:1", Payload{"run", "t", "b"}, GuardOptions{Agent: "helper"})
	if err != nil || a.Verdict != Permitted || a.Rule == nil || a.Rule.Read["action.agent"] != "bot" {
		t.Fatalf("%+v %v, want a permit by the rule on the intent's agent", a, err)
	}
}
