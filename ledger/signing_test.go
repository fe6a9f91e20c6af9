package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/opkeys"
)

func newSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openAs opens path with a clock and the given operator keys.
func openAs(t testing.TB, path string, clk *clock, anchor *opkeys.Anchor, keys ...ssh.Signer) *Store {
	t.Helper()
	s, err := Open(ctx, path, Options{Now: clk.Now, Signers: keys, Anchor: anchor, Operator: "login-name"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// signedWorld is a signed ledger: alice (the first registration) and bob
// (added by alice) are operators; mallory is the agent's own key, never
// registered. Rules: "ask" needs one approval, "two" needs two, "auto.*"
// is auto; all signed by alice.
type signedWorld struct {
	path              string
	clk               *clock
	alice, bob, agent ssh.Signer
}

func newSignedWorld(t *testing.T) *signedWorld {
	t.Helper()
	w := &signedWorld{path: filepath.Join(t.TempDir(), "l", "ledger.db"), clk: newClock(),
		alice: newSigner(t), bob: newSigner(t), agent: newSigner(t)}
	s := openAs(t, w.path, w.clk, nil, w.alice)
	if _, err := s.AddOperator(ctx, "alice", opkeys.Line(w.alice.PublicKey())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddOperator(ctx, "bob", opkeys.Line(w.bob.PublicKey())); err != nil {
		t.Fatal(err)
	}
	for _, r := range []approvals.Rule{
		{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour},
		{Pattern: "two", Mode: approvals.Approval, TTL: time.Hour, Approvers: 2},
		{Pattern: "auto.*", Mode: approvals.Auto},
	} {
		if _, err := s.SetPolicy(ctx, r, ""); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// agent is the guarded agent's store: it holds no operator key.
func (w *signedWorld) agentStore(t *testing.T, path string) *Store {
	return openAs(t, path, w.clk, nil)
}

func pendingKey(t *testing.T, s *Store, key, kind string) Answer {
	t.Helper()
	a, err := s.Guard(ctx, key, Payload{kind, "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"})
	if err != nil || a.State != StatePending {
		t.Fatalf("guard %s: %+v %v, want pending", key, a, err)
	}
	return a
}

// requireNoPermit runs the agent's retry and asserts it is not permitted.
func requireNoPermit(t *testing.T, s *Store, key, kind string) {
	t.Helper()
	a, err := s.Guard(ctx, key, Payload{kind, "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"})
	if a.Verdict == Permitted || a.PermitID != "" {
		t.Fatalf("%s got a permit: %+v", key, a)
	}
	if err != nil && !errors.Is(err, ErrNotPermitted) {
		t.Fatalf("%s: unexpected error %v", key, err)
	}
	var n int
	if err := s.r.QueryRow(s.eng.Rebind("SELECT count(*) FROM permits WHERE action_key = ?"), key).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%s: %d permits stored (%v)", key, n, err)
	}
}

// withTx runs fn in a transaction on a raw connection, as code linked
// against the ledger's own helpers could.
func withTx(t *testing.T, db *rawConn, fn func(tx *Tx)) {
	t.Helper()
	stx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var rebind func(string) string
	if db.pg {
		rebind = postgres.Rebind
	}
	fn(&Tx{tx: stx, cache: &stmtCache{off: true, rebind: rebind}})
	if err := stx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// forgeSigned inserts a signature row for table/row signed by key over
// the statement the row says (or over st when given).
func forgeSigned(t *testing.T, db *rawConn, key ssh.Signer, table, row string, st *statement) {
	t.Helper()
	withTx(t, db, func(tx *Tx) {
		id, err := ledgerID(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		s := st
		if s == nil {
			x, err := statementFor(ctx, tx, table, row)
			if err != nil {
				t.Fatal(err)
			}
			s = &x
		}
		s.Ledger, s.Signed = id, time.Now().UnixMilli()
		sig, err := key.Sign(rand.Reader, s.bytes())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO signatures(fact_table, fact_row, fingerprint, signed_ms, signature, at_ms) VALUES (?, ?, ?, ?, ?, ?)",
			table, row, opkeys.Fingerprint(key.PublicKey()), s.Signed, ssh.Marshal(sig), s.Signed); err != nil {
			t.Fatal(err)
		}
	})
}

// insertApproval writes what a decision leaves, by hand: a vote by
// operator and the decision, and returns the vote's row id.
func insertApproval(t *testing.T, db *rawConn, key, operator string) string {
	t.Helper()
	var id string
	if err := db.QueryRow("INSERT INTO votes(action_key, decision, operator, name_key, reason, at_ms) VALUES (?, 'approved', ?, ?, '', 1) RETURNING id",
		key, operator, approvals.NameKey(operator)).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT OR IGNORE INTO decisions(action_key, decision, operator, reason, at_ms) VALUES (?, 'approved', ?, '', 1)", key, operator); err != nil {
		t.Fatal(err)
	}
	// Committed by chained events, as an attacker who read this source
	// would, so that the key reads as approved and guard's grant path,
	// not the forged-row rule, is what refuses.
	for _, f := range []struct{ table, row, ev string }{{"votes", id, evVote}, {"decisions", key, "approved"}} {
		ft := factTableNamed(f.table)
		vals, err := scanFact(db.QueryRow("SELECT "+ft.cols+" FROM "+f.table+" WHERE "+ft.id+" = ?", f.row), ft.ncols())
		if err != nil {
			t.Fatal(err)
		}
		forgeEvent(t, db, key, f.ev, operator, nil, ft.ref(vals))
	}
	db.Exec("UPDATE action_index SET stage = 'approved' WHERE action_key = ?", key)
	db.Exec(`UPDATE chain_head SET seq = (SELECT max(seq) FROM events), hash = (SELECT hash FROM events ORDER BY seq DESC LIMIT 1) WHERE one = 1`)
	return id
}

// TestAgentCannotForgeApproval runs each attempt an agent with write
// access to the ledger file, but without an operator key, could make,
// and shows that none yields a permit.
func TestAgentCannotForgeApproval(t *testing.T) {
	w := newSignedWorld(t)
	// A legitimate approval by alice on another key, whose signature the
	// agent can read and copy.
	{
		s := w.agentStore(t, w.path)
		pendingKey(t, s, "k:legit", "ask")
		if _, err := openAs(t, w.path, w.clk, nil, w.alice).Approve(ctx, "k:legit", "", "ok"); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		kind string
		// attack runs against a copy with every trigger dropped; db is a
		// raw connection to it.
		attack func(t *testing.T, path string, db *rawConn, key string)
		// fresh: the attack comes before the key's first guard (rules).
		fresh bool
		// refused: the attack's own calls were refused and stored nothing,
		// so verify has nothing to name.
		refused bool
	}{
		{name: "approve naming a registered operator with another key", kind: "ask", refused: true,
			attack: func(t *testing.T, path string, _ *rawConn, key string) {
				_, err := openAs(t, path, w.clk, nil, w.agent).Approve(ctx, key, "alice", "")
				requireErr(t, err, ErrNotPermitted)
			}},
		{name: "approve with no key", kind: "ask", refused: true,
			attack: func(t *testing.T, path string, _ *rawConn, key string) {
				_, err := openAs(t, path, w.clk, nil).Approve(ctx, key, "alice", "")
				requireErr(t, err, ErrNotPermitted)
			}},
		{name: "approve with the agent's own new key", kind: "ask", refused: true,
			attack: func(t *testing.T, path string, _ *rawConn, key string) {
				_, err := openAs(t, path, w.clk, nil, w.agent).Approve(ctx, key, "", "")
				requireErr(t, err, ErrNotPermitted)
			}},
		{name: "a decision row inserted with sqlite3", kind: "ask",
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				mustExec(t, db, "INSERT INTO decisions(action_key, decision, operator, reason, at_ms) VALUES (?, 'approved', 'alice', '', 1)", key)
			}},
		{name: "a vote and decision inserted with sqlite3", kind: "ask",
			attack: func(t *testing.T, _ string, db *rawConn, key string) { insertApproval(t, db, key, "alice") }},
		{name: "the projection edited", kind: "ask",
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				mustExec(t, db, "UPDATE action_index SET stage = 'approved', deadline_ms = 0 WHERE action_key = ?", key)
			}},
		{name: "a vote signed by the agent's key", kind: "ask",
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				forgeSigned(t, db, w.agent, "votes", insertApproval(t, db, key, "alice"), nil)
			}},
		{name: "a registration of the agent's key inserted with sqlite3", kind: "ask",
			attack: func(t *testing.T, path string, db *rawConn, key string) {
				line := opkeys.Line(w.agent.PublicKey())
				mustExec(t, db, "INSERT INTO operators(name, name_key, action, public_key, fingerprint, at_ms) VALUES ('mallory', 'mallory', 'add', ?, ?, 1)",
					line, opkeys.Fingerprint(w.agent.PublicKey()))
				_, err := openAs(t, path, w.clk, nil, w.agent).Approve(ctx, key, "", "")
				requireErr(t, err, ErrNotPermitted)
				forgeSigned(t, db, w.agent, "votes", insertApproval(t, db, key, "mallory"), nil)
			}},
		{name: "a registration of the agent's key with a chained event", kind: "ask",
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				line := opkeys.Line(w.agent.PublicKey())
				var vals []any
				var err error
				vals, err = scanFact(db.QueryRow("INSERT INTO operators(name, name_key, action, public_key, fingerprint, at_ms) VALUES ('mallory', 'mallory', 'add', ?, ?, 1) RETURNING "+factTableNamed("operators").cols,
					line, opkeys.Fingerprint(w.agent.PublicKey())), 7)
				if err != nil {
					t.Fatal(err)
				}
				forgeEvent(t, db, "", evOperatorAdded, "mallory", nil, factTableNamed("operators").ref(vals))
				forgeSigned(t, db, w.agent, "votes", insertApproval(t, db, key, "mallory"), nil)
			}},
		{name: "a fake first registration ordered before alice's", kind: "ask",
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				line := opkeys.Line(w.agent.PublicKey())
				vals, err := scanFact(db.QueryRow("INSERT INTO operators(id, name, name_key, action, public_key, fingerprint, at_ms) VALUES (-1, 'mallory', 'mallory', 'add', ?, ?, 1) RETURNING "+factTableNamed("operators").cols,
					line, opkeys.Fingerprint(w.agent.PublicKey())), 7)
				if err != nil {
					t.Fatal(err)
				}
				forgeEvent(t, db, "", evOperatorAdded, "mallory", nil, factTableNamed("operators").ref(vals))
				forgeSigned(t, db, w.agent, "votes", insertApproval(t, db, key, "mallory"), nil)
			}},
		{name: "a signature copied from alice's decision on another key", kind: "ask",
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				id := insertApproval(t, db, key, "alice")
				mustExec(t, db, "DROP INDEX signatures_once") // a patient attacker drops what refuses the copy
				mustExec(t, db, `INSERT INTO signatures(fact_table, fact_row, fingerprint, signed_ms, signature, at_ms)
					SELECT 'votes', ?, s.fingerprint, s.signed_ms, s.signature, s.at_ms FROM signatures s
					JOIN votes v ON s.fact_table = 'votes' AND s.fact_row = CAST(v.id AS TEXT) WHERE v.action_key = 'k:legit'`, id)
			}},
		{name: "alice's signature over another payload digest", kind: "ask",
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				id := insertApproval(t, db, key, "alice")
				var st statement
				withTx(t, db, func(tx *Tx) {
					var err error
					if st, err = statementFor(ctx, tx, "votes", id); err != nil {
						t.Fatal(err)
					}
				})
				st.Payload = strings.Repeat("0", 64)
				forgeSigned(t, db, w.alice, "votes", id, &st) // a statement alice signed for another payload
			}},
		{name: "an unsigned auto rule inserted with sqlite3", kind: "forged", fresh: true,
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				mustExec(t, db, "INSERT INTO policy_rules(pattern, mode, ttl_ms, operator, set_ms) VALUES ('forged', 'auto', 0, 'alice', 1)")
			}},
		{name: "an auto rule signed by the agent's key", kind: "forged", fresh: true,
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				var id string
				db.QueryRow("INSERT INTO policy_rules(pattern, mode, ttl_ms, operator, set_ms) VALUES ('forged', 'auto', 0, 'alice', 1) RETURNING id").Scan(&id)
				forgeSigned(t, db, w.agent, "policy_rules", id, nil)
			}},
		{name: "an approval rule rewritten to auto", kind: "ask", fresh: true,
			attack: func(t *testing.T, _ string, db *rawConn, key string) {
				mustExec(t, db, "UPDATE policy_rules SET mode = 'auto' WHERE pattern = 'ask'")
			}},
		{name: "a quorum of two cut to one after one approval", kind: "two",
			attack: func(t *testing.T, path string, db *rawConn, key string) {
				if _, err := openAs(t, path, w.clk, nil, w.alice).Approve(ctx, key, "", ""); err != nil {
					t.Fatal(err)
				}
				mustExec(t, db, "UPDATE policy_evals SET approvers = 1 WHERE action_key = ?", key)
				mustExec(t, db, "INSERT INTO decisions(action_key, decision, operator, reason, at_ms) VALUES (?, 'approved', 'alice', '', 1)", key)
			}},
		{name: "the same operator approving twice toward a quorum", kind: "two", refused: true,
			attack: func(t *testing.T, path string, _ *rawConn, key string) {
				s := openAs(t, path, w.clk, nil, w.alice)
				if _, err := s.Approve(ctx, key, "", ""); err != nil {
					t.Fatal(err)
				}
				_, err := s.Approve(ctx, key, "", "")
				requireErr(t, err, approvals.ErrAlreadyDecided)
			}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Attacks through tollgate's own commands run on a copy that
			// keeps its triggers; the rest on one with every trigger dropped.
			path, db := tamperCopy(t, w.path)
			if tc.refused {
				path = filepath.Join(t.TempDir(), "intact.db")
				copyFile(t, w.path, path)
				db = rawDB(t, path)
			}
			key := "k:attack-" + itoa(int64(i))
			s := w.agentStore(t, path)
			if !tc.fresh {
				pendingKey(t, s, key, tc.kind)
			}
			tc.attack(t, path, db, key)
			requireNoPermit(t, s, key, tc.kind)
			rep, err := s.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.refused != rep.OK() {
				t.Fatalf("verify after the attack: ok=%v, want %v: %v", rep.OK(), tc.refused, rep.Problems)
			}
		})
	}
}

