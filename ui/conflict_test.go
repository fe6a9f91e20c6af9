package ui

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/ledger"
)

// column reassembles one column of a side-by-side block: the text left
// (0) or right (1) of each " │ " rule, borders and padding dropped.
func column(view string, side int) string {
	var b strings.Builder
	for _, l := range strings.Split(view, "\n") {
		parts := strings.Split(l, " │ ")
		if len(parts) != 2 {
			continue
		}
		b.WriteString(strings.Trim(parts[side], " ║"))
	}
	return b.String()
}

// TestConflictDialogShowsBothSides: the review dialog of a conflict
// shows the stored payload (its kind, target and digest) and the
// attempted one side by side, each complete, never one's target beside
// the other's digest.
func TestConflictDialogShowsBothSides(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{60, 20}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			f := newFixture(t)
			stored := ledger.Payload{Kind: "refund", Target: "acct-7", Body: "refund 10 EUR"}
			tried := ledger.Payload{Kind: "refund", Target: "acct-8", Body: "refund 99 EUR"}
			for _, p := range []ledger.Payload{stored, tried} {
				var ce *ledger.ConflictError
				if _, err := f.s.Guard(ctx, "refund:customer-4411-2026-12-01-a", p, ledger.GuardOptions{Agent: "refund-bot"}); err != nil && !errors.As(err, &ce) {
					t.Fatal(err)
				}
			}
			m := f.model(sz.w, sz.h, io.Discard)
			step(m, press("2"))
			step(m, press("v"))
			view := m.View()
			requireGolden(t, view)
			left, right := column(view, 0), column(view, 1)
			for _, c := range []struct{ col, want string }{
				{left, "stored"}, {left, "targetacct-7"}, {left, stored.Digest()},
				{right, "attempted"}, {right, "targetacct-8"}, {right, tried.Digest()},
			} {
				if !strings.Contains(strings.ReplaceAll(c.col, " ", ""), c.want) {
					t.Fatalf("a column lacks %q:\nleft  %s\nright %s\n%s", c.want, left, right, view)
				}
			}
			if strings.Contains(left, tried.Digest()[:20]) || strings.Contains(right, stored.Digest()[:20]) {
				t.Fatalf("the digests are crossed:\n%s", view)
			}
		})
	}
}

// TestConflictRowAndPaneAgree: in Conflicts (and Fenced) the column
// beside the key names what the row is, a logged conflict, under a
// header that does not call it the key's state, and the pane calls the
// key's own state (pending) the key's: neither says the key is in a
// state it is not, and the row still reads as a conflict.
func TestConflictRowAndPaneAgree(t *testing.T) {
	m := conflictsModel(t)
	lines := strings.Split(m.View(), "\n")
	header, row := strings.Fields(lines[1]), strings.Fields(lines[2])
	if len(header) < 2 || header[1] != "entry" || len(row) < 3 || row[2] != "conflict" {
		t.Fatalf("Conflicts' header %q and row %q: the column beside the key must be the entry, not the key's state", header, row)
	}
	pane := m.detail.View()
	if !strings.Contains(pane, "key state  pending") || strings.Contains(pane, "│ state ") {
		t.Fatalf("the pane does not call pending the key's state:\n%s", pane)
	}
	// In the other views the column is the key's state, and so named.
	step(m, press("1"))
	if h := strings.Fields(strings.Split(m.View(), "\n")[1]); len(h) < 2 || h[1] != "state" {
		t.Fatalf("Pending's header %q", h)
	}
	if pane := m.detail.View(); !strings.Contains(pane, "│ state      pending") {
		t.Fatalf("Pending's pane:\n%s", pane)
	}
}

// TestDecisionOnAConflictRowSaysWhere: a on a Conflicts row said
// "refund:le-1 is conflict: approve applies to pending actions", while
// the pane says the key is pending: the refusal now says the row is a
// logged conflict, what v does, and where the key is decided.
func TestDecisionOnAConflictRowSaysWhere(t *testing.T) {
	m := conflictsModel(t)
	step(m, press("a"))
	if m.dialog != nil || strings.Contains(m.lastErr, "is conflict") ||
		!strings.Contains(m.lastErr, "a logged conflict") || !strings.Contains(m.lastErr, "Pending approvals (1,") {
		t.Fatalf("a on a conflict row: dialog %v, said %q", m.dialog != nil, m.lastErr)
	}
	if v := m.View(); !strings.Contains(v, "! this row is a logged conflict, not the action: v marks it reviewed") {
		t.Fatalf("what to do is not on the message line:\n%s", v)
	}
}

// conflictsModel is a console at 100x40 on Conflicts, whose one row is a
// retry of the pending refund:le-1 with another body.
func conflictsModel(t *testing.T) *Model {
	f := newFixture(t)
	f.guard("refund:le-1", "refund", "refund 10 EUR", "refund-bot")
	f.guard("refund:le-1", "refund", "refund 99 EUR", "retry-bot")
	m := f.model(100, 40, io.Discard)
	step(m, press("2"))
	return m
}
