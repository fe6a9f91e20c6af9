package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"golang.org/x/crypto/ssh"
)

// The attacks in this file are an agent's that can write the SQLite file,
// has read this source (so it recomputes row hashes and the chain) and
// acts before any operator looks again: what a witness cannot show, since
// an operator witnesses the forged chain as the real one.

// dropAllTriggers drops every trigger on the file, as the agent's sqlite3
// shell would before editing facts.
func dropAllTriggers(t *testing.T, db *rawConn) {
	t.Helper()
	rows, err := db.Query("SELECT name FROM sqlite_schema WHERE type = 'trigger'")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		mustExec(t, db, "DROP TRIGGER "+n)
	}
}

// renumberEvents closes the gaps deleted events left, so that the
// sequence reads whole.
func renumberEvents(t *testing.T, db *rawConn) {
	t.Helper()
	rows, err := db.Query("SELECT seq FROM events ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for rows.Next() {
		var n int64
		rows.Scan(&n)
		seqs = append(seqs, n)
	}
	rows.Close()
	for i, n := range seqs {
		if want := int64(i + 1); n != want {
			mustExec(t, db, "UPDATE events SET seq = ? WHERE seq = ?", want, n)
		}
	}
}

// TestQuorumCutBeforeAnyVote: the rule for "two" needs two operators.
// The agent's guard writes the key's policy evaluation itself, so before
// anyone votes it rewrites that row's quorum to one, points it at a
// one-approver rule of another pattern or at a rule that is gone, or
// deletes the row (which the quorum query reads as one), with the row's
// hash and the chain recomputed. alice then approves what her console shows as needing one
// approval. A permit must still need the two the signed rule asks for.
func TestQuorumCutBeforeAnyVote(t *testing.T) {
	sqliteOnly(t)
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, db *rawConn, key string)
	}{
		{"the evaluation's quorum edited to one", func(t *testing.T, db *rawConn, key string) {
			mustExec(t, db, "UPDATE policy_evals SET approvers = 1 WHERE action_key = ?", key)
			refreshFact(t, db, "policy_evals", key)
		}},
		{"the evaluation pointed at another pattern's one-approver rule", func(t *testing.T, db *rawConn, key string) {
			mustExec(t, db, "UPDATE policy_evals SET rule_id = (SELECT max(id) FROM policy_rules WHERE pattern = 'ask'), approvers = 1 WHERE action_key = ?", key)
			refreshFact(t, db, "policy_evals", key)
		}},
		{"the evaluation pointed at a rule that is gone", func(t *testing.T, db *rawConn, key string) {
			mustExec(t, db, "UPDATE policy_evals SET rule_id = 999999, approvers = 1 WHERE action_key = ?", key)
			refreshFact(t, db, "policy_evals", key)
		}},
		{"the evaluation deleted with its event", func(t *testing.T, db *rawConn, key string) {
			mustExec(t, db, "DELETE FROM events WHERE fact_table = 'policy_evals' AND fact_row = ?", key)
			mustExec(t, db, "DELETE FROM policy_evals WHERE action_key = ?", key)
			renumberEvents(t, db)
			rehashChain(t, db)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSignedWorld(t)
			agent := w.agentStore(t, w.path)
			key := "k:two"
			pendingKey(t, agent, key, "two")
			db := rawDB(t, w.path)
			dropAllTriggers(t, db)
			tc.attack(t, db, key)
			syncHead(t, db)
			db.Close()

			// alice's approval counts toward the rule's two, or is refused
			// when the evaluation it would count under is gone.
			if _, err := openAs(t, w.path, w.clk, nil, w.alice).Approve(ctx, key, "", "ok"); err != nil && !errors.Is(err, ErrIntegrity) {
				t.Fatalf("alice's approval: %v", err)
			}
			a, err := w.agentStore(t, w.path).Guard(ctx, key, Payload{"two", "acct-1", "refund 40"}, GuardOptions{Agent: "agent-7"})
			if a.PermitID != "" || a.Verdict == Permitted {
				t.Fatalf("one approval gave a permit under a rule that needs two: %+v %v", a, err)
			}
			rep, err := w.agentStore(t, w.path).Verify(ctx)
			if err != nil || rep.OK() {
				t.Fatalf("verify called the cut quorum clean: %+v %v", rep.Problems, err)
			}
		})
	}
}

