package approvals

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestZonesFromTheBinary: the zoned getters read the zone database built
// into the binary: "Local" and "" are errors (never the process's TZ),
// IANA names and offsets work, a name with a path is unknown; a literal
// "Local" is found with its position for policy set to refuse.
func TestZonesFromTheBinary(t *testing.T) {
	at := time.Date(2026, 12, 5, 22, 0, 0, 0, time.UTC) // 17:00 in New York, 09:00 in Sydney
	for cond, want := range map[string]string{
		`now.getHours("America/New_York") == 17`:      "true",
		`now.getHours("Australia/Sydney") == 9`:       "true",
		`now.getHours("-05:00") == 17`:                "true",
		`now.getDayOfWeek("Pacific/Kiritimati") == 0`: "true",
		`now.getHours("EST") == 17`:                   "true",
		`now.getHours("Local") >= 0`:                  "error",
		`now.getHours("") >= 0`:                       "error",
		`now.getHours("../etc/passwd") >= 0`:          "error",
		`now.getHours("/etc/localtime") >= 0`:         "error",
		`now.getHours(context.tz) >= 0`:               "error", // context.tz = "Local"
	} {
		c, err := CompileCondition(cond)
		if err != nil {
			t.Fatal(err)
		}
		ok, _, err := c.Eval(Facts{Now: at, Context: map[string]any{"tz": "Local"}})
		got := "error"
		if err == nil {
			got = map[bool]string{true: "true", false: "false"}[ok]
		}
		if got != want {
			t.Errorf("%s: %s (%v), want %s", cond, got, err, want)
		}
	}
	if _, err := LoadZone("Local"); !errors.Is(err, ErrLocalZone) {
		t.Fatalf("Local: %v", err)
	}
	c, _ := CompileCondition(`now.getHours("Local") >= 9 && now.getDayOfWeek("") < 6`)
	if got := strings.Join(c.LocalZones(), "; "); got != `getHours("Local") at 1:14; getDayOfWeek("") at 1:48` {
		t.Fatalf("LocalZones: %s", got)
	}
	// A failing zone fails closed: the deny after it wins.
	rules := []Rule{{ID: 1, Pattern: "wire*", Mode: Auto, Condition: `now.getHours("Local") >= 9`}, {ID: 2, Pattern: "wire*", Mode: Deny}}
	if r, _ := Decide(rules, Facts{Kind: "wire", Now: at}); r.Mode != Deny {
		t.Fatalf("a Local zone decided %s", r.Mode)
	}
}
