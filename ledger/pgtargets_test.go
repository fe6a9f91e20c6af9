package ledger

import (
	"testing"
)

// TestPostgresTargetsHiddenFromOtherAgents (issue 41): up to schema 41
// every role read every key's target in clear in the projection
// (action_index.target), an IBAN in the trial, though other roles'
// bodies were hidden. From schema 42 the projection's table is private
// behind a view that shows a target only to the role that wrote the key's
// payload, to operators and to the owner: bot2, through psql and through
// its store's status, reads an empty target for bot1's key and sees its
// state as before; bot1, alice and the owner read the IBAN; a later
// report of bot1's (which refreshes the projection) keeps it; verify
// proves the projection.
func TestPostgresTargetsHiddenFromOtherAgents(t *testing.T) {
	psqlPath(t)
	r := newPGRoles(t)
	const iban = "DE89370400440532013000"
	bot1, bot2 := openAt(t, r.bot1), openAt(t, r.bot2)
	a, err := bot1.Guard(ctx, "run:pay", Payload{"run", iban, "77.00"}, GuardOptions{Agent: "bot1"})
	if err != nil || a.PermitID == "" {
		t.Fatalf("bot1's guard: %+v %v", a, err)
	}
	if _, err := bot1.Report(ctx, "run:pay", a.PermitID, Succeeded, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	target := func(u string) string {
		t.Helper()
		return scalar(t, rawDB(t, u), "SELECT target || '|' || stage FROM action_index WHERE action_key = 'run:pay'")
	}
	for who, u := range map[string]string{"bot1": r.bot1, "alice": r.alice, "the owner": r.owner} {
		if got := target(u); got != iban+"|succeeded" {
			t.Errorf("%s reads %q, want the target and the state", who, got)
		}
	}
	if got := target(r.bot2); got != "|succeeded" {
		t.Errorf("bot2 reads %q for bot1's key, want no target and the state", got)
	}
	if errs := psqlErrors(t, r.bot2, "SELECT target FROM tollgate_private.action_index;\nSELECT 1 FROM action_index WHERE target LIKE 'DE%';\n"); errs[1] == "" || len(errs) != 1 {
		t.Errorf("bot2 through psql: %v, want the private table refused and the view read", errs)
	}
	if n := scalar(t, rawDB(t, r.bot2), "SELECT count(*)::text FROM action_index WHERE target LIKE 'DE%'"); n != "0" {
		t.Errorf("bot2 finds %s keys by their target", n)
	}
	d, err := bot2.Status(ctx, "run:pay")
	if err != nil || d.State != StateSucceeded {
		t.Fatalf("bot2's status of bot1's key: %+v %v", d, err)
	}
	sealAsOperator(t, r)
	verifyOK(t, r.admin)
}
