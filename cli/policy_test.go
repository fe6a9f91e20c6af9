package cli_test

import (
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
)

// TestContextPolicyFromTheShell: the README's refund policy, set with
// --if, decides guards by their --context; policy test explains without
// writing; bad conditions and bad context are refused by rule.
func TestContextPolicyFromTheShell(t *testing.T) {
	db := newDB(t)
	for _, args := range [][]string{
		{"policy", "set", "refund.*", "--mode", "approval"},
		{"policy", "set", "refund.*", "--mode", "auto", "--if", "context.amount <= 50"},
		{"policy", "set", "refund.*", "--mode", "approval", "--approvers", "2", "--if", "context.amount > 5000"},
		{"policy", "set", "*", "--mode", "deny", "--priority", "10", "--if", `"pii_export" in context.flags`},
	} {
		want(t, run(t, db, "", append(args, "--operator", "root")...), cli.ExitOK)
	}
	refund := func(key, context string) []string {
		return []string{"guard", key, "--json", "--agent", "bot", "--kind", "refund.card", "--target", "acct-1", "--body", "refund", "--context", context}
	}
	r := run(t, db, "", refund("refund:small", `{"amount": 49.99}`)...)
	want(t, r, cli.ExitOK)
	if m := r.json(t); m["rule"].(map[string]any)["read"].(map[string]any)["context.amount"] != 49.99 {
		t.Fatalf("guard does not say what the rule read: %s", r.stdout)
	}
	// JSON for a person or a program, not a web page: no HTML escaping.
	if !strings.Contains(r.stdout, `"context.amount <= 50"`) || strings.Contains(r.stdout, `\u003c`) {
		t.Fatalf("guard --json escapes the condition as HTML: %s", r.stdout)
	}
	want(t, run(t, db, "", refund("refund:large", `{"amount": 7000}`)...), cli.ExitRetry)
	want(t, run(t, db, "", refund("refund:pii", `{"amount": 1, "flags": ["pii_export"]}`)...), cli.ExitDenied)
	c := run(t, db, "", refund("refund:small", `{"amount": 60}`)...)
	want(t, c, cli.ExitConflict)
	if !strings.Contains(c.stdout, "context.amount") {
		t.Fatalf("a changed context: %s", c.stdout)
	}
	if r := run(t, db, "", "status", "refund:large"); !strings.Contains(r.stdout, "decided by:   rule 3 (refund.*) if context.amount > 5000 read") ||
		!strings.Contains(r.stdout, `context:      {"amount":7000}`) {
		t.Fatalf("status: %s", r.stdout)
	}
	if r := run(t, db, "", "policy", "list"); strings.Index(r.stdout, "pii_export") > strings.Index(r.stdout, "context.amount <= 50") {
		t.Fatalf("policy list is not in evaluation order: %s", r.stdout)
	}
	r = run(t, db, "", "policy", "test", "--kind", "refund.card", "--context", `{"amount": 6000}`, "--json")
	want(t, r, cli.ExitOK)
	if m := r.json(t); m["mode"] != "approval" || m["approvers"] != 2.0 {
		t.Fatalf("policy test: %s", r.stdout)
	}
	if r := run(t, db, "", "policy", "test", "--kind", "email.customer", "--at", "2026-12-04T21:00:00+01:00"); !strings.Contains(r.stdout, "no rule matches") {
		t.Fatalf("policy test with no match: %s", r.stdout)
	}
	bad := run(t, db, "", "policy", "set", "x", "--mode", "auto", "--if", "context.amount >", "--operator", "root")
	want(t, bad, cli.ExitInvalid)
	if !strings.Contains(bad.stderr, "1:17") {
		t.Fatalf("a bad condition: %s", bad.stderr)
	}
	badCtx := run(t, db, "", refund("refund:bad", `{"Amount": 1}`)...)
	want(t, badCtx, cli.ExitInvalid)
	if !strings.Contains(badCtx.stdout, `field \"Amount\"`) {
		t.Fatalf("a bad context: %s", badCtx.stdout)
	}
	want(t, run(t, db, "", "verify"), cli.ExitOK)
}
