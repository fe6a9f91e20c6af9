package cli_test

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
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
		{"policy", "set", "*", "--mode", "deny", "--priority", "10", "--if", `has(context.flags) && "pii_export" in context.flags`},
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

// TestBodyPolicyFromTheShell: a rule on action.body decides by the
// payload that executes, which --context cannot move; policy set warns
// about a field read without has(); a missing field fails closed and
// policy test says so; policy list names what is the caller's
// assertion.
func TestBodyPolicyFromTheShell(t *testing.T) {
	db := newDB(t)
	want(t, run(t, db, "", "policy", "set", "invoice.*", "--mode", "auto", "--operator", "root"), cli.ExitOK)
	set := run(t, db, "", "policy", "set", "invoice.*", "--mode", "approval", "--if", "action.body.cents > 10000", "--operator", "root")
	want(t, set, cli.ExitOK)
	if !strings.Contains(set.stdout, "warning: the condition reads action.body.cents without has(action.body.cents)") ||
		!strings.Contains(set.stdout, "warning: an action of kind invoice.x that sends none of them gets approval by 1 operator(s) now (rule 2)") {
		t.Fatalf("policy set does not warn about the unguarded field: %s", set.stdout)
	}
	want(t, run(t, db, "", "policy", "set", "pay*", "--mode", "approval", "--if", "has(context.amount) && context.amount > 1", "--operator", "root"), cli.ExitOK)
	invoice := func(key, body, context string) []string {
		return []string{"guard", key, "--json", "--agent", "bot", "--kind", "invoice.send", "--target", "acme", "--body", body, "--context", context}
	}
	// The model's context says 1; the body says 9,000.00: approval.
	r := run(t, db, "", invoice("inv:big", `{"customer":"acme","cents":900000}`, `{"amount": 1}`)...)
	want(t, r, cli.ExitRetry)
	if m := r.json(t); m["rule"].(map[string]any)["read"].(map[string]any)["action.body.cents"] != 900000.0 {
		t.Fatalf("guard does not say what the rule read: %s", r.stdout)
	}
	want(t, run(t, db, "", invoice("inv:small", `{"customer":"acme","cents":900}`, `{"amount": 9000}`)...), cli.ExitOK)
	miss := run(t, db, "", invoice("inv:none", `{"customer":"acme"}`, `{"amount": 1}`)...)
	want(t, miss, cli.ExitRetry)
	if !strings.Contains(miss.stdout, `"failed_rule":2`) {
		t.Fatalf("a missing field: %s", miss.stdout)
	}
	pt := run(t, db, "", "policy", "test", "--kind", "invoice.send", "--body", `{"customer":"acme"}`)
	want(t, pt, cli.ExitOK)
	if !strings.Contains(pt.stdout, "approval") || !strings.Contains(pt.stdout, "rule 2's condition failed, closed") {
		t.Fatalf("policy test: %s", pt.stdout)
	}
	if r := run(t, db, "", "status", "inv:none"); !strings.Contains(r.stdout, "failed, closed") {
		t.Fatalf("status: %s", r.stdout)
	}
	list := run(t, db, "", "policy", "list")
	if !strings.Contains(list.stdout, "reads the caller's assertion, not what executes: context.amount") || strings.Contains(list.stdout, "assertion, not what executes: action.body") {
		t.Fatalf("policy list: %s", list.stdout)
	}
	want(t, run(t, db, "", "verify"), cli.ExitOK)
}

// TestZonesIgnoreTheAgentsEnvironment is issue 42's agent on SQLite,
// where guard decides in the agent's own process: with ZONEINFO pointing
// at a folder of its own (America/New_York holding Sydney's zone), TZ set
// to a zone where it is noon, and the locale and GODEBUG of its choosing,
// a guard whose rule reads New York's hour decides as the honest guard
// does, from the zone data built into the binary. A rule naming "Local"
// is refused when set, naming where.
func TestZonesIgnoreTheAgentsEnvironment(t *testing.T) {
	db := newDB(t)
	ny, err := approvals.LoadZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// New York's hour now and the next (the test may cross an hour);
	// Sydney is 15 or 16 hours ahead, never one of them.
	h := time.Now().In(ny).Hour()
	cond := fmt.Sprintf(`now.getHours("America/New_York") == %d || now.getHours("America/New_York") == %d`, h, (h+1)%24)
	want(t, run(t, db, "", "policy", "set", "wire*", "--mode", "auto", "--operator", "root"), cli.ExitOK)
	want(t, run(t, db, "", "policy", "set", "wire*", "--mode", "approval", "--if", cond, "--operator", "root"), cli.ExitOK)
	// The agent's zone folder: New York is Sydney.
	zdir := t.TempDir()
	zr, err := zip.OpenReader(filepath.Join("..", "approvals", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var sydney []byte
	for _, f := range zr.File {
		if f.Name == "Australia/Sydney" {
			rc, _ := f.Open()
			sydney, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	if len(sydney) == 0 {
		t.Fatal("no Australia/Sydney in the zone database")
	}
	os.MkdirAll(filepath.Join(zdir, "America"), 0o755)
	if err := os.WriteFile(filepath.Join(zdir, "America", "New_York"), sydney, 0o644); err != nil {
		t.Fatal(err)
	}
	hostile := []string{"ZONEINFO=" + zdir, "TZ=Australia/Sydney", "TZDIR=" + zdir, "LC_ALL=de_DE.UTF-8", "LANG=de_DE.UTF-8", "GODEBUG=zoneinfo=" + zdir}
	r := runEnv(t, db, "", hostile, "guard", "wire:1", "--json", "--agent", "bot", "--kind", "wire", "--target", "acct", "--body", "x")
	want(t, r, cli.ExitRetry)
	if !strings.Contains(r.stdout, `"state":"pending"`) {
		t.Fatalf("a guard under a hostile ZONEINFO and TZ: %s", r.stdout)
	}
	want(t, run(t, db, "", "verify"), cli.ExitOK)
	bad := run(t, db, "", "policy", "set", "mail*", "--mode", "auto", "--if", `now.getHours("Local") >= 9`, "--operator", "root")
	want(t, bad, cli.ExitInvalid)
	if !strings.Contains(bad.stderr, `getHours("Local") at 1:14`) {
		t.Fatalf("a rule naming Local: %s", bad.stderr)
	}
}
