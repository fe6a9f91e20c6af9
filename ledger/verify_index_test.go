package ledger

import (
	"fmt"
	"strings"
	"testing"
)

// TestVerifyProvesTheProjectionOrder (issue 42): the id column of
// action_index, the order operators page through, edited from a plain
// shell is named by verify, row by row; the keys the edit moved are the
// ones named. An intent recorded outside tollgate (the seed fixture's)
// has no recorded event to order it by and is not named.
func TestVerifyProvesTheProjectionOrder(t *testing.T) {
	sqliteOnly(t)
	for _, tc := range []struct {
		name  string
		edits []string
		named []string
	}{
		{"nothing edited", nil, nil},
		{"the newest key moved first", []string{"UPDATE action_index SET id = 0 WHERE action_key = 'k:9'"}, []string{"k:9"}},
		{"the oldest key moved last", []string{"UPDATE action_index SET id = 100 WHERE action_key = 'k:0'"}, []string{"k:0"}},
		{"two keys swapped", []string{
			"UPDATE action_index SET id = -1 WHERE action_key = 'k:2'",
			"UPDATE action_index SET id = 3 WHERE action_key = 'k:7'",
			"UPDATE action_index SET id = 8 WHERE action_key = 'k:2'",
		}, []string{"k:7", "k:2"}}, // in id order
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			for i := range 10 {
				if _, err := s.Record(ctx, fmt.Sprintf("k:%d", i), Payload{"refund", "t", "b"}, RecordOptions{Agent: "bot"}); err != nil {
					t.Fatal(err)
				}
			}
			db := rawDB(t, s.Path())
			// A seed-fixture intent, between tollgate's keys.
			mustExec(t, db, "INSERT INTO intents VALUES ('seed:1', '"+strings.Repeat("a", 64)+"', 'recorded')")
			if _, err := s.Record(ctx, "k:last", Payload{"refund", "t", "b"}, RecordOptions{Agent: "bot"}); err != nil {
				t.Fatal(err)
			}
			for _, q := range tc.edits {
				mustExec(t, db, q)
			}
			rep, err := s.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rep.Problems {
				if p.Table != "action_index" {
					t.Errorf("unexpected problem: %s", p)
					continue
				}
				if !strings.Contains(p.Rule, "out of the order") {
					t.Errorf("the problem does not say the order was changed: %s", p)
				}
				got = append(got, p.Key)
			}
			if strings.Join(got, ",") != strings.Join(tc.named, ",") {
				t.Fatalf("verify named %v, want %v (%+v)", got, tc.named, rep.Problems)
			}
		})
	}
}
