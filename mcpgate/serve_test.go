package mcpgate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// TestServeSchemaStatesRealDefaults: guard's schema states the lease's
// bounds and default as the ledger's constants have them, and a guard
// without lease_seconds gets exactly that default.
func TestServeSchemaStatesRealDefaults(t *testing.T) {
	e := newEnv(t)
	e.policy("refund", approvals.Auto)
	cs := connect(t, NewServer(e.store, ServeOptions{}))
	var lease map[string]any
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "guard" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		var s struct{ Properties map[string]map[string]any }
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		lease = s.Properties["lease_seconds"]
	}
	def := int64(ledger.DefaultLease / time.Second)
	desc, _ := lease["description"].(string)
	for _, want := range []string{
		fmt.Sprintf("default %d", def),
		fmt.Sprintf("(%d to %d)", int64(ledger.MinLease/time.Second), int64(ledger.MaxLease/time.Second)),
	} {
		if !strings.Contains(desc, want) {
			t.Fatalf("lease_seconds says %q, want it to contain %q", desc, want)
		}
	}
	if lease["default"] != float64(def) {
		t.Fatalf("lease_seconds' default %v, want %d", lease["default"], def)
	}
	before := time.Now()
	res := call(t, cs, "guard", map[string]any{"key": "refund:lease-default", "kind": "refund", "target": "a", "body": "b"})
	a := structured(t, res)
	until, err := time.Parse(time.RFC3339Nano, fmt.Sprint(a["lease_until"]))
	if err != nil || a["verdict"] != "permitted" {
		t.Fatalf("guard: %v %v", a, err)
	}
	if got := until.Sub(before); got < ledger.DefaultLease-time.Minute || got > ledger.DefaultLease+time.Minute {
		t.Fatalf("the lease granted is %v, the schema says %v", got, ledger.DefaultLease)
	}
}
