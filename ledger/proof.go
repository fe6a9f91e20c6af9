package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// trust is what guard checks a grant against: the operator registry read
// in the guard's own transaction, and the anchor outside the ledger. It is
// loaded only when a grant is about to be made, so replays and waits pay
// nothing for it.
type trust struct {
	ledger string
	reg    *registry
	anchor *opkeys.Anchor
}

// loadTrust reads the registry inside tx. With an anchor present the
// ledger must be signed: a ledger whose operator rows were deleted would
// otherwise look unsigned and grant on names alone.
func loadTrust(ctx context.Context, tx *Tx, anchor *opkeys.Anchor) (*trust, error) {
	reg, err := loadRegistry(ctx, tx)
	if err != nil {
		return nil, err
	}
	return &trust{ledger: reg.ledger, reg: reg, anchor: anchor}, nil
}

// required reports whether grants need signatures.
func (t *trust) required() bool { return t.reg.signed || t.anchor != nil }

// Vote is one operator's decision on a request, with its proof.
type Vote struct {
	Decision DecisionKind `json:"decision"`
	Operator string       `json:"operator"`
	Reason   string       `json:"reason"`
	At       time.Time    `json:"at"`
	Proof    Proof        `json:"proof"`
	id       string
	sig      sigRow
	seq      int64
}

// loadVotes reads a key's votes with their signatures, oldest first.
// Ledgers older than schema 6 kept one decision and no votes: that
// decision is shown as the one vote.
func loadVotes(ctx context.Context, tx *Tx, key string) ([]Vote, error) {
	votes, err := queryRows(ctx, tx, `SELECT t.id, t.decision, t.operator, t.reason, t.at_ms, coalesce(e.seq, 0), s.fingerprint, s.signed_ms, s.signature FROM votes t
		LEFT JOIN events e ON e.fact_table = 'votes' AND e.fact_row = CAST(t.id AS TEXT)`+sigJoin("votes", "id")+
		` WHERE t.action_key = ? ORDER BY t.id`, []any{key}, func(r *sql.Rows, v *Vote) error {
		var at int64
		err := r.Scan(&v.id, &v.Decision, &v.Operator, &v.Reason, &at, &v.seq, &v.sig.fp, &v.sig.signed, &v.sig.blob)
		v.At = fromMS(at)
		return err
	})
	if err != nil || len(votes) > 0 {
		return votes, err
	}
	var v Vote
	var at int64
	err = tx.QueryRowContext(ctx, "SELECT decision, operator, reason, at_ms FROM decisions WHERE action_key = ?", key).Scan(&v.Decision, &v.Operator, &v.Reason, &at)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	v.At, v.Proof = fromMS(at), Proof{Status: "unsigned"}
	return []Vote{v}, err
}

// proveApproval is the rule for a permit after approval on a signed
// ledger: approvals by distinct operators whose signatures verify against
// keys registered now (and listed in the anchor) reach the quorum the
// operators signed, and no proven rejection stands.
func (t *trust) proveApproval(ctx context.Context, tx *Tx, key string) error {
	votes, err := loadVotes(ctx, tx, key)
	if err != nil {
		return err
	}
	// Every vote on the key shares its context: digest, request, quorum.
	ctxSt := statement{Fact: "votes", Key: key}
	need, err := voteContext(ctx, tx, &ctxSt)
	if err != nil {
		return err
	}
	var names []string
	var why []string
	for _, v := range votes {
		if v.id == "" {
			why = append(why, "a decision with no signed vote")
			continue
		}
		st := ctxSt
		st.Act, st.Text = string(v.Decision), v.Reason
		op, bad := t.reg.prove(st, t.ledger, v.sig, t.reg.current, t.anchor, v.Operator)
		switch {
		case bad != "":
			why = append(why, fmt.Sprintf("%s by %q: %s", v.Decision, v.Operator, bad))
		case v.Decision == DecisionRejected:
			return fmt.Errorf("%w: key %s was rejected by %s", ErrNotPermitted, key, op.Name)
		case !slices.ContainsFunc(names, func(n string) bool { return approvals.SameName(n, op.Name) }):
			names = append(names, op.Name)
		}
	}
	if int64(len(names)) < need {
		return fmt.Errorf("%w: key %s: %d of %d approvals carry a valid operator signature %v; no permit", ErrNotPermitted, key, len(names), need, why)
	}
	return nil
}

