package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/tollgate-dev/tollgate/approvals"
)

// The holes of guardfn_holes_test.go that schema 15 closes, each
// attacked again through every path an agent's role has: the raw insert
// functions (schema 10), tollgate_guard (schema 14) and the event
// appends (schemas 8 and 13). Each asserts the refusal (TG002, exit 77)
// and that nothing stored changed.

// fullState is ledgerState with the conflicts a forgery could leave.
func fullState(t *testing.T, owner *rawConn) string {
	t.Helper()
	var n int
	if err := owner.QueryRow("SELECT count(*) FROM tollgate_private.conflicts").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s/%d", ledgerState(t, owner), n)
}

// payloadRow is the payloads row an honest client writes for p.
func payloadRow(key string, p Payload) map[string]any {
	return map[string]any{"action_key": key, "payload_sha256": p.Digest(), "canonical": string(p.Canonical()),
		"redacted": 0, "kind": p.Kind, "kind_sha256": sha256Hex([]byte(p.Kind)), "target_sha256": sha256Hex([]byte(p.Target)),
		"body_sha256": sha256Hex([]byte(p.Body)), "agent": "bot1", "recorded_ms": time.Now().UnixMilli(), "context_sha256": "", "context": ""}
}

// TestPostgresPayloadRowIsItsCanonicalText: a payload row whose columns
// are not those of its canonical text, or whose text is not canonical,
// is refused whichever path writes it; the kind mismatch is the one that
// gave a permit for a denied kind (TestPostgresGuardHoleRawPayloadKindMismatch).
func TestPostgresPayloadRowIsItsCanonicalText(t *testing.T) {
	r := attackRoles(t)
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	denied, big := Payload{"stop", "t", "b"}, strings.Repeat("k", MaxFieldRunes+1)
	forged := map[string]func(map[string]any){
		"kind column not the text's": func(m map[string]any) { m["kind"], m["kind_sha256"] = "run", sha256Hex([]byte("run")) },
		"kind digest not the kind's": func(m map[string]any) { m["kind_sha256"] = sha256Hex([]byte("run")) },
		"digest not the text's":      func(m map[string]any) { m["payload_sha256"] = Payload{"stop", "t", "c"}.Digest() },
		"target digest":              func(m map[string]any) { m["target_sha256"] = sha256Hex([]byte("u")) },
		"body digest":                func(m map[string]any) { m["body_sha256"] = sha256Hex([]byte("c")) },
		"duplicate field": func(m map[string]any) {
			m["canonical"] = `{"body":"b","kind":"ask","kind":"stop","target":"t"}`
			m["payload_sha256"] = sha256Hex([]byte(m["canonical"].(string)))
		},
		"spaces and escapes": func(m map[string]any) {
			m["canonical"] = `{ "body" : "b", "kind" : "\u0073top", "target" : "t" }`
			m["payload_sha256"] = sha256Hex([]byte(m["canonical"].(string)))
		},
		"an extra field": func(m map[string]any) {
			m["canonical"] = `{"body":"b","kind":"stop","target":"t","x":"y"}`
			m["payload_sha256"] = sha256Hex([]byte(m["canonical"].(string)))
		},
		"a field over the bound": func(m map[string]any) {
			p := Payload{big, "t", "b"}
			m["canonical"], m["payload_sha256"], m["kind"], m["kind_sha256"] = string(p.Canonical()), p.Digest(), big, sha256Hex([]byte(big))
		},
		"redacted, kind digest not the kind's": func(m map[string]any) {
			m["canonical"], m["redacted"], m["kind"] = nil, 1, "run"
		},
	}
	i := 0
	for name, change := range forged {
		i++
		key := fmt.Sprintf("forged:%d", i)
		// The owner's intent (schema 40 refuses any other role's without
		// its payload): what is attacked is the payload row.
		if _, err := owner.DB.Exec("SELECT tollgate_record_intent($1, $2)", key, denied.Digest()); err != nil {
			t.Fatal(err)
		}
		before := fullState(t, owner)
		row := payloadRow(key, denied)
		change(row)
		if code := forge(t, raw, "payloads", row); code != "TG002" {
			t.Errorf("%s: the raw path answered %q, not TG002", name, code)
		}
		if after := fullState(t, owner); after != before {
			t.Errorf("%s: the ledger changed: %s, was %s", name, after, before)
		}
	}
	// tollgate_guard: the same texts, each hashed to its own digest.
	before := fullState(t, owner)
	for key, text := range map[string]string{"run:dup": `{"body":"b","kind":"ask","kind":"run","target":"t"}`,
		"run:spaced": `{ "body" : "b", "kind" : "run", "target" : "t" }`, "run:big": `{"body":"` + big + `","kind":"run","target":"t"}`} {
		c := honestFn(key, Payload{"run", "t", "b"}, "bot1")
		c.canonical, c.sha = text, sha256Hex([]byte(text))
		if key == "run:big" {
			c.bodySHA = sha256Hex([]byte(big))
		}
		if got := callFn(t, raw.DB, c); got.code == "" {
			t.Errorf("%s: tollgate_guard stored it: %+v", key, got)
		}
	}
	if after := fullState(t, owner); after != before {
		t.Errorf("tollgate_guard: the ledger changed: %s, was %s", after, before)
	}
	// The honest paths still write: both the client's and the function's.
	bot := openAt(t, r.bot1)
	for i, p := range []Payload{{"run", "t\u2028\x01\"\\", "b\U0001F600é\x7f"}, {"run", "", ""}} {
		if _, err := bot.Guard(ctx, fmt.Sprintf("run:honest-%d", i), p, GuardOptions{Agent: "bot1"}); err != nil {
			t.Errorf("an honest guard of %q: %v", p.Target, err)
		}
		if got := callFn(t, raw.DB, honestFn(fmt.Sprintf("run:honest-fn-%d", i), p, "bot1")); got.code != "" {
			t.Errorf("an honest tollgate_guard of %q: %+v", p.Target, got)
		}
	}
	verifyOK(t, r.admin)
}

