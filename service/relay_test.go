package service_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger"
)

// backendDB names a fresh ledger on the engine under test: a file in
// home, or a PostgreSQL database when TOLLGATE_TEST_BACKEND=postgres.
func backendDB(t *testing.T, home string) string {
	t.Helper()
	if os.Getenv("TOLLGATE_TEST_BACKEND") == "postgres" {
		return pgtest.DB(t)
	}
	return filepath.Join(home, "ledger.db")
}

// relay is a TCP relay between agents and a server that can lose the
// server's answer to a guard: the request goes through whole, the
// server commits and begins to answer, and the relay closes the agent's
// connection instead of passing the answer on, as a network that fails
// at that moment does.
type relay struct {
	ln      net.Listener
	target  string
	drop    atomic.Int32 // guards whose answers are still to be lost
	dropped atomic.Int32
}

func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.pass(c)
		}
	}()
	return r
}

// pass relays one connection: the agent's bytes to the server, and the
// server's back unless the first request is a guard whose answer is to
// be lost.
func (r *relay) pass(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", r.target)
	if err != nil {
		return
	}
	defer s.Close()
	first := make([]byte, 4096)
	n, err := c.Read(first)
	if err != nil {
		return
	}
	if _, err := s.Write(first[:n]); err != nil {
		return
	}
	go io.Copy(s, c)
	if bytes.HasPrefix(first[:n], []byte("POST /v1/guard ")) && r.drop.Add(-1) >= 0 {
		// The answer's first byte: the server committed and answered.
		if _, err := s.Read(make([]byte, 1)); err == nil {
			r.dropped.Add(1)
		}
		return
	}
	io.Copy(c, s)
}

// TestRelayLosesTheAnswer: an agent process guards over TCP with its
// token through a relay that loses the server's answer after the
// request was sent; the agent's client repeats the call with the same
// attempt id and is given the permit the lost answer carried, the one
// the ledger stored. Another process with the same token asking for the
// same key is not given it: it is told the key is executing (75).
func TestRelayLosesTheAnswer(t *testing.T) {
	home := t.TempDir()
	db := backendDB(t, home)
	seedPolicy(t, db)
	_, bot1 := makeToken(t, home, db, "bot-1")
	srv := startServer(t, db, home, "--listen", "127.0.0.1:0")
	rl := startRelay(t, srv.addrs[0])
	rl.drop.Store(1)
	env := []string{"TOLLGATE_URL=http://" + rl.ln.Addr().String(), "TOLLGATE_TOKEN=" + bot1}
	guard := []string{"guard", "refund:relay-1", "--kind", "refund", "--target", "t", "--body", "10 EUR", "--json", "--retry-for", "20s"}
	r := agent(t, home, env, nil, guard...)
	if rl.dropped.Load() != 1 {
		t.Fatalf("the relay lost %d answers, want 1 (exit %d %s %s)", rl.dropped.Load(), r.code, r.stdout, r.stderr)
	}
	if r.code != 0 {
		t.Fatalf("the retry after the lost answer: exit %d\n%s\n%s\n%s", r.code, r.stdout, r.stderr, srv.log())
	}
	m := r.json(t)
	permit, _ := m["permit_id"].(string)
	s, err := ledger.Open(context.Background(), db, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := s.Status(context.Background(), "refund:relay-1")
	if err != nil || permit == "" || d.PermitID != permit || m["verdict"] != "permitted" {
		t.Fatalf("the retry was given %q (%v), the ledger stored %q (%v)", permit, m["verdict"], d.PermitID, err)
	}
	// Another caller on the same token: a new attempt, not the lost one.
	r = agent(t, home, env, nil, guard...)
	if r.code != 75 || r.json(t)["permit_id"] != nil || r.json(t)["state"] != "executing" {
		t.Fatalf("another caller with the same token: exit %d %s", r.code, r.stdout)
	}
}