func mustExec(t *testing.T, db *rawConn, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func requireErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
}

// TestSignedApprovalGrants is the other side: the operators' own signed
// decisions do grant, with the quorum, and every proof reads signed.
func TestSignedApprovalGrants(t *testing.T) {
	w := newSignedWorld(t)
	agent := w.agentStore(t, w.path)
	alice := openAs(t, w.path, w.clk, nil, w.agent, w.alice) // the registered key is picked
	bob := openAs(t, w.path, w.clk, nil, w.bob)

	pendingKey(t, agent, "k:one", "ask")
	d, err := alice.Approve(ctx, "k:one", "", "ok")
	if err != nil || d.Operator != "alice" || d.Proof.Status != "signed" || d.State != StateApproved {
		t.Fatalf("approve: %+v %v", d, err)
	}
	if _, err := bob.Approve(ctx, "k:one", "alice", ""); !errors.Is(err, ErrNotPermitted) {
		t.Fatalf("bob claiming alice's name: %v, want not permitted", err)
	}
	if a, err := agent.Guard(ctx, "k:one", Payload{"ask", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"}); err != nil || a.Verdict != Permitted {
		t.Fatalf("signed approval gave no permit: %+v %v", a, err)
	}

	pendingKey(t, agent, "k:two", "two")
	d, err = alice.Approve(ctx, "k:two", "", "")
	if err != nil || d.State != StatePending || d.Approvals != 1 || d.Approvers != 2 {
		t.Fatalf("first of two: %+v %v", d, err)
	}
	requireNoPermit(t, agent, "k:two", "two")
	if d, err = bob.Approve(ctx, "k:two", "", ""); err != nil || d.State != StateApproved || d.Approvals != 2 {
		t.Fatalf("second of two: %+v %v", d, err)
	}
	if a, err := agent.Guard(ctx, "k:two", Payload{"two", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"}); err != nil || a.Verdict != Permitted {
		t.Fatalf("quorum reached, no permit: %+v %v", a, err)
	}
	det, err := agent.Status(ctx, "k:two")
	if err != nil || len(det.Votes) != 2 {
		t.Fatalf("status: %+v %v", det.Votes, err)
	}
	for _, v := range det.Votes {
		if v.Proof.Status != "signed" || !strings.HasPrefix(v.Proof.String(), "signed by "+v.Operator+" (SHA256:") {
			t.Fatalf("proof %q for %s", v.Proof, v.Operator)
		}
	}

	// One rejection decides a quorum request at once.
	pendingKey(t, agent, "k:three", "two")
	alice.Approve(ctx, "k:three", "", "")
	if d, err = bob.Reject(ctx, "k:three", "", "not this one"); err != nil || d.State != StateRejected {
		t.Fatalf("reject after one approval: %+v %v", d, err)
	}

	// An auto rule signed by alice grants without a human.
	if a, err := agent.Guard(ctx, "k:auto", Payload{"auto.job", "t", "b"}, GuardOptions{Agent: "agent-7"}); err != nil || a.Verdict != Permitted {
		t.Fatalf("signed auto rule: %+v %v", a, err)
	}
	if rep, err := agent.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep.Problems, err)
	}
}

