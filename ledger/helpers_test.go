package ledger

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
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

// onPostgres is set when TOLLGATE_TEST_BACKEND=postgres: the behaviour
// suite then runs on PostgreSQL (CI runs it both ways).
var onPostgres = os.Getenv("TOLLGATE_TEST_BACKEND") == "postgres"

// testPath is the name a test reopens s by: its Path, or on PostgreSQL
// the URL with the password that Path leaves out.
func testPath(s *Store) string {
	if u, ok := pgURLs.Load(s.Path()); ok {
		return u.(string)
	}
	return s.Path()
}

// testLedger names a fresh, empty ledger on the backend under test: a
// file in a temporary folder, or a new PostgreSQL database.
func testLedger(t testing.TB) string {
	t.Helper()
	if onPostgres {
		u := pgtest.DB(t)
		pgURLs.Store(postgres.Redact(u), u)
		return u
	}
	return filepath.Join(t.TempDir(), "l", "ledger.db")
}

// pgURLs maps a PostgreSQL ledger's Path (its URL without the password)
// to the URL a test connects with.
var pgURLs sync.Map

// sqliteOnly skips a test of the SQLite engine itself (its file, its
// triggers under a plain sqlite3 shell) when the suite runs on PostgreSQL.
func sqliteOnly(t testing.TB) {
	t.Helper()
	if onPostgres {
		t.Skip("a test of the SQLite engine's file")
	}
}

// openTest opens a fresh ledger on the backend under test.
func openTest(t testing.TB) (*Store, *clock) {
	t.Helper()
	c := newClock()
	s, err := Open(context.Background(), testLedger(t), Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

// rawDB opens the file with plain SQL, as an operator's sqlite3 shell would,
// bypassing the Store.
func rawDB(t testing.TB, path string) *rawConn {
	t.Helper()
	driver, dsn := "sqlite", "file:"+path+"?_pragma=busy_timeout(5000)"
	if postgres.IsURL(path) {
		driver, dsn = "pgx", path
		if u, ok := pgURLs.Load(path); ok {
			dsn = u.(string)
		}
		// Unnamed statements: behind a pooler in transaction mode (CI's
		// pgbouncer) two raw connections preparing the same query by name
		// in one server session collide.
		if !strings.Contains(dsn, "default_query_exec_mode") && strings.Contains(dsn, "?") {
			dsn += "&default_query_exec_mode=exec"
		}
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &rawConn{DB: db, pg: driver == "pgx"}
}

// rawConn is plain SQL on the ledger's database, with ? placeholders on
// either engine.
type rawConn struct {
	*sql.DB
	pg bool
}

func (r *rawConn) q(query string) string {
	if r.pg {
		return postgres.Rebind(privateWrite.ReplaceAllStringFunc(query, func(m string) string {
			sub := privateWrite.FindStringSubmatch(m)
			return sub[1] + " " + postgres.Table(sub[2])
		}))
	}
	return query
}

// privateWrite matches an edit of a table that PostgreSQL keeps behind a
// view (payloads, conflicts; action_index from schema 42): an
// administrator forging a row edits the table itself, since a view's
// masked column cannot be written and a view cannot be truncated.
var privateWrite = regexp.MustCompile(`\b(UPDATE|TRUNCATE|DELETE FROM) (payloads|conflicts|action_index)\b`)

// Exec runs query with ? placeholders.
func (r *rawConn) Exec(query string, args ...any) (sql.Result, error) {
	return r.DB.Exec(r.q(query), args...)
}

// QueryRow runs query with ? placeholders.
func (r *rawConn) QueryRow(query string, args ...any) *sql.Row {
	return r.DB.QueryRow(r.q(query), args...)
}

// Query runs query with ? placeholders.
func (r *rawConn) Query(query string, args ...any) (*sql.Rows, error) {
	return r.DB.Query(r.q(query), args...)
}

var ctx = context.Background()

func stringsReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