// TestPostgresGuardHoleAgentNameInPolicy (closed by schema 28): on
// PostgreSQL an agent's identity is its login role, yet the name policy
// read as action.agent was the string the client sent (guard --agent):
// the operators gave "backup-bot" an auto rule (`action.agent ==
// "backup-bot"`) and everyone else approval, and bot1's role, guarding
// with --agent backup-bot, was issued the auto permit. Now the database
// refuses a payload or a conflict whose agent is not the writing role's
// name or one an operator allowed it, on the one-call path and on the
// client's (a store with its own clock), with exit 77's error naming the
// rule, and nothing of the key stored; after `agents allow` the same
// name works, after `agents revoke` it is refused again.
func TestPostgresGuardHoleAgentNameInPolicy(t *testing.T) {
	r := attackRoles(t)
	for _, rule := range []approvals.Rule{
		{Pattern: "backup", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "backup", Mode: approvals.Auto, Condition: `action.agent == "backup-bot"`},
	} {
		if _, err := r.admin.SetPolicy(ctx, rule, "root"); err != nil {
			t.Fatal(err)
		}
	}
	role, owner, server, client := bot1Paths(t, r)
	if a, err := server.Guard(ctx, "backup:as-itself", Payload{"backup", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil || a.Verdict == Permitted {
		t.Fatalf("bot1 as itself: %+v %v, want a pending request", a.Verdict, err)
	}
	for name, s := range map[string]*Store{"one-call": server, "client": client} {
		before := fullState(t, owner)
		key := "backup:as-backup-bot-" + name
		a, err := s.Guard(ctx, key, Payload{"backup", "t", "b"}, GuardOptions{Agent: "backup-bot"})
		if !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), "the role "+role+" may not act as agent backup-bot") ||
			!strings.Contains(err.Error(), "tollgate agents allow "+role+" backup-bot") {
			t.Errorf("%s: bot1's role naming itself backup-bot: %+v %v, want exit 77's refusal naming the rule", name, a, err)
		}
		if _, err := s.Record(ctx, key, Payload{"backup", "t", "b"}, RecordOptions{Agent: "backup-bot"}); !errors.Is(err, ErrNotPermitted) {
			t.Errorf("%s: bot1's role recording as backup-bot: %v, want exit 77", name, err)
		}
		// A conflict names its agent too: bot1's own key, attempted
		// with another payload under another name.
		if _, err := s.Guard(ctx, "backup:as-itself", Payload{"backup", "t", "other"}, GuardOptions{Agent: "backup-bot"}); !errors.Is(err, ErrNotPermitted) {
			t.Errorf("%s: a conflict logged as backup-bot: %v, want exit 77", name, err)
		}
		if after := fullState(t, owner); after != before {
			t.Errorf("%s: the refused calls stored something: %s, was %s", name, after, before)
		}
	}
	if _, err := openAt(t, r.alice).AllowAgent(ctx, role, "backup-bot"); err != nil {
		t.Fatal(err)
	}
	a, err := client.Guard(ctx, "backup:allowed", Payload{"backup", "t", "b"}, GuardOptions{Agent: "backup-bot"})
	if err != nil || a.Verdict != Permitted {
		t.Errorf("bot1's role allowed the name backup-bot: %+v %v, want the auto rule's permit", a, err)
	}
	if a, err := server.Guard(ctx, "backup:allowed-2", Payload{"backup", "t", "b"}, GuardOptions{Agent: "backup-bot"}); err != nil || a.Verdict != Permitted {
		t.Errorf("bot1's role allowed the name backup-bot, one call: %+v %v, want the auto rule's permit", a, err)
	}
	if gone, err := openAt(t, r.alice).RevokeAgent(ctx, role, "backup-bot"); err != nil || !gone {
		t.Fatalf("revoke: %v %v", gone, err)
	}
	if _, err := server.Guard(ctx, "backup:revoked", Payload{"backup", "t", "b"}, GuardOptions{Agent: "backup-bot"}); !errors.Is(err, ErrNotPermitted) {
		t.Errorf("after revoke: %v, want exit 77", err)
	}
}

