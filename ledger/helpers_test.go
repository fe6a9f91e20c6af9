package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"github.com/tollgate-dev/tollgate/ledger/sqlite"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// openTest opens a fresh ledger file in a temporary folder.
func openTest(t testing.TB) (*Store, *clock) {
	t.Helper()
	c := newClock()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "l", "ledger.db"), Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

// rawDB opens the file with plain SQL, as an operator's sqlite3 shell would,
// bypassing the Store.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

var ctx = context.Background()

func stringsReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// oldLedger makes a ledger of an older schema at path, as an earlier
// tollgate left it: migrations up to version, applied with plain SQL.
func oldLedger(t testing.TB, path string, version int) *sql.DB {
	t.Helper()
	db := rawDB(t, path)
	migs, err := sqlite.SchemaSQL(version)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range migs {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d; PRAGMA journal_mode = WAL", version)); err != nil {
		t.Fatal(err)
	}
	return db
}
