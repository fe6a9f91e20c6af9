package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
)

// TestUncertainTimelineSaysTheLeaseRanOut: an action uncertain because
// its permit's lease ran out with no report has a timeline line saying
// so, at the lease's end and after the permit's events, marked as derived
// (no event is stored for a lease running out); an action whose report
// came in time has none.
func TestUncertainTimelineSaysTheLeaseRanOut(t *testing.T) {
	f := newFixture(t)
	f.guard("report:q4", "report", "export totals", "report-bot")
	a := f.guard("report:q5", "report", "export rows", "report-bot")
	if _, err := f.s.Report(ctx, "report:q5", a.PermitID, ledger.Succeeded, ledger.ReportOptions{Ref: "r-1"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(2 * time.Minute) // q4's lease runs out with no report
	m := f.model(120, 60, nil)
	step(m, press("3"))
	if it, _ := m.list().current(); it.Key != "report:q4" {
		t.Fatalf("Uncertain lists %q", it.Key)
	}
	content, _ := m.detail.content()
	timeline := content[strings.Index(content, "timeline"):]
	line := "2026-12-01 09:01:00Z  lease ran out        (derived, not a stored event) no outcome reported by then"
	if !strings.Contains(timeline, line) {
		t.Fatalf("the timeline does not say the lease ran out:\n%s", timeline)
	}
	if strings.Index(timeline, line) < strings.LastIndex(timeline, "permit") {
		t.Fatalf("the derived line is not after the permit's events:\n%s", timeline)
	}

	step(m, press("5"))
	for i := 0; i < 3; i++ {
		if it, _ := m.list().current(); it.Key == "report:q5" {
			break
		}
		step(m, press("j"))
	}
	content, _ = m.detail.content()
	if !strings.Contains(content, "succeeded") || strings.Contains(content, "lease ran out") {
		t.Fatalf("a key reported in time:\n%s", content)
	}
}

// TestUncertainRowsShowWhenTheLeaseRanOut: an uncertain row's due column
// is when its report was due (the lease's end, "9m ago"), not "-": the
// ledger sorts Uncertain by it (s), and reversed (S, "latest deadline",
// sorted by the console) the rows are in that order, not newest first.
func TestUncertainRowsShowWhenTheLeaseRanOut(t *testing.T) {
	f := newFixture(t)
	for _, k := range []struct {
		key   string
		lease time.Duration
	}{{"report:a", 3 * time.Minute}, {"report:b", time.Minute}, {"report:c", 5 * time.Minute}} {
		p := ledger.Payload{Kind: "report", Target: "t", Body: k.key}
		if _, err := f.s.Guard(ctx, k.key, p, ledger.GuardOptions{Agent: "report-bot", Lease: k.lease}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Add(10 * time.Minute)
	m := f.model(120, 40, nil)
	step(m, press("3"))
	step(m, press("s")) // due, soonest first: the ledger's order
	if got := strings.Join(listedKeys(m), " "); !strings.Contains(got, "report:b") || !strings.HasSuffix(got, "report:c") || strings.Index(got, "report:b") > strings.Index(got, "report:a") {
		t.Fatalf("soonest lease first: %s", got)
	}
	v := m.View()
	for _, want := range []string{"9m ago", "7m ago", "5m ago"} {
		if !strings.Contains(v, want) {
			t.Fatalf("the due column lacks %q:\n%s", want, v)
		}
	}
	step(m, press("S")) // latest deadline, sorted here
	if got := strings.Join(listedKeys(m), " "); !strings.HasSuffix(got, "report:c report:a report:b") && !strings.HasPrefix(got, "report:c report:a report:b") {
		t.Fatalf("latest lease first: %s", got)
	}
}
