package ledger

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
)

// statement is what an operator signs: the ledger, the fact's kind, the
// action key and payload digest it concerns, the request it answers, what
// the operator says (decision, result, rule, epoch, review, operator
// change), the reason or note, and the time of signing. It is rebuilt
// from the stored row by statementFor, so a signature proves exactly the
// row that verify and guard read, and nothing that row does not say.
type statement struct {
	Ledger  string
	Fact    string
	Key     string
	Payload string
	Request string
	Act     string
	Text    string
	Signed  int64
}

// statementHeader names the format; a signature over it cannot be taken
// for an SSH login or a git commit signature by the same key.
const statementHeader = "tollgate signed statement v1\n"

// bytes is the canonical encoding: fixed field names in a fixed order,
// each value Go-quoted, so no value can shift into another field.
func (st statement) bytes() []byte {
	var b strings.Builder
	b.WriteString(statementHeader)
	for _, f := range [...][2]string{
		{"ledger", st.Ledger}, {"fact", st.Fact}, {"key", st.Key}, {"payload_sha256", st.Payload},
		{"request", st.Request}, {"act", st.Act}, {"text", st.Text}, {"signed_ms", strconv.FormatInt(st.Signed, 10)},
	} {
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
}

// statementFor rebuilds, from one stored fact row and the rows it refers
// to, the statement its author signed (Ledger and Signed left for the
// caller, who has them from the ledger and the signature row).
func statementFor(ctx context.Context, tx *Tx, table, row string) (statement, error) {
	st := statement{Fact: table}
	var err error
	switch table {
	case "votes":
		var req, exp, n int64
		err = tx.QueryRowContext(ctx, `SELECT v.action_key, v.decision, v.reason, i.payload_sha256, q.requested_ms, q.expires_ms, coalesce(e.approvers, 1)
			FROM votes v JOIN intents i ON i.action_key = v.action_key JOIN approval_requests q ON q.action_key = v.action_key
			LEFT JOIN policy_evals e ON e.action_key = v.action_key WHERE v.id = ?`, row).
			Scan(&st.Key, &st.Act, &st.Text, &st.Payload, &req, &exp, &n)
		st.Request = fmt.Sprintf("requested_ms=%d expires_ms=%d approvers=%d", req, exp, n)
	case "reconciliations":
		var permit string
		err = tx.QueryRowContext(ctx, `SELECT c.action_key, c.result, c.note, i.payload_sha256, p.permit_id FROM reconciliations c
			JOIN intents i ON i.action_key = c.action_key JOIN permits p ON p.action_key = c.action_key WHERE c.action_key = ?`, row).
			Scan(&st.Key, &st.Act, &st.Text, &st.Payload, &permit)
		st.Request = "permit_id=" + permit
	case "policy_rules":
		var mode string
		var ttl, n int64
		err = tx.QueryRowContext(ctx, "SELECT pattern, mode, ttl_ms, approvers FROM policy_rules WHERE id = ?", row).Scan(&st.Request, &mode, &ttl, &n)
		st.Act = fmt.Sprintf("mode=%s ttl_ms=%d approvers=%d", mode, ttl, n)
	case "epochs":
		err = tx.QueryRowContext(ctx, "SELECT epoch FROM epochs WHERE seq = ?", row).Scan(&st.Act)
		st.Act = "activate " + st.Act
	case "conflict_reviews":
		var attempted string
		err = tx.QueryRowContext(ctx, `SELECT c.action_key, c.stored_sha256, c.attempted_sha256, r.note FROM conflict_reviews r
			JOIN conflicts c ON c.id = r.conflict_id WHERE r.conflict_id = ?`, row).Scan(&st.Key, &st.Payload, &attempted, &st.Text)
		st.Request, st.Act = "conflict_id="+row+" attempted_sha256="+attempted, "reviewed"
	case "fenced_reviews":
		err = tx.QueryRowContext(ctx, `SELECT f.action_key, f.payload_sha256, r.note FROM fenced_reviews r
			JOIN fenced f ON f.id = r.fenced_id WHERE r.fenced_id = ?`, row).Scan(&st.Key, &st.Payload, &st.Text)
		st.Request, st.Act = "fenced_id="+row, "reviewed"
	case "operators":
		var action, pub string
		err = tx.QueryRowContext(ctx, "SELECT name, action, public_key FROM operators WHERE id = ?", row).Scan(&st.Request, &action, &pub)
		st.Act = action + " " + pub
	default:
		return st, fmt.Errorf("%s rows are not signed", table)
	}
	if err != nil {
		return st, fmt.Errorf("statement for %s %s: %w", table, row, err)
	}
	return st, nil
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
