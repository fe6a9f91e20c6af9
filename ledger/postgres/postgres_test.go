package postgres

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger/engine"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestWatchWakesOnNotify: a commit by another connection that appends an
// event is seen through LISTEN/NOTIFY, without a poll; with the listening
// session terminated, the watch falls back to polling and still sees
// the next commit. Behind a pooler in transaction mode, where a session's
// LISTEN hears nothing, the watch's probe fails and it polls from the
// start (TestWatchPollsBehindAPooler).
func TestWatchWakesOnNotify(t *testing.T) {
	ctx := context.Background()
	u := pgtest.DB(t)
	if pgtest.Pooled(t) {
		t.Skip("behind a pooler the watch polls (TestWatchPollsBehindAPooler)")
	}
	w := openWatch(t, u)
	ww := w.(*watch)
	<-ww.probed
	if !ww.listening.Load() {
		t.Fatal("the watch is not listening on a direct connection")
	}
	if ch, err := w.Changed(ctx); err != nil || !ch {
		t.Fatalf("first call: %v %v", ch, err)
	}
	if ch, _ := w.Changed(ctx); ch {
		t.Fatal("changed with no commit")
	}
	other, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// What the events trigger does at every append.
	if _, err := other.Exec("SELECT pg_notify('tollgate', 'k:1')"); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, w)
	if ww.notified.Load() == 0 {
		t.Fatal("the change was not seen through a notification")
	}

	// The listening session dies: polling takes over.
	if _, err := other.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%'`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ww.listening.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ww.listening.Load() {
		t.Fatal("the watch did not notice its session ended")
	}
	w.Changed(ctx) // reads the head once
	if _, err := other.Exec("UPDATE chain_head SET seq = seq + 1"); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, w)
}

// TestWatchPollsBehindAPooler: through pgbouncer in transaction mode the
// watch's own notification never reaches it, so it does not trust LISTEN
// and sees another session's commit by polling.
func TestWatchPollsBehindAPooler(t *testing.T) {
	ctx := context.Background()
	u := pgtest.DB(t)
	if !pgtest.Pooled(t) {
		t.Skip("the tests connect straight to the server (TestWatchWakesOnNotify)")
	}
	w := openWatch(t, u)
	ww := w.(*watch)
	if ch, err := w.Changed(ctx); err != nil || !ch {
		t.Fatalf("first call: %v %v", ch, err)
	}
	<-ww.probed
	if ww.listening.Load() {
		t.Fatal("the watch trusts LISTEN behind a pooler in transaction mode")
	}
	other, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec("UPDATE chain_head SET seq = seq + 1"); err != nil {
		t.Fatal(err)
	}
	waitChanged(t, w)
}

// openWatch opens the ledger at u and a watch on it, both closed when
// the test ends.
func openWatch(t *testing.T, u string) engine.Watch {
	t.Helper()
	e, err := Open(context.Background(), u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	w, err := e.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func waitChanged(t *testing.T, w interface {
	Changed(context.Context) (bool, error)
}) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ch, err := w.Changed(context.Background()); err != nil {
			t.Fatal(err)
		} else if ch {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no change seen within 5 s")
}

// TestRebind: placeholders outside quotes become $n; quoted ones stay.
func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT ?":                           "SELECT $1",
		"a = ? AND b LIKE '?' AND c = ?":     "a = $1 AND b LIKE '?' AND c = $2",
		`x = "odd?col" OR y = ?`:             `x = "odd?col" OR y = $1`,
		"lower(k) LIKE lower(?) ESCAPE '\\'": "lower(k) LIKE lower($1) ESCAPE '\\'",
		"no placeholders":                    "no placeholders",
	} {
		if got := Rebind(in); got != want {
			t.Errorf("Rebind(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPoolerDetected: a connection knows it is behind a pooler exactly
// when the tests connect through one, and then runs every query unnamed;
// a URL that names the execution mode is obeyed without the check.
func TestPoolerDetected(t *testing.T) {
	ctx := context.Background()
	u := pgtest.DB(t)
	for _, c := range []struct {
		url    string
		pooled bool
	}{{u, pgtest.Pooled(t)}, {u + "&default_query_exec_mode=exec", false}} {
		e, err := Open(ctx, c.url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := e.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pooled bool
		sc.Raw(func(dc any) error { pooled = dc.(*conn).pooled; return nil })
		sc.Close()
		e.Close()
		if pooled != c.pooled {
			t.Errorf("%s: pooled = %v, want %v", Redact(c.url), pooled, c.pooled)
		}
	}
}
