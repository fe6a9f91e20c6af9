package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/approvals"
)

// statement is what an operator signs: the ledger, the fact's kind, the
// action key and payload digest it concerns, the request it answers, what
// the operator says (decision, result, rule, epoch, review, operator
// change), the reason or note, and the time of signing. It is rebuilt
// from the stored row by statementFor, so a signature proves exactly the
// row that verify and guard read, and nothing that row does not say.
type statement struct {
	// V is the statement's version: 2 for everything this build signs;
	// 1 only for a signature made before the ledger's upgrade to schema 8
	// (legacyThrough), which said nothing of the fact's place.
	V       int
	Ledger  string
	Fact    string
	Key     string
	Payload string
	Request string
	Act     string
	Text    string
	// Place binds the fact to where it stands, so that a signed row
	// copied to another position never verifies: for a rule the rule it
	// replaces (or that it is the first for its pattern), for an epoch the
	// epoch before it, for an operator change the registry state it
	// changes (the change before it). Votes, reconciliations and reviews
	// are bound by Request already (the request, the permit, the conflict
	// or fenced call they answer).
	Place  string
	Signed int64
	// condition is a rule's condition, which with its pattern is the
	// rule's identity (its place).
	condition string
	// row is the fact's own row id when the statement is rebuilt from a
	// stored row, empty for a draft (the row the next write appends): the
	// place is what stood before it.
	row string
	// ref is the id of the row a review closes; the statement carries it
	// in Request once completed.
	ref string
}

// statementHeader names the format and its version; a signature over it
// cannot be taken for an SSH login or a git commit signature by the same
// key, nor a statement of one version for the other.
const (
	statementHeaderV1 = "tollgate signed statement v1\n"
	statementHeaderV2 = "tollgate signed statement v2\n"
)

// currentStatement is the version this build signs.
const currentStatement = 2

