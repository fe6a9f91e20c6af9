package ledger

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestPostgresIntentSquatRefused (issue 41): bot1, an agent's login
// role, runs through psql SELECT tollgate_record_intent(<a key bot2 will
// guard>, <the digest of bot2's payload>), the function the client's key
// transaction calls before it inserts the payload. Up to schema 39 that
// committed an intent with no payload, no event and no role, and bot2's
// honest guard of the key answered 77 for ever. From schema 40 the
// database refuses it at COMMIT (TG002), as it does an operator's role's,
// nothing is stored, and bot2's guard is permitted. The owner may still
// record a key outside tollgate (a copy's seed intents), counted as
// external; an intent with no payload that another role wrote (here past
// the check, which the owner took off for the test) is named by verify.
func TestPostgresIntentSquatRefused(t *testing.T) {
	psqlPath(t)
	r := newPGRoles(t)
	owner := rawDB(t, r.owner)
	p := Payload{"run", "t", "bot2's future body"}
	for _, who := range []string{r.bot1, r.alice} {
		errs := psqlErrors(t, who, fmt.Sprintf("SELECT tollgate_record_intent('run:b2next', '%s');\n", p.Digest()))
		if !strings.Contains(errs[1], "an intent with no payload") {
			t.Errorf("tollgate_record_intent with no payload as %s: %q, want the database's refusal", who, errs[1])
		}
	}
	if n := scalar(t, owner, "SELECT count(*)::text FROM intents"); n != "0" {
		t.Fatalf("%s intents stored after the refused calls", n)
	}
	a, err := openAt(t, r.bot2).Guard(ctx, "run:b2next", p, GuardOptions{Agent: "bot2"})
	if err != nil || a.Verdict != Permitted {
		t.Fatalf("bot2's honest guard of the key bot1 tried to squat: %+v %v", a.Verdict, err)
	}
	if _, err := owner.Exec("SELECT tollgate_record_intent('run:outside', ?)", p.Digest()); err != nil {
		t.Fatalf("the owner's intent outside tollgate: %v", err)
	}
	rep, err := r.admin.Verify(ctx)
	if err != nil || !rep.OK() || rep.External != 1 {
		t.Fatalf("verify with the owner's external intent: %+v %v, want ok and 1 external", rep, err)
	}
	// Past the check: the owner takes it off, bot1 squats, the owner puts
	// it back. verify names the row and its writer.
	if _, err := owner.Exec("ALTER TABLE intents DISABLE TRIGGER intents_carry_their_payload"); err != nil {
		t.Fatal(err)
	}
	if errs := psqlErrors(t, r.bot1, fmt.Sprintf("SELECT tollgate_record_intent('run:squatted', '%s');\n", p.Digest())); len(errs) != 0 {
		t.Fatalf("bot1's intent with the check off: %v", errs)
	}
	if _, err := owner.Exec("ALTER TABLE intents ENABLE TRIGGER intents_carry_their_payload"); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(r.bot1)
	rep, err = r.admin.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, pr := range rep.Problems {
		named = named || pr.Table == "intents" && pr.Key == "run:squatted" && strings.Contains(pr.Rule, u.User.Username())
	}
	if rep.OK() || !named || rep.External != 1 {
		t.Errorf("verify after bot1's squat past the check: ok %v, problems %+v, external %d; want the row named with bot1's role", rep.OK(), rep.Problems, rep.External)
	}
}
