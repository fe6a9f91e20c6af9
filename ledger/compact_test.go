package ledger

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// queryPlan is SQLite's plan for q, one line per step.
func queryPlan(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestOpenWorkUsesThePartialIndex reads the plans of every query for open
// work (the console's views and filters, Counts, the epoch's fence): each
// must search the partial index action_index_open, never scan the
// projection, whatever other filter, order or cursor comes with it. A
// scan would read every settled action of a large ledger (schema 12 has
// no index on agent, kind or prefix).
func TestOpenWorkUsesThePartialIndex(t *testing.T) {
	sqliteOnly(t)
	s, _ := openTest(t)
	now := toMS(s.now())
	open := []State{StatePending, StateExpired, StateApproved, StateExecuting, StateUncertain}
	after := &Row{ID: 50, Deadline: time.Unix(2000, 0)}
	extras := []Filter{{}, {Agent: "a"}, {Kind: "refund"}, {KeyPrefix: "inv-"}, {Epoch: "e"}, {Text: "x"},
		{BeforeID: 10}, {MinID: 3, BeforeID: 90}, {Order: OldestFirst}, {Order: SoonestDeadline},
		{Order: SoonestDeadline, After: after}, {After: after}, {Order: OldestFirst, After: after}}
	for _, st := range open {
		for _, f := range extras {
			f.State = st
			q, args, err := listQuery(f, now)
			if err != nil {
				t.Fatal(err)
			}
			plan := strings.Join(queryPlan(t, s.r, q, args...), "; ")
			if !strings.Contains(plan, "INDEX action_index_open") || strings.Contains(plan, "SCAN action_index") {
				t.Errorf("List %+v: plan %q does not search action_index_open", f, plan)
			}
		}
	}
	q, args := countsQuery(s.eng, now)
	plan := queryPlan(t, s.r, q, args...)
	var viaOpen int
	for _, step := range plan {
		if strings.Contains(step, "SCAN action_index") {
			t.Errorf("Counts scans the projection: %q", step)
		}
		if strings.Contains(step, "action_index_open") {
			viaOpen++
		}
	}
	if viaOpen != 4 {
		t.Errorf("Counts reads action_index_open %d times, want 4 (pending, uncertain, two deadlines): %q", viaOpen, plan)
	}
	plan = queryPlan(t, s.r, stalePendingQuery, now, "e")
	if p := strings.Join(plan, "; "); !strings.Contains(p, "action_index_open") || strings.Contains(p, "SCAN action_index") {
		t.Errorf("the epoch's fence: plan %q does not search action_index_open", p)
	}
}

// TestListWindow pages a filter over settled history one window of ids
// at a time (MinID with BeforeID), as a console that shows the progress
// of a scan does: each window holds exactly the matching rows whose ids
// fall in it, newest first, and the windows together hold them all.
func TestListWindow(t *testing.T) {
	s, _ := openTest(t)
	for i := 0; i < 12; i++ {
		agent := "even"
		if i%2 == 1 {
			agent = "odd"
		}
		if _, err := s.Record(ctx, fmt.Sprintf("w:%02d", i), Payload{"note", "t", fmt.Sprint(i)}, RecordOptions{Agent: agent}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.List(ctx, Filter{Agent: "odd", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("%d odd rows, want 6", len(all))
	}
	c, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []Row
	for before := c.All + 1; before > 1; before -= 5 {
		rows, err := s.List(ctx, Filter{Agent: "odd", MinID: max(before-5, 1), BeforeID: before})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.ID < before-5 || r.ID >= before {
				t.Fatalf("window [%d, %d) returned id %d", before-5, before, r.ID)
			}
		}
		got = append(got, rows...)
	}
	if !slices.EqualFunc(got, all, func(a, b Row) bool { return a.Key == b.Key }) {
		t.Fatalf("the windows hold %v, the whole list %v", got, all)
	}
}

// TestAnswerColumn checks that the projection's stored answer (schema
// 12), which an identical retry reads alone, holds exactly fastCols on
// every row: after a record, a redacted record, a guard with context,
// an approval request and its decision. A drift between the column's
// expression and unpack would make every retry take the slow path or,
// worse, answer from a stale value.
func TestAnswerColumn(t *testing.T) {
	s, _ := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval}, "root")
	s.SetPolicy(ctx, approvals.Rule{Pattern: "auto", Mode: approvals.Auto}, "root")
	c, err := ParseContext([]byte(`{"amount": 5}`))
	if err != nil {
		t.Fatal(err)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Record(ctx, "a:1", Payload{"note", "t", "b"}, RecordOptions{Agent: "x y"}))
	must(s.Record(ctx, "a:2", Payload{"note", "t", "b"}, RecordOptions{Redact: true}))
	must(s.Guard(ctx, "a:3", Payload{"auto", "t", "b"}, GuardOptions{Agent: "bot", Context: c}))
	must(s.Guard(ctx, "a:4", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot"}))
	must(s.Guard(ctx, "a:5", Payload{"ask", "t", "b"}, GuardOptions{Agent: "bot"}))
	must(s.Approve(ctx, "a:5", "alice", "ok"))
	db := rawDB(t, testPath(s))
	var n, bad int
	if err := db.QueryRow("SELECT count(*), count(*) FILTER (WHERE answer <> ("+fastCols+")) FROM action_index").Scan(&n, &bad); err != nil {
		t.Fatal(err)
	}
	if n != 5 || bad != 0 {
		t.Fatalf("%d of %d projection rows hold an answer other than fastCols", bad, n)
	}
	for _, k := range []string{"a:1", "a:3", "a:5"} {
		var v string
		if err := db.QueryRow("SELECT answer FROM action_index WHERE action_key = ?", k).Scan(&v); err != nil {
			t.Fatal(err)
		}
		var r indexRow
		if !r.unpack(v) {
			t.Fatalf("%s: the answer %q does not unpack", k, v)
		}
	}
}
