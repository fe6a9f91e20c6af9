package ledger

import (
	"strings"
	"testing"
)

// TestVerifyNamesEveryProjectionColumn edits each column of one
// projection row by hand, among settled rows that stay right, and
// requires verify to name that column of that row: the first pass that
// lets the database clear agreeing rows must let none of these through.
func TestVerifyNamesEveryProjectionColumn(t *testing.T) {
	edits := map[string]string{
		"stage":          "stage = 'succeeded'",
		"deadline_ms":    "deadline_ms = 12345",
		"payload_sha256": "payload_sha256 = '" + strings.Repeat("c", 64) + "'",
		"logical_key":    "logical_key = 'other'",
		"epoch":          "epoch = 'e9'",
		"kind":           "kind = 'forged'",
		"agent":          "agent = 'mallory'",
		"target":         "target = 'elsewhere'",
		"retained":       "retained = 0",
		"redacted":       "redacted = 1",
		"updated_ms":     "updated_ms = updated_ms + 1",
		"context_sha256": "context_sha256 = '" + strings.Repeat("d", 64) + "'",
	}
	for col, set := range edits {
		t.Run(col, func(t *testing.T) {
			s, _ := openTest(t)
			for _, k := range []string{"k1", "k2", "k3"} {
				if _, err := s.Record(ctx, k, Payload{"a", "t", "b-" + k}, RecordOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			rep := verifyTampered(t, testPath(s), "UPDATE action_index SET "+set+" WHERE action_key = 'k2'")
			requireNamed(t, rep, "action_index", "action_key=k2")
			for _, p := range rep.Problems {
				if p.Table == "action_index" && (p.Row != "action_key=k2" || !strings.HasPrefix(p.Rule, col+" ")) {
					t.Errorf("named %v, want only column %s of action_key=k2", p, col)
				}
			}
		})
	}
}

// verifyTampered runs edit on a copy of the ledger at path, its triggers
// dropped, and verifies the copy.
func verifyTampered(t *testing.T, path, edit string) VerifyReport {
	t.Helper()
	cp, db := tamperCopy(t, path)
	if _, err := db.Exec(edit); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c, err := Open(ctx, cp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rep, err := c.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestFactSumCountsEachCopy checks the multiset sum that proves fact rows
// against their events: the same elements in any order cancel, and a row
// committed three times does not pass for one committed once (as it
// would under XOR).
func TestFactSumCountsEachCopy(t *testing.T) {
	s, err := newFactSum()
	if err != nil {
		t.Fatal(err)
	}
	s.event("payloads", "k1", "h1", "k1")
	s.event("payloads", "k2", "h2", "k2")
	s.row("payloads", "k2", "h2", "k2")
	s.row("payloads", "k1", "h1", "k1")
	if !s.zero() {
		t.Fatal("the same rows and events in another order do not cancel")
	}
	for range 3 {
		s.event("payloads", "k1", "h1", "k1")
	}
	s.row("payloads", "k1", "h1", "k1")
	if s.zero() {
		t.Fatal("three events of one row cancel against the row")
	}
	for range 2 {
		s.event("payloads", "k1", "h1", "k1")
	}
	for range 4 {
		s.row("payloads", "k1", "h1", "k1")
	}
	if !s.zero() {
		t.Fatal("equal counts do not cancel")
	}
	s.event("payloads", "k1h", "1", "k1")
	s.row("payloads", "k1", "h1", "k1")
	if s.zero() {
		t.Fatal("a field's text shifted into the next one cancels")
	}
}