// TestSignedFactErasedBeforeAnyWitness: an operator's signed act (a rule
// that makes refund.card need approval; an epoch that fences plain keys)
// is erased whole by the agent (row, signature and event, chain re-linked)
// before any operator's verify, backup or console witnessed a head after
// it. The shared witness holds only heads from before the act, so it
// cannot tell. With a head witnessed after the act guard refuses (held);
// with none, the erased act must still not grant.
func TestSignedFactErasedBeforeAnyWitness(t *testing.T) {
	sqliteOnly(t)
	type world struct {
		w       *signedWorld
		witness string
		key     string
		pay     Payload
	}
	setup := func(t *testing.T, act func(w *signedWorld, alice *Store) (string, Payload)) world {
		w := newSignedWorld(t)
		witness := filepath.Join(t.TempDir(), "shared", "witness")
		// alice's tollgate consults the shared witness, as the CLI's
		// every writer does (Options.Witness).
		alice, err := Open(ctx, w.path, Options{Now: w.clk.Now, Signers: []ssh.Signer{w.alice}, Witness: witness})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { alice.Close() })
		if _, err := alice.SetPolicy(ctx, approvals.Rule{Pattern: "refund.*", Mode: approvals.Auto}, ""); err != nil {
			t.Fatal(err)
		}
		h, err := alice.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// An operator's verify before the act: the witness knows the
		// ledger, and a head it can check.
		if err := AppendWitness(witness, h, "verify", time.Now()); err != nil {
			t.Fatal(err)
		}
		key, pay := act(w, alice)
		return world{w, witness, key, pay}
	}
	erase := func(t *testing.T, path, table string) {
		db := rawDB(t, path)
		dropAllTriggers(t, db)
		// The newest row of the table is the act: its signature, its
		// event and itself go.
		last := "(SELECT CAST(max(CAST(fact_row AS INTEGER)) AS TEXT) FROM events WHERE fact_table = ?)"
		mustExec(t, db, "DELETE FROM events WHERE fact_table = 'signatures' AND fact_row IN (SELECT CAST(id AS TEXT) FROM signatures WHERE fact_table = ? AND fact_row = "+last+")", table, table)
		mustExec(t, db, "DELETE FROM signatures WHERE fact_table = ? AND fact_row = "+last, table, table)
		mustExec(t, db, "DELETE FROM events WHERE fact_table = ? AND fact_row = "+last, table, table)
		switch table {
		case "policy_rules":
			mustExec(t, db, "DELETE FROM policy_rules WHERE pattern = 'refund.card'")
		case "epochs":
			mustExec(t, db, "DELETE FROM epochs")
		}
		renumberEvents(t, db)
		rehashChain(t, db)
		syncHead(t, db)
		db.Close()
	}
	cases := []struct {
		name  string
		table string
		act   func(w *signedWorld, alice *Store) (string, Payload)
	}{
		{"alice's rule that refund.card needs approval", "policy_rules", func(w *signedWorld, alice *Store) (string, Payload) {
			if _, err := alice.SetPolicy(ctx, approvals.Rule{Pattern: "refund.card", Mode: approvals.Approval, TTL: time.Hour}, ""); err != nil {
				t.Fatal(err)
			}
			return "k:refund", Payload{"refund.card", "acct-1", "refund 4000"}
		}},
		{"alice's epoch that fences plain keys", "epochs", func(w *signedWorld, alice *Store) (string, Payload) {
			if _, err := alice.ActivateEpoch(ctx, "", ""); err != nil {
				t.Fatal(err)
			}
			return "k:plain", Payload{"auto.x", "acct-1", "export all"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name+", a head witnessed after it", func(t *testing.T) {
			if testing.Short() && tc.table == "epochs" {
				t.Skip("the rule's case runs the same witness check; -short keeps one")
			}
			x := setup(t, tc.act)
			h, err := openAs(t, x.w.path, x.w.clk, nil).Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := AppendWitness(x.witness, h, "verify", time.Now()); err != nil {
				t.Fatal(err)
			}
			erase(t, x.w.path, tc.table)
			s, err := Open(ctx, x.w.path, Options{Now: x.w.clk.Now, Witness: x.witness})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			a, err := s.Guard(ctx, x.key, x.pay, GuardOptions{Agent: "agent-7"})
			if a.PermitID != "" || !errors.Is(err, ErrIntegrity) {
				t.Fatalf("the erased act granted: %+v %v", a, err)
			}
		})
		t.Run(tc.name+", no head witnessed after it", func(t *testing.T) {
			x := setup(t, tc.act)
			erase(t, x.w.path, tc.table)
			s, err := Open(ctx, x.w.path, Options{Now: x.w.clk.Now, Witness: x.witness})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			a, err := s.Guard(ctx, x.key, x.pay, GuardOptions{Agent: "agent-7"})
			if a.PermitID != "" || a.Verdict == Permitted {
				t.Fatalf("the erased act granted: %+v %v", a, err)
			}
		})
	}
}

// TestUnreadableWitnessFailsClosed: a shared witness that exists and
// cannot be read (here a folder where the file should be; a line too long
// for a line reader once did the same) grants nothing, where a missing
// one checks nothing; a witness line of any length is read.
func TestUnreadableWitnessFailsClosed(t *testing.T) {
	sqliteOnly(t)
	w := newSignedWorld(t)
	witness := filepath.Join(t.TempDir(), "witness")
	if err := os.Mkdir(witness, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, w.path, Options{Now: w.clk.Now, Witness: witness})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := s.Guard(ctx, "k:auto", Payload{"auto.x", "acct-1", "b"}, GuardOptions{Agent: "agent-7"})
	if a.PermitID != "" || !errors.Is(err, ErrIntegrity) {
		t.Fatalf("a grant past an unreadable witness: %+v %v", a, err)
	}

	long := filepath.Join(t.TempDir(), "long")
	if err := AppendWitness(long, Head{LedgerID: strings.Repeat("x", 70000), Seq: 1, Hash: strings.Repeat("0", 64)}, "backup", time.Now()); err != nil {
		t.Fatal(err)
	}
	h, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := AppendWitness(long, h, "verify", time.Now()); err != nil {
		t.Fatal(err)
	}
	if heads, bad, err := ReadWitness(long); err != nil || len(heads) != 2 || len(bad) != 0 {
		t.Fatalf("a witness with a 70,000-character line: %d heads, %v, %v", len(heads), bad, err)
	}
}
