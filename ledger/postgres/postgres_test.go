package postgres

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestWatchWakesOnNotify: a commit by another connection that appends an
// event is seen through LISTEN/NOTIFY, without a poll; with the listening
// session terminated, the watch falls back to polling and still sees
// the next commit.
func TestWatchWakesOnNotify(t *testing.T) {
	ctx := context.Background()
	u := pgtest.DB(t)
	e, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	w, err := e.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ww := w.(*watch)
	if !ww.listening.Load() {
		t.Fatal("the watch is not listening")
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
