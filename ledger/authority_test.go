package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// syncHead points the chain head row at the last event, as an attacker
// who appended or re-chained events by hand would, so that the chain
// looks whole to anything that does not hold a witness.
func syncHead(t *testing.T, db *rawConn) {
	t.Helper()
	mustExec(t, db, `UPDATE chain_head SET seq = (SELECT max(seq) FROM events),
		hash = (SELECT hash FROM events ORDER BY seq DESC LIMIT 1) WHERE one = 1`)
}

// copyRow inserts a copy of one fact row under a new id, commits it with
// a correctly chained event and copies its signature row to it: a signed
// row moved to another place, done as carefully as the attacker can.
func copyRow(t *testing.T, db *rawConn, table, id, evType string) string {
	t.Helper()
	ft := factTableNamed(table)
	cols := ft.cols[len(ft.id)+2:] // every column but the id
	var newID string
	if err := db.QueryRow("INSERT INTO "+table+"("+cols+") SELECT "+cols+" FROM "+table+" WHERE "+ft.id+" = ? RETURNING "+ft.id, id).Scan(&newID); err != nil {
		t.Fatal(err)
	}
	vals, err := scanFact(db.QueryRow("SELECT "+ft.cols+" FROM "+table+" WHERE "+ft.id+" = ?", newID), ft.ncols())
	if err != nil {
		t.Fatal(err)
	}
	forgeEvent(t, db, "", evType, "alice", nil, ft.ref(vals))
	db.Exec("DROP INDEX signatures_once") // what refuses a second use of a signature
	mustExec(t, db, `INSERT INTO signatures(fact_table, fact_row, fingerprint, signed_ms, signature, at_ms)
		SELECT fact_table, ?, fingerprint, signed_ms, signature, at_ms FROM signatures WHERE fact_table = ? AND fact_row = ?`, newID, table, id)
	syncHead(t, db)
	return newID
}

