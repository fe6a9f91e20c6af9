package ledger

import (
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// celCase is one condition over one action, as the differential tests
// evaluate it in process (cel-go) and in the database.
type celCase struct {
	cond string
	f    approvals.Facts
}

// celTable are conditions an operator writes (the README's and
// policy.md's examples among them) over the actions that probe their
// edges: thresholds, missing fields, wrong types, lists, time zones
// across the change to winter time, conversions and arithmetic errors.
func celTable() []celCase {
	summer := time.Date(2026, 10, 24, 18, 30, 0, 0, time.UTC)
	winter := time.Date(2026, 10, 26, 18, 30, 0, 0, time.UTC)
	ctxs := []map[string]any{
		{}, {"amount": 50.0}, {"amount": 50.01}, {"amount": 5000.5}, {"amount": -1.0}, {"amount": "12"},
		{"amount": 1e21}, {"flags": []string{"pii_export", "vip"}}, {"flags": []string{}}, {"name": "Zoë", "code": "42"},
		{"code": "x", "vip": true}, {"code": "-9223372036854775808", "due": "2026-10-25T01:30:00+02:00"},
		{"due": "2026-10-25T01:30:00.123456789Z"}, {"due": "not a time"}, {"vip": false, "amount": 0.5},
	}
	conds := []string{
		"context.amount <= 50", "context.amount > 5000", `"pii_export" in context.flags`, `action.target.startsWith("test-")`,
		`now.getHours("Europe/Berlin") < 8 || now.getHours("Europe/Berlin") >= 20`, "has(context.amount) && context.amount < 100",
		"context.amount == 50", "context.amount != 50", "context.amount + 1.0 > 51.0", "context.amount * 2.0 >= 100.5",
		"context.amount / 0.0 > 1.0", "int(context.amount) == 50", "double(context.code) > 41.5", "int(context.code) + 1 == 43",
		"size(context.name) == 3", `context.name.contains("ë")`, `context.name.endsWith("oë") && !context.vip`,
		"context.vip ? context.amount > 1 : context.amount < 1", "context.vip || context.amount > 1", "context.vip && context.amount > 1",
		"size(context.flags) > 0", `context.code in ["42", "43"]`, "context.amount in [50, 51.5]", "1 / 0 == 1 || context.vip",
		"9223372036854775807 + 1 > 0", `timestamp(context.due).getHours("UTC") == 23`, `timestamp(context.due).getMilliseconds() == 123`,
		`timestamp(context.due) > now`, `now.getDayOfWeek("America/New_York") == 6`, `now.getDayOfYear() > 200 && now.getMonth("+05:30") == 9`,
		`now.getMinutes("-08:00") == 30`, `now.getHours("Not/AZone") == 1`, `action.agent == "bot" && action.kind.startsWith("refund.")`,
		`context.name < "Zz"`, `context.vip == true`, `context.vip == 1`, `[context.code] == ["42"]`, `context.amount > 1 == true`,
		`-context.amount < 0.0`, `context.amount % 2 == 0`, `context.code + "!" == "42!"`, "null == null", `now > timestamp("2026-01-01T00:00:00Z")`,
		`int(context.code) < 0`, `context.flags + ["x"] == ["pii_export", "vip", "x"]`, `now.getFullYear() == 2026 && now.getDate() > 20`,
		`now.getSeconds() == 0 && now.getDayOfMonth() == 25`, `now.getHours("EST") == 13`, `now.getHours("EST") == 14`,
	}
	var out []celCase
	// The body: typed as both engines type it (scale 0 an int, else a
	// double), nested, absent when not one object, unreadable numbers.
	bodies := []string{"", `{"customer":"acme","cents":900000}`, `{"cents":900,"tags":["vip","x"],"rate":0.25}`,
		`{"customer":{"id":"c-1"},"cents":5e3}`, `{"cents":1.5e1,"rate":1e-3}`, `{"cents":99999999999999999999}`, "send it",
		"[1, 2]", `{"rate": 1e-400}`, `{"cents": 9223372036854775807, "rate": 1.0}`, `{"cents": -0, "n": null, "ok": true}`, `{"cents": 5} x`}
	bodyConds := []string{"action.body.cents > 10000", "has(action.body.cents) && action.body.cents < 5", `action.body.customer == "acme"`,
		`action.body.customer.id == "c-1"`, `"vip" in action.body.tags`, "size(action.body.tags) > 1", "action.body.rate * 2.0 > 0.4",
		"action.body.cents + 1 == 901", "has(action.body)", `"id" in action.body.customer`, "size(action.body.customer) == 1",
		"int(action.body.rate) == 0", "action.body.cents == 5000.0", "has(action.body.customer.id)", "action.body.n == null",
		"action.body.ok == true", "has(action.body.tags.x)", "has(action.body.cents.x)", "double(action.body.cents) / 100.0 > 50.01", "action.body.cents * 2 > 0"}
	for _, c := range bodyConds {
		for i, b := range bodies {
			out = append(out, celCase{c, approvals.Facts{Kind: "mcp.send_invoice", Target: "acme", Agent: "bot", Body: b, Context: ctxs[i%len(ctxs)], Now: winter}})
		}
	}
	for _, c := range conds {
		for i, cx := range ctxs {
			now := summer
			if i%2 == 1 {
				now = winter
			}
			out = append(out, celCase{c, approvals.Facts{Kind: "refund.card", Target: "test-42", Agent: "bot", Context: cx, Now: now}})
		}
	}
	return out
}

// celGenerated are random conditions over random actions from a fixed
// seed: the combinations nobody thought to write down.
func celGenerated(n int) []celCase {
	rnd := rand.New(rand.NewSource(11))
	pick := func(xs ...string) string { return xs[rnd.Intn(len(xs))] }
	zone := func() string {
		return pick(`"UTC"`, `"Europe/Berlin"`, `"America/New_York"`, `"Asia/Kolkata"`, `"+05:30"`, `"-08:00"`, `"Australia/Lord_Howe"`)
	}
	var num, str, cond func(d int) string
	num = func(d int) string {
		if d <= 0 {
			return pick("context.amount", "context.count", "1", "50", "0", "-3", "2.5", "0.0", "1e3", "size(context.name)", "size(context.flags)")
		}
		switch rnd.Intn(9) {
		case 0, 1:
			return "(" + num(d-1) + " " + pick("+", "-", "*", "/", "%") + " " + num(d-1) + ")"
		case 2:
			return "-" + num(d-1)
		case 3:
			return pick("int", "double") + "(" + pick(num(d-1), str(d-1)) + ")"
		case 4:
			return "now." + pick("getHours", "getMinutes", "getDayOfWeek", "getDate", "getMonth", "getDayOfYear", "getFullYear") + "(" + zone() + ")"
		case 5:
			return "timestamp(context.due)." + pick("getHours", "getMilliseconds", "getSeconds") + "(" + pick("", zone()) + ")"
		case 6:
			return "(" + cond(d-1) + " ? " + num(d-1) + " : " + num(d-1) + ")"
		}
		return num(0)
	}
	str = func(d int) string {
		if d <= 0 || rnd.Intn(3) > 0 {
			return pick("action.kind", "action.target", "action.agent", "context.name", "context.code", `"refund."`, `"42"`, `"Zoë"`, `""`)
		}
		return "(" + str(d-1) + " + " + str(d-1) + ")"
	}
	cond = func(d int) string {
		if d <= 0 {
			switch rnd.Intn(6) {
			case 0:
				return pick("has(context.amount)", "has(context.vip)", "context.vip", "true", "false")
			case 1:
				return str(0) + " in " + pick("context.flags", `["42", "Zoë", "refund.card"]`)
			case 2:
				return num(0) + " in [1, 50, 2.5]"
			}
			return num(0) + " " + pick("<", "<=", ">", ">=", "==", "!=") + " " + num(0)
		}
		switch rnd.Intn(8) {
		case 0:
			return "(" + cond(d-1) + " && " + cond(d-1) + ")"
		case 1:
			return "(" + cond(d-1) + " || " + cond(d-1) + ")"
		case 2:
			return "!" + cond(d-1)
		case 3:
			return str(d-1) + "." + pick("startsWith", "endsWith", "contains") + "(" + str(d-1) + ")"
		case 4:
			return "(" + cond(d-1) + " ? " + cond(d-1) + " : " + cond(d-1) + ")"
		case 5:
			return str(d-1) + " " + pick("<", "==", ">=", "!=") + " " + str(d-1)
		}
		return num(d-1) + " " + pick("<", "<=", ">", ">=", "==", "!=") + " " + num(d-1)
	}
	field := func(cx map[string]any, name string, vals ...any) {
		if rnd.Intn(5) > 0 {
			cx[name] = vals[rnd.Intn(len(vals))]
		}
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var out []celCase
	for len(out) < n {
		c := cond(rnd.Intn(4))
		if _, err := approvals.PortableConditionAST(c); err != nil {
			continue // ill-typed (or outside the subset): never stored
		}
		cx := map[string]any{}
		field(cx, "amount", 50.0, 49.99, 5000.5, 0.0, -2.0, 1e300, "12", true, 7.0)
		field(cx, "count", 3.0, 0.0, -1.5, "x")
		field(cx, "name", "Zoë", "", "refund.card", "42")
		field(cx, "code", "42", "-7", "1e3", "x", " 5", "9223372036854775808")
		field(cx, "vip", true, false, "yes")
		field(cx, "flags", []string{}, []string{"42", "vip"}, []string{"Zoë"})
		field(cx, "due", "2026-03-29T01:59:59Z", "2026-10-25T02:30:00.5+02:00", "2026-13-01T00:00:00Z", "yesterday")
		now := time.UnixMilli(base + rnd.Int63n(366*24*3600*1000)).UTC()
		out = append(out, celCase{c, approvals.Facts{Kind: pick("refund.card", "email"), Target: pick("test-1", "acme"), Agent: pick("bot", "Zoë"), Context: cx, Now: now}})
	}
	return out
}

// TestPostgresConditionsMatchCEL is the differential test of the
// database's evaluator: every condition of celTable and 3,000 generated
// ones, each over its action, holds, fails or cannot be evaluated (an
// error, which sends the key to approval) alike in cel-go and in
// tollgate_condition_holds.
func TestPostgresConditionsMatchCEL(t *testing.T) {
	if !onPostgres {
		t.Skip("the database's evaluator is PostgreSQL's")
	}
	s, _ := openTest(t)
	db := rawDB(t, testPath(s))
	cases := append(celTable(), celGenerated(3000)...)
	// Once as the ledger runs, once in a transaction under every hostile
	// session setting at once (the functions pin their own).
	for _, profile := range []string{"", "hostile"} {
		t.Run("settings="+profile, func(t *testing.T) { conditionsMatchCEL(t, db, cases, profile != "") })
	}
}

func conditionsMatchCEL(t *testing.T, raw *rawConn, cases []celCase, hostile bool) {
	db, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Rollback()
	if hostile {
		for _, setting := range hostileSettings {
			if _, err := db.Exec("SET LOCAL " + setting); err != nil {
				t.Fatal(err)
			}
		}
	}
	bad := 0
	seen := map[string]int{}
	for _, c := range cases {
		cond, err := approvals.CompileCondition(c.cond)
		if err != nil {
			t.Fatalf("%s: %v", c.cond, err)
		}
		ast, err := cond.PortableAST()
		if err != nil {
			t.Fatalf("%s: %v", c.cond, err)
		}
		want := "error"
		if ok, _, err := cond.Eval(c.f); err == nil {
			want = fmt.Sprint(ok)
		}
		cx := string(Context(c.f.Context).Canonical())
		if cx == "" {
			cx = "{}"
		}
		var body *string
		if c.f.Body != "" {
			body = &c.f.Body
		}
		var holds sql.NullBool
		if err := db.QueryRow("SELECT tollgate_condition_holds($1::jsonb, $2::jsonb, tollgate_cel_action($3, $4, $5, $6), $7::numeric)", ast, cx,
			c.f.Kind, c.f.Target, c.f.Agent, body, fmt.Sprint(c.f.Now.UnixMilli()*1e6)).Scan(&holds); err != nil {
			t.Fatalf("%s over %s: %v", c.cond, cx, err)
		}
		got := "error"
		if holds.Valid {
			got = fmt.Sprint(holds.Bool)
		}
		seen[want]++
		if got != want {
			if bad++; bad <= 20 {
				t.Errorf("%s over %s at %s: the database says %s, cel-go %s", c.cond, cx, c.f.Now.Format(time.RFC3339), got, want)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d cases differ", bad, len(cases))
	}
	// The cases must reach every outcome, errors included, or they
	// prove less than they seem to.
	for _, o := range []string{"true", "false", "error"} {
		if seen[o] < len(cases)/40 {
			t.Fatalf("only %d of %d cases %s: %v", seen[o], len(cases), o, seen)
		}
	}
	t.Logf("%d cases agree: %v", len(cases), seen)
}

// TestPostgresDecidesAsDecide: the database's decision (mode, rule, TTL,
// quorum, pattern) over a stored rule set, with priorities, exact and
// glob patterns, conditions, replaced rules and conditions that err, is
// approvals.Decide's for every action of the table and 1,000 generated.
func TestPostgresDecidesAsDecide(t *testing.T) {
	if !onPostgres {
		t.Skip("the database's decision is PostgreSQL's")
	}
	s, _ := openTest(t)
	for _, r := range []approvals.Rule{
		{Pattern: "refund.*", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "refund.*", Mode: approvals.Auto, Condition: "context.amount <= 50"},
		{Pattern: "refund.*", Mode: approvals.Approval, Approvers: 2, TTL: 2 * time.Hour, Condition: "context.amount > 5000"},
		{Pattern: "refund.card", Mode: approvals.Auto, Condition: `context.name == "Zoë"`},
		{Pattern: "email", Mode: approvals.Deny, Condition: `now.getHours("Europe/Berlin") < 8 || now.getHours("Europe/Berlin") >= 20`},
		{Pattern: "email", Mode: approvals.Auto},
		{Pattern: "*", Mode: approvals.Deny, Priority: 10, Condition: `"pii_export" in context.flags`},
		{Pattern: "re?und.*", Mode: approvals.Auto, Condition: `action.target.startsWith("test-")`},
		{Pattern: "*", Mode: approvals.Approval, Priority: -5, Approvers: 3},
		{Pattern: "email", Mode: approvals.Approval, Approvers: 2}, // replaces the auto rule for email
		{Pattern: "refund.*", Mode: approvals.Deny, Priority: 1, Condition: "int(context.code) > 100"},
		{Pattern: "mcp.*", Mode: approvals.Approval, Approvers: 2, Condition: "action.body.cents > 10000"},
		{Pattern: "mcp.*", Mode: approvals.Deny, Condition: `action.body.customer == "evil"`},
		{Pattern: "mcp.*", Mode: approvals.Auto},
	} {
		if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := s.Policies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, testPath(s))
	cases := append(celTable(), celGenerated(1000)...)
	bad := 0
	for i, c := range cases {
		if i%3 == 0 && c.f.Kind != "mcp.send_invoice" {
			c.f.Kind = "email"
		}
		c.f.Now = c.f.Now.Truncate(time.Millisecond)
		r, _ := approvals.Decide(rules, c.f)
		want := fmt.Sprintf("%s %d %d %d %s", r.Mode, r.ID, r.TTL.Milliseconds(), r.Approvers, r.Pattern)
		var mode, pattern string
		var rule sql.NullInt64
		var ttl, approvers int64
		var body *string
		if c.f.Body != "" {
			body = &c.f.Body
		}
		if err := db.QueryRow("SELECT * FROM tollgate_policy_decide($1, $2, $3, $4, $5, $6)", c.f.Kind, c.f.Target, c.f.Agent,
			string(Context(c.f.Context).Canonical()), body, c.f.Now.UnixMilli()).Scan(&mode, &rule, &ttl, &approvers, &pattern); err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%s %d %d %d %s", mode, rule.Int64, ttl, approvers, pattern)
		if got != want {
			if bad++; bad <= 20 {
				t.Errorf("%s over %s at %s: the database decides %q, Decide %q", c.f.Kind, Context(c.f.Context).Canonical(), c.f.Now.Format(time.RFC3339), got, want)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d cases differ", bad, len(cases))
	}
	if !strings.Contains(fmt.Sprint(rules), "Zoë") {
		t.Fatal("the rule set lost a rule")
	}
}