// provenRules keeps, on a signed ledger, the rules whose signatures
// verify; Match then applies to them as to all rules on an unsigned one.
// Only the rule that would match is checked, then the next, so a guard
// pays for one signature check, not one per rule.
func (t *trust) matchProven(ctx context.Context, tx *Tx, rules []approvals.Rule, kind string) (approvals.Rule, error) {
	for {
		r := approvals.Match(rules, kind)
		if r.ID == 0 {
			return r, nil
		}
		row := fmt.Sprint(r.ID)
		var sig sigRow
		var author string
		if err := tx.QueryRowContext(ctx, "SELECT t.operator, s.fingerprint, s.signed_ms, s.signature FROM policy_rules t"+sigJoin("policy_rules", "id")+" WHERE t.id = ?", r.ID).
			Scan(&author, &sig.fp, &sig.signed, &sig.blob); err != nil {
			return r, err
		}
		st, err := statementFor(ctx, tx, "policy_rules", row)
		if err != nil {
			return r, err
		}
		if _, bad := t.reg.prove(st, t.ledger, sig, t.reg.current, t.anchor, author); bad == "" {
			return r, nil
		}
		rules = slices.DeleteFunc(rules, func(x approvals.Rule) bool { return x.ID == r.ID })
	}
}

// decisionProofs fills a key's votes and the proof of each vote and of
// its reconciliation, checked against every key ever registered. reg is
// the registry when the caller already holds it (an export reads it once);
// nil reads it here, and only when there is something to prove.
func decisionProofs(ctx context.Context, tx *Tx, d *Detail, reg *registry) error {
	votes, err := loadVotes(ctx, tx, d.Key)
	if err != nil {
		return err
	}
	d.Votes = append([]Vote{}, votes...)
	if len(votes) == 0 && d.Reconcile == nil {
		return nil
	}
	if reg == nil {
		if reg, err = loadRegistry(ctx, tx); err != nil {
			return err
		}
	}
	id := reg.ledger
	for i, v := range votes {
		if v.id != "" {
			if d.Votes[i].Proof, err = proofOf(ctx, tx, reg, id, "votes", v.id, v.Operator, v.sig, v.seq); err != nil {
				return err
			}
		}
	}
	// The request's decision is the vote that decided it: the quorum's
	// last approval or the rejection.
	if dec := d.Decision; dec != nil {
		dec.Approvals, dec.Approvers, dec.State = d.Approvals(), max(d.Approvers, 1), State(dec.Decision)
		for _, v := range d.Votes {
			if v.Decision == dec.Decision && v.Operator == dec.Operator {
				dec.Proof = v.Proof
			}
		}
	}
	if d.Reconcile != nil {
		var sig sigRow
		var seq int64
		if err := tx.QueryRowContext(ctx, "SELECT coalesce(e.seq, 0), s.fingerprint, s.signed_ms, s.signature FROM reconciliations t"+
			" LEFT JOIN events e ON e.fact_table = 'reconciliations' AND e.fact_row = t.action_key"+sigJoin("reconciliations", "action_key")+
			" WHERE t.action_key = ?", d.Key).Scan(&seq, &sig.fp, &sig.signed, &sig.blob); err != nil {
			return err
		}
		d.Reconcile.Proof, err = proofOf(ctx, tx, reg, id, "reconciliations", d.Key, d.Reconcile.Operator, sig, seq)
	}
	return err
}

// verifySignatures checks every operator change (the registry's replay),
// every signature on the rows it covers, and that on a signed ledger every
// operator-authored fact committed after the first registration carries a
// valid one, naming each row that does not.
func verifySignatures(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	reg, err := loadRegistry(ctx, tx)
	if err != nil {
		return err
	}
	rep.Problems = append(rep.Problems, reg.problems...)
	for _, ft := range factTables {
		author, ok := signedFacts[ft.name]
		if !ok || ft.name == "operators" {
			continue
		}
		type row struct {
			id, key, author string
			seq             int64
			sig             sigRow
		}
		keyCol := "''"
		if ft.keyCol != "" {
			keyCol = "t." + ft.keyCol
		}
		rows, err := queryRows(ctx, tx, "SELECT CAST(t."+ft.id+" AS TEXT), "+keyCol+", t."+author+", coalesce(e.seq, 0), s.fingerprint, s.signed_ms, s.signature FROM "+ft.name+" t"+
			" LEFT JOIN events e ON e.fact_table = '"+ft.name+"' AND e.fact_row = CAST(t."+ft.id+" AS TEXT)"+sigJoin(ft.name, ft.id)+" ORDER BY t."+ft.id, nil,
			func(r *sql.Rows, x *row) error {
				return r.Scan(&x.id, &x.key, &x.author, &x.seq, &x.sig.fp, &x.sig.signed, &x.sig.blob)
			})
		if err != nil {
			return err
		}
		for _, x := range rows {
			p, err := proofOf(ctx, tx, reg, rep.LedgerID, ft.name, x.id, x.author, x.sig, x.seq)
			if err != nil {
				return err
			}
			if p.Status == "invalid" {
				rep.add(ft.name, ft.id+"="+x.id, x.key, "operator signature INVALID: %s", p.Problem)
			}
		}
	}
	return nil
}

// Approvals counts the approvals on file (one per operator: votes are
// unique per operator and key).
func (d Detail) Approvals() int {
	n := 0
	for _, v := range d.Votes {
		if v.Decision == DecisionApproved {
			n++
		}
	}
	return n
}
