package service_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeWithLedgerTokens: the real `tollgate serve` over TCP
// authenticates the tokens an operator made with `agents token create`
// (the ledger's own store, not a test's): the token's name is the agent
// recorded, another name is refused, a revoked token is refused on its
// next call, and an agent-scoped token reads no key but its holder's.
func TestServeWithLedgerTokens(t *testing.T) {
	home := t.TempDir()
	db := backendDB(t, home)
	seedPolicy(t, db)
	token := func(name string, extra ...string) (id, secret string) { return makeToken(t, home, db, name, extra...) }
	id1, bot1 := token("bot-1")
	_, bot2 := token("bot-2")
	_, ops := token("ops", "--scope", "operator")

	// Port 0: the server takes a free port and says which, so no other
	// run can hold the one this test would have chosen.
	srv := startServer(t, db, home, "--listen", "127.0.0.1:0")
	url := "http://" + srv.addrs[0]
	guard := func(secret, key string, extra ...string) result {
		return agent(t, home, []string{"TOLLGATE_URL=" + url, "TOLLGATE_TOKEN=" + secret}, nil,
			append([]string{"guard", key, "--kind", "refund", "--target", "t", "--body", key, "--json", "--retry-for", "0s"}, extra...)...)
	}
	if r := guard(bot1, "refund:lt1"); r.code != 0 || r.json(t)["permit_id"] == "" {
		t.Fatalf("bot-1's guard: %d %s %s", r.code, r.stdout, r.stderr)
	}
	status := func(secret, key string) result {
		return agent(t, home, []string{"TOLLGATE_URL=" + url, "TOLLGATE_TOKEN=" + secret}, nil, "status", key, "--json", "--retry-for", "0s")
	}
	if r := status(ops, "refund:lt1"); r.code != 0 || r.json(t)["agent"] != "bot-1" {
		t.Fatalf("the operator's read of bot-1's key: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct {
		name string
		r    result
		code int
	}{
		{"another name", guard(bot1, "refund:lt2", "--agent", "bot-2"), 77},
		{"another agent's key", status(bot2, "refund:lt1"), 77},
		{"a token that is no token", guard("tg1_"+strings.Repeat("0", 16)+"_x", "refund:lt3"), 77},
	} {
		if c.r.code != c.code {
			t.Fatalf("%s: exit %d, want %d\n%s\n%s", c.name, c.r.code, c.code, c.r.stdout, c.r.stderr)
		}
	}
	// 401, not 403, for a token the ledger does not know: the problem's
	// status says which.
	req, _ := http.NewRequest("GET", url+"/v1/epoch", nil)
	req.Header.Set("Authorization", "Bearer tg1_nothing")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unknown token: %d, want 401", resp.StatusCode)
	}
	// The answer says what is wrong once, in words a person reads.
	if msg := string(body); !strings.Contains(msg, "unauthenticated: unknown token") || strings.Contains(msg, "not authenticated") {
		t.Fatalf("unknown token's answer: %s", msg)
	}

	if r := agent(t, home, nil, nil, "--db", db, "agents", "token", "revoke", id1, "--operator", "alice", "--json"); r.code != 0 {
		t.Fatalf("revoke: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := status(bot1, "refund:lt1"); r.code != 77 || !strings.Contains(r.stderr, "revoked") {
		t.Fatalf("a revoked token's next call: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// makeToken makes an agent token with `agents token create NAME`, as an
// operator does, and returns its id and its secret.
func makeToken(t *testing.T, home, db, name string, extra ...string) (id, secret string) {
	t.Helper()
	r := agent(t, home, nil, nil, append([]string{"--db", db, "agents", "token", "create", name, "--operator", "alice", "--json"}, extra...)...)
	m := r.json(t)
	tok, _ := m["token"].(map[string]any)
	secret, _ = m["secret"].(string)
	id, _ = tok["id"].(string)
	if r.code != 0 || secret == "" || id == "" {
		t.Fatalf("token create %s: %d %s %s", name, r.code, r.stdout, r.stderr)
	}
	return id, secret
}
