package ledger

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/ledger/sqlite"
)

// openCloseChild opens the ledger, writes one key and closes it, again
// and again until TOLLGATE_CHILD_UNTIL; each failure is printed as a line
// (nothing is printed when every call succeeds).
func openCloseChild(path string, id int) int {
	until, _ := strconv.ParseInt(os.Getenv("TOLLGATE_CHILD_UNTIL"), 10, 64)
	for i := 0; i < 10 || time.Now().UnixMilli() < until; i++ { // one write at least, however late it starts
		if i%10 != 0 {
			// The engine alone opens in a fraction of the store's time:
			// more opens and closes, more side files coming and going.
			e, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err == nil {
				err = e.Close()
			}
			if err != nil {
				fmt.Printf("readonly=%v %v\n", errors.Is(err, ErrReadOnly), err)
			}
			continue
		}
		s, err := Open(ctx, path, Options{})
		if err == nil {
			// Mostly opens and closes (each makes and may remove the side
			// files), now and then a write.
			_, err = s.Record(ctx, fmt.Sprintf("oc:%d-%d", id, i), Payload{"refund", "acct", "b"}, RecordOptions{Agent: "bot"})
		}
		if s != nil {
			if e := s.Close(); err == nil {
				err = e
			}
		}
		if err != nil {
			fmt.Printf("readonly=%v %v\n", errors.Is(err, ErrReadOnly), err)
		}
	}
	return 0
}

// TestOpenCloseRaceIsNeverReadOnly (issue 42): processes that each open
// a writable ledger, write and close it in a tight loop make its -wal and
// -shm files come and go between any two looks at them. A writer decides
// nothing from them before it opens; none is ever told the ledger is
// read-only.
func TestOpenCloseRaceIsNeverReadOnly(t *testing.T) {
	sqliteOnly(t)
	path := testLedger(t)
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	const procs = 8
	until := time.Now().Add(2 * time.Second).UnixMilli()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := childCmd("openclose", path, "TOLLGATE_CHILD_ID="+strconv.Itoa(i), "TOLLGATE_CHILD_UNTIL="+strconv.FormatInt(until, 10))
			out, err := cmd.CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, fmt.Sprintf("child %d: %v", i, err))
			}
			if o := strings.TrimSpace(string(out)); o != "" {
				failures = append(failures, o)
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		if strings.Contains(f, "read-only") || strings.Contains(f, "readonly=true") {
			t.Errorf("a writable ledger was called read-only under contention: %s", f)
		}
	}
	s, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.r.QueryRow("SELECT count(*) FROM intents").Scan(&n); err != nil || n < procs {
		t.Fatalf("%d keys written (%v): the children did not run", n, err)
	}
	t.Logf("%d keys written by %d processes opening and closing the ledger; other failures: %q", n, procs, failures)
}
