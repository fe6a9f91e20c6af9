package ledger

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
)

// wireCounter counts what the engine's pool sends to the server: each
// statement (BEGIN and COMMIT included) and each prepare is one round
// trip on the wire.
type wireCounter struct {
	mu    sync.Mutex
	sent  []string
	count bool
	// held is, for the last counted call, how many round trips it made
	// while it held the chain head: from the statement that locks it to
	// the end, COMMIT included.
	held int
}

func (c *wireCounter) add(q string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count {
		c.sent = append(c.sent, strings.Join(strings.Fields(q), " "))
	}
}

func (c *wireCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.add(d.SQL)
	return ctx
}

func (c *wireCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *wireCounter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	c.add("PREPARE " + d.SQL)
	return ctx
}

func (c *wireCounter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// calls counts the round trips of fn.
func (c *wireCounter) calls(t *testing.T, what string, fn func() error) int {
	t.Helper()
	c.mu.Lock()
	c.sent, c.count = nil, true
	c.mu.Unlock()
	err := fn()
	c.mu.Lock()
	sent := c.sent
	c.sent, c.count = nil, false
	c.mu.Unlock()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	c.held = 0
	for i, q := range sent {
		if strings.Contains(q, "tollgate_lock_head") || strings.Contains(q, "tollgate_wait_head") || strings.Contains(q, "tollgate_append_event") ||
			strings.Contains(q, "tollgate_flush") {
			c.held = len(sent) - i
			break
		}
	}
	t.Logf("%s: %d round trips, %d of them holding the chain head", what, len(sent), c.held)
	for _, q := range sent {
		t.Logf("    %.140s", q)
	}
	return len(sent)
}

// TestPostgresRoundTrips counts, on the wire, the round trips of the
// common calls on a warm store (its statements prepared): a guard that
// permits a new key, its report, a retry of the settled key and a status
// of it (a key no operator signed for).
// Issue 25's goal is one each; this test fails when a change adds any
// above what schema 14 reached (a guard: one), or holds the chain head
// longer, and its log names each statement sent.
func TestPostgresRoundTrips(t *testing.T) {
	u := pgtest.DB(t)
	wire := &wireCounter{}
	eng, err := postgres.Open(ctx, u, postgres.Options{After: afterMigration(newClock().Now, postgres.Rebind), Tracer: wire})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, eng, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range []approvals.Rule{{Pattern: "run", Mode: approvals.Auto}, {Pattern: "ask", Mode: approvals.Approval}} {
		if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"ask:warm", "ask:1"} {
		if _, err := s.Guard(ctx, k, Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Approve(ctx, "ask:warm", "alice", "ok"); err != nil { // prepares what an approval sends
		t.Fatal(err)
	}
	guard := func(key, body string) (Answer, error) {
		return s.Guard(ctx, key, Payload{"run", "t", body}, GuardOptions{Agent: "bot"})
	}
	for _, k := range []string{"run:warm-1", "run:warm-2"} { // prepares what a guard and a report send
		a, err := guard(k, "b")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Report(ctx, k, a.PermitID, Succeeded, ReportOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Status(ctx, k); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(ctx, "rec:"+k[len("run:"):], Payload{"run", "t", "b"}, RecordOptions{Agent: "bot"}); err != nil {
			t.Fatal(err)
		}
	}
	var a Answer
	got := map[string]int{
		"guard, new key": wire.calls(t, "guard of a new key", func() (err error) { a, err = guard("run:1", "b"); return err }),
	}
	held := map[string]int{"guard, new key": wire.held}
	got["report"] = wire.calls(t, "report", func() error { _, err := s.Report(ctx, "run:1", a.PermitID, Succeeded, ReportOptions{}); return err })
	held["report"] = wire.held
	got["guard, settled key"] = wire.calls(t, "guard of a settled key", func() error { _, err := guard("run:1", "b"); return err })
	got["status"] = wire.calls(t, "status", func() error { _, err := s.Status(ctx, "run:1"); return err })
	record := func() error {
		_, err := s.Record(ctx, "rec:1", Payload{"run", "t", "b"}, RecordOptions{Agent: "bot"})
		return err
	}
	got["record, new key"] = wire.calls(t, "record of a new key", record)
	held["record, new key"] = wire.held
	got["record, retry"] = wire.calls(t, "record's identical retry", record)
	got["approve"] = wire.calls(t, "approve", func() error { _, err := s.Approve(ctx, "ask:1", "alice", "ok"); return err })
	held["approve"] = wire.held
	// A guard is one round trip from schema 14 (tollgate_guard), a new
	// key's and a retry's alike, and a status one statement (statusSQL; it
	// read every table in a transaction of 16), and from schema 19 a
	// report one call (tollgate_report; it took 9, then 7), and from
	// schema 24 a record one call (tollgate_record; it took 9, its
	// retry 1). An approval is not one call (its signature is checked
	// in Go): from schema 30 a key transaction of 14 statements (it was
	// 15), the chain head held for its last four (it was 13); from
	// schema 33 (tollgate_flush) 9, the head held for its last call and
	// its COMMIT, as every other key transaction holds it, and a forged
	// decision row, the active epoch and the quorum's rule read with the
	// request.
	limit := map[string]int{"guard, new key": 1, "report": 1, "guard, settled key": 1, "status": 1, "record, new key": 1, "record, retry": 1,
		"approve": 9}
	for what, n := range got {
		if n > limit[what] {
			t.Errorf("%s: %d round trips, more than %d", what, n, limit[what])
		}
	}
	// A key transaction holds the chain head for its last statement and
	// its COMMIT only (schema 13): before, a guard held it from its first
	// statement to its commit, and no other key's guard could run.
	for what, n := range held {
		if n > 2 {
			t.Errorf("%s: held the chain head for %d round trips, more than its append and its COMMIT", what, n)
		}
	}
}
