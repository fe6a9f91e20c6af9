package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// TestVerifyRederivesEvaluations: verify re-derives every policy
// evaluation from the rules before it, the stored kind, target, agent,
// body and context and its recorded time, and names one that differs:
// an evaluation written consistently (its row committed by its event)
// but decided by a process whose environment bent it (issue 42's agent
// with its own ZONEINFO) no longer verifies. An evaluation made under
// the first semantics (no version recorded) still verifies by them; one
// that claims version 2 and decides by version 1 does not. A stored rule
// naming the zone "Local" is named. On PostgreSQL the forgeries are
// written as the schema's owner copying a ledger, the one role whose
// evaluations the database does not check.
func TestVerifyRederivesEvaluations(t *testing.T) {
	s, _ := openTest(t)
	for _, r := range []approvals.Rule{
		{Pattern: "wire*", Mode: approvals.Approval, TTL: time.Hour, Condition: `now.getHours("America/New_York") == 17`},
		{Pattern: "wire*", Mode: approvals.Auto},
		{Pattern: "pay*", Mode: approvals.Approval, TTL: time.Hour, Condition: "context.amount > 100"},
		{Pattern: "pay*", Mode: approvals.Auto},
	} {
		if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := s.Policies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := func(pattern, cond string) int64 {
		for _, r := range rules {
			if r.Pattern == pattern && r.Condition == cond {
				return r.ID
			}
		}
		t.Fatalf("no rule %s %s", pattern, cond)
		return 0
	}
	// evaluate records key and writes an evaluation as a client would,
	// with the decision and explanation given.
	evaluate := func(key, kind string, c Context, mode approvals.Mode, rule int64, pattern, explain string) {
		t.Helper()
		if _, err := s.Record(ctx, key, Payload{kind, "acct", "b"}, RecordOptions{Agent: "bot", Context: c}); err != nil {
			t.Fatal(err)
		}
		ttl := int64(0)
		if mode == approvals.Approval {
			ttl = time.Hour.Milliseconds()
		}
		var ruleID any
		if rule != 0 {
			ruleID = rule
		}
		if err := s.writeKey(ctx, key, func(tx *Tx) error {
			if tx.server {
				if _, err := tx.ExecContext(ctx, "SET LOCAL tollgate.copying = 'on'"); err != nil {
					return err
				}
			}
			ref, err := insertFact(ctx, tx, "policy_evals", "action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain",
				key, string(mode), ttl, ruleID, pattern, tx.now, 1, explain)
			if err != nil {
				return err
			}
			return appendEvent(ctx, tx, key, evPolicyEvaluated, "bot", map[string]any{"mode": mode, "pattern": pattern, "ttl_ms": ttl, "approvers": 1}, tx.now, &ref)
		}); err != nil {
			t.Fatal(err)
		}
	}
	ny, _ := approvals.LoadZone("America/New_York")
	nyRule, wireAuto := id("wire*", `now.getHours("America/New_York") == 17`), id("wire*", "")
	// What the honest rules decide for a wire now, and the other answer.
	honest, bent := approvals.Auto, approvals.Approval
	honestRule, bentRule := wireAuto, nyRule
	if time.Now().In(ny).Hour() == 17 {
		honest, bent, honestRule, bentRule = bent, honest, bentRule, honestRule
	}
	evaluate("wire:honest", "wire", nil, honest, honestRule, "wire*", `{"semantics":2}`)
	evaluate("wire:bent", "wire", nil, bent, bentRule, "wire*", `{"semantics":2}`)
	// No amount: V1 fell through to auto; V2 fails closed to approval.
	payAuto, payCond := id("pay*", ""), id("pay*", "context.amount > 100")
	evaluate("pay:v1", "pay", nil, approvals.Auto, payAuto, "pay*", "")
	evaluate("pay:v2-claimed", "pay", nil, approvals.Auto, payAuto, "pay*", `{"semantics":2}`)
	evaluate("pay:v2", "pay", nil, approvals.Approval, payCond, "pay*", `{"rule_id":3,"semantics":2,"failed_rule":3}`)
	// A rule naming "Local", stored as a ledger made before the refusal
	// would hold it.
	if err := s.write(ctx, func(tx *Tx) error {
		ref, err := insertFact(ctx, tx, "policy_rules", "pattern, mode, ttl_ms, operator, set_ms, approvers, condition, priority",
			"mail*", "auto", 0, "root", tx.now, 1, `now.getHours("Local") < 17`, 0)
		if err != nil {
			return err
		}
		return appendEvent(ctx, tx, "", evPolicySet, "root", map[string]any{"rule_id": ref.rowID(), "pattern": "mail*", "mode": "auto", "ttl_ms": 0, "approvers": 1}, tx.now, &ref)
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]string{}
	for _, p := range rep.Problems {
		if p.Table == "policy_evals" || p.Table == "policy_rules" {
			named[p.Table+" "+p.Key+p.Row] += p.Rule
		}
	}
	for _, want := range []string{"policy_evals wire:bentaction_key=wire:bent", "policy_evals pay:v2-claimedaction_key=pay:v2-claimed"} {
		if !strings.Contains(named[want], "decide") {
			t.Errorf("verify does not name %s: %v", want, rep.Problems)
		}
	}
	for k := range named {
		if strings.Contains(k, "wire:honest") || strings.Contains(k, "pay:v1") || strings.Contains(k, "pay:v2 ") {
			t.Errorf("verify names an evaluation the rules make: %s %s", k, named[k])
		}
	}
	found := false
	for k, v := range named {
		found = found || strings.HasPrefix(k, "policy_rules") && strings.Contains(v, `getHours("Local")`)
	}
	if !found {
		t.Errorf("verify does not name the rule that reads Local: %v", named)
	}
}
