package ledger

import (
	"errors"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestReportKeepsResult: a report may keep what the action returned,
// bounded and valid UTF-8, proven by its event like the rest of the row,
// and read back by status (the MCP proxy replays it to a retry).
func TestReportKeepsResult(t *testing.T) {
	s, _ := openTest(t)
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "mcp.*", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	a, err := s.Guard(ctx, "mcp:call-1", Payload{"mcp.create_issue", "tracker", `{"title":"x"}`}, GuardOptions{Agent: "bot"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{strings.Repeat("x", MaxResultLen+1), "\xff\xfe"} {
		if _, err := s.Report(ctx, "mcp:call-1", a.PermitID, Succeeded, ReportOptions{Result: bad}); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("a result of %d bytes: %v", len(bad), err)
		}
	}
	result := `{"content":[{"type":"text","text":"issue #12 created"}]}`
	if _, err := s.Report(ctx, "mcp:call-1", a.PermitID, Succeeded, ReportOptions{Ref: "issue-12", Result: result}); err != nil {
		t.Fatal(err)
	}
	d, err := s.Status(ctx, "mcp:call-1")
	if err != nil || len(d.Reports) != 1 || d.Reports[0].Result != result {
		t.Fatalf("status: %v %+v", err, d.Reports)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep.Problems)
	}
	// The result is part of what the report's event proves.
	if !onPostgres {
		raw := rawDB(t, s.Path())
		if _, err := raw.Exec("DROP TRIGGER reports_no_update"); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec("UPDATE reports SET result = '{}' WHERE action_key = 'mcp:call-1'"); err != nil {
			t.Fatal(err)
		}
		if rep, err := s.Verify(ctx); err != nil || rep.OK() {
			t.Fatalf("verify after the result was edited: %v %+v", err, rep.Problems)
		}
	}
}