// TestAuthorityHoldsAgainstAPatientAgent plays the attacks of an agent
// with a shell and write access to the ledger file, but no operator key,
// each on its own copy of a signed ledger with triggers dropped. None may
// yield a permit, and verify names what was done.
func TestAuthorityHoldsAgainstAPatientAgent(t *testing.T) {
	sqliteOnly(t)
	w := newSignedWorld(t)
	alice := openAs(t, w.path, w.clk, nil, w.alice)
	bob := openAs(t, w.path, w.clk, nil, w.bob)
	// refund.* was auto, then alice made it need approval; deny.* was auto
	// (alice), then bob denied it.
	for _, step := range []struct {
		s *Store
		r approvals.Rule
	}{
		{alice, approvals.Rule{Pattern: "refund.*", Mode: approvals.Auto}},
		{alice, approvals.Rule{Pattern: "refund.*", Mode: approvals.Approval, TTL: time.Hour}},
		{alice, approvals.Rule{Pattern: "deny.*", Mode: approvals.Auto}},
		{bob, approvals.Rule{Pattern: "deny.*", Mode: approvals.Deny}},
	} {
		if _, err := step.s.SetPolicy(ctx, step.r, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alice.ActivateEpoch(ctx, "", ""); err != nil {
		t.Fatal(err)
	}
	ep, _ := alice.Epoch(ctx)
	under := func(k string) string { return "hsr1:" + ep.Epoch + ":" + k }
	pendingKey(t, w.agentStore(t, w.path), under("k:forged"), "ask")

	var firstRefundRule string
	if err := alice.read(ctx, func(tx *Tx) error {
		return tx.QueryRowContext(ctx, "SELECT CAST(min(id) AS TEXT) FROM policy_rules WHERE pattern = 'refund.*'").Scan(&firstRefundRule)
	}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		kind   string // the kind the agent then guards a new key of
		attack func(t *testing.T, db *rawConn)
	}{
		{"an older signed auto rule copied back as the newest for its pattern", "refund.card", func(t *testing.T, db *rawConn) {
			copyRow(t, db, "policy_rules", firstRefundRule, evPolicySet)
		}},
		{"the newest rule's signer removed from the registry, un-masking an older auto rule", "deny.delete", func(t *testing.T, db *rawConn) {
			mustExec(t, db, "DELETE FROM operators WHERE name = 'bob'")
		}},
		{"the newest rule deleted with its signature, its event kept", "refund.card", func(t *testing.T, db *rawConn) {
			mustExec(t, db, "DELETE FROM signatures WHERE fact_table = 'policy_rules' AND fact_row = (SELECT CAST(max(id) AS TEXT) FROM policy_rules WHERE pattern = 'refund.*')")
			mustExec(t, db, "DELETE FROM policy_rules WHERE id = (SELECT max(id) FROM policy_rules WHERE pattern = 'refund.*')")
		}},
		{"the newest rule's event deleted and the chain re-linked", "refund.card", func(t *testing.T, db *rawConn) {
			mustExec(t, db, "DELETE FROM events WHERE fact_table = 'policy_rules' AND fact_row = (SELECT CAST(max(id) AS TEXT) FROM policy_rules WHERE pattern = 'refund.*')")
			rehashChain(t, db)
			syncHead(t, db)
		}},
		{"an operator event numbered before the first registration", "ask", func(t *testing.T, db *rawConn) {
			line := opkeys.Line(w.agent.PublicKey())
			vals, err := scanFact(db.QueryRow("INSERT INTO operators(id, name, name_key, action, public_key, fingerprint, at_ms) VALUES (0, 'mallory', 'mallory', 'add', ?, ?, 1) RETURNING "+factTableNamed("operators").cols,
				line, opkeys.Fingerprint(w.agent.PublicKey())), 7)
			if err != nil {
				t.Fatal(err)
			}
			ref := factTableNamed("operators").ref(vals)
			mustExec(t, db, `INSERT INTO events(seq, action_key, type, actor, detail, at_ms, prev_hash, hash, fact_table, fact_row, fact_sha256, hv)
				VALUES (0, '', ?, 'mallory', 'null', 1, ?, ?, 'operators', ?, ?, 2)`, evOperatorAdded, zeroHash,
				eventHashV2(zeroHash, 0, "", evOperatorAdded, "mallory", "null", 1, ref), ref.Row, ref.SHA256)
			forgeSigned(t, db, w.agent, "votes", insertApproval(t, db, under("k:forged"), "mallory"), nil)
			mustExec(t, db, "UPDATE action_index SET stage = 'approved' WHERE action_key = ?", under("k:forged"))
		}},
		{"every operator row and event deleted so that the ledger reads as never signed", "ask", func(t *testing.T, db *rawConn) {
			mustExec(t, db, "DELETE FROM signatures WHERE fact_table = 'operators'")
			mustExec(t, db, "DELETE FROM events WHERE fact_table = 'operators'")
			mustExec(t, db, "DELETE FROM operators")
			rehashChain(t, db)
			syncHead(t, db)
			insertApproval(t, db, under("k:forged"), "mallory")
			mustExec(t, db, "UPDATE action_index SET stage = 'approved' WHERE action_key = ?", under("k:forged"))
		}},
		{"the active epoch's row deleted, un-fencing plain keys", "auto.x", func(t *testing.T, db *rawConn) {
			mustExec(t, db, "DELETE FROM signatures WHERE fact_table = 'epochs'")
			mustExec(t, db, "DELETE FROM epochs")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, db := tamperCopy(t, w.path)
			tc.attack(t, db)
			agent := w.agentStore(t, path)
			key := under("k:new")
			if tc.kind == "ask" {
				key = under("k:forged")
			}
			if tc.name == "the active epoch's row deleted, un-fencing plain keys" {
				key = "k:plain"
			}
			a, err := agent.Guard(ctx, key, Payload{tc.kind, "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"})
			if a.PermitID != "" || a.Verdict == Permitted {
				t.Fatalf("the attack got a permit: %+v", a)
			}
			if !errors.Is(err, ErrIntegrity) {
				t.Fatalf("guard: %+v %v, want an integrity refusal naming the problem", a, err)
			}
			rep, err := agent.Verify(ctx)
			if err != nil || rep.OK() {
				t.Fatalf("verify called the attacked ledger clean: %+v %v", rep.Problems, err)
			}
		})
	}
	// The untouched ledger still grants what its rules say.
	if a, err := w.agentStore(t, w.path).Guard(ctx, under("k:auto"), Payload{"auto.x", "t", "b"}, GuardOptions{Agent: "agent-7"}); err != nil || a.Verdict != Permitted {
		t.Fatalf("the real ledger: %+v %v", a, err)
	}
}

// TestWitnessCatchesRollbackAndSwap: with a witness guard can read (and
// the agent cannot write), a restored older copy of the ledger gives no
// second permit for one approval, and another ledger put at the
// witnessed path gives none at all.
func TestWitnessCatchesRollbackAndSwap(t *testing.T) {
	sqliteOnly(t)
	w := newSignedWorld(t)
	witness := filepath.Join(t.TempDir(), "shared", "witness")
	open := func(path string) *Store {
		s, err := Open(ctx, path, Options{Now: w.clk.Now, Witness: witness})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	pay := Payload{"ask", "acct-1", "refund 40"}
	agent := open(w.path)
	pendingKey(t, agent, "k:once", "ask")
	if _, err := openAs(t, w.path, w.clk, nil, w.alice).Approve(ctx, "k:once", "", "ok"); err != nil {
		t.Fatal(err)
	}
	// The agent keeps a copy taken after the approval, before the permit.
	saved := filepath.Join(t.TempDir(), "saved.db")
	if _, err := agent.Backup(ctx, saved); err != nil {
		t.Fatal(err)
	}
	if a, err := agent.Guard(ctx, "k:once", pay, GuardOptions{Agent: "agent-7"}); err != nil || a.PermitID == "" {
		t.Fatalf("the approved permit: %+v %v", a, err)
	}
	// An operator's console or verify witnesses the head after the permit.
	h, err := agent.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := AppendWitness(witness, h, "verify", time.Now()); err != nil {
		t.Fatal(err)
	}
	restore := func(from string) {
		for _, sfx := range []string{"", "-wal", "-shm"} {
			os.Remove(w.path + sfx)
		}
		copyFile(t, from, w.path)
	}
	restore(saved)
	a, err := open(w.path).Guard(ctx, "k:once", pay, GuardOptions{Agent: "agent-7"})
	if a.PermitID != "" || !errors.Is(err, ErrIntegrity) {
		t.Fatalf("the restored copy: %+v %v, want no second permit", a, err)
	}
	rep, err := open(w.path).Verify(ctx, h)
	if err != nil || rep.OK() {
		t.Fatalf("verify of the restored copy: %+v %v", rep.Problems, err)
	}

	// Another ledger at the witnessed path: the agent's own, where an auto
	// rule needs no one's signature.
	other := filepath.Join(t.TempDir(), "own.db")
	own := open(other)
	if _, err := own.SetPolicy(ctx, approvals.Rule{Pattern: "*", Mode: approvals.Auto}, "mallory"); err != nil {
		t.Fatal(err)
	}
	own.Close()
	restore(other)
	a, err = open(w.path).Guard(ctx, "k:swapped", pay, GuardOptions{Agent: "agent-7"})
	if a.PermitID != "" || !errors.Is(err, ErrIntegrity) {
		t.Fatalf("a swapped ledger: %+v %v, want no permit", a, err)
	}
	heads, _, _ := ReadWitness(witness)
	rep, err = open(w.path).Verify(ctx, heads...)
	if err != nil || rep.OK() {
		t.Fatalf("verify of the swapped ledger: %+v %v", rep.Problems, err)
	}
	requireNamed(t, rep, "witness", "ledger_id="+h.LedgerID)
}

// TestForgedDecisionIsEvidenceNotState: a decision row an agent inserts
// by hand (no event commits it) changes no one's view of the key: status,
// export and guard still read it as pending, status shows the row as
// forged, and an operator is not told the key is already decided.
func TestForgedDecisionIsEvidenceNotState(t *testing.T) {
	sqliteOnly(t)
	w := newSignedWorld(t)
	agent := w.agentStore(t, w.path)
	for _, forged := range []string{"approved", "rejected"} {
		key := "k:" + forged
		pendingKey(t, agent, key, "ask")
		db := rawDB(t, w.path)
		mustExec(t, db, "INSERT INTO decisions(action_key, decision, operator, reason, at_ms) VALUES (?, ?, 'mallory', 'forged', 1)", key, forged)
		mustExec(t, db, "DROP TRIGGER IF EXISTS action_index_no_update")
		mustExec(t, db, "UPDATE action_index SET stage = ? WHERE action_key = ?", forged, key)
		d, err := agent.Status(ctx, key)
		if err != nil || d.State != StatePending || d.Decision != nil || len(d.Forged) != 1 || !strings.Contains(d.Forged[0], "no event commits it") {
			t.Fatalf("%s: status of a key with a forged decision: %s %+v %v %v", forged, d.State, d.Decision, d.Forged, err)
		}
		for _, v := range d.Votes {
			t.Fatalf("%s: the forged row is shown as a vote: %+v", forged, v)
		}
		a, err := agent.Guard(ctx, key, Payload{"ask", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"})
		if err != nil || a.State != StatePending || a.PermitID != "" {
			t.Fatalf("%s: guard: %+v %v, want still pending", forged, a, err)
		}
		rep, err := agent.Verify(ctx)
		if err != nil || rep.OK() {
			t.Fatalf("%s: verify: %+v %v", forged, rep.Problems, err)
		}
		// The forged row does not block the real operator (SPEC 7): her
		// approval sets it aside as evidence, committed by its own event,
		// and takes the slot; the key is approved by her and gets its
		// permit, and the forgery stays on record in status.
		if _, err := openAs(t, w.path, w.clk, nil, w.alice).Approve(ctx, key, "", ""); err != nil {
			t.Fatalf("%s: alice's approval: %v", forged, err)
		}
		d, err = agent.Status(ctx, key)
		if err != nil || d.State != StateApproved || d.Decision == nil || d.Decision.Operator != "alice" || len(d.Forged) != 1 ||
			!strings.Contains(d.Forged[0], "set aside") || !strings.Contains(d.Forged[0], "mallory") {
			t.Fatalf("%s: status after the real approval: %s %+v %v %v", forged, d.State, d.Decision, d.Forged, err)
		}
		a, err = agent.Guard(ctx, key, Payload{"ask", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"})
		if err != nil || a.PermitID == "" {
			t.Fatalf("%s: guard after the real approval: %+v %v", forged, a, err)
		}
		if rep, err := agent.Verify(ctx); err != nil || !rep.OK() {
			t.Fatalf("%s: verify after the forged row was set aside: %+v %v", forged, rep.Problems, err)
		}
	}
}