// TestPostgresPyStringIsGos: the database's encoder of a canonical
// text's strings writes what appendPyString writes, on strings of every
// kind: ASCII, controls, DEL, quotes and backslashes, the line
// separators, non-ASCII, astral-plane characters, and random ones.
func TestPostgresPyStringIsGos(t *testing.T) {
	r := newPGRoles(t)
	owner := rawDB(t, r.owner)
	in := []string{"", "plain", `"quoted" \back\slash/ <&>`, "\b\f\n\r\t\x01\x1f\x7f\u0080\u00ff", "\u2028\u2029\ufeff\uffff",
		"é漢字", "\U0001F600\U00010000\U0010FFFF", "a\u200bb", strings.Repeat("\U0001F600x", 4000)}
	rng := rand.New(rand.NewSource(1))
	for len(in) < 300 {
		var b strings.Builder
		for n := rng.Intn(40); n > 0; n-- {
			var c rune
			switch rng.Intn(4) {
			case 0:
				c = rune(1 + rng.Intn(0x7f))
			case 1:
				c = rune(0x80 + rng.Intn(0x800))
			case 2:
				c = rune(0x800 + rng.Intn(0xf800))
			default:
				c = rune(0x10000 + rng.Intn(0x100000))
			}
			if utf8.ValidRune(c) {
				b.WriteRune(c)
			}
		}
		in = append(in, b.String())
	}
	rows, err := owner.Query("SELECT s, tollgate_py_string(s) FROM unnest($1::text[]) s", in)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var s, got string
		if err := rows.Scan(&s, &got); err != nil {
			t.Fatal(err)
		}
		n++
		if want := string(appendPyString(nil, s)); got != want {
			t.Errorf("%q: the database writes %.80s, Go %.80s", s, got, want)
		}
	}
	if err := rows.Err(); err != nil || n != len(in) {
		t.Fatalf("%d of %d strings: %v", n, len(in), err)
	}
}

// TestPostgresAgentNameRuleIsGos: the database refuses exactly the code
// points approvals.CheckName refuses in a name, every one of them, and
// the names over its length bound; and it refuses such a name on every
// path (TestPostgresGuardHoleAgentNameUnchecked): the guard function,
// the raw insert of a payload and of a permit.
func TestPostgresAgentNameRuleIsGos(t *testing.T) {
	r := attackRoles(t)
	owner, raw := rawDB(t, r.owner), rawDB(t, r.bot1)
	var refused []int64
	rows, err := owner.Query(`SELECT i FROM generate_series(1, 1114111) i WHERE (i < 55296 OR i > 57343) AND NOT tollgate_name_ok(chr(i)) ORDER BY i`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var i int64
		if err := rows.Scan(&i); err != nil {
			t.Fatal(err)
		}
		refused = append(refused, i)
	}
	rows.Close()
	var want []int64
	for c := rune(1); c <= utf8.MaxRune; c++ {
		if utf8.ValidRune(c) && approvals.CheckName("agent", string(c)) != nil {
			want = append(want, int64(c))
		}
	}
	if fmt.Sprint(refused) != fmt.Sprint(want) {
		t.Errorf("the database refuses %d code points, Go %d: %v\nnot %v", len(refused), len(want), refused, want)
	}
	for _, name := range []string{strings.Repeat("a", approvals.MaxNameLen), strings.Repeat("é", approvals.MaxNameLen/2+1)} {
		var ok bool
		if err := owner.QueryRow("SELECT tollgate_name_ok($1)", name).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok != (approvals.CheckName("agent", name) == nil) {
			t.Errorf("a name of %d bytes: the database says %v", len(name), ok)
		}
	}
	before := fullState(t, owner)
	p := Payload{"run", "t", "b"}
	for i, name := range []string{"bot1\x1b[2J", "bo\u200bt1", "bot1\u202e", "bot1\u2028"} {
		c := honestFn(fmt.Sprintf("run:bad-name-%d", i), p, name)
		if got := callFn(t, raw.DB, c); got.code != "TG002" {
			t.Errorf("tollgate_guard, agent %q: %+v", name, got)
		}
		key := fmt.Sprintf("raw:bad-name-%d", i)
		if _, err := owner.DB.Exec("SELECT tollgate_record_intent($1, $2)", key, p.Digest()); err != nil {
			t.Fatal(err)
		}
		before = fullState(t, owner) // the intent: the seed fixture's, written by the owner (schema 40)
		row := payloadRow(key, p)
		row["agent"] = name
		if code := forge(t, raw, "payloads", row); code != "TG002" {
			t.Errorf("tollgate_insert_payloads, agent %q: %q", name, code)
		}
		if code := forge(t, raw, "permits", map[string]any{"action_key": key, "permit_id": newUUID(), "agent": name,
			"issued_ms": time.Now().UnixMilli(), "lease_ms": time.Now().UnixMilli() + 60000}); code != "TG002" {
			t.Errorf("tollgate_insert_permits, agent %q: %q", name, code)
		}
	}
	if after := fullState(t, owner); after != before {
		t.Errorf("the ledger changed: %s, was %s", after, before)
	}
}

