package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
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
//
// It fails closed: an operator change that does not prove itself (not
// committed, not linked into the chain, not signed by an operator before
// it) makes the registry itself doubtful, and a ledger whose chain shows
// it was signed but whose registry reads as empty has lost its operators;
// guard then grants nothing.
func loadTrust(ctx context.Context, tx *Tx, anchor *opkeys.Anchor) (*trust, error) {
	reg, err := loadRegistry(ctx, tx)
	if err != nil {
		return nil, err
	}
	t := &trust{ledger: reg.ledger, reg: reg, anchor: anchor}
	if len(reg.problems) > 0 {
		p := reg.problems[0]
		return nil, integrityError("the operator registry is doubtful: %s %s: %s", p.Table, p.Row, p.Rule)
	}
	if !reg.signed {
		var n int
		err := tx.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM events WHERE fact_table IN ('operators', 'signatures') LIMIT 1) x").Scan(&n)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, integrityError("the chain records operator changes or signatures, but no registered operator remains: a signed ledger stays signed")
		}
	}
	return t, nil
}

// checkWitness applies checkWitness to a grant, when a witness was read.
func (t *trust) checkWitness(ctx context.Context, tx *Tx, g grantInputs) error {
	if g.unread != nil {
		return integrityError("the witness guard consults exists and cannot be read (%v): guard fails closed", g.unread)
	}
	if len(g.witness) == 0 {
		return nil
	}
	id := t.ledger
	if id == "" {
		var err error
		if id, err = ledgerID(ctx, tx); err != nil {
			return err
		}
	}
	return checkWitness(ctx, tx, g.witness, id, g.path)
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
	err = tx.QueryRowContext(ctx, "SELECT decision, operator, reason, at_ms FROM decisions d WHERE action_key = ?"+committedDecision, key).Scan(&v.Decision, &v.Operator, &v.Reason, &at)
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
	if _, err := voteContext(ctx, tx, &ctxSt); err != nil {
		return err
	}
	need, err := requestQuorum(ctx, tx, key)
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
		op, bad := t.reg.prove(st, t.ledger, v.sig, t.reg.current, t.anchor, v.Operator, v.seq)
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

// decideProven is the rule a signed ledger applies: among the newest rule
// of each pattern and condition, the first that matches in order, which
// must be in force. A rule set before the ledger was signed is not in
// force (the next match or the default, approval, applies). Any other
// rule that would decide and does not prove itself (unsigned, signed by a
// removed or unlisted key, copied from another place, not committed by a
// linked event) fails closed: guard never falls back to the rule after
// it, which is what deleting or spoiling a rule would otherwise buy.
// Only the rules that would decide are checked, so a guard pays for one
// signature check, not one per rule.
func (t *trust) decideProven(ctx context.Context, tx *Tx, rules []approvals.Rule, f approvals.Facts) (approvals.Rule, approvals.Explain, error) {
	if err := committedRowsPresent(ctx, tx, "policy_rules", "policy rule"); err != nil {
		return approvals.Rule{}, approvals.Explain{}, err
	}
	newest := newestRules(rules)
	for {
		r, ex := approvals.Decide(newest, f)
		if ex.RuleID == 0 {
			return r, ex, nil
		}
		st, err := t.ruleStanding(ctx, tx, ex.RuleID)
		if err != nil {
			return r, ex, err
		}
		switch {
		case st.InForce:
			return r, ex, nil
		case !st.Invalid:
			newest = slices.DeleteFunc(newest, func(x approvals.Rule) bool { return x.ID == ex.RuleID })
		default:
			return r, ex, integrityError("rule %d (pattern %q) would decide and is not in force: %s", ex.RuleID, ex.Pattern, st.Why)
		}
	}
}

// newestRules keeps the newest rule of each pattern and condition (a
// rule's identity), in id order.
func newestRules(rules []approvals.Rule) []approvals.Rule {
	type id struct{ pattern, condition string }
	last := map[id]int64{}
	for _, r := range rules {
		k := id{r.Pattern, r.Condition}
		last[k] = max(last[k], r.ID)
	}
	return slices.DeleteFunc(slices.Clone(rules), func(r approvals.Rule) bool { return last[id{r.Pattern, r.Condition}] != r.ID })
}

// prefixed qualifies each of a comma-separated list of columns.
func prefixed(alias, cols string) string {
	return alias + strings.ReplaceAll(cols, ", ", ", "+alias)
}

// RuleStanding says whether a rule is in force, as guard judges it, and
// why not.
type RuleStanding struct {
	InForce bool `json:"in_force"`
	// Invalid is set when the rule is not in force for a reason that
	// makes guard refuse (fail closed) rather than skip it.
	Invalid bool   `json:"invalid,omitempty"`
	Why     string `json:"why,omitempty"`
	// Proof is the rule's signature as status shows a decision's.
	Proof Proof `json:"proof"`
}

// ruleStanding judges one rule: committed by its event, that event
// linked into the chain, and (on a signed ledger) signed over its place by
// a key registered now and listed in the anchor. A rule set before the
// ledger was signed is not in force once it is: it may say auto, and no
// operator signed it.
func (t *trust) ruleStanding(ctx context.Context, tx *Tx, id int64) (RuleStanding, error) {
	st, early, err := t.factStanding(ctx, tx, "policy_rules", id)
	if early {
		st.InForce, st.Why = false, "unsigned: set before the ledger was signed; set it again to sign it"
	}
	return st, err
}

// factStanding judges one authority fact (a rule, an epoch) as guard
// relies on it. early reports an unsigned fact committed before the
// ledger was signed: in force on its own terms, and the caller decides
// what that means for its kind of fact.
func (t *trust) factStanding(ctx context.Context, tx *Tx, table string, id int64) (st RuleStanding, early bool, err error) {
	tbl := factTableNamed(table)
	var sig sigRow
	var seq sql.NullInt64
	var sha sql.NullString
	vals := make([]any, tbl.ncols())
	dest := make([]any, 0, len(vals)+5)
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	dest = append(dest, &seq, &sha, &sig.fp, &sig.signed, &sig.blob)
	q := "SELECT " + prefixed("t.", tbl.cols) + ", e.seq, e.fact_sha256, s.fingerprint, s.signed_ms, s.signature FROM " + table + " t" +
		" LEFT JOIN events e ON e.fact_table = '" + table + "' AND e.fact_row = CAST(t." + tbl.id + " AS TEXT)" + sigJoin(table, tbl.id) + " WHERE t." + tbl.id + " = ?"
	if err := tx.QueryRowContext(ctx, q, id).Scan(dest...); err != nil {
		return RuleStanding{}, false, err
	}
	bad := func(why string) (RuleStanding, bool, error) {
		return RuleStanding{Invalid: true, Why: why, Proof: Proof{Status: "invalid", Problem: why}}, false, nil
	}
	if !seq.Valid || sha.String != tbl.ref(vals).SHA256 {
		return bad("not committed by its event")
	}
	if linked, err := eventLinked(ctx, tx, seq.Int64); err != nil || !linked {
		if err != nil {
			return RuleStanding{}, false, err
		}
		return bad(fmt.Sprintf("its event %d is not linked into the hash chain", seq.Int64))
	}
	unsigned := RuleStanding{InForce: true, Proof: Proof{Status: "unsigned"}}
	if !t.required() {
		return unsigned, false, nil
	}
	if !t.reg.signed || seq.Int64 <= t.reg.genesisSeq && !sig.present() {
		return unsigned, true, nil
	}
	stmt, err := statementFromRow(ctx, tx, tbl, vals)
	if err != nil {
		return RuleStanding{}, false, err
	}
	author := tbl.value(vals, signedFacts[table])
	op, why := t.reg.prove(stmt, t.ledger, sig, t.reg.current, t.anchor, author, seq.Int64)
	if why != "" {
		return bad(why)
	}
	return RuleStanding{InForce: true, Proof: Proof{Status: "signed", Operator: op.Name, Fingerprint: op.Fingerprint}}, false, nil
}

// committedRowsPresent fails closed when the chain commits a row of table
// that is gone: the newest rule for a pattern, or the newest epoch,
// deleted from the file would otherwise leave the one before it in force.
func committedRowsPresent(ctx context.Context, tx *Tx, table, what string) error {
	tbl := factTableNamed(table)
	var row string
	err := tx.QueryRowContext(ctx, "SELECT e.fact_row FROM events e LEFT JOIN "+table+" t ON CAST(t."+tbl.id+" AS TEXT) = e.fact_row"+
		" WHERE e.fact_table = '"+table+"' AND t."+tbl.id+" IS NULL LIMIT 1").Scan(&row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return integrityError("the chain commits %s %s, whose row is missing", what, row)
}

// activeEpoch is the epoch guard fences by, proven: every epoch the chain
// commits still has its row, and the newest is committed by a linked
// event and, on a signed ledger, signed over its place. Deleting the
// newest epoch's row would otherwise un-fence the keys it fenced.
func (t *trust) activeEpoch(ctx context.Context, tx *Tx) (EpochInfo, error) {
	if !t.required() {
		// A ledger never signed grants on names alone: anyone who can
		// write its file can write an approval, so an epoch's proof
		// would protect nothing there.
		return activeEpoch(ctx, tx)
	}
	if err := committedRowsPresent(ctx, tx, "epochs", "epoch activation"); err != nil {
		return EpochInfo{}, err
	}
	act, err := activeEpoch(ctx, tx)
	if err != nil || act.Seq == 0 {
		return act, err
	}
	st, _, err := t.factStanding(ctx, tx, "epochs", act.Seq)
	if err == nil && st.Invalid {
		err = integrityError("the active epoch %s (activation %d) is not in force: %s", act.Epoch, act.Seq, st.Why)
	}
	return act, err
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
	if err := verifySignaturesOnce(ctx, tx, rep); err != nil {
		return err
	}
	for _, ft := range factTables {
		author, ok := signedFacts[ft.name]
		if !ok || ft.name == "operators" || rep.hidden[ft.name] != "" {
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

// verifyAnchor names each signature made by a key the operators file
// does not list for its operator: a decision signed outside the anchor,
// which guard never honours.
func verifyAnchor(ctx context.Context, tx *Tx, rep *VerifyReport, anchor *opkeys.Anchor) error {
	if anchor == nil {
		return nil
	}
	reg, err := loadRegistry(ctx, tx)
	if err != nil || !reg.signed {
		return err
	}
	type sig struct{ table, row, fp string }
	sigs, err := queryRows(ctx, tx, "SELECT fact_table, fact_row, fingerprint FROM signatures ORDER BY id", nil,
		func(r *sql.Rows, x *sig) error { return r.Scan(&x.table, &x.row, &x.fp) })
	for _, x := range sigs {
		op, ok := reg.ever[x.fp]
		if !ok {
			continue // verifySignatures names a key that was never registered
		}
		if why := anchor.Allows(op.Name, op.pub); why != nil {
			rep.add(x.table, "row="+x.row, "", "signed outside the operators file: %v", why)
		}
	}
	return err
}

// verifySignaturesOnce names every row whose signature is also another
// row's: a signature proves one fact in one place and counts once.
func verifySignaturesOnce(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	type dup struct{ table, row string }
	rows, err := queryRows(ctx, tx, `SELECT fact_table, fact_row FROM signatures WHERE signature IN
		(SELECT signature FROM signatures GROUP BY signature HAVING count(*) > 1) ORDER BY id`, nil,
		func(r *sql.Rows, x *dup) error { return r.Scan(&x.table, &x.row) })
	for _, x := range rows {
		rep.add(x.table, "row="+x.row, "", "its signature is also another row's: a signature counts once (a copied row)")
	}
	return err
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
