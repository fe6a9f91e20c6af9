package ledger

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/testdata"
)

// TestHostileBodiesStoredVerbatim: SQL-shaped text, NUL bytes and the
// largest astral bodies are data, stored and returned byte for byte.
func TestHostileBodiesStoredVerbatim(t *testing.T) {
	s, _ := openTest(t)
	bodies := []string{
		"'); DROP TABLE intents; --",
		`" OR 1=1; UPDATE payloads SET canonical = NULL; --`,
		"nul\x00byte\x00",
		strings.Repeat("😀", MaxFieldRunes),
		strings.Repeat("\U0010FFFF", MaxFieldRunes),
		"\x1b]0;title\x07\r\u202e",
	}
	target := "t\x00"
	if onPostgres {
		// PostgreSQL text cannot hold U+0000: the kind, target and agent,
		// stored as text, are refused with a rule that says so; the body
		// lives only in the escaped canonical JSON and keeps its NULs.
		_, err := s.Record(ctx, "hostile:nul", Payload{Kind: "k", Target: target, Body: "b"}, RecordOptions{})
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "U+0000") {
			t.Fatalf("a NUL target on PostgreSQL: %v", err)
		}
		target = "t"
	}
	for i, b := range bodies {
		p := Payload{Kind: "k'; --", Target: target, Body: b}
		key := fmt.Sprintf("hostile:%d", i)
		if _, err := s.Record(ctx, key, p, RecordOptions{Agent: "a'); --"}); err != nil {
			t.Fatalf("body %d: %v", i, err)
		}
		d, err := s.Status(ctx, key)
		if err != nil || d.Payload == nil || *d.Payload != p || d.SHA256 != p.Digest() {
			t.Fatalf("body %d did not round-trip: %+v %v", i, d.Payload, err)
		}
	}
	c, _ := s.Counts(ctx)
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() || rep.Intents != int64(len(bodies)) || c.All != int64(len(bodies)) {
		t.Fatalf("after hostile input: %+v %+v %v", rep, c, err)
	}
}

// TestStateMachineTablesAppendOnly tries UPDATE, DELETE and INSERT OR
// REPLACE on every state-machine table from a plain connection.
func TestStateMachineTablesAppendOnly(t *testing.T) {
	s, clk := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval}, "root")
	s.Guard(ctx, "k1", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot"})
	s.Approve(ctx, "k1", "alice", "ok")
	a, _ := s.Guard(ctx, "k1", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot", Lease: 1e9})
	clk.Add(2e9)
	s.Report(ctx, "k1", a.PermitID, Succeeded, ReportOptions{})
	s.Reconcile(ctx, "k1", "executed", "alice", "checked")
	s.Record(ctx, "k1", Payload{"ask", "t", "x"}, RecordOptions{})
	cs, _ := s.Conflicts(ctx, true, "", 0, 0)
	s.ReviewConflict(ctx, cs[0].ID, "alice", "seen")
	s.ActivateEpoch(ctx, "", "root")
	s.Guard(ctx, "k2", Payload{"ask", "t", "b"}, GuardOptions{})
	fs, _ := s.Fenced(ctx, true, "", 0, 0)
	s.ReviewFenced(ctx, fs[0].ID, "alice", "seen")
	db := rawDB(t, s.Path())
	for _, table := range []string{"policy_rules", "policy_evals", "approval_requests", "decisions", "permits", "reports",
		"reconciliations", "epochs", "fenced", "conflict_reviews", "fenced_reviews"} {
		var n int
		db.QueryRow("SELECT count(*) FROM " + table).Scan(&n)
		if n == 0 {
			t.Fatalf("%s has no row to attack", table)
		}
		for _, q := range []string{
			"UPDATE " + table + " SET rowid = rowid",
			"DELETE FROM " + table,
			"INSERT OR REPLACE INTO " + table + " SELECT * FROM " + table,
		} {
			if _, err := db.Exec(q); err == nil {
				t.Errorf("%s: succeeded", q)
			}
		}
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestHostileCorpusRoundTrips: every string of the shared corpus
// (testdata/hostile.json) is stored and returned byte for byte in each
// payload field: escaping is for display, never for storage.
func TestHostileCorpusRoundTrips(t *testing.T) {
	s, _ := openTest(t)
	for i, h := range testdata.HostileStrings(t) {
		p := Payload{Kind: "k" + h.Text, Target: h.Text, Body: h.Text}
		key := fmt.Sprintf("corpus:%d", i)
		if _, err := s.Record(ctx, key, p, RecordOptions{}); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		d, err := s.Status(ctx, key)
		if err != nil || d.Payload == nil || *d.Payload != p || d.Kind != p.Kind {
			t.Fatalf("%s did not round-trip: %+v %v", h.Name, d.Payload, err)
		}
	}
}