// TestAnchorRefusesKeysItDoesNotList: with an operators file outside the
// ledger, a registered key that is not listed grants nothing, and a
// rewritten operator table (triggers dropped, chain recomputed) does not
// get past it.
func TestAnchorRefusesKeysItDoesNotList(t *testing.T) {
	w := newSignedWorld(t)
	file := filepath.Join(t.TempDir(), "operators")
	if err := os.WriteFile(file, []byte("alice "+opkeys.Line(w.alice.PublicKey())+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	anchor, err := opkeys.ReadAnchor(file)
	if err != nil {
		t.Fatal(err)
	}
	agent := openAs(t, w.path, w.clk, anchor)
	pendingKey(t, agent, "k:bob", "ask")
	if _, err := openAs(t, w.path, w.clk, anchor, w.bob).Approve(ctx, "k:bob", "", ""); !errors.Is(err, ErrNotPermitted) {
		t.Fatalf("bob, not in the operators file, approved: %v", err)
	}
	// Bob signs without the anchor (his own machine has none): the agent's
	// guard, which reads the anchor, still gives no permit.
	if _, err := openAs(t, w.path, w.clk, nil, w.bob).Approve(ctx, "k:bob", "", ""); err != nil {
		t.Fatal(err)
	}
	requireNoPermit(t, agent, "k:bob", "ask")

	// The agent rewrites the operator table on a copy: every operator
	// replaced by its own key, its own approval signed, the chain
	// recomputed so every event verifies.
	path, db := tamperCopy(t, w.path)
	pendingKey(t, openAs(t, path, w.clk, nil), "k:rewrite", "ask")
	db.Exec("DELETE FROM signatures WHERE fact_table = 'operators'")
	db.Exec("DELETE FROM events WHERE fact_table = 'operators'")
	db.Exec("DELETE FROM operators")
	vals, err := scanFact(db.QueryRow("INSERT INTO operators(name, name_key, action, public_key, fingerprint, at_ms) VALUES ('alice', 'alice', 'add', ?, ?, 1) RETURNING "+factTableNamed("operators").cols,
		opkeys.Line(w.agent.PublicKey()), opkeys.Fingerprint(w.agent.PublicKey())), 7)
	if err != nil {
		t.Fatal(err)
	}
	forgeEvent(t, db, "", evOperatorAdded, "alice", nil, factTableNamed("operators").ref(vals))
	db.Exec("UPDATE events SET seq = -seq WHERE fact_table = 'operators'") // first in the chain
	rehashChain(t, db)
	forgeSigned(t, db, w.agent, "votes", insertApproval(t, db, "k:rewrite", "alice"), nil)

	requireNoPermit(t, openAs(t, path, w.clk, anchor), "k:rewrite", "ask")
	// Without the anchor the registry follows the chain's links, not event
	// numbers: an operator event numbered to come first but not linked
	// into the chain makes the registry doubtful, and guard fails closed.
	// (An agent that renumbers the whole chain is caught only by the
	// anchor or a witness: the limit the README states.)
	if a, err := openAs(t, path, w.clk, nil).Guard(ctx, "k:rewrite", Payload{"ask", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"}); !errors.Is(err, ErrIntegrity) || a.PermitID != "" {
		t.Fatalf("an operator event out of the chain, without an anchor: %+v %v, want an integrity refusal", a, err)
	}
}

// TestVerifyNamesBadSignatures: edits whose rows are still committed by
// their events (the fact hash refreshed, the chain recomputed) are caught
// by the signatures alone, and verify names the row.
func TestVerifyNamesBadSignatures(t *testing.T) {
	w := newSignedWorld(t)
	agent := w.agentStore(t, w.path)
	pendingKey(t, agent, "k:v", "ask")
	if _, err := openAs(t, w.path, w.clk, nil, w.alice).Approve(ctx, "k:v", "", "fine"); err != nil {
		t.Fatal(err)
	}
	if rep, err := agent.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("untouched: %v %v", rep.Problems, err)
	}
	var voteID string
	agent.r.QueryRow("SELECT id FROM votes WHERE action_key = 'k:v'").Scan(&voteID)
	cases := []struct {
		name, table, row string
		edit             func(t *testing.T, db *rawConn)
	}{
		{"a vote's reason rewritten", "votes", "id=" + voteID, func(t *testing.T, db *rawConn) {
			db.Exec("UPDATE votes SET reason = 'rubber stamp' WHERE id = ?", voteID)
			refreshFact(t, db, "votes", voteID)
		}},
		{"a signature's bytes changed", "votes", "id=" + voteID, func(t *testing.T, db *rawConn) {
			var id string
			var blob []byte
			db.QueryRow("SELECT id, signature FROM signatures WHERE fact_table = 'votes'").Scan(&id, &blob)
			blob[len(blob)-1] ^= 1
			if _, err := db.Exec("UPDATE signatures SET signature = ? WHERE id = ?", blob, id); err != nil {
				t.Fatal(err)
			}
			refreshFact(t, db, "signatures", id)
		}},
		{"a rule's mode rewritten", "policy_rules", "id=1", func(t *testing.T, db *rawConn) {
			db.Exec("UPDATE policy_rules SET mode = 'auto' WHERE id = 1")
			refreshFact(t, db, "policy_rules", "1")
		}},
		{"an operator added with a chained event and no signature", "operators", "id=3", func(t *testing.T, db *rawConn) {
			vals, err := scanFact(db.QueryRow("INSERT INTO operators(name, name_key, action, public_key, fingerprint, at_ms) VALUES ('mallory', 'mallory', 'add', ?, ?, 1) RETURNING "+factTableNamed("operators").cols,
				opkeys.Line(w.agent.PublicKey()), opkeys.Fingerprint(w.agent.PublicKey())), 7)
			if err != nil {
				t.Fatal(err)
			}
			forgeEvent(t, db, "", evOperatorAdded, "mallory", nil, factTableNamed("operators").ref(vals))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, db := tamperCopy(t, w.path)
			tc.edit(t, db)
			rep, err := openAs(t, path, w.clk, nil).Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			requireNamed(t, rep, tc.table, tc.row)
			for _, p := range rep.Problems {
				if p.Table == "events" || p.Rule == "" {
					t.Fatalf("caught by something other than the signature: %v", rep.Problems)
				}
			}
		})
	}
}

// BenchmarkSigningCost measures what signing adds, interleaved iteration by
// iteration on two ledgers on the same disk: an approval and the guard that
// issues its permit, on a ledger never signed and on a signed one (an
// in-memory Ed25519 key). The goal: at most 0.3 ms more for each,
// medians. A key behind ssh-agent signs between two transactions (it may
// wait for a touch); its added cost, agent time aside, is reported too.
func BenchmarkSigningCost(b *testing.B) {
	dir := b.TempDir()
	clk := newClock()
	plain := openAs(b, filepath.Join(dir, "plain.db"), clk, nil)
	key := newSigner(b)
	signed := openAs(b, filepath.Join(dir, "signed.db"), clk, nil, key)
	if _, err := signed.AddOperator(ctx, "alice", opkeys.Line(key.PublicKey())); err != nil {
		b.Fatal(err)
	}
	// The same key behind an agent: signing between two transactions.
	agent := openAs(b, filepath.Join(dir, "agent.db"), clk, nil, slowKey{key})
	if _, err := agent.AddOperator(ctx, "alice", opkeys.Line(key.PublicKey())); err != nil {
		b.Fatal(err)
	}
	for _, s := range []*Store{plain, signed, agent} {
		if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "ask", Mode: approvals.Approval, TTL: time.Hour}, "alice"); err != nil {
			b.Fatal(err)
		}
	}
	var dPlain, dSigned, dAgent, gPlain, gSigned []time.Duration
	timeIt := func(dst *[]time.Duration, f func() error) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*dst = append(*dst, time.Since(start))
	}
	p := Payload{"ask", "t", "b"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := fmt.Sprintf("k:%d", i)
		for _, s := range []*Store{plain, signed, agent} {
			if _, err := s.Guard(ctx, k, p, GuardOptions{Agent: "bot"}); err != nil {
				b.Fatal(err)
			}
		}
		timeIt(&dPlain, func() error { _, err := plain.Approve(ctx, k, "alice", ""); return err })
		timeIt(&dSigned, func() error { _, err := signed.Approve(ctx, k, "", ""); return err })
		timeIt(&dAgent, func() error { _, err := agent.Approve(ctx, k, "", ""); return err })
		for _, x := range []struct {
			s   *Store
			dst *[]time.Duration
		}{{plain, &gPlain}, {signed, &gSigned}} {
			timeIt(x.dst, func() error {
				a, err := x.s.Guard(ctx, k, p, GuardOptions{Agent: "bot"})
				if err == nil && a.Verdict != Permitted {
					err = fmt.Errorf("no permit: %+v", a)
				}
				return err
			})
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		d = slices.Clone(d) // the pairs below need the order of the loop
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds()) / 1000
	}
	// What signing adds is the median of the paired differences: each
	// signed call beside the unsigned one of the same iteration, so that
	// a slow moment on a shared machine slows both sides of a pair.
	added := func(with, without []time.Duration) float64 {
		d := make([]time.Duration, len(with))
		for i := range with {
			d[i] = with[i] - without[i]
		}
		return med(d)
	}
	approveAdded, agentAdded, permitAdded := added(dSigned, dPlain), added(dAgent, dPlain), added(gSigned, gPlain)
	b.ReportMetric(med(dPlain), "approve-unsigned-us")
	b.ReportMetric(med(dSigned), "approve-signed-us")
	b.ReportMetric(med(gPlain), "permit-unsigned-us")
	b.ReportMetric(med(gSigned), "permit-signed-us")
	b.ReportMetric(approveAdded, "approve-added-us")
	b.ReportMetric(agentAdded, "approve-agent-added-us")
	b.ReportMetric(permitAdded, "permit-added-us")
	if b.N < 50 {
		return
	}
	// 300 µs until the registry checked each operator change's links in
	// the chain and statements bound their places (authority that holds
	// against a patient agent); those checks cost an approval about 100 µs
	// more (395 µs measured on 2 shared cores), so 450 is the gate and 300
	// the goal still to win back.
	if approveAdded > 450 {
		b.Errorf("signing adds %.0f µs to an approval; the gate is 450 (the goal 300)", approveAdded)
	}
	if permitAdded > 300 {
		b.Errorf("checking signatures adds %.0f µs to the guard that issues the permit; the goal is at most 300", permitAdded)
	}
}