// pgCode is the SQLSTATE err carries, "" for none.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestPostgresAgentCannotHoldAnotherRolesKey (issue 25, closed by
// schema 29; it was TestPostgresGuardHoleAgentHoldsAnotherKey):
// tollgate_lock_key is granted to tollgate_agent and took, for any
// logical key its caller named, the key's lock that every guard, report
// and decision of the key takes. bot1 called it on bot2's approved key in
// a transaction it left open, and bot2's guard of its own approved
// request was never issued its permit (each attempt timed out, exit 75),
// nor could an operator decide the key, for as long as bot1's session
// lived. Now the call answers NULL for another role's key, holding
// nothing of it, and bot2 gets its permit.
func TestPostgresAgentCannotHoldAnotherRolesKey(t *testing.T) {
	r := attackRoles(t)
	bot2, alice := openAt(t, r.bot2), openAt(t, r.alice)
	p := Payload{"ask", "t", "bot2's request"}
	if a, err := bot2.Guard(ctx, "ask:held", p, GuardOptions{Agent: "bot2"}); err != nil || a.State != StatePending {
		t.Fatalf("bot2's request: %+v %v", a, err)
	}
	if _, err := alice.Approve(ctx, "ask:held", "alice", "ok"); err != nil {
		t.Fatal(err)
	}
	tx, err := rawDB(t, r.bot1).DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var locked sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT tollgate_lock_key('ask:held')").Scan(&locked); err != nil || locked.Valid {
		t.Fatalf("tollgate_lock_key('ask:held') as bot1: %v %v, want NULL (another role's key is not locked)", locked, err)
	}
	var held int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1953459309::oid
		AND pid = pg_backend_pid()`).Scan(&held); err != nil || held != 0 {
		t.Fatalf("bot1's session holds %d key locks (%v), want none", held, err)
	}
	gctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	a, err := bot2.Guard(gctx, "ask:held", p, GuardOptions{Agent: "bot2"})
	if err != nil || a.Verdict != Permitted {
		t.Errorf("bot2's guard of its approved request while bot1's call is open: %+v %v, want its permit", a.Verdict, err)
	}
}

// TestPostgresEventsCommitOwnFacts: an agent's role appends no event but
// those of its own key transactions (TestPostgresGuardHoleAgentAppendsEvents):
// not an approval (a fact it does not write, and a row that does not
// exist), not an event naming a fact row another transaction wrote (the
// victim's own payload row: the second event of one row), not a fact-less
// event it has no report for, and no fact row without its event. An
// operator's role may not either name a row it did not write. Verify
// proves the ledger afterwards, and the honest paths still write.
func TestPostgresEventsCommitOwnFacts(t *testing.T) {
	r := attackRoles(t)
	bot1 := openAt(t, r.bot1)
	if _, err := bot1.Guard(ctx, "ask:victim", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot1"}); err != nil {
		t.Fatal(err)
	}
	// An agent's events wait for a writer that is not an agent's role
	// (schema 39): the operator seals them.
	sealAsOperator(t, r)
	owner, raw2, alice := rawDB(t, r.owner), rawDB(t, r.bot2), rawDB(t, r.alice)
	var payloadHash string
	if err := owner.QueryRow("SELECT fact_sha256 FROM events WHERE fact_table = 'payloads' AND fact_row = 'ask:victim'").Scan(&payloadHash); err != nil {
		t.Fatal(err)
	}
	before := fullState(t, owner)
	now, err := time.Now().UnixMilli(), error(nil)
	one := `SELECT * FROM tollgate_append_event($1, $2, $3, $4, $5, $6, $7, $8)`
	many := `SELECT * FROM tollgate_append_events(ARRAY[$1], ARRAY[$2], ARRAY[$3], ARRAY[$4], ARRAY[$5::bigint], ARRAY[$6], ARRAY[$7], ARRAY[$8])`
	for _, a := range []struct {
		who  *rawConn
		name string
		args []any
	}{
		{raw2, "a forged approval", []any{"ask:victim", "approved", "alice", `{"reason":"ok"}`, now, "decisions", "ask:victim", strings.Repeat("a", 64)}},
		{raw2, "a second event of another's payload row", []any{"ask:victim", "recorded", "bot2", `{}`, now, "payloads", "ask:victim", payloadHash}},
		{alice, "an operator's event of another's payload row", []any{"ask:victim", "recorded", "alice", `{}`, now, "payloads", "ask:victim", payloadHash}},
		{raw2, "a fact-less marker", []any{"ask:victim", "statements_v2", "bot2", `{}`, now, "", "", ""}},
		{raw2, "a disagreement with no report", []any{"ask:victim", "disagreement_flagged", "bot2", `{}`, now, "", "", ""}},
		{raw2, "a fact event naming no row", []any{"ask:victim", "recorded", "bot2", `{}`, now, "", "", ""}},
	} {
		for _, q := range []string{one, many} {
			if _, err := a.who.DB.Exec(q, a.args...); pgCode(err) != "TG002" {
				t.Errorf("%s: %q", a.name, pgCode(err))
			}
		}
	}
	_, err = raw2.DB.Exec(`SELECT id FROM tollgate_insert_conflicts(ARRAY['action_key', 'stored_sha256', 'attempted_sha256', 'attempted', 'redacted', 'differs', 'agent', 'at_ms'],
		ARRAY['ask:victim', repeat('a', 64), repeat('b', 64), NULL, '1', 'body', 'bot2', $1])`, fmt.Sprint(now))
	if pgCode(err) != "TG002" {
		t.Errorf("a conflict row with no event: %q", pgCode(err))
	}
	// The agent's own fact row, committed by an event with another hash.
	p := Payload{"run", "t", "b"}
	tx, err := raw2.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("SELECT tollgate_record_intent($1, $2)", "run:own", p.Digest()); err != nil {
		t.Fatal(err)
	}
	row := payloadRow("run:own", p)
	row["agent"] = "bot2"
	cols := strings.Split(factTableNamed("payloads").cols, ", ")
	vals := make([]string, len(cols))
	for i, c := range cols {
		vals[i] = fmt.Sprint(row[c])
	}
	if _, err := tx.Exec("SELECT tollgate_insert_payloads($1, $2)", cols, vals); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(one, "run:own", "recorded", "bot2", `{}`, now, "payloads", "run:own", strings.Repeat("a", 64))
	if pgCode(err) != "TG002" {
		t.Errorf("an event of the agent's own row with another hash: %q", pgCode(err))
	}
	tx.Rollback()
	if after := fullState(t, owner); after != before {
		t.Errorf("the ledger changed: %s, was %s", after, before)
	}
	verifyOK(t, r.admin)
	// Every honest writer still writes: the agents' key transactions
	// (guard, a conflict, record, report) and the operators' facts.
	bot2 := openAt(t, r.bot2)
	a, err := bot2.Guard(ctx, "run:honest", Payload{"run", "t", "b"}, GuardOptions{Agent: "bot2"})
	if err != nil || a.PermitID == "" {
		t.Fatalf("an honest guard: %+v %v", a, err)
	}
	if _, err := bot2.Report(ctx, "run:honest", a.PermitID, Succeeded, ReportOptions{Ref: "r1"}); err != nil {
		t.Errorf("an honest report: %v", err)
	}
	if _, err := bot2.Guard(ctx, "run:honest", Payload{"run", "t", "c"}, GuardOptions{Agent: "bot2"}); !errors.As(err, new(*ConflictError)) {
		t.Errorf("a changed payload: %v, not a conflict", err)
	}
	if got := callFn(t, raw2.DB, honestFn("run:honest-fn", Payload{"run", "t", "b"}, "bot2")); got.code != "" || got.permit == "" {
		t.Errorf("an honest tollgate_guard: %+v", got)
	}
	if _, err := openAt(t, r.alice).Approve(ctx, "ask:victim", "alice", "ok"); err != nil {
		t.Errorf("an operator's decision: %v", err)
	}
	verifyOK(t, r.admin)
}

// TestPostgresFactEventsAreGos: the database's tables of which event
// commits a row of which table and of the columns an agent's fact is
// hashed over (schema 15, what the event trigger checks) are
// factTables', so that no honest writer's event is refused.
func TestPostgresFactEventsAreGos(t *testing.T) {
	r := newPGRoles(t)
	rows, err := rawDB(t, r.owner).Query("SELECT fact_table, type, id_col, key_col FROM tollgate_private.fact_events ORDER BY 1, 2")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got, want []string
	for rows.Next() {
		var a, b, c, d string
		if err := rows.Scan(&a, &b, &c, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{a, b, c, d}, " "))
	}
	for _, ft := range factTables {
		for _, ev := range ft.events {
			want = append(want, strings.Join([]string{ft.name, ev, ft.id, ft.keyCol}, " "))
		}
	}
	slices.Sort(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the database's fact events:\n%s\nGo's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The columns each agent's fact is hashed over, and their defaults.
	got, want = nil, nil
	hashed, err := rawDB(t, r.owner).Query(`SELECT h.fact_table, h.col, coalesce(h.opt_def, '-'), h.tagged FROM tollgate_private.fact_hash_cols h
		ORDER BY h.fact_table, h.n`)
	if err != nil {
		t.Fatal(err)
	}
	defer hashed.Close()
	for hashed.Next() {
		var a, b, c string
		var d bool
		if err := hashed.Scan(&a, &b, &c, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(a, " ", b, " ", c, " ", d))
	}
	var agents string
	if err := rawDB(t, r.owner).QueryRow("SELECT string_agg(DISTINCT fact_table, ' ' ORDER BY fact_table) FROM tollgate_private.fact_events WHERE agents").Scan(&agents); err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Fields(agents) {
		ft := factTableNamed(name)
		cols := strings.Split(ft.cols, ", ")
		for i, c := range cols {
			def, tagged := "-", false
			if j := i - (len(cols) - len(ft.optional)); j >= 0 {
				def, tagged = fmt.Sprint(ft.optional[j].def), ft.optional[j].tagged
			}
			want = append(want, fmt.Sprint(name, " ", c, " ", def, " ", tagged))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the database hashes:\n%s\nGo:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPostgresContextCanonicalIsGos: the database writes a context's
// canonical form as Context.Canonical does, numbers included, and
// refuses (NULL) what ParseContext refuses; a payload row's context must
// be its own canonical form (TestPostgresGuardHolePayloadNotCanonical).
func TestPostgresContextCanonicalIsGos(t *testing.T) {
	r := newPGRoles(t)
	owner := rawDB(t, r.owner)
	in := []string{`{}`, `{"a":1}`, `{"a":1.0}`, `{"a":-0}`, `{"a":1.5}`, `{"a":1234567.5}`, `{"a":123456.5}`, `{"a":1e21}`,
		`{"a":1e-5}`, `{"a":0.0001}`, `{"a":0.00012345}`, `{"a":9007199254740993}`, `{"a":1e300}`, `{"a":-2.5e-7}`,
		`{"a":3.141592653589793}`, `{"a":100000.25}`, `{"a":1e400}`, `{"a":0.1}`, `{"a":-123.456e3}`, `{"a":4503599627370497.5}`,
		`{"b":true,"a":false}`, `{"a":["x","\u00e9\ud83d\ude00"],"z":"\n"}`, `{"a":[]}`, `{"a":[1]}`, `{"a":{"b":1}}`, `{"a":null}`,
		`{"A":1}`, `{"1a":1}`, `[1]`, `"x"`, `{"a":"` + strings.Repeat("x", MaxContextString+1) + `"}`, `{"a":"x",}`}
	var many strings.Builder
	many.WriteString("{")
	for i := range MaxContextFields + 1 {
		fmt.Fprintf(&many, `%s"f%d":%d`, map[bool]string{true: "", false: ","}[i == 0], i, i)
	}
	in = append(in, many.String()+"}")
	rng := rand.New(rand.NewSource(2))
	for range 300 {
		x := (rng.Float64() - 0.5) * math.Pow(10, float64(rng.Intn(40)-20))
		in = append(in, `{"a":`+strconv.FormatFloat(x, 'e', rng.Intn(18), 64)+`}`)
	}
	for _, text := range in {
		var got *string
		if err := owner.QueryRow("SELECT tollgate_context_canonical($1)", text).Scan(&got); err != nil {
			t.Fatal(err)
		}
		c, err := ParseContext([]byte(text))
		switch {
		case err != nil && got != nil:
			t.Errorf("%.60s: Go refuses it (%v), the database writes %.60s", text, err, *got)
		case err == nil && (got == nil || *got != string(c.Canonical())):
			t.Errorf("%.60s: Go writes %s, the database %v", text, c.Canonical(), safeDeref(got))
		}
	}
}

// safeDeref is *p, or "NULL".
func safeDeref(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}

// TestPostgresAgentCannotBackdateAReport (a hole the attacking pass
// found, closed by schema 27): a report's time was the client's, checked
// within 60 s of the database's clock, and a report was late only when
// that time was past the lease. bot1 reported after its lease ran out
// from a store whose clock ran 21 s slow, and the key an operator was
// shown as uncertain ("reconcile, do not re-execute") read succeeded.
// Now a fact's time is within 2 s of the database's clock, and a report
// is on time only while the database's clock is before the lease: the
// slow store's report is refused naming the rule (exit 77), with the key
// left uncertain; a store 1.5 s slow (inside the 2 s) that
// reports between the lease's end and its own clock's idea of it is
// stored late, as an honest report then is.
func TestPostgresAgentCannotBackdateAReport(t *testing.T) {
	r := attackRoles(t)
	boundClock(t, r.owner)
	bot1 := openAt(t, r.bot1)
	lease := 2 * time.Second
	permits := map[string]string{}
	for _, key := range []string{"run:backdated", "run:honest-late", "run:edge"} {
		a, err := bot1.Guard(ctx, key, Payload{"run", "t", "b"}, GuardOptions{Agent: "bot1", Lease: lease})
		if err != nil || a.Verdict != Permitted {
			t.Fatalf("bot1's guard of %s: %+v %v", key, a, err)
		}
		permits[key] = a.PermitID
	}
	time.Sleep(lease + 200*time.Millisecond)
	if rep, err := bot1.Report(ctx, "run:honest-late", permits["run:honest-late"], Succeeded, ReportOptions{}); err != nil || !rep.Late {
		t.Fatalf("an honest report after the lease: %+v %v, want it late", rep, err)
	}
	slowBy := func(d time.Duration) *Store {
		s, err := Open(ctx, r.bot1, Options{Now: func() time.Time { return time.Now().Add(-d) }, RetryFor: 4 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	rep, err := slowBy(21*time.Second).Report(ctx, "run:backdated", permits["run:backdated"], Succeeded, ReportOptions{})
	if err == nil {
		t.Fatalf("a report after the lease, backdated by 21 s, was stored: %+v", rep)
	}
	if !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), "from the database's clock") {
		t.Errorf("the backdated report's refusal: %v, want a refusal naming the rule (a fact's time is the database's)", err)
	}
	if d, err := r.admin.Status(ctx, "run:backdated"); err != nil || d.State != StateUncertain {
		t.Errorf("after the backdated report the key is %s (%v), want it uncertain", d.State, err)
	}
	rep, err = slowBy(1500*time.Millisecond).Report(ctx, "run:edge", permits["run:edge"], Succeeded, ReportOptions{})
	if err != nil || !rep.Late || rep.State == StateSucceeded {
		t.Errorf("a report after the lease by the database's clock, before it by the client's 1.5 s slow one: %+v %v, want it stored late", rep, err)
	}
	if d, err := r.admin.Status(ctx, "run:edge"); err != nil || d.State != StateUncertain {
		t.Errorf("after the edge report the key is %s (%v), want it uncertain", d.State, err)
	}
}

// TestPostgresRequestNamesTheRole (closed by schema 31): schema 28 bound
// a payload's agent to the login role, but an approval request or a
// permit written later for the key recorded the name that later guard
// sent. bot1 records a key under its own name and then guards it as
// backup-bot: the request the operator was shown named backup-bot. Now
// the request, and a permit, are refused as a payload is (exit 77,
// nothing stored), on both paths; its own name still works.
func TestPostgresRequestNamesTheRole(t *testing.T) {
	r := attackRoles(t)
	role, owner, server, client := bot1Paths(t, r)
	for name, s := range map[string]*Store{"one-call": server, "client": client} {
		for _, key := range []string{"ask:later-" + name, "run:later-" + name} {
			p := Payload{key[:3], "t", "b"}
			if _, err := s.Record(ctx, key, p, RecordOptions{Agent: "bot1"}); err != nil {
				t.Fatalf("%s: bot1 records %s: %v", name, key, err)
			}
			before := fullState(t, owner)
			a, err := s.Guard(ctx, key, p, GuardOptions{Agent: "backup-bot"})
			if !errors.Is(err, ErrNotPermitted) || !strings.Contains(err.Error(), "the role "+role+" may not act as agent backup-bot") {
				t.Errorf("%s: bot1's role guards its recorded %s as backup-bot: %+v %v, want exit 77's refusal naming the rule", name, key, a, err)
			}
			if after := fullState(t, owner); after != before {
				t.Errorf("%s: the refused guard of %s stored something", name, key)
			}
			if a, err := s.Guard(ctx, key, p, GuardOptions{Agent: "bot1"}); err != nil || a.Verdict == Denied {
				t.Errorf("%s: bot1 guards its recorded %s as itself: %+v %v", name, key, a, err)
			}
		}
	}
}

// bot1Paths is bot1's login role's name, the owner's raw connection, and
// two stores as bot1: one that takes the one-call functions and one on
// its own clock, which takes the client's key transaction.
func bot1Paths(t *testing.T, r pgRoles) (string, *rawConn, *Store, *Store) {
	t.Helper()
	client, err := Open(ctx, r.bot1, Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return roleOf(r.bot1), rawDB(t, r.owner), openAt(t, r.bot1), client
}

// TestPostgresEventActorIsTheRole: an event's actor is what the console's
// timeline and export say did the step. An agent's role appending the
// event of its own, honest fact row may not name someone else as its
// actor (an operator, another agent): the database refuses it (TG002)
// and nothing is stored; the same event naming the role's own agent
// name is taken, so the refusal is the actor's.
func TestPostgresEventActorIsTheRole(t *testing.T) {
	r := attackRoles(t)
	owner, raw2 := rawDB(t, r.owner), rawDB(t, r.bot2)
	before := fullState(t, owner)
	p := Payload{"run", "t", "b"}
	cols := strings.Split(factTableNamed("payloads").cols, ", ")
	appendAs := func(key, actor string) error {
		tx, err := raw2.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec("SELECT tollgate_record_intent($1, $2)", key, p.Digest()); err != nil {
			t.Fatal(err)
		}
		row := payloadRow(key, p)
		row["agent"] = "bot2"
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = fmt.Sprint(row[c])
		}
		stored, err := scanFact(tx.QueryRow("SELECT "+factTableNamed("payloads").cols+" FROM tollgate_insert_payloads($1, $2)", cols, vals), len(cols))
		if err != nil {
			t.Fatal(err)
		}
		ref := factTableNamed("payloads").ref(stored)
		_, err = tx.Exec(`SELECT * FROM tollgate_append_events(ARRAY[$1], ARRAY['recorded'], ARRAY[$2], ARRAY['{}'], ARRAY[$3::bigint], ARRAY['payloads'], ARRAY[$1], ARRAY[$4])`,
			key, actor, time.Now().UnixMilli(), ref.SHA256)
		return err
	}
	for _, actor := range []string{"alice", "bot1", "tollgate"} {
		if err := appendAs("run:as-"+actor, actor); pgCode(err) != "TG002" {
			t.Errorf("bot2's recorded event naming %s as its actor: %v", actor, err)
		}
	}
	if err := appendAs("run:as-bot2", "bot2"); err != nil {
		t.Fatalf("bot2's recorded event naming itself: %v", err)
	}
	if after := fullState(t, owner); after != before { // each append was rolled back or refused
		t.Errorf("the ledger changed: %s, was %s", after, before)
	}
	// Guarding writes events too: on a key bot2 recorded as itself, a
	// guard naming alice evaluates, requests or permits in alice's name
	// no more than it records in it.
	for _, kind := range []string{"run", "ask", "stop"} {
		key := kind + ":recorded-by-bot2"
		var c int
		if err := raw2.QueryRow("SELECT count(*) FROM tollgate_record($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
			key, Payload{kind, "t", "b"}.Digest(), string(Payload{kind, "t", "b"}.Canonical()), kind, "t", sha256Hex([]byte("b")), "bot2", "", "", int64(0)).Scan(&c); err != nil {
			t.Fatalf("bot2 records %s: %v", key, err)
		}
		mid := fullState(t, owner)
		if got := callFn(t, raw2.DB, honestFn(key, Payload{kind, "t", "b"}, "alice")); got.code != "TG002" && (got.path != "full" || got.permit != "") {
			t.Errorf("tollgate_guard of bot2's %s naming alice: %+v", key, got)
		}
		// The client's full path, which the function leaves it.
		if a, err := openAt(t, r.bot2).Guard(ctx, key, Payload{kind, "t", "b"}, GuardOptions{Agent: "alice"}); !errors.Is(err, ErrNotPermitted) {
			t.Errorf("bot2 guards its %s naming alice: %+v %v", key, a, err)
		}
		if after := fullState(t, owner); after != mid {
			t.Errorf("%s: the ledger changed: %s, was %s", key, after, mid)
		}
	}
}
