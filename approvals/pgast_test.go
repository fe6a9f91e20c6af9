package approvals

import (
	"errors"
	"strings"
	"testing"
)

// TestPortableAST: a condition in the subset the PostgreSQL ledger
// evaluates translates to its closed JSON form, with the context fields
// it reads; anything else is refused, wrapping ErrNotPortable and
// ErrCondition, naming the construct and where it starts.
func TestPortableAST(t *testing.T) {
	got, err := PortableConditionAST(`context.amount <= 50 && "vip" in context.flags`)
	want := `{"v":1,"reads":["amount","flags"],"expr":["call","_\u0026\u0026_",["call","_\u003c=_",["ctx","amount"],["i",50]],["call","@in",["s","vip"],["ctx","flags"]]]}`
	if err != nil || got != want {
		t.Fatalf("got %s %v\nwant %s", got, err, want)
	}
	for src, where := range map[string]string{
		`context.items.all(i, i != "x")`:              "a macro over a list (all, exists, exists_one, map, filter) at 1:18",
		`context.m["x"] == 1`:                         "an index x[i] at 1:10",
		`size(context.name) > 2u`:                     "an unsigned integer at 1:22",
		`now - duration("1h") > now`:                  "a duration at 1:15",
		`context.name.matches("^a")`:                  "the function matches at 1:21",
		`string(context.amount) == "1"`:               "the function string at 1:7",
		`{"a": 1}["a"] == 1`:                          "an index x[i] at 1:9",
		`"x" in context`:                              "a map at 1:8",
		`action.kind == "a" || b"x" == b"x"`:          "bytes at 1:23",
		`has(context.a) && type(context.a) == string`: "a type value",
	} {
		_, err := PortableConditionAST(src)
		if !errors.Is(err, ErrNotPortable) || !errors.Is(err, ErrCondition) || !strings.Contains(err.Error(), where) {
			t.Errorf("%s: %v, want a refusal naming %q", src, err, where)
		}
	}
}

// TestPortableBody: action.body paths translate to the body nodes the
// database's evaluator walks; the whole body as a value (a map) is
// refused like any map.
func TestPortableBody(t *testing.T) {
	got, err := PortableConditionAST(`has(action.body.customer.id) && action.body.cents > 100 && has(action.body)`)
	want := `{"v":1,"reads":[],"expr":["call","_\u0026\u0026_",["call","_\u0026\u0026_",["hasbody","customer","id"],["call","_\u003e_",["body","cents"],["i",100]]],["hasact","body"]]}`
	if err != nil || got != want {
		t.Fatalf("got %s %v\nwant %s", got, err, want)
	}
	if _, err := PortableConditionAST(`size(action.body) > 1`); !errors.Is(err, ErrNotPortable) {
		t.Fatalf("the whole body: %v", err)
	}
}
