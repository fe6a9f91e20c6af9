package cli_test

import (
	"strings"
	"testing"
)

// TestKeyErrorEscapedOnce: a key refused by the grammar is shown escaped
// once, its invalid UTF-8 as \xc3 (not doubled, \\xc3), and the byte it
// names as \xc3 too, never as the Latin-1 letter 'Ã'; a plain ASCII
// culprit stays quoted, and a key with a control character stays inert.
func TestKeyErrorEscapedOnce(t *testing.T) {
	db := t.TempDir() + "/ledger.db"
	r := run(t, db, "", "status", "k\xc3y")
	if !strings.Contains(r.stderr, `invalid key "k\xc3y"`) || !strings.Contains(r.stderr, `(found \xc3 at byte 1)`) || strings.Contains(r.stderr, "Ã") {
		t.Fatalf("invalid UTF-8: %q", r.stderr)
	}
	r = run(t, db, "", "status", "küy")
	if !strings.Contains(r.stderr, `invalid key "küy"`) || !strings.Contains(r.stderr, `(found \xc3 at byte 1)`) || strings.Contains(r.stderr, "Ã") {
		t.Fatalf("ü: %q", r.stderr)
	}
	r = run(t, db, "", "status", "kAy")
	if !strings.Contains(r.stderr, `(found 'A' at byte 1)`) {
		t.Fatalf("A: %q", r.stderr)
	}
	r = run(t, db, "", "status", "k\x1b[2Jy")
	if strings.Contains(r.stderr, "\x1b") || !strings.Contains(r.stderr, `invalid key "k\x1b[2Jy"`) || !strings.Contains(r.stderr, `(found \x1b at byte 1)`) {
		t.Fatalf("ESC: %q", r.stderr)
	}
}
