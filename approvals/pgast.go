package approvals

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// ErrNotPortable means a condition uses a construct that the PostgreSQL
// ledger's own evaluator does not implement (PortableAST). It wraps
// ErrCondition: a rule that cannot be enforced where the guard's
// transaction runs is refused like one that does not compile.
var ErrNotPortable = fmt.Errorf("%w: not evaluated by PostgreSQL", ErrCondition)

// PortableVersion numbers the form PortableAST writes; the database's
// evaluator refuses any other.
const PortableVersion = 1

// portableFuncs are the CEL functions the database's evaluator
// implements, by their CEL names (operators included), each with the
// numbers of arguments it takes (a member call's target counts).
var portableFuncs = map[string][]int{
	"_&&_": {2}, "_||_": {2}, "!_": {1}, "_?_:_": {3},
	"_==_": {2}, "_!=_": {2}, "_<_": {2}, "_<=_": {2}, "_>_": {2}, "_>=_": {2},
	"_+_": {2}, "_-_": {2}, "_*_": {2}, "_/_": {2}, "_%_": {2}, "-_": {1},
	"@in": {2}, "size": {1}, "startsWith": {2}, "endsWith": {2}, "contains": {2},
	"timestamp": {1}, "int": {1}, "double": {1},
	"getFullYear": {1, 2}, "getMonth": {1, 2}, "getDate": {1, 2}, "getDayOfMonth": {1, 2}, "getDayOfWeek": {1, 2},
	"getDayOfYear": {1, 2}, "getHours": {1, 2}, "getMinutes": {1, 2}, "getSeconds": {1, 2}, "getMilliseconds": {1, 2},
}

