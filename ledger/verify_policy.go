package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// verifyPolicy re-derives every policy evaluation (SPEC 10, issue 42)
// from the rules committed before it, the stored kind, target, agent,
// body and context, and the time it records, under the semantics it was
// made under (approvals.DecideUnder), and names each that differs; and
// names each rule whose condition names the zone "Local" or "", which
// the evaluating process's environment would choose (guard fails closed
// on it). On either engine the derivation is Go's: on PostgreSQL the
// database made the same one when the row was written (schema 34).
func verifyPolicy(ctx context.Context, tx *Tx, rep *VerifyReport) error {
	type ruleRow struct {
		rule   approvals.Rule
		seq    int64
		signed bool
	}
	rules, err := queryRows(ctx, tx, `SELECT r.id, r.pattern, r.mode, r.ttl_ms, r.approvers, r.condition, r.priority, coalesce(ev.seq, 0),
		CASE WHEN EXISTS (SELECT 1 FROM signatures s WHERE s.fact_table = 'policy_rules' AND s.fact_row = CAST(r.id AS TEXT)) THEN 1 ELSE 0 END
		FROM policy_rules r LEFT JOIN events ev ON ev.fact_table = 'policy_rules' AND ev.fact_row = CAST(r.id AS TEXT) ORDER BY coalesce(ev.seq, 0), r.id`, nil,
		func(rows *sql.Rows, x *ruleRow) error {
			var ttl int64
			var signed int
			err := rows.Scan(&x.rule.ID, &x.rule.Pattern, &x.rule.Mode, &ttl, &x.rule.Approvers, &x.rule.Condition, &x.rule.Priority, &x.seq, &signed)
			x.rule.TTL, x.signed = msDuration(ttl), signed == 1
			return err
		})
	if err != nil {
		return err
	}
	readsTarget := false
	for _, r := range rules {
		if r.rule.Condition == "" {
			continue
		}
		readsTarget = readsTarget || strings.Contains(r.rule.Condition, "action.target")
		if c, err := approvals.CompileCondition(r.rule.Condition); err == nil && len(c.LocalZones()) > 0 {
			rep.add("policy_rules", fmt.Sprintf("id=%d", r.rule.ID), "", "its condition names the zone of the process that evaluates it (%s), which that process's environment (TZ) chooses: "+
				"guard fails closed on it; set the rule again with an IANA zone or an offset", strings.Join(c.LocalZones(), ", "))
		}
	}
	type evalRow struct {
		key, mode, pattern, explain, kind, agent, context string
		ttl, rule, at, approvers, seq                     int64
		canonical                                         sql.NullString
		redacted                                          int
	}
	// Streamed in chain order: a large ledger's evaluations (and their
	// bodies) are never all held at once.
	rows, err := tx.QueryContext(ctx, `SELECT e.action_key, e.mode, e.ttl_ms, coalesce(e.rule_id, 0), e.pattern, e.at_ms, e.approvers, e.explain,
		coalesce(ev.seq, 0), pl.kind, pl.agent, pl.canonical, CAST(pl.redacted AS INTEGER), pl.context
		FROM policy_evals e JOIN payloads pl ON pl.action_key = e.action_key
		LEFT JOIN events ev ON ev.fact_table = 'policy_evals' AND ev.fact_row = e.action_key ORDER BY coalesce(ev.seq, 0), e.action_key`)
	if err != nil {
		return err
	}
	defer rows.Close()
	signedLedger := false
	for _, r := range rules {
		signedLedger = signedLedger || r.signed
	}
	var before, signedBefore []approvals.Rule
	next := 0
	for rows.Next() {
		var e evalRow
		if err := rows.Scan(&e.key, &e.mode, &e.ttl, &e.rule, &e.pattern, &e.at, &e.approvers, &e.explain, &e.seq, &e.kind, &e.agent, &e.canonical, &e.redacted, &e.context); err != nil {
			return err
		}
		if e.seq == 0 {
			continue // an evaluation no event commits: verifyFacts names it
		}
		// The rules committed before the evaluation, newest of each
		// pattern and condition, as guard read them.
		for next < len(rules) && rules[next].seq > 0 && rules[next].seq < e.seq {
			before = append(before, rules[next].rule)
			if rules[next].signed {
				signedBefore = append(signedBefore, rules[next].rule)
			}
			next++
		}
		f := approvals.Facts{Kind: e.kind, Agent: e.agent, Now: fromMS(e.at)}
		switch {
		case e.canonical.Valid:
			var p Payload
			if json.Unmarshal([]byte(e.canonical.String), &p) != nil {
				continue // verifyPayloads names a payload that is not its digest's
			}
			f.Target, f.Body = p.Target, p.Body
		case e.redacted == 1 && !readsTarget:
			// Redacted: no body, and no rule reads the target it does not keep.
		default:
			continue // a body this role may not read, or a target not kept
		}
		if e.context != "" {
			cx, err := ParseContext([]byte(e.context))
			if err != nil {
				continue // verifyPayloads names it
			}
			f.Context = cx
		}
		var ex approvals.Explain
		if e.explain != "" {
			_ = json.Unmarshal([]byte(e.explain), &ex)
		}
		sem := approvals.V1
		if ex.Semantics >= approvals.V2 {
			sem = ex.Semantics
		}
		stored := fmt.Sprintf("%s by rule %d (pattern %q, ttl %d ms, %d approvers)", e.mode, e.rule, e.pattern, e.ttl, e.approvers)
		derive := func(rs []approvals.Rule) string {
			r, _ := approvals.DecideUnder(newestRules(rs), f, sem)
			return fmt.Sprintf("%s by rule %d (pattern %q, ttl %d ms, %d approvers)", r.Mode, r.ID, r.Pattern, r.TTL.Milliseconds(), r.Approvers)
		}
		want := derive(before)
		if want == stored || signedLedger && derive(signedBefore) == stored {
			continue
		}
		rep.add("policy_evals", "action_key="+e.key, e.key, "the rules committed before it, over the stored kind, target, agent, body and context at its recorded time "+
			"(semantics %d), decide %s, not %s", sem, want, stored)
	}
	return rows.Err()
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
