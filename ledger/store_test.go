package ledger

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// The last process to close a ledger leaves no WAL behind, so the next
// one does not read it all back before its first query.
func TestCloseLeavesNoWAL(t *testing.T) {
	for _, oneShot := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "l.db")
		s, err := Open(ctx, path, Options{OneShot: oneShot})
		if err != nil {
			t.Fatal(err)
		}
		p := Payload{"k", "t", "b"}
		for _, key := range []string{"a", "b", "a"} {
			if _, err := s.Guard(ctx, key, p, GuardOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.List(ctx, Filter{}); err != nil { // a reader connection, too
			t.Fatal(err)
		}
		if _, err := os.Stat(path + "-wal"); err != nil {
			t.Fatalf("one-shot %v: no WAL while open: %v", oneShot, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("one-shot %v: the WAL is still there after the last close (%v)", oneShot, err)
		}
	}
}

// TestListOrdersPage: each order lists every row once, in order, when
// read a small page at a time through the keyset cursor; rows without a
// deadline come last under SoonestDeadline.
func TestListOrdersPage(t *testing.T) {
	s, clk := openTest(t)
	s.SetPolicy(ctx, approvals.Rule{Pattern: "soon", Mode: approvals.Approval, TTL: 10 * time.Minute}, "root")
	s.SetPolicy(ctx, approvals.Rule{Pattern: "late", Mode: approvals.Approval, TTL: 3 * time.Hour}, "root")
	for i := 0; i < 21; i++ {
		key := fmt.Sprintf("k:%02d", i)
		switch i % 3 {
		case 0:
			_, err := s.Guard(ctx, key, Payload{"late", "t", "b"}, GuardOptions{Agent: "bot"})
			if err != nil {
				t.Fatal(err)
			}
		case 1:
			_, err := s.Guard(ctx, key, Payload{"soon", "t", "b"}, GuardOptions{Agent: "bot"})
			if err != nil {
				t.Fatal(err)
			}
		default:
			_, err := s.Record(ctx, key, Payload{"note", "t", "b"}, RecordOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
		clk.Add(time.Minute)
	}
	for _, o := range []Order{NewestFirst, OldestFirst, SoonestDeadline} {
		var got []Row
		f := Filter{Order: o, Limit: 4}
		for {
			page, err := s.List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			f.After = &page[len(page)-1]
		}
		if len(got) != 21 {
			t.Fatalf("%s: %d rows, want 21", o, len(got))
		}
		ok := slices.IsSortedFunc(got, func(a, b Row) int {
			switch o {
			case OldestFirst:
				return cmp.Compare(a.ID, b.ID)
			case SoonestDeadline:
				da, db := a.Deadline.UnixMilli(), b.Deadline.UnixMilli()
				if a.Deadline.IsZero() {
					da = math.MaxInt64
				}
				if b.Deadline.IsZero() {
					db = math.MaxInt64
				}
				return cmp.Or(cmp.Compare(da, db), cmp.Compare(a.ID, b.ID))
			}
			return cmp.Compare(b.ID, a.ID)
		})
		seen := map[string]bool{}
		for _, r := range got {
			seen[r.Key] = true
		}
		if !ok || len(seen) != 21 {
			t.Fatalf("%s: out of order or repeated: %v", o, keysOf(got))
		}
		if o == SoonestDeadline && (got[0].Key != "k:01" || !got[20].Deadline.IsZero()) {
			t.Fatalf("soonest deadline starts with %s and ends with %s", got[0].Key, got[20].Key)
		}
	}
}

func keysOf(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Key
	}
	return out
}