// bytes is the canonical encoding: fixed field names in a fixed order,
// each value Go-quoted, so no value can shift into another field.
func (st statement) bytes() []byte {
	var b strings.Builder
	fields := [][2]string{
		{"ledger", st.Ledger}, {"fact", st.Fact}, {"key", st.Key}, {"payload_sha256", st.Payload},
		{"request", st.Request}, {"act", st.Act}, {"text", st.Text},
	}
	if st.V == 1 {
		b.WriteString(statementHeaderV1)
	} else {
		b.WriteString(statementHeaderV2)
		fields = append(fields, [2]string{"place", st.Place})
	}
	fields = append(fields, [2]string{"signed_ms", strconv.FormatInt(st.Signed, 10)})
	for _, f := range fields {
		b.WriteString(f[0])
		b.WriteString(": ")
		b.WriteString(strconv.Quote(f[1]))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// signedFacts are the tables whose rows an operator authors, each with
// the column naming that operator: on a signed ledger every row of them
// written after the first registration carries a signature.
var signedFacts = map[string]string{
	"votes":            "operator",
	"reconciliations":  "operator",
	"policy_rules":     "operator",
	"epochs":           "operator",
	"conflict_reviews": "operator",
	"fenced_reviews":   "operator",
	"operators":        "",
	"agent_tokens":     "operator",
	"principal_names":  "operator",
}

// statementFor rebuilds, from one stored fact row and the rows it refers
// to, the statement its author signed (Ledger and Signed left for the
// caller, who has them from the ledger and the signature row).
func statementFor(ctx context.Context, tx *Tx, table, row string) (statement, error) {
	t := factTableNamed(table)
	if _, ok := signedFacts[table]; !ok || t == nil {
		return statement{}, fmt.Errorf("%s rows are not signed", table)
	}
	vals, err := scanFact(tx.QueryRowContext(ctx, "SELECT "+t.cols+" FROM "+table+" WHERE "+t.id+" = ?", row), t.ncols())
	if err != nil {
		return statement{}, fmt.Errorf("statement for %s %s: %w", table, row, err)
	}
	return statementFromRow(ctx, tx, t, vals)
}

// statementFromRow is the statement a row's columns say (as read back or
// as returned by the INSERT that stored them), completed by what the row
// refers to through completeStatement, the same function that completes
// a draft before the row exists.
func statementFromRow(ctx context.Context, tx *Tx, t *factTable, vals []any) (statement, error) {
	v := func(col string) string { return t.value(vals, col) }
	st := statement{V: currentStatement, Fact: t.name, row: fmt.Sprint(vals[0])}
	switch t.name {
	case "votes":
		st.Key, st.Act, st.Text = v("action_key"), v("decision"), v("reason")
	case "reconciliations":
		st.Key, st.Act, st.Text = v("action_key"), v("result"), v("note")
	case "policy_rules":
		st.Request = v("pattern")
		prio, _ := strconv.Atoi(v("priority"))
		st.condition = v("condition")
		st.Act = policyAct(v("mode"), v("ttl_ms"), v("approvers"), v("condition"), prio)
	case "epochs":
		st.Act = "activate " + v("epoch")
	case "conflict_reviews":
		st.ref, st.Act, st.Text = v("conflict_id"), "reviewed", v("note")
	case "fenced_reviews":
		st.ref, st.Act, st.Text = v("fenced_id"), "reviewed", v("note")
	case "operators":
		st.Request, st.Act = v("name"), v("action")+" "+v("public_key")
	case "agent_tokens", "principal_names":
		identityStatement(&st, v)
	}
	if err := completeStatement(ctx, tx, &st); err != nil {
		return st, fmt.Errorf("statement for %s %s: %w", t.name, fmt.Sprint(vals[0]), err)
	}
	return st, nil
}

// completeStatement fills in what a fact refers to: the key's payload
// digest and request for a vote (with the quorum it counts toward), the
// permit a reconciliation settles, the conflict or fenced call a review
// closes.
func completeStatement(ctx context.Context, tx *Tx, st *statement) error {
	if st.V == 0 {
		st.V = currentStatement
	}
	switch st.Fact {
	case "policy_rules":
		return placeStatement(ctx, tx, st, "rule", "pattern = ? AND condition = ? AND ", st.Request, st.condition)
	case "epochs":
		return placeStatement(ctx, tx, st, "epoch", "")
	case "votes":
		_, err := voteContext(ctx, tx, st)
		return err
	case "reconciliations":
		var permit string
		err := tx.QueryRowContext(ctx, `SELECT i.payload_sha256, p.permit_id FROM intents i JOIN permits p ON p.action_key = i.action_key
			WHERE i.action_key = ?`, st.Key).Scan(&st.Payload, &permit)
		st.Request = "permit_id=" + permit
		return err
	case "conflict_reviews":
		var attempted string
		err := tx.QueryRowContext(ctx, "SELECT action_key, stored_sha256, attempted_sha256 FROM conflicts WHERE id = ?", st.ref).Scan(&st.Key, &st.Payload, &attempted)
		st.Request = "conflict_id=" + st.ref + " attempted_sha256=" + attempted
		return err
	case "fenced_reviews":
		err := tx.QueryRowContext(ctx, "SELECT action_key, payload_sha256 FROM fenced WHERE id = ?", st.ref).Scan(&st.Key, &st.Payload)
		st.Request = "fenced_id=" + st.ref
		return err
	case "agent_tokens", "principal_names":
		return completeIdentity(ctx, tx, st)
	case "operators":
		if err := placeStatement(ctx, tx, st, "operator change", ""); err != nil || st.Act != "remove" {
			return err
		}
		// A removal drafted by name: the row will carry the registered
		// spelling and key (a drift is caught when the row is written).
		var pub string
		err := tx.QueryRowContext(ctx, "SELECT name, public_key FROM operators WHERE name_key = ? AND action = 'add' ORDER BY id DESC LIMIT 1",
			approvals.NameKey(st.Request)).Scan(&st.Request, &pub)
		st.Act = "remove " + pub
		return err
	}
	return nil
}

// placeStatement binds st to its place: the row of the same table (and,
// for a rule, the same pattern) that stands immediately before it, named
// by id and by the SHA-256 its event commits, or "first" when none does.
// A draft's place is the newest such row: the one it will follow.
func placeStatement(ctx context.Context, tx *Tx, st *statement, what, where string, args ...any) error {
	t := factTableNamed(st.Fact)
	q := "SELECT " + t.cols + " FROM " + t.name + " WHERE " + where
	if st.row != "" {
		q += t.id + " < ?"
		args = append(args, st.row)
	} else {
		q += "1 = 1"
	}
	vals, err := scanFact(tx.QueryRowContext(ctx, q+" ORDER BY "+t.id+" DESC LIMIT 1", args...), t.ncols())
	switch {
	case errors.Is(err, sql.ErrNoRows):
		st.Place = "first " + what
		if what == "rule" {
			st.Place += " for this pattern"
		}
		return nil
	case err != nil:
		return err
	}
	st.Place = fmt.Sprintf("after %s %s=%v sha256=%s", what, t.id, vals[0], t.ref(vals).SHA256)
	return nil
}

// voteContext fills a vote's payload digest and request (with the quorum
// it counts toward) and returns that quorum. The quorum is the larger of
// the evaluation's and the rule's it names: the evaluation is written by
// the agent's guard, so on SQLite the agent can edit it, and a quorum cut
// there must not become what an operator signs.
func voteContext(ctx context.Context, tx *Tx, st *statement) (int64, error) {
	var req, exp, n int64
	err := tx.QueryRowContext(ctx, `SELECT i.payload_sha256, q.requested_ms, q.expires_ms, CASE WHEN coalesce(r.approvers, 1) > coalesce(e.approvers, 1) THEN r.approvers ELSE coalesce(e.approvers, 1) END FROM intents i
		JOIN approval_requests q ON q.action_key = i.action_key LEFT JOIN policy_evals e ON e.action_key = i.action_key
		LEFT JOIN policy_rules r ON r.id = e.rule_id
		WHERE i.action_key = ?`, st.Key).Scan(&st.Payload, &req, &exp, &n)
	st.Request = fmt.Sprintf("requested_ms=%d expires_ms=%d approvers=%d", req, exp, n)
	return n, err
}

// requestQuorum is the number of approvals a key's request needs, taken
// from the signed rule its evaluation names (the evaluation's own count
// only raises it), where decide counts votes and where a signed ledger
// proves an approval. It fails closed when the request has no evaluation,
// when the rule it names is gone, or when that rule's pattern does not
// cover the action's kind: each is an edit that would set the quorum.
func requestQuorum(ctx context.Context, tx *Tx, key string) (int64, error) {
	var r quorumRow
	if err := tx.QueryRowContext(ctx, "SELECT "+quorumCols+" FROM approval_requests q"+quorumJoins+" WHERE q.action_key = ?", key).Scan(r.dest()...); err != nil {
		return 0, err
	}
	return r.quorum(key)
}

// quorumCols and quorumJoins are what the quorum is read from, joined to
// a request (approval_requests q): the evaluation's count and rule, the
// rule's count and pattern, and the action's kind. A read of the request
// that needs its quorum too (decide) selects them beside its own.
const (
	quorumCols  = "e.approvers, e.rule_id, pr.approvers, pr.pattern, pl.kind"
	quorumJoins = ` LEFT JOIN policy_evals e ON e.action_key = q.action_key LEFT JOIN policy_rules pr ON pr.id = e.rule_id
		LEFT JOIN payloads pl ON pl.action_key = q.action_key`
)

// quorumRow is quorumCols as read.
type quorumRow struct {
	evalN, ruleID, ruleN sql.NullInt64
	pattern, kind        sql.NullString
}

// dest is where a Scan of quorumCols goes.
func (r *quorumRow) dest() []any { return []any{&r.evalN, &r.ruleID, &r.ruleN, &r.pattern, &r.kind} }

// quorum applies requestQuorum's rules to what was read for key.
func (r quorumRow) quorum(key string) (int64, error) {
	switch {
	case !r.evalN.Valid:
		return 0, integrityError("key %s has an approval request and no policy evaluation, so the quorum its rule asks cannot be known", key)
	case r.ruleID.Valid && r.ruleID.Int64 != 0 && !r.ruleN.Valid:
		return 0, integrityError("key %s was evaluated under rule %d, which is gone", key, r.ruleID.Int64)
	case r.ruleN.Valid && r.kind.Valid && r.kind.String != "" && !approvals.PatternMatches(r.pattern.String, r.kind.String):
		return 0, integrityError("key %s was evaluated under rule %d, whose pattern does not cover its kind", key, r.ruleID.Int64)
	}
	return max(r.evalN.Int64, r.ruleN.Int64), nil
}

// policyAct is what a rule says, in its statement (as statementFromRow
// writes it from the row). A condition and a priority are named only
// when set, so that rules signed before they existed keep verifying.
func policyAct(mode string, ttlMS, approvers any, condition string, priority int) string {
	s := fmt.Sprintf("mode=%s ttl_ms=%v approvers=%v", mode, ttlMS, approvers)
	if priority != 0 {
		s += fmt.Sprintf(" priority=%d", priority)
	}
	if condition != "" {
		s += " if=" + strconv.Quote(condition)
	}
	return s
}

// checkSignature verifies an SSH signature in wire form over st.
func checkSignature(pub ssh.PublicKey, st statement, blob []byte) error {
	var sig ssh.Signature
	if err := ssh.Unmarshal(blob, &sig); err != nil {
		return fmt.Errorf("signature does not parse: %v", err)
	}
	if err := pub.Verify(st.bytes(), &sig); err != nil {
		return fmt.Errorf("signature does not verify against %s over this row's statement", ssh.FingerprintSHA256(pub))
	}
	return nil
}
