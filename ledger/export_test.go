package ledger

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// exported is an export read back: the evidence lines by key, in the
// order written, and the last line.
type exported struct {
	keys  []string
	lines map[string]map[string]any
	end   ExportEnd
	raw   string
}

func exportOf(t *testing.T, path string) exported {
	t.Helper()
	s, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var buf bytes.Buffer
	end, err := s.Export(ctx, &buf)
	if err != nil {
		t.Fatal(err)
	}
	x := exported{lines: map[string]map[string]any{}, raw: buf.String()}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		k := m["key"].(string)
		x.keys = append(x.keys, k)
		x.lines[k] = m
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &x.end); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal([]string{x.end.Head.Hash, x.end.Head.LedgerID}, []string{end.Head.Hash, end.Head.LedgerID}) || x.end.ChainVerified != end.ChainVerified {
		t.Fatalf("the last line %+v is not what Export returned %+v", x.end, end)
	}
	return x
}

// TestExportMatchesStatus: every line of an untouched ledger with every
// kind of fact says what status says of its key, in key order, proven,
// and the last line names the head a verify witnessed; pages of one, two
// and three keys (with keys of no intent between them) write the same.
func TestExportMatchesStatus(t *testing.T) {
	path, head := evidenceLedger(t)
	x := exportOf(t, path)
	head.Path = "" // the export names the head, not where verify saw it
	if !x.end.ChainVerified || x.end.Head != head || x.end.Actions != len(x.keys) || x.end.Events != head.Seq || len(x.end.Problems) != 0 {
		t.Fatalf("last line %+v, witnessed head %+v", x.end, head)
	}
	if !slices.IsSorted(x.keys) || len(x.keys) != 4 {
		t.Fatalf("keys %v: want the four intents in key order", x.keys)
	}
	s, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range x.keys {
		d, err := s.Status(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(d)
		var w map[string]any
		json.Unmarshal(want, &w)
		line := x.lines[k]
		for f, v := range w {
			if g, _ := json.Marshal(line[f]); string(g) != mustJSON(v) {
				t.Errorf("%s: export %s = %s, status %s", k, f, g, mustJSON(v))
			}
		}
		if line["chain_verified"] != true || int(line["events"].(float64)) != len(d.Events) || line["last_event_hash"] != d.Events[len(d.Events)-1].Hash {
			t.Errorf("%s: %v", k, line)
		}
	}
	s.Close()
	defer func(n int) { exportPage = n }(exportPage)
	for _, n := range []int{1, 2, 3} {
		exportPage = n
		if y := exportOf(t, path); y.raw != x.raw {
			t.Fatalf("pages of %d keys export differently:\n%s\nwant\n%s", n, y.raw, x.raw)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestExportProvesWhatItPrints edits a copy of the ledger as someone with
// the file would, triggers dropped, and asserts export marks the line it
// printed from the edited row (or, for the chain itself, the last line)
// unproven and names the row, on pages of one key and of many.
func TestExportProvesWhatItPrints(t *testing.T) {
	path, head := evidenceLedger(t)
	tests := []struct {
		name  string
		edit  []string
		key   string // the lines that must be unproven, space-separated; "" for the last line only
		table string
		row   string
	}{
		{"decision flipped", []string{"UPDATE decisions SET decision = 'approved', reason = '' WHERE action_key = 'k:rej'"}, "k:rej", "decisions", "action_key=k:rej"},
		{"reconciliation flipped", []string{"UPDATE reconciliations SET result = 'not-executed' WHERE action_key = 'k:appr'"}, "k:appr", "reconciliations", "action_key=k:appr"},
		{"lease extended", []string{"UPDATE permits SET lease_ms = lease_ms + 86400000 WHERE action_key = 'k:appr'"}, "k:appr", "permits", "action_key=k:appr"},
		{"accepted report flipped", []string{"UPDATE reports SET outcome = 'failed' WHERE action_key = 'k:auto' AND kind = 'accepted'"}, "k:auto", "reports", "id=1"},
		{"late report deleted", []string{"DELETE FROM reports WHERE kind = 'late'"}, "k:appr", "reports", "id=2"},
		{"payload rewritten", []string{`UPDATE payloads SET canonical = '{"body":"changed","kind":"auto.x","target":"t"}' WHERE action_key = 'k:auto'`}, "k:auto", "payloads", "action_key=k:auto"},
		{"intent digest edited", []string{"UPDATE intents SET payload_sha256 = '" + strings.Repeat("c", 64) + "' WHERE action_key = 'k:auto'"}, "k:auto", "intents", "action_key=k:auto"},
		{"decision moved to another key", []string{"UPDATE decisions SET action_key = 'k:deny' WHERE action_key = 'k:rej'"}, "k:deny k:rej", "decisions", "action_key=k:deny"},
		{"event actor edited", []string{"UPDATE events SET actor = 'mallory' WHERE action_key = 'k:rej' AND type = 'rejected'"}, "k:rej", "events", ""},
		{"ledger-wide event edited", []string{"UPDATE events SET actor = 'mallory' WHERE type = 'policy_set'"}, "", "events", ""},
		{"tail cut", []string{"DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)"}, "", "events", ""},
		{"head names another hash", []string{"UPDATE chain_head SET hash = '" + strings.Repeat("b", 64) + "'"}, "", "events", ""},
		{"one link rerouted", nil, "", "events", ""},
	}
	defer func(n int) { exportPage = n }(exportPage)
	for _, tc := range tests {
		for _, page := range []int{1, 1000} {
			t.Run(tc.name+"/"+itoa(int64(page)), func(t *testing.T) {
				exportPage = page
				cp, db := tamperCopy(t, path)
				for _, q := range tc.edit {
					if _, err := db.Exec(q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				if tc.edit == nil {
					// An event's prev_hash names the event two back, and its
					// own hash is recomputed: each event is whole, the chain
					// is not.
					var seq int64
					var prev string
					db.QueryRow("SELECT seq, hash FROM events WHERE seq = (SELECT max(seq) - 2 FROM events)").Scan(&seq, &prev)
					seq += 2
					var e Event
					d, hv, err := scanEvent(db.QueryRow("SELECT "+eventCols+" FROM events WHERE seq = ?", seq), &e)
					if err != nil {
						t.Fatal(err)
					}
					h := eventHash(hv, prev, seq, e.ActionKey, e.Type, e.Actor, d, e.At.UnixMilli(), factRef{Table: e.FactTable, Row: e.FactRow, SHA256: e.FactSHA256})
					if _, err := db.Exec("UPDATE events SET prev_hash = ?, hash = ? WHERE seq = ?", prev, h, seq); err != nil {
						t.Fatal(err)
					}
					if _, err := db.Exec("UPDATE chain_head SET hash = ?", h); err != nil {
						t.Fatal(err)
					}
				}
				db.Close()
				x := exportOf(t, cp)
				if x.end.ChainVerified || x.end.ProblemCount == 0 {
					t.Fatalf("the last line says proven: %+v", x.end)
				}
				for k, l := range x.lines {
					if got := l["chain_verified"] == true; got == slices.Contains(strings.Fields(tc.key), k) {
						t.Errorf("line %s: chain_verified %v", k, got)
					}
				}
				named := slices.ContainsFunc(x.end.Problems, func(p Problem) bool {
					return p.Table == tc.table && (tc.row == "" || p.Row == tc.row) && (tc.key == "" || strings.HasPrefix(tc.key, p.Key))
				})
				if !named {
					t.Fatalf("no problem names %s %s: %+v", tc.table, tc.row, x.end.Problems)
				}
			})
		}
	}
	// A chain recomputed from scratch proves itself: the head on the last
	// line is what tells it from the one a verify witnessed.
	t.Run("whole chain recomputed", func(t *testing.T) {
		cp, db := tamperCopy(t, path)
		if _, err := db.Exec("UPDATE decisions SET operator = 'bob' WHERE action_key = 'k:appr'"); err != nil {
			t.Fatal(err)
		}
		refreshFact(t, db, "decisions", "k:appr")
		var seq int64
		var h string
		db.QueryRow("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").Scan(&seq, &h)
		db.Exec("UPDATE chain_head SET seq = ?, hash = ?", seq, h)
		db.Close()
		x := exportOf(t, cp)
		if !x.end.ChainVerified || x.end.Head.Seq != head.Seq || x.end.Head.Hash == head.Hash {
			t.Fatalf("last line %+v, witnessed %+v", x.end, head)
		}
	})
}

// TestExportReportsProgress: the progress callback hears the running
// count of actions written after each page, ending at the total.
func TestExportReportsProgress(t *testing.T) {
	path, _ := evidenceLedger(t)
	defer func(n int) { exportPage = n }(exportPage)
	exportPage = 2
	s, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var heard []int
	end, err := s.ExportWith(ctx, &bytes.Buffer{}, func(n int) { heard = append(heard, n) })
	if err != nil {
		t.Fatal(err)
	}
	if len(heard) < 2 || heard[0] != 2 || !slices.IsSorted(heard) || heard[len(heard)-1] != end.Actions || end.Actions != 4 {
		t.Fatalf("progress heard %v for %d actions", heard, end.Actions)
	}
}