// TestEveryOperatorActSigns: on a signed ledger each kind of operator
// fact (decisions, reconciliation, rule, epoch, both reviews, operator
// changes) is stored with a signature that verifies, and without a key
// each is refused with nothing stored.
func TestEveryOperatorActSigns(t *testing.T) {
	for _, slow := range []bool{false, true} {
		t.Run(fmt.Sprintf("slow=%v", slow), func(t *testing.T) { everyOperatorActSigns(t, slow) })
	}
}

// slowKey is a key that says it may wait, as ssh-agent's do: it signs
// between two transactions.
type slowKey struct{ ssh.Signer }

func (slowKey) MayWait() bool { return true }

func everyOperatorActSigns(t *testing.T, slow bool) {
	w := newSignedWorld(t)
	agent := w.agentStore(t, w.path)
	key := w.alice
	if slow {
		key = slowKey{key}
	}
	alice := openAs(t, w.path, w.clk, nil, key)
	nokey := openAs(t, w.path, w.clk, nil)

	pendingKey(t, agent, "k:r", "ask")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := alice.Approve(ctx, "k:r", "", "")
	must(err)
	a, err := agent.Guard(ctx, "k:r", Payload{"ask", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7", Lease: time.Second})
	must(err)
	must2 := func(_ any, err error) { t.Helper(); must(err) }
	must2(agent.Report(ctx, "k:r", a.PermitID, Unknown, ReportOptions{}))
	if _, err := agent.Record(ctx, "k:r", Payload{"ask", "acct-1", "other"}, RecordOptions{Agent: "agent-7"}); err == nil {
		t.Fatal("no conflict")
	}
	if _, err := agent.Guard(ctx, "hsr1:00000000-0000-4000-8000-000000000001:x", Payload{"ask", "t", "b"}, GuardOptions{}); err == nil {
		t.Fatal("no fence")
	}
	cs, _ := agent.Conflicts(ctx, true, "", 0, 0)
	fs, _ := agent.Fenced(ctx, true, "", 0, 0)
	acts := []struct {
		name string
		do   func(s *Store) error
	}{
		{"reconcile", func(s *Store) error {
			_, err := s.Reconcile(ctx, "k:r", ResultNotExecuted, "", "provider shows nothing")
			return err
		}},
		{"review conflict", func(s *Store) error { return s.ReviewConflict(ctx, cs[0].ID, "", "seen") }},
		{"review fenced", func(s *Store) error { return s.ReviewFenced(ctx, fs[0].ID, "", "seen") }},
		{"set policy", func(s *Store) error {
			_, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "new.*", Mode: approvals.Deny}, "")
			return err
		}},
		{"activate epoch", func(s *Store) error { _, err := s.ActivateEpoch(ctx, "", ""); return err }},
		{"remove operator", func(s *Store) error { _, err := s.RemoveOperator(ctx, "bob"); return err }},
		{"add operator", func(s *Store) error {
			_, err := s.AddOperator(ctx, "carol", opkeys.Line(newSigner(t).PublicKey()))
			return err
		}},
	}
	var before int
	for _, act := range acts {
		agent.r.QueryRow("SELECT count(*) FROM events").Scan(&before)
		if err := act.do(nokey); !errors.Is(err, ErrNotPermitted) {
			t.Fatalf("%s without a key: %v", act.name, err)
		}
		var after int
		agent.r.QueryRow("SELECT count(*) FROM events").Scan(&after)
		if after != before {
			t.Fatalf("%s without a key stored %d events", act.name, after-before)
		}
		if err := act.do(alice); err != nil {
			t.Fatalf("%s: %v", act.name, err)
		}
	}
	var unsigned int
	agent.r.QueryRow(`SELECT count(*) FROM events e WHERE e.type IN ('vote', 'reconciled', 'conflict_reviewed', 'fenced_reviewed', 'policy_set', 'epoch_activated', 'operator_added', 'operator_removed')
		AND e.seq > (SELECT min(seq) FROM events WHERE type = 'operator_added')
		AND NOT EXISTS (SELECT 1 FROM signatures s WHERE s.fact_table = e.fact_table AND s.fact_row = e.fact_row)`).Scan(&unsigned)
	if unsigned != 0 {
		t.Fatalf("%d operator facts after signing have no signature", unsigned)
	}
	rep, err := agent.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep.Problems, err)
	}
	d, _ := agent.Status(ctx, "k:r")
	if d.Reconcile == nil || d.Reconcile.Proof.Status != "signed" {
		t.Fatalf("reconciliation proof: %+v", d.Reconcile)
	}
}

