package ledger

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-dev/tollgate/approvals"
)

// hostileSettings are the session settings an agent's role may change
// that PostgreSQL functions read: each once in
// TestPostgresDecisionIgnoresSessionSettings, all at once in the
// differential tests (hostileProfile).
var hostileSettings = []string{
	"extra_float_digits = -15",
	"timezone_abbreviations = 'Australia'",
	"TimeZone = 'Pacific/Kiritimati'",
	"DateStyle = 'SQL, DMY'",
	"IntervalStyle = 'sql_standard'",
	"standard_conforming_strings = off",
}

// TestPostgresDecisionIgnoresSessionSettings is issue 41's attack: an
// agent's role writes the client path's evaluation by hand, in a
// transaction where it first changes one session setting, hoping the
// database's evaluator then agrees with a decision the rules do not
// make (with extra_float_digits = -15 a double read as 5000 where it
// was 5400; with timezone_abbreviations = Australia "EST" is ten hours
// ahead of New York). For each setting and each rule set, every
// decision the rules could give is tried: only approvals.Decide's
// commits, and it does (the test is not refusing everything).
func TestPostgresDecisionIgnoresSessionSettings(t *testing.T) {
	if !onPostgres {
		t.Skip("session settings are PostgreSQL's")
	}
	r := newPGRoles(t)
	at := time.Now().UTC().Truncate(time.Millisecond)
	est, _ := approvals.LoadZone("EST")
	hour := at.In(est).Hour()
	rules := []approvals.Rule{
		{Pattern: "pay*", Mode: approvals.Approval, TTL: time.Hour, Condition: "context.amount > 5000"},
		{Pattern: "pay*", Mode: approvals.Auto},
		{Pattern: "inv*", Mode: approvals.Approval, TTL: time.Hour, Condition: "double(action.body.cents) / 100.0 > 50.01"},
		{Pattern: "inv*", Mode: approvals.Auto},
		{Pattern: "win*", Mode: approvals.Approval, TTL: time.Hour, Condition: fmt.Sprintf(`now.getHours("EST") == %d`, hour)},
		{Pattern: "win*", Mode: approvals.Auto},
		{Pattern: "due*", Mode: approvals.Auto, Condition: `timestamp(context.due) > timestamp("2026-01-01T00:00:00Z")`},
		{Pattern: "due*", Mode: approvals.Approval, TTL: time.Hour},
	}
	for i, rule := range rules {
		got, err := r.admin.SetPolicy(ctx, rule, "root")
		if err != nil {
			t.Fatal(err)
		}
		rules[i].ID = got.ID
	}
	actions := []struct {
		kind, body string
		c          Context
	}{
		{"pay.card", "b", Context{"amount": 5400.0}},
		{"inv.send", `{"customer":"acme","cents":5002}`, nil},
		{"win.send", "b", nil},
		{"due.send", "b", Context{"due": "2026-06-01T00:00:00x5Z"}},
	}
	bot1 := openAt(t, r.bot1)
	for si, setting := range hostileSettings {
		for ai, act := range actions {
			key := fmt.Sprintf("set:%d-%d", si, ai)
			if _, err := bot1.Record(ctx, key, Payload{act.kind, "acct-1", act.body}, RecordOptions{Agent: "bot1", Context: act.c}); err != nil {
				t.Fatal(err)
			}
			// Every outcome a rule of this kind, or the default, could give.
			cands := []approvals.Rule{approvals.DefaultRule()}
			for _, rule := range rules {
				if approvals.PatternMatches(rule.Pattern, act.kind) {
					cands = append(cands, rule)
				}
			}
			committed := 0
			for _, c := range cands {
				c = withRuleDefaults(c)
				var id any
				if c.ID != 0 {
					id = c.ID
				}
				var want approvals.Rule
				// The client's path as the agent's role writes it by hand:
				// its own session setting, the evaluation, its event.
				err := bot1.writeKey(ctx, key, func(tx *Tx) error {
					want, _ = approvals.Decide(rules, approvals.Facts{Kind: act.kind, Target: "acct-1", Agent: "bot1", Body: act.body, Context: act.c, Now: fromMS(tx.now)})
					if _, err := tx.ExecContext(ctx, "SET LOCAL "+setting); err != nil {
						return err
					}
					ref, err := insertFact(ctx, tx, "policy_evals", "action_key, mode, ttl_ms, rule_id, pattern, at_ms, approvers, explain",
						key, string(c.Mode), c.TTL.Milliseconds(), id, c.Pattern, tx.now, c.Approvers, "")
					if err != nil {
						return err
					}
					return appendEvent(ctx, tx, key, evPolicyEvaluated, "bot1", map[string]any{"mode": c.Mode, "pattern": c.Pattern,
						"ttl_ms": c.TTL.Milliseconds(), "approvers": c.Approvers}, tx.now, &ref)
				})
				var pe *pgconn.PgError
				switch {
				case err == nil:
					committed++
					if c.ID != want.ID || c.Mode != want.Mode {
						t.Errorf("%s, %s: the agent's role committed %s by rule %d; the rules decide %s by rule %d", setting, act.kind, c.Mode, c.ID, want.Mode, want.ID)
					}
				case errors.As(err, &pe) && (pe.Code == "TG002" || pe.Code == "23505"), errors.Is(err, ErrIntegrity), errors.Is(err, ErrNotPermitted):
					if c.ID == want.ID && c.Mode == want.Mode {
						t.Logf("%s, %s: the rules' own decision refused: %v", setting, act.kind, err)
					}
				default:
					t.Fatalf("%s, %s: %v", setting, act.kind, err)
				}
			}
			if committed != 1 {
				t.Errorf("%s, %s: %d evaluations committed, want the rules' own one", setting, act.kind, committed)
			}
		}
	}
}

// withRuleDefaults is a candidate rule as an evaluation stores it.
func withRuleDefaults(r approvals.Rule) approvals.Rule {
	if r.Mode == approvals.Approval && r.TTL <= 0 {
		r.TTL = approvals.DefaultTTL
	}
	if r.Mode != approvals.Approval {
		r.TTL = 0
	}
	r.Approvers = max(r.Approvers, 1)
	return r
}
