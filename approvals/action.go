package approvals

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// actionTypeName is the CEL object type of the action variable: kind,
// target and agent are strings, body a map (SPEC 10). An object type,
// not a map of strings, so that a condition is still type-checked on
// kind, target and agent while the body is dynamic.
const actionTypeName = "tollgate.Action"

// ErrBodyNumber means a body's integral number does not fit an int64:
// a condition that reads the body then fails (and fails closed) rather
// than reading a rounded figure.
var ErrBodyNumber = errors.New("an integral number in the body is beyond int64")

// actionValue is the action as conditions read it. The body is parsed
// from its text only when a condition reads it, once per decision.
type actionValue struct {
	kind, target, agent, body string
	parsed                    bool
	val                       ref.Val // the body as a CEL map, or nil when absent
	native                    map[string]any
	err                       error
}

func (a *actionValue) bodyValue() (ref.Val, error) {
	if !a.parsed {
		a.parsed = true
		a.native, a.err = ParseBody(a.body)
		if a.err == nil && a.native != nil {
			a.val = types.DefaultTypeAdapter.NativeToValue(a.native)
		}
	}
	return a.val, a.err
}

// ParseBody reads an action's body as conditions see it: a body that is
// one JSON object is a map; any other body (text, a list, a number,
// empty, redacted) is absent (nil, no error). Numbers are typed as
// PostgreSQL's numeric types them, so both engines read one body alike:
// a number whose decimal scale is 0 (50, 5e3, 1.5e1) is an int, and one
// beyond int64 is ErrBodyNumber; any other (50.0, 0.1, 1e-3) a double.
func ParseBody(body string) (map[string]any, error) {
	s := strings.TrimLeft(body, " \t\r\n")
	if !strings.HasPrefix(s, "{") {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, nil
	}
	if strings.TrimLeft(body[dec.InputOffset():], " \t\r\n") != "" {
		return nil, nil // something after the object: not one object
	}
	v, err := typedBody(raw)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func typedBody(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			t, err := typedBody(e)
			if err != nil {
				return nil, err
			}
			x[k] = t
		}
		return x, nil
	case []any:
		for i, e := range x {
			t, err := typedBody(e)
			if err != nil {
				return nil, err
			}
			x[i] = t
		}
		return x, nil
	case json.Number:
		return bodyNumber(string(x))
	}
	return v, nil
}

// bodyNumber types one JSON number: its scale is the digits after the
// point less the exponent, as PostgreSQL's numeric input counts it.
func bodyNumber(s string) (any, error) {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return nil, fmt.Errorf("body number %q: %v", s, err)
		}
		mant, exp = s[:i], e
	}
	frac := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		frac = len(mant) - i - 1
	}
	if frac-exp > 0 {
		f, err := strconv.ParseFloat(s, 64)
		if err == nil && f == 0 && strings.ContainsAny(mant, "123456789") {
			err = errors.New("underflows to zero") // PostgreSQL's float8 refuses it too
		}
		if err != nil {
			return nil, fmt.Errorf("body number %q: out of range for a double: %v", s, err)
		}
		return f, nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return nil, fmt.Errorf("%w: %s", ErrBodyNumber, s)
	}
	return r.Num().Int64(), nil
}

// actionProvider declares tollgate.Action's fields to the checker and
// reads them at run time, beside CEL's own types.
type actionProvider struct{ *types.Registry }

var actionType = types.NewObjectType(actionTypeName)

var actionFields = map[string]*types.FieldType{
	"kind":   {Type: types.StringType, IsSet: func(any) bool { return true }, GetFrom: stringField(func(a *actionValue) string { return a.kind })},
	"target": {Type: types.StringType, IsSet: func(any) bool { return true }, GetFrom: stringField(func(a *actionValue) string { return a.target })},
	"agent":  {Type: types.StringType, IsSet: func(any) bool { return true }, GetFrom: stringField(func(a *actionValue) string { return a.agent })},
	"body": {
		Type: types.NewMapType(types.StringType, types.DynType),
		IsSet: func(t any) bool {
			a, ok := t.(*actionValue)
			if !ok {
				return false
			}
			v, err := a.bodyValue()
			return v != nil || err != nil
		},
		GetFrom: func(t any) (any, error) {
			a, ok := t.(*actionValue)
			if !ok {
				return nil, errors.New("not an action")
			}
			v, err := a.bodyValue()
			if err != nil {
				return nil, err
			}
			if v == nil {
				return nil, errors.New("no such key: body (the action's body is not a JSON object, or is redacted)")
			}
			return v, nil
		},
	},
}

func stringField(get func(*actionValue) string) ref.FieldGetter {
	return func(t any) (any, error) {
		a, ok := t.(*actionValue)
		if !ok {
			return nil, errors.New("not an action")
		}
		return types.String(get(a)), nil
	}
}

func (p actionProvider) FindStructType(name string) (*types.Type, bool) {
	if name == actionTypeName {
		return types.NewTypeTypeWithParam(actionType), true
	}
	return p.Registry.FindStructType(name)
}

func (p actionProvider) FindStructFieldNames(name string) ([]string, bool) {
	if name == actionTypeName {
		return []string{"agent", "body", "kind", "target"}, true
	}
	return p.Registry.FindStructFieldNames(name)
}

func (p actionProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if name == actionTypeName {
		f, ok := actionFields[field]
		return f, ok
	}
	return p.Registry.FindStructFieldType(name, field)
}

// actionVal is the action as a CEL value: only its fields are read (a
// condition that uses the whole action is refused by the checker's
// types or fails here).
type actionVal struct{ a *actionValue }

func (v actionVal) ConvertToNative(reflect.Type) (any, error) {
	return nil, errors.New("the action cannot be converted")
}
func (v actionVal) ConvertToType(ref.Type) ref.Val {
	return types.NewErr("the action cannot be converted")
}
func (v actionVal) Equal(o ref.Val) ref.Val {
	w, ok := o.(actionVal)
	return types.Bool(ok && w.a == v.a)
}
func (v actionVal) Type() ref.Type { return actionType }
func (v actionVal) Value() any     { return v.a }

func actionEnvOptions() ([]cel.EnvOption, error) {
	reg, err := types.NewRegistry()
	if err != nil {
		return nil, err
	}
	return []cel.EnvOption{cel.CustomTypeProvider(actionProvider{reg}), cel.CustomTypeAdapter(reg),
		cel.Variable("action", cel.ObjectType(actionTypeName))}, nil
}

// lookupBody reads a dotted path (after action.body) in a parsed body.
func lookupBody(body map[string]any, path string) (any, bool) {
	var cur any = body
	for _, f := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[f]; !ok {
			return nil, false
		}
	}
	return cur, true
}
