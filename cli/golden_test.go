package cli_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/testdata"
)

var update = flag.Bool("update", false, "rewrite testdata/cli/*.json from this run")

// volatile are the answer fields that differ from run to run (times,
// random ids, chain hashes over times, paths): the goldens hold a
// placeholder for each, so the shape and every other value are compared.
var (
	volatileKeys = map[string]bool{"permit_id": true, "ledger_id": true, "epoch": true, "active_epoch": true, "key_epoch": true,
		"chain_head": true, "last_event_hash": true, "hash": true, "prev_hash": true, "ledger": true, "backup": true, "fingerprint": true}
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)
)

func normalize(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e, k)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalize(e, key)
		}
		return x
	case string:
		switch {
		case volatileKeys[key] && x != "":
			return "<" + key + ">"
		case timeRE.MatchString(x):
			return "<time>"
		}
		return uuidRE.ReplaceAllString(x, "<uuid>")
	}
	return v
}

// TestJSONAnswersGolden runs every command that answers in JSON through
// one scenario and compares each answer, and its exit code, with its
// golden under testdata/cli/: a change to any agent-facing field shows as
// a diff to review, and -update records the new answers.
func TestJSONAnswersGolden(t *testing.T) {
	sqliteOnly(t)
	db := newDB(t)
	backup := filepath.Join(t.TempDir(), "copy.db")
	pay := func(kind, body string) []string {
		return []string{"--kind", kind, "--target", "acct-7", "--body", body, "--agent", "bot"}
	}
	var permit, uncertainPermit string
	steps := []struct {
		name string
		args func() []string
	}{
		{"migrate", func() []string { return []string{"migrate"} }},
		{"policy-set-approval", func() []string {
			return []string{"policy", "set", "refund", "--mode", "approval", "--ttl", "1h", "--approvers", "2"}
		}},
		{"policy-set-auto", func() []string { return []string{"policy", "set", "report.*", "--mode", "auto"} }},
		{"policy-list", func() []string { return []string{"policy", "list"} }},
		{"guard-permitted", func() []string { return append([]string{"guard", "report:1"}, pay("report.daily", "totals")...) }},
		{"report-succeeded", func() []string {
			return []string{"report", "report:1", "--permit", permit, "--outcome", "succeeded", "--ref", "ext-1"}
		}},
		{"guard-settled", func() []string { return append([]string{"guard", "report:1"}, pay("report.daily", "totals")...) }},
		{"guard-pending", func() []string { return append([]string{"guard", "refund:1"}, pay("refund", "40 EUR")...) }},
		{"guard-conflict", func() []string { return append([]string{"guard", "refund:1"}, pay("refund", "400 EUR")...) }},
		{"record", func() []string { return append([]string{"record", "refund:2"}, pay("refund", "5 EUR")...) }},
		{"approve-first-of-two", func() []string { return []string{"approve", "refund:1", "--operator", "alice"} }},
		{"approve-same-operator", func() []string { return []string{"approve", "refund:1", "--operator", "Alice"} }},
		{"approve-second", func() []string { return []string{"approve", "refund:1", "--operator", "bob", "--reason", "checked"} }},
		{"guard-after-approval", func() []string { return append([]string{"guard", "refund:1"}, pay("refund", "40 EUR")...) }},
		{"guard-pending-2", func() []string { return append([]string{"guard", "refund:3"}, pay("refund", "9 EUR")...) }},
		{"reject", func() []string { return []string{"reject", "refund:3", "--operator", "alice", "--reason", "duplicate"} }},
		{"guard-rejected", func() []string { return append([]string{"guard", "refund:3"}, pay("refund", "9 EUR")...) }},
		{"guard-uncertain-permit", func() []string { return append([]string{"guard", "report:2"}, pay("report.daily", "x")...) }},
		{"report-unknown", func() []string {
			return []string{"report", "report:2", "--permit", uncertainPermit, "--outcome", "unknown"}
		}},
		{"reconcile", func() []string {
			return []string{"reconcile", "report:2", "--result", "executed", "--note", "provider shows it", "--operator", "alice"}
		}},
		{"status", func() []string { return []string{"status", "refund:1"} }},
		{"list", func() []string { return []string{"list", "--limit", "3"} }},
		{"epoch-activate", func() []string { return []string{"epoch", "activate", "--operator", "alice"} }},
		{"epoch-show", func() []string { return []string{"epoch", "show"} }},
		{"guard-fenced", func() []string { return append([]string{"guard", "report:3"}, pay("report.daily", "x")...) }},
		{"operators-list", func() []string { return []string{"operators", "list"} }},
		{"verify", func() []string { return []string{"verify"} }},
		{"backup", func() []string { return []string{"backup", backup} }},
		{"usage-error", func() []string { return []string{"guard"} }},
		{"not-found", func() []string { return []string{"status", "nope:1"} }},
	}
	for i, st := range steps {
		args := append(st.args(), "--json")
		r := run(t, db, "", args...)
		var answer any
		if err := json.Unmarshal([]byte(r.stdout), &answer); err != nil {
			t.Fatalf("%s: not one JSON value: %q (%v)", st.name, r.stdout, err)
		}
		if m, ok := answer.(map[string]any); ok {
			switch st.name {
			case "guard-permitted":
				permit, _ = m["permit_id"].(string)
			case "guard-uncertain-permit":
				uncertainPermit, _ = m["permit_id"].(string)
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		shownArgs := make([]any, len(args))
		for i, a := range args {
			shownArgs[i] = normalize(strings.Replace(a, filepath.Dir(backup), "<dir>", 1), "")
		}
		enc.Encode(map[string]any{"args": shownArgs, "exit_code": r.code, "answer": normalize(answer, "")})
		got := buf.Bytes()
		path := testdata.Path("cli", fmt.Sprintf("%02d-%s.json", i+1, st.name))
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run with -update to record it)", st.name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the answer differs from %s:\n--- want\n%s\n--- got\n%s", st.name, path, want, got)
		}
	}
	if *update {
		return
	}
	// Every golden belongs to a step: a renamed step leaves none behind.
	files, _ := filepath.Glob(testdata.Path("cli", "*.json"))
	if len(files) != len(steps) {
		t.Errorf("%d goldens for %d steps: remove the stale ones (%s)", len(files), len(steps), strings.Join(files, ", "))
	}
}
