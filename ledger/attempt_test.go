package ledger

import (
	"context"
	"database/sql"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// blackHole is a TCP proxy in front of the database whose existing
// connections can be made to stop forwarding (what a client sees when a
// firewall starts dropping a flow's packets, or a host vanishes from the
// network mid-call): bytes sent are swallowed, nothing comes back, the
// connection stays open. Connections made afterwards are forwarded.
type blackHole struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []*holeConn
}

type holeConn struct {
	client, server net.Conn
	dead           chan struct{}
}

func newBlackHole(t *testing.T, upstream string) *blackHole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackHole{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.conns {
			c.client.Close()
			c.server.Close()
		}
	})
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", upstream)
			if err != nil {
				client.Close()
				continue
			}
			c := &holeConn{client: client, server: server, dead: make(chan struct{})}
			b.mu.Lock()
			b.conns = append(b.conns, c)
			b.mu.Unlock()
			go c.pipe(client, server)
			go c.pipe(server, client)
		}
	}()
	return b
}

// pipe forwards from src to dst until the connection is swallowed, then
// reads and drops everything.
func (c *holeConn) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			dst.Close()
			return
		}
		select {
		case <-c.dead:
			continue
		default:
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			src.Close()
			return
		}
	}
}

// swallow makes every connection open now a black hole.
func (b *blackHole) swallow() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.conns {
		select {
		case <-c.dead:
		default:
			close(c.dead)
			n++
		}
	}
	return n
}

// TestPostgresBlackHoleAttemptIsAbandoned: a long-lived store (as the MCP
// server is) whose pooled connections stop answering mid-stream, without
// being closed: with AttemptTimeout, a guard and a report are abandoned
// after it and made again on new connections, and succeed well within
// RetryFor; the facts are stored once. Without it, the same guard waits
// on the dead connection until RetryFor runs out.
func TestPostgresBlackHoleAttemptIsAbandoned(t *testing.T) {
	if !onPostgres {
		t.Skip("a PostgreSQL test: runs with TOLLGATE_TEST_BACKEND=postgres")
	}
	owner := pgtest.DB(t)
	u := mustParseURL(t, owner)
	hole := newBlackHole(t, u.Host)
	u.Host = hole.ln.Addr().String()
	ctx := context.Background()
	setup, err := Open(ctx, owner, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.SetPolicy(ctx, approvals.Rule{Pattern: "job", Mode: approvals.Auto}, "root"); err != nil {
		t.Fatal(err)
	}
	setup.Close()

	for _, tc := range []struct {
		name    string
		attempt time.Duration
	}{{"bounded", time.Second}, {"unbounded", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(ctx, u.String(), Options{RetryFor: 6 * time.Second, AttemptTimeout: tc.attempt})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			pay := func(k string) Payload { return Payload{Kind: "job", Target: "acct", Body: k} }
			first := "job:hole-" + tc.name + "-1"
			a, err := s.Guard(ctx, first, pay(first), GuardOptions{Agent: "bot"})
			if err != nil || a.PermitID == "" {
				t.Fatalf("guard before the black hole: %+v %v", a, err)
			}
			if n := hole.swallow(); n == 0 {
				t.Fatal("no connection to swallow")
			}
			second := "job:hole-" + tc.name + "-2"
			t0 := time.Now()
			b, err := s.Guard(ctx, second, pay(second), GuardOptions{Agent: "bot"})
			took := time.Since(t0)
			if tc.attempt == 0 {
				// The baseline: the attempt waits on the dead connection
				// for the whole budget (and, before AttemptTimeout, for
				// ever: nothing bounded a statement).
				if took < 5*time.Second {
					t.Fatalf("without a per-attempt bound: %+v %v after %s", b, err, took)
				}
				t.Logf("without a per-attempt bound: %v after %s", err, took.Round(time.Millisecond))
				return
			}
			if err != nil || b.PermitID == "" || took > 4*time.Second {
				t.Fatalf("guard on a black-holed connection: %+v %v after %s", b, err, took)
			}
			hole.swallow()
			t1 := time.Now()
			r, err := s.Report(ctx, first, a.PermitID, Succeeded, ReportOptions{})
			if err != nil || r.State != StateSucceeded || time.Since(t1) > 4*time.Second {
				t.Fatalf("report on a black-holed connection: %+v %v after %s", r, err, time.Since(t1))
			}
			t.Logf("guard made again after %s, report after %s", took.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
			db, err := sql.Open("pgx", owner)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for k, id := range map[string]string{first: a.PermitID, second: b.PermitID} {
				var n int
				if err := db.QueryRow("SELECT count(*) FROM permits WHERE action_key = $1", k).Scan(&n); err != nil || n != 1 {
					t.Fatalf("%s: %d permits (%v)", k, n, err)
				}
				if d, err := s.Status(ctx, k); err != nil || d.PermitID != id {
					t.Fatalf("%s: given %s; the ledger holds %+v (%v)", k, id, d.PermitID, err)
				}
			}
		})
	}
}
