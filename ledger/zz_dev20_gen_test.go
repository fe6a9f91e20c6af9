package ledger

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// TestZZGenerateDev20 writes testdata/dev20_ledger.sql and its export,
// made by the build whose schema is 20 (run once, then removed).
func TestZZGenerateDev20(t *testing.T) {
	if os.Getenv("GEN_DEV20") == "" {
		t.Skip()
	}
	sqliteOnly(t)
	defer func(f func() string) { newUUID = f }(newUUID)
	n := 0
	newUUID = func() string { n++; return fmt.Sprintf("6f1c2a3b-4d5e-4f60-8a7b-%012d", n) }
	w := &signedWorld{path: filepath.Join(t.TempDir(), "ledger.db"), clk: newClock(), alice: newSigner(t), bob: newSigner(t), agent: newSigner(t)}
	alice := openAs(t, w.path, w.clk, nil, w.alice)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must2 := func(_ any, err error) { t.Helper(); must(err) }
	// Unsigned facts first, then the ledger becomes signed.
	must2(alice.SetPolicy(ctx, approvals.Rule{Pattern: "refund.*", Mode: approvals.Auto, Condition: "context.amount <= 50", Priority: 1}, "root"))
	agent := openAs(t, w.path, w.clk, nil)
	cx, err := ParseContext([]byte(`{"amount": 20}`))
	must(err)
	a, err := agent.Guard(ctx, "k:refund", Payload{"refund.card", "acct-1", "20 EUR"}, GuardOptions{Agent: "bot1", Context: cx, Attempt: "attempt-0001-of-the-fixture"})
	must(err)
	must2(agent.Report(ctx, "k:refund", a.PermitID, Succeeded, ReportOptions{Ref: "pay-1", Result: `{"ok":true}`}))
	agent.Report(ctx, "k:refund", "00000000-0000-4000-8000-000000000000", Failed, ReportOptions{}) // refused: kept as evidence
	must2(alice.AddOperator(ctx, "alice", opkeys.Line(w.alice.PublicKey())))
	must2(alice.AddOperator(ctx, "bob", opkeys.Line(w.bob.PublicKey())))
	bob := openAs(t, w.path, w.clk, nil, w.bob)
	for _, r := range []approvals.Rule{
		{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "two", Mode: approvals.Approval, TTL: time.Hour, Approvers: 2},
		{Pattern: "auto.*", Mode: approvals.Auto},
		{Pattern: "deny.*", Mode: approvals.Deny},
	} {
		must2(alice.SetPolicy(ctx, r, ""))
	}
	pendingKey(t, agent, "k:two", "two")
	must2(alice.Approve(ctx, "k:two", "", "first"))
	must2(bob.Approve(ctx, "k:two", "", "second"))
	a2, err := agent.Guard(ctx, "k:two", Payload{"two", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7", Lease: time.Second})
	must(err)
	must2(agent.Report(ctx, "k:two", a2.PermitID, Unknown, ReportOptions{}))
	pendingKey(t, agent, "k:no", "ask")
	must2(bob.Reject(ctx, "k:no", "", "not this one"))
	pendingKey(t, agent, "k:later", "ask")
	must2(agent.Guard(ctx, "k:deny", Payload{"deny.x", "t", "b"}, GuardOptions{Agent: "bot2", Redact: true}))
	must2(agent.Record(ctx, "k:rec", Payload{"note", "t", "b"}, RecordOptions{Agent: "bot2"}))
	if _, err := agent.Record(ctx, "k:rec", Payload{"note", "t", "other"}, RecordOptions{Agent: "bot2"}); err == nil {
		t.Fatal("no conflict")
	}
	if _, err := agent.Guard(ctx, "hsr1:00000000-0000-4000-8000-000000000001:x", Payload{"ask", "t", "b"}, GuardOptions{}); err == nil {
		t.Fatal("no fence")
	}
	cs, _ := agent.Conflicts(ctx, true, "", 0, 0)
	fs, _ := agent.Fenced(ctx, true, "", 0, 0)
	w.clk.Add(2 * time.Second)
	must2(alice.Reconcile(ctx, "k:two", ResultNotExecuted, "", "provider shows nothing"))
	must(alice.ReviewConflict(ctx, cs[0].ID, "", "seen"))
	must(alice.ReviewFenced(ctx, fs[0].ID, "", "seen"))
	must2(alice.ActivateEpoch(ctx, "", ""))
	must2(alice.RemoveOperator(ctx, "bob"))
	tok, _, err := alice.CreateToken(ctx, "svc-bot", TokenAgent, "")
	must(err)
	_, _, err = alice.CreateToken(ctx, "svc-op", TokenOperator, "")
	must(err)
	must2(alice.RevokeToken(ctx, tok.ID, ""))
	must2(alice.AllowPrincipal(ctx, "svc-op", "bot1", ""))
	must2(alice.RevokePrincipal(ctx, "svc-op", "bot1", ""))
	rep, err := agent.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep.Problems, err)
	}
	var exp bytes.Buffer
	must2(agent.Export(ctx, &exp))
	alice.Close()
	bob.Close()
	agent.Close()
	db, err := sql.Open("sqlite", "file:"+w.path+"?mode=ro")
	must(err)
	defer db.Close()
	var b strings.Builder
	b.WriteString("-- A ledger at the last development schema (SQLite 20), made by\n-- that build's code (every kind of fact, signed and unsigned); frozen.\n")
	b.WriteString("-- Generated, never edited: its export is dev20_ledger.export.jsonl.\n")
	objects := func(kind string) [][2]string {
		rows, err := db.Query("SELECT name, sql FROM sqlite_master WHERE type = ? AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid", kind)
		must(err)
		defer rows.Close()
		var out [][2]string
		for rows.Next() {
			var o [2]string
			must(rows.Scan(&o[0], &o[1]))
			out = append(out, o)
		}
		return out
	}
	tables := objects("table")
	for _, tb := range tables {
		b.WriteString(tb[1] + ";\n")
	}
	for _, tb := range tables {
		rows, err := db.Query(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, tb[0])
		must(err)
		var quoted []string
		for rows.Next() {
			var c string
			rows.Scan(&c)
			quoted = append(quoted, `quote("`+c+`")`)
		}
		rows.Close()
		q := `SELECT 'INSERT INTO "` + tb[0] + `"(` + "" + `' || ''` + ` || '` + colList(t, db, tb[0]) + `) VALUES(' || ` + strings.Join(quoted, ` || ',' || `) + ` || ');' FROM "` + tb[0] + `" ORDER BY 1`
		rows, err = db.Query(q)
		must(err)
		for rows.Next() {
			var s string
			rows.Scan(&s)
			b.WriteString(s + "\n")
		}
		rows.Close()
	}
	for _, kind := range []string{"index", "view", "trigger"} {
		for _, o := range objects(kind) {
			b.WriteString(o[1] + ";\n")
		}
	}
	must(os.WriteFile("testdata/dev20_ledger.sql", []byte(b.String()), 0o644))
	must(os.WriteFile("testdata/dev20_ledger.export.jsonl", exp.Bytes(), 0o644))
	t.Logf("head %s %d", rep.ChainHead, rep.Events)
}

func colList(t *testing.T, db *sql.DB, table string) string {
	rows, err := db.Query(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cs []string
	for rows.Next() {
		var c string
		rows.Scan(&c)
		cs = append(cs, c)
	}
	return strings.Join(cs, ", ")
}
