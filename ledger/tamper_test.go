package ledger

import (
	"encoding/json"
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger/postgres"

	"github.com/tollgate-dev/tollgate/approvals"
)

// evidenceLedger builds a ledger holding every kind of fact: an auto key
// settled by its report, a rejected key, an approved key whose lease ran
// out and was reconciled after a late report, a policy-denied key, a
// conflict and its review, a refused report, and a fenced call. It
// returns the path (closed) and the head a verify witnessed.
func evidenceLedger(t *testing.T) (string, Head) {
	t.Helper()
	s, clk := openTest(t)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetPolicy(ctx, approvals.Rule{Pattern: "auto.*", Mode: approvals.Auto}, "root"))
	must(s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root"))
	must(s.SetPolicy(ctx, approvals.Rule{Pattern: "no", Mode: approvals.Deny}, "root"))
	a, err := s.Guard(ctx, "k:auto", Payload{"auto.x", "t", "b"}, GuardOptions{Agent: "bot"})
	must(a, err)
	must(s.Report(ctx, "k:auto", a.PermitID, Succeeded, ReportOptions{Ref: "r1"}))
	must(s.Guard(ctx, "k:rej", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot"}))
	must(s.Reject(ctx, "k:rej", "alice", "no thanks"))
	must(s.Guard(ctx, "k:appr", Payload{"ask", "t", "b2"}, GuardOptions{Agent: "bot"}))
	must(s.Approve(ctx, "k:appr", "alice", "fine"))
	a, err = s.Guard(ctx, "k:appr", Payload{"ask", "t", "b2"}, GuardOptions{Agent: "bot", Lease: time.Second})
	must(a, err)
	clk.Add(2 * time.Second)
	must(s.Report(ctx, "k:appr", a.PermitID, Failed, ReportOptions{}))
	must(s.Reconcile(ctx, "k:appr", ResultExecuted, "alice", "provider shows it"))
	must(s.Guard(ctx, "k:deny", Payload{"no", "t", "b"}, GuardOptions{Agent: "bot"}))
	if _, err := s.Record(ctx, "k:auto", Payload{"auto.x", "t", "other"}, RecordOptions{Agent: "bot"}); err == nil {
		t.Fatal("no conflict")
	}
	cs, _ := s.Conflicts(ctx, true, "", 0, 0)
	must(nil, s.ReviewConflict(ctx, cs[0].ID, "alice", "seen"))
	if _, err := s.Report(ctx, "k:rej", "00000000-0000-4000-8000-000000000000", Succeeded, ReportOptions{}); !errors.Is(err, ErrNoPermit) {
		t.Fatalf("report without permit: %v", err)
	}
	must(s.ActivateEpoch(ctx, "", "root"))
	if _, err := s.Guard(ctx, "k:late", Payload{"auto.x", "t", "b"}, GuardOptions{Agent: "bot"}); err == nil {
		t.Fatal("no fence")
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("the untouched ledger does not verify: %+v %v", rep, err)
	}
	s.Close()
	return testPath(s), rep.Head()
}

// tamperCopy copies the ledger and drops every trigger, as someone who
// can edit the file would before changing it.
func tamperCopy(t *testing.T, path string) (string, *rawConn) {
	t.Helper()
	if postgres.IsURL(path) {
		return pgTamperCopy(t, path)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	copyFile(t, path, cp)
	db := rawDB(t, cp)
	var names []string
	rows, err := db.Query("SELECT name FROM sqlite_schema WHERE type = 'trigger'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		if _, err := db.Exec("DROP TRIGGER " + n); err != nil {
			t.Fatal(err)
		}
	}
	return cp, db
}

// pgTamperCopy copies a PostgreSQL ledger's database and returns a
// superuser's session on the copy with triggers off
// (session_replication_role = replica), as a database administrator who
// wanted to edit evidence would have.
func pgTamperCopy(t *testing.T, u string) (string, *rawConn) {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	src := strings.TrimPrefix(pu.Path, "/")
	name := src + "_copy"
	admin := rawDB(t, pgtest.Admin(t))
	if _, err := admin.Exec("CREATE DATABASE " + name + " TEMPLATE " + src); err != nil {
		t.Fatal(err)
	}
	cp := pgtest.WithRole(pgtest.Admin(t), name, "postgres")
	t.Cleanup(func() { admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	db := rawDB(t, cp)
	if _, err := db.Exec("SET session_replication_role = replica"); err != nil {
		t.Fatal(err)
	}
	pgURLs.Store(postgres.Redact(cp), cp)
	return cp, db
}

// forgeEvent appends an event with a correct chain hash, as an attacker
// who read this source would.
func forgeEvent(t *testing.T, db *rawConn, key, typ, actor string, detail map[string]any, f factRef) {
	t.Helper()
	var seq int64
	var prev string
	if err := db.QueryRow("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").Scan(&seq, &prev); err != nil {
		t.Fatal(err)
	}
	seq++
	d, _ := json.Marshal(detail)
	at := time.Now().UnixMilli()
	h := eventHashV2(prev, seq, key, typ, actor, string(d), at, f)
	if _, err := db.Exec(`INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 2)`, seq, key, typ, actor, string(d), at, prev, h, f.Table, f.Row, f.SHA256); err != nil {
		t.Fatal(err)
	}
}

// rehashChain recomputes every event's hash from the first, as someone
// who rewrote history and wanted the chain to look whole would.
func rehashChain(t *testing.T, db *rawConn) {
	t.Helper()
	rows, err := db.Query("SELECT " + eventCols + " FROM events ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		e  Event
		d  string
		hv int
	}
	var evs []ev
	for rows.Next() {
		var x ev
		x.d, x.hv, err = scanEvent(rows, &x.e)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, x)
	}
	rows.Close()
	prev := zeroHash
	for _, x := range evs {
		f := factRef{Table: x.e.FactTable, Row: x.e.FactRow, SHA256: x.e.FactSHA256}
		h := eventHash(x.hv, prev, x.e.Seq, x.e.ActionKey, x.e.Type, x.e.Actor, x.d, x.e.At.UnixMilli(), f)
		if _, err := db.Exec("UPDATE events SET prev_hash = ?, hash = ? WHERE seq = ?", prev, h, x.e.Seq); err != nil {
			t.Fatal(err)
		}
		prev = h
	}
}

// refreshFact makes a fact row's committing event agree with an edited
// row and re-chains, so that only the witness or the rules between facts
// can tell.
func refreshFact(t *testing.T, db *rawConn, table, id string) {
	t.Helper()
	ft := factTableNamed(table)
	vals, err := scanFact(db.QueryRow("SELECT "+ft.cols+" FROM "+table+" WHERE "+ft.id+" = ?", id), ft.ncols())
	if err != nil {
		t.Fatal(err)
	}
	ref := ft.ref(vals)
	if _, err := db.Exec("UPDATE events SET fact_sha256 = ? WHERE fact_table = ? AND fact_row = ?", ref.SHA256, table, ref.Row); err != nil {
		t.Fatal(err)
	}
	rehashChain(t, db)
}

// TestVerifyNamesEveryTamperedRow edits a copy of a ledger with every
// kind of fact in each way someone with the file and a sqlite3 shell
// could, triggers dropped first, and asserts verify names the row.
func TestVerifyNamesEveryTamperedRow(t *testing.T) {
	path, head := evidenceLedger(t)
	newDigest := Payload{"auto.x", "t", "changed"}.Digest()
	tests := []struct {
		name   string
		edit   []string
		forge  func(t *testing.T, db *rawConn)
		table  string
		row    string
		noHead bool // verify without the witnessed head
	}{
		{name: "consistent payload rewrite", edit: []string{
			"UPDATE intents SET payload_sha256 = '" + newDigest + "' WHERE action_key = 'k:auto'",
			`UPDATE payloads SET payload_sha256 = '` + newDigest + `', canonical = '{"body":"changed","kind":"auto.x","target":"t"}' WHERE action_key = 'k:auto'`,
			"UPDATE action_index SET payload_sha256 = '" + newDigest + "' WHERE action_key = 'k:auto'",
		}, table: "payloads", row: "action_key=k:auto"},
		{name: "decision flipped with the index", edit: []string{
			"UPDATE decisions SET decision = 'approved', reason = '' WHERE action_key = 'k:rej'",
			"UPDATE action_index SET stage = 'approved' WHERE action_key = 'k:rej'",
		}, table: "decisions", row: "action_key=k:rej"},
		{name: "decision operator renamed", edit: []string{"UPDATE decisions SET operator = 'bob' WHERE action_key = 'k:appr'"}, table: "decisions", row: "action_key=k:appr"},
		{name: "reconciliation flipped", edit: []string{"UPDATE reconciliations SET result = 'not-executed' WHERE action_key = 'k:appr'"}, table: "reconciliations", row: "action_key=k:appr"},
		{name: "lease extended", edit: []string{"UPDATE permits SET lease_ms = lease_ms + 86400000 WHERE action_key = 'k:appr'"}, table: "permits", row: "action_key=k:appr"},
		{name: "accepted report flipped", edit: []string{"UPDATE reports SET outcome = 'failed' WHERE action_key = 'k:auto' AND kind = 'accepted'"}, table: "reports", row: "id=1"},
		{name: "conflict deleted", edit: []string{"DELETE FROM conflict_reviews", "DELETE FROM conflicts"}, table: "conflicts", row: "id=1"},
		{name: "conflict review deleted", edit: []string{"DELETE FROM conflict_reviews"}, table: "conflict_reviews", row: "conflict_id=1"},
		{name: "fenced call deleted", edit: []string{"DELETE FROM fenced"}, table: "fenced", row: "id=1"},
		{name: "late report deleted", edit: []string{"DELETE FROM reports WHERE kind = 'late'"}, table: "reports", row: "id=2"},
		{name: "refused report deleted", edit: []string{"DELETE FROM report_refusals"}, table: "report_refusals", row: "id=1"},
		{name: "policy rule deleted", edit: []string{"DELETE FROM policy_rules WHERE pattern = 'no'"}, table: "policy_rules", row: "id=3"},
		{name: "policy rule changed", edit: []string{"UPDATE policy_rules SET mode = 'auto' WHERE pattern = 'ask'"}, table: "policy_rules", row: "id=2"},
		{name: "permit and report deleted", edit: []string{"DELETE FROM reports WHERE action_key = 'k:auto'", "DELETE FROM permits WHERE action_key = 'k:auto'"}, table: "permits", row: "action_key=k:auto"},
		{name: "epoch deleted", edit: []string{"DELETE FROM epochs"}, table: "epochs", row: "seq=1"},
		{name: "decision inserted by hand", edit: []string{"INSERT INTO decisions VALUES ('k:deny', 'approved', 'alice', '', 1)"}, table: "decisions", row: "action_key=k:deny"},
		{name: "projection kind edited", edit: []string{"UPDATE action_index SET kind = 'auto.y' WHERE action_key = 'k:rej'"}, table: "action_index", row: "action_key=k:rej"},
		{name: "projection target edited", edit: []string{"UPDATE action_index SET target = 'elsewhere' WHERE action_key = 'k:auto'"}, table: "action_index", row: "action_key=k:auto"},
		{name: "projection target shown for a redacted payload", edit: []string{"UPDATE payloads SET redacted = 1, canonical = NULL WHERE action_key = 'k:rej'"}, table: "action_index", row: "action_key=k:rej"},
		{name: "projection's update time edited", edit: []string{"UPDATE action_index SET updated_ms = updated_ms - 1 WHERE action_key = 'k:auto'"}, table: "action_index", row: "action_key=k:auto"},
		{name: "projection stage edited", edit: []string{"UPDATE action_index SET stage = 'approved', deadline_ms = 0 WHERE action_key = 'k:deny'"}, table: "action_index", row: "action_key=k:deny"},
		{name: "event actor edited", edit: []string{"UPDATE events SET actor = 'mallory' WHERE seq = 5"}, table: "events", row: "seq=5"},
		{name: "forged event with a correct hash", forge: func(t *testing.T, db *rawConn) {
			forgeEvent(t, db, "k:deny", "approved", "alice", map[string]any{"reason": ""}, factRef{Table: "decisions", Row: "k:deny", SHA256: strings.Repeat("a", 64)})
		}, table: "decisions", row: "action_key=k:deny"},
		{name: "forged permit with its event", forge: func(t *testing.T, db *rawConn) {
			if _, err := db.Exec("INSERT INTO permits VALUES ('k:deny', '11111111-1111-4111-8111-111111111111', 'bot', 1, 9999999999999)"); err != nil {
				t.Fatal(err)
			}
			ft := factTableNamed("permits")
			vals, _ := scanFact(db.QueryRow("SELECT "+ft.cols+" FROM permits WHERE action_key = 'k:deny'"), ft.ncols())
			forgeEvent(t, db, "k:deny", evPermitIssued, "bot", map[string]any{}, ft.ref(vals))
		}, table: "permits", row: "action_key=k:deny"},
		{name: "chain head moved forward", edit: []string{"UPDATE chain_head SET seq = seq + 1"}, table: "chain_head", row: "one=1"},
		{name: "chain head moved back", edit: []string{"UPDATE chain_head SET seq = seq - 1"}, table: "chain_head", row: "one=1"},
		{name: "chain head names another hash", edit: []string{"UPDATE chain_head SET hash = '" + strings.Repeat("b", 64) + "'"}, table: "chain_head", row: "one=1"},
		{name: "tail cut by 1", edit: []string{"DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)"}, table: "events", row: "seq=" + itoa(head.Seq)},
		{name: "tail cut by 3", edit: []string{"DELETE FROM events WHERE seq > (SELECT max(seq) - 3 FROM events)"}, table: "events", row: "seq=" + itoa(head.Seq)},
		{name: "whole chain recomputed", forge: func(t *testing.T, db *rawConn) {
			if _, err := db.Exec("UPDATE decisions SET operator = 'bob' WHERE action_key = 'k:appr'"); err != nil {
				t.Fatal(err)
			}
			refreshFact(t, db, "decisions", "k:appr")
		}, table: "events", row: "seq=" + itoa(head.Seq)},
		{name: "kind column rewritten with its hash, history rewritten, no witness", noHead: true, forge: func(t *testing.T, db *rawConn) {
			if _, err := db.Exec("UPDATE payloads SET kind = 'note', kind_sha256 = ? WHERE action_key = 'k:auto'", sha256Hex([]byte("note"))); err != nil {
				t.Fatal(err)
			}
			refreshFact(t, db, "payloads", "k:auto")
		}, table: "payloads", row: "action_key=k:auto"},
		{name: "rewritten history without a witness still breaks a rule", noHead: true, forge: func(t *testing.T, db *rawConn) {
			if _, err := db.Exec("UPDATE decisions SET decision = 'rejected', reason = 'x' WHERE action_key = 'k:appr'"); err != nil {
				t.Fatal(err)
			}
			refreshFact(t, db, "decisions", "k:appr")
		}, table: "permits", row: "action_key=k:appr"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp, db := tamperCopy(t, path)
			for _, q := range tc.edit {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if tc.forge != nil {
				tc.forge(t, db)
			}
			db.Close()
			c, err := Open(ctx, cp, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			heads := []Head{head}
			if tc.noHead {
				heads = nil
			}
			rep, err := c.Verify(ctx, heads...)
			if err != nil {
				t.Fatal(err)
			}
			requireNamed(t, rep, tc.table, tc.row)
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestProjectionGrantsNothing edits the projection from a plain sqlite3
// connection (triggers intact: it is the one updatable table) to say
// approved, for a pending, a rejected and a policy-denied key: no guard
// gets a permit, and verify names each edited row.
func TestProjectionGrantsNothing(t *testing.T) {
	s, _ := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "root")
	s.SetPolicy(ctx, approvals.Rule{Pattern: "no", Mode: approvals.Deny}, "root")
	pay := map[string]Payload{"p:1": {"ask", "t", "b"}, "p:2": {"ask", "t", "b"}, "p:3": {"no", "t", "b"}}
	for _, k := range []string{"p:1", "p:2", "p:3"} {
		if _, err := s.Guard(ctx, k, pay[k], GuardOptions{Agent: "bot"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Reject(ctx, "p:2", "alice", "no"); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, s.Path())
	for _, k := range []string{"p:1", "p:2", "p:3"} {
		if _, err := db.Exec("UPDATE action_index SET stage = 'approved', deadline_ms = 0 WHERE action_key = ?", k); err != nil {
			t.Fatal(err)
		}
		a, err := s.Guard(ctx, k, pay[k], GuardOptions{Agent: "bot"})
		if err != nil || a.PermitID != "" || a.Verdict == Permitted {
			t.Fatalf("%s: the edited projection yielded %+v %v", k, a, err)
		}
	}
	rep, _ := s.Verify(ctx)
	named := map[string]bool{}
	for _, p := range rep.Problems {
		if p.Table == "action_index" {
			named[p.Key] = true
		}
	}
	if len(named) != 3 {
		t.Fatalf("verify named %v, want p:1, p:2 and p:3: %v", named, rep.Problems)
	}
}

// TestReplaceCannotDeleteFacts tries INSERT OR REPLACE / REPLACE INTO
// from a plain connection (no recursive triggers, as in a sqlite3 shell)
// against every unique index of every append-only table, and checks that
// each table's rows are exactly as they were.
func TestReplaceCannotDeleteFacts(t *testing.T) {
	sqliteOnly(t)
	path, _ := evidenceLedger(t)
	db := rawDB(t, path)
	snapshot := func(table string) string {
		// Sorted in Go: some tables have no rowid (schema 12).
		rows, err := db.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			j, _ := json.Marshal(vals)
			out = append(out, string(j))
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	attacks := []string{
		// The accepted report replaced through reports_one_accepted.
		"INSERT OR REPLACE INTO reports(action_key, permit_id, outcome, ref, latency_ms, kind, at_ms) SELECT action_key, permit_id, 'failed', ref, latency_ms, 'accepted', at_ms FROM reports WHERE kind = 'accepted'",
		"REPLACE INTO reports(action_key, permit_id, outcome, ref, latency_ms, kind, at_ms) SELECT action_key, permit_id, 'failed', ref, latency_ms, 'accepted', at_ms FROM reports WHERE kind = 'accepted'",
		"INSERT INTO reports(action_key, permit_id, outcome, ref, latency_ms, kind, at_ms) SELECT action_key, permit_id, 'failed', ref, latency_ms, 'accepted', at_ms FROM reports WHERE kind = 'accepted' ON CONFLICT DO UPDATE SET outcome = 'failed'",
		"INSERT OR REPLACE INTO permits SELECT action_key, '22222222-2222-4222-8222-222222222222', agent, issued_ms, lease_ms FROM permits",
		"INSERT OR REPLACE INTO permits SELECT 'k:deny', permit_id, agent, issued_ms, lease_ms FROM permits",
		"INSERT OR REPLACE INTO epochs(epoch, operator, at_ms) SELECT epoch, 'mallory', at_ms FROM epochs",
		"INSERT OR REPLACE INTO events SELECT * FROM events WHERE seq = 1",
		"INSERT OR REPLACE INTO intents VALUES ('k:auto', '" + strings.Repeat("b", 64) + "', 'recorded')",
		"INSERT OR REPLACE INTO action_index(action_key, logical_key, payload_sha256) VALUES ('k:auto', 'k:auto', '" + strings.Repeat("b", 64) + "')",
		"INSERT OR REPLACE INTO ledger_meta VALUES (1, '33333333-3333-4333-8333-333333333333', 1)",
	}
	for _, ft := range factTables {
		attacks = append(attacks, "INSERT OR REPLACE INTO "+ft.name+" SELECT * FROM "+ft.name,
			"INSERT INTO "+ft.name+" SELECT * FROM "+ft.name+" WHERE true ON CONFLICT DO UPDATE SET "+splitCols(ft.cols)[1]+" = excluded."+splitCols(ft.cols)[1])
	}
	tables := []string{"intents", "events", "action_index"}
	for _, ft := range factTables {
		tables = append(tables, ft.name)
	}
	before := map[string]string{}
	for _, tb := range tables {
		before[tb] = snapshot(tb)
	}
	for _, q := range attacks {
		db.Exec(q) // refused or not, nothing may change
		for _, tb := range tables {
			if got := snapshot(tb); got != before[tb] {
				t.Fatalf("%s changed %s", q, tb)
			}
		}
	}
}

// requireNamed fails unless verify found a problem and named table and row.
func requireNamed(t *testing.T, rep VerifyReport, table, row string) {
	t.Helper()
	for _, p := range rep.Problems {
		if p.Table == table && p.Row == row && !rep.OK() {
			return
		}
	}
	t.Fatalf("verify did not name %s %s: %v", table, row, rep.Problems)
}
