package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// The keys an operator must tell apart: they differ only at their ends.
const (
	keyA = "refund:customer-4411-2026-12-01-a"
	keyB = "refund:customer-4411-2026-12-01-b"
)

// listLine returns the list line that shows a key's ending.
func listLine(t *testing.T, view, suffix string) string {
	t.Helper()
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, suffix+" ") && strings.Contains(l, "pending") {
			return l
		}
	}
	t.Fatalf("no list line ends a key with %q:\n%s", suffix, view)
	return ""
}

// TestLongKeysCutInTheMiddle: at 60x20 the key column is narrower than
// the keys; each is cut in its middle, so both ends show and the two rows
// differ visibly.
func TestLongKeysCutInTheMiddle(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{60, 20}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			f := newFixture(t)
			f.guard(keyA, "refund", "refund 10 EUR", "refund-bot")
			f.guard(keyB, "refund", "refund 11 EUR", "refund-bot")
			m := f.model(sz.w, sz.h, io.Discard)
			view := m.View()
			a, b := listLine(t, view, "01-a"), listLine(t, view, "01-b")
			for _, l := range []string{a, b} {
				if !strings.Contains(l, "refun") {
					t.Fatalf("the key's start is lost: %q", l)
				}
			}
			if sz.w == 60 && !strings.Contains(a, "…") {
				t.Fatalf("the key is not cut at 60 columns: %q", a)
			}
			requireGolden(t, view)
		})
	}
}

// TestFullKeyView: f shows the selected key whole, with every field,
// wrapped (a key far wider than the screen), scrollable, and listed in
// the help; esc closes it.
func TestFullKeyView(t *testing.T) {
	long := "refund:" + strings.Repeat("customer-4411-", 4) + "2026-12-tail-b" // near 80, the most a key may be
	for _, sz := range []struct{ w, h int }{{60, 20}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			f := newFixture(t)
			f.guard(long, "refund", strings.Repeat("refund line\n", 30), "refund-bot")
			m := f.model(sz.w, sz.h, io.Discard)
			step(m, press("f"))
			view := m.View()
			requireGolden(t, view)
			flat := strings.NewReplacer("│", "", " ", "", "\n", "").Replace(view)
			if !strings.Contains(flat, strings.ReplaceAll(long, " ", "")) {
				t.Fatalf("the full key is not shown whole:\n%s", view)
			}
			for _, want := range []string{"Full view", "recorded", "requested", "digest", "lines 1-"} {
				if !strings.Contains(view, want) {
					t.Fatalf("the full view lacks %q:\n%s", want, view)
				}
			}
			step(m, press("G"))
			if !strings.Contains(m.View(), "timeline") {
				t.Fatalf("G did not scroll to the end:\n%s", m.View())
			}
			step(m, press("esc"))
			if m.full != nil || strings.Contains(m.View(), "Full view") {
				t.Fatal("esc did not close the full view")
			}
			step(m, press("?"))
			if !strings.Contains(m.View(), "full key & fields") {
				t.Fatalf("the help does not list f:\n%s", m.View())
			}
		})
	}
}