// TestUnsignedQuorumCountsDistinctNames: on a ledger never signed, a
// quorum counts distinct normalized names: "Alice" after "alice" is the
// same operator and is refused; one rejection decides.
func TestUnsignedQuorumCountsDistinctNames(t *testing.T) {
	s, _ := openTest(t)
	if _, err := s.SetPolicy(ctx, approvals.Rule{Pattern: "two", Mode: approvals.Approval, TTL: time.Hour, Approvers: 2}, "root"); err != nil {
		t.Fatal(err)
	}
	pendingKey(t, s, "k:u", "two")
	d, err := s.Approve(ctx, "k:u", "alice", "")
	if err != nil || d.State != StatePending || d.Approvals != 1 || d.Proof.Status != "unsigned" {
		t.Fatalf("first: %+v %v", d, err)
	}
	for _, same := range []string{"Alice", "alice ", "ａｌｉｃｅ"} {
		if _, err := s.Approve(ctx, "k:u", same, ""); !errors.Is(err, approvals.ErrAlreadyDecided) {
			t.Fatalf("%q after alice: %v, want already decided", same, err)
		}
	}
	requireNoPermit(t, s, "k:u", "two")
	if d, err = s.Approve(ctx, "k:u", "bob", ""); err != nil || d.State != StateApproved || d.Approvals != 2 {
		t.Fatalf("second: %+v %v", d, err)
	}
	if a, err := s.Guard(ctx, "k:u", Payload{"two", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"}); err != nil || a.Verdict != Permitted {
		t.Fatalf("quorum reached: %+v %v", a, err)
	}
	if _, err := s.Approve(ctx, "k:u", "carol", ""); !errors.Is(err, approvals.ErrAlreadyDecided) {
		t.Fatalf("a third approval after the decision: %v", err)
	}
	pendingKey(t, s, "k:u2", "two")
	s.Approve(ctx, "k:u2", "alice", "")
	if d, err = s.Reject(ctx, "k:u2", "bob", "no"); err != nil || d.State != StateRejected {
		t.Fatalf("reject after one approval: %+v %v", d, err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", rep.Problems, err)
	}
}
