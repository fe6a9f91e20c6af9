package ledger

import (
	"fmt"
	"strings"
	"testing"
)

// TestPostgresRedactedPayloadBound (issue 41): a redacted payload row
// keeps no text, and up to schema 40 the database took its kind and
// digests as sent. bot1, through psql, guards 'refund:77' with a refund
// payload's digest, no text (redacted) and the kind run, which the auto
// rule covers: that stored a run permitted beside a refund's digest, and
// verify said ok. From schema 41 the database hashes the text the writer
// sends for the row (tollgate.redacted_text, never stored) and binds the
// row's kind, target and body digests to the payload digest, on the
// one-call function and the client's key transaction alike: the call
// with no text, the call whose text is the refund's but whose kind is
// run, and the client path's redacted row of kind run are each refused
// (TG002), nothing stored. The honest client's redacted guards, through
// the function and through the key transaction, are permitted and store
// digests only; verify proves the ledger.
func TestPostgresRedactedPayloadBound(t *testing.T) {
	psqlPath(t)
	r := newPGRoles(t)
	owner := rawDB(t, r.owner)
	refund := Payload{"refund", "DE89370400440532013000", "77.00"}
	forged := func(key, kind string) fnCall {
		c := honestFn(key, refund, "bot1")
		c.kind, c.canonical = kind, ""
		return c
	}
	noText := strings.Replace(guardSQLText(forged("refund:77", "run")), "$t$$t$", "NULL", 1)
	wrongKind := strings.Replace(guardSQLText(forged("refund:78", "run")), "$t$$t$", "NULL", 1)
	c := forged("refund:79", "run")
	cols := strings.Split(factTableNamed("payloads").cols, ", ")
	row := payloadRow("refund:79", refund)
	row["canonical"], row["redacted"], row["kind"], row["kind_sha256"], row["agent"] = nil, 1, "run", sha256Hex([]byte("run")), "bot1"
	vals := make([]string, len(cols))
	for i, col := range cols {
		if row[col] == nil {
			vals[i] = "NULL"
		} else {
			vals[i] = sqlText(fmt.Sprint(row[col]))
		}
	}
	script := fmt.Sprintf(`SELECT %s;
BEGIN;
SELECT set_config('tollgate.redacted_text', %s, true);
SELECT %s;
ROLLBACK;
BEGIN;
SELECT tollgate_lock_key('refund:79');
SELECT tollgate_record_intent('refund:79', %s);
SELECT set_config('tollgate.redacted_text', %s, true);
SELECT tollgate_insert_payloads(ARRAY['%s'], ARRAY[%s]);
ROLLBACK;
`, noText, sqlText(string(refund.Canonical())), wrongKind, sqlText(c.sha.(string)), sqlText(string(refund.Canonical())),
		strings.Join(cols, "','"), strings.Join(vals, ", "))
	before := fullState(t, owner)
	errs := psqlErrors(t, r.bot1, script)
	for line, want := range map[int]string{1: "a redacted payload whose text was not sent", 4: "a kind column that is not the canonical text's kind",
		10: "a kind column that is not the canonical text's kind"} {
		if !strings.Contains(errs[line], want) {
			t.Errorf("line %d of bot1's script: %q, want the refusal %q", line, errs[line], want)
		}
	}
	if after := fullState(t, owner); after != before {
		t.Errorf("the refused calls changed the ledger: %s, was %s", after, before)
	}
	bot1 := openAt(t, r.bot1)
	for key, opt := range map[string]GuardOptions{
		"run:redacted-fn":     {Agent: "bot1", Redact: true},
		"run:redacted-client": {Agent: "bot1", Redact: true, Attempt: "attempt-0000000002"},
	} {
		if a, err := bot1.Guard(ctx, key, Payload{"run", "DE89370400440532013000", "77.00"}, opt); err != nil || a.Verdict != Permitted {
			t.Errorf("%s: the honest redacted guard: %+v %v", key, a.Verdict, err)
		}
	}
	if n := scalar(t, owner, `SELECT count(*)::text FROM tollgate_private.payloads WHERE action_key LIKE 'run:redacted%' AND redacted = 1 AND canonical IS NULL`); n != "2" {
		t.Errorf("%s redacted rows that keep no text, want 2", n)
	}
	sealAsOperator(t, r)
	verifyOK(t, r.admin)
}