// PortableFunctions lists the functions and operators a condition may use
// on a PostgreSQL ledger, sorted (docs/policy.md lists them).
func PortableFunctions() []string {
	out := make([]string, 0, len(portableFuncs))
	for f := range portableFuncs {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Portable is a condition as the PostgreSQL ledger evaluates it: a closed
// set of nodes, each a JSON array whose first element names it.
//
//	["b", true] ["i", 5] ["d", 1.5] ["s", "x"] ["null"]  literals
//	["ctx", "amount"] ["has", "amount"]                  context.amount, has(context.amount)
//	["act", "kind"] ["hasact", "kind"]                   action.kind, has(action.kind)
//	["body", "a", "b"] ["hasbody", "a", "b"]             action.body.a.b, has(action.body.a.b)
//	["now"]                                              the row's time
//	["list", node...]                                    a list literal
//	["call", "fn", node...]                              a function or operator; a member call's target first
//
// Reads are the context fields the condition names (a missing one makes
// the condition false rather than an error, as in Decide).
type Portable struct {
	V     int      `json:"v"`
	Reads []string `json:"reads"`
	Expr  any      `json:"expr"`
}

// PortableAST translates the condition into the form the PostgreSQL
// ledger evaluates (Portable, as JSON). A construct outside that form (a
// macro such as all or exists, a map, an index, bytes, durations,
// unsigned integers, matches, string conversion) is refused with its
// position, wrapping ErrNotPortable.
func (c *Condition) PortableAST() (string, error) { return c.portable, c.portableErr }

// translate is PortableAST's work, done once when the condition compiles
// (a compiled condition is shared, so it is never changed after).
func (c *Condition) translate(a *celast.AST) (string, error) {
	t := translator{ast: a}
	expr, err := t.node(a.Expr())
	if err != nil {
		return "", err
	}
	reads := []string{}
	for _, r := range c.reads {
		if f, ok := strings.CutPrefix(r, "context."); ok {
			reads = append(reads, f)
		}
	}
	b, err := json.Marshal(Portable{V: PortableVersion, Reads: reads, Expr: expr})
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// PortableConditionAST compiles src and translates it (PortableAST).
func PortableConditionAST(src string) (string, error) {
	c, err := CompileCondition(src)
	if err != nil {
		return "", err
	}
	return c.PortableAST()
}

type translator struct{ ast *celast.AST }

// refuse names the construct and where it starts (line:column, as CEL's
// own errors count them).
func (t translator) refuse(x celast.Expr, what string) error {
	loc := t.ast.SourceInfo().GetStartLocation(x.ID())
	return fmt.Errorf("%w: %s at %d:%d; a PostgreSQL rule may use literals, action.kind/target/agent, context.*, has(), now, "+
		"comparisons, && || ! ?:, in over a list, + - * / %% on numbers, + on strings and lists, size, startsWith, endsWith, contains, "+
		"timestamp(), int(), double() and the timestamp getters", ErrNotPortable, what, loc.Line(), loc.Column()+1)
}

// unportableType reports the node types the evaluator has no value for.
func unportableType(tp *types.Type) string {
	switch tp.Kind() {
	case types.BytesKind:
		return "bytes"
	case types.DurationKind:
		return "a duration"
	case types.UintKind:
		return "an unsigned integer"
	case types.MapKind:
		return "a map"
	case types.TypeKind:
		return "a type value"
	case types.OpaqueKind, types.StructKind:
		return "a value of type " + tp.String()
	}
	return ""
}

func (t translator) node(x celast.Expr) (any, error) {
	if what := unportableType(t.ast.GetType(x.ID())); what != "" {
		return nil, t.refuse(x, what)
	}
	switch x.Kind() {
	case celast.LiteralKind:
		switch v := x.AsLiteral().(type) {
		case types.Bool:
			return []any{"b", bool(v)}, nil
		case types.Int:
			return []any{"i", int64(v)}, nil
		case types.Double:
			return []any{"d", float64(v)}, nil
		case types.String:
			return []any{"s", string(v)}, nil
		case types.Null:
			return []any{"null"}, nil
		}
		return nil, t.refuse(x, "the literal "+fmt.Sprint(x.AsLiteral()))
	case celast.IdentKind:
		if x.AsIdent() == "now" {
			return []any{"now"}, nil
		}
		return nil, t.refuse(x, "the whole map "+x.AsIdent())
	case celast.SelectKind:
		s := x.AsSelect()
		if op := s.Operand(); op.Kind() == celast.IdentKind {
			switch op.AsIdent() {
			case "context":
				if s.IsTestOnly() {
					return []any{"has", s.FieldName()}, nil
				}
				return []any{"ctx", s.FieldName()}, nil
			case "action":
				if s.IsTestOnly() {
					return []any{"hasact", s.FieldName()}, nil
				}
				return []any{"act", s.FieldName()}, nil
			}
		}
		if path, ok := fieldPath(x); ok && strings.HasPrefix(path, "action.body.") {
			out := []any{"body"}
			if s.IsTestOnly() {
				out[0] = "hasbody"
			}
			for _, f := range strings.Split(strings.TrimPrefix(path, "action.body."), ".") {
				out = append(out, f)
			}
			return out, nil
		}
		return nil, t.refuse(x, "the field selection ."+s.FieldName())
	case celast.ListKind:
		l := x.AsList()
		if len(l.OptionalIndices()) > 0 {
			return nil, t.refuse(x, "an optional list element")
		}
		out := []any{"list"}
		for _, e := range l.Elements() {
			n, err := t.node(e)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	case celast.CallKind:
		c := x.AsCall()
		args := c.Args()
		if c.IsMemberFunction() {
			args = append([]celast.Expr{c.Target()}, args...)
		}
		fn := c.FunctionName()
		arity, ok := portableFuncs[fn]
		if !ok || !slices.Contains(arity, len(args)) {
			if fn == "_[_]" {
				return nil, t.refuse(x, "an index x[i]")
			}
			return nil, t.refuse(x, "the function "+strings.Trim(fn, "_@!"))
		}
		out := []any{"call", fn}
		for _, a := range args {
			n, err := t.node(a)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	case celast.ComprehensionKind:
		return nil, t.refuse(x, "a macro over a list (all, exists, exists_one, map, filter)")
	case celast.MapKind, celast.StructKind:
		return nil, t.refuse(x, "a map or message literal")
	}
	return nil, t.refuse(x, "this expression")
}
