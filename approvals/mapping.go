package approvals

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// A Mapping derives one context field from a tool call on the side that
// forwards it (tollgate mcp proxy --context NAME=CEL): a CEL expression
// over tool (the tool's name) and args (its arguments, each number a
// double, as a JSON number is to CEL), so that the facts a rule reads
// come from what will execute, not from what the caller asserts.
type Mapping struct {
	Name, Source string
	prog         cel.Program
}

var (
	mapEnvOnce sync.Once
	mapEnv     *cel.Env
	mapEnvErr  error
)

// CompileMapping compiles NAME=EXPR, refusing it with the position of
// the error; the name must be a context field's.
func CompileMapping(def string, validName func(string) bool) (*Mapping, error) {
	name, src, ok := strings.Cut(def, "=")
	name = strings.TrimSpace(name)
	if !ok || src == "" || !validName(name) {
		return nil, fmt.Errorf("%w: --context %q: give NAME=CEL, NAME a context field ([a-z][a-z0-9_]*)", ErrCondition, def)
	}
	if len(src) > MaxConditionLen {
		return nil, fmt.Errorf("%w: --context %s: at most %d bytes", ErrCondition, name, MaxConditionLen)
	}
	mapEnvOnce.Do(func() {
		mapEnv, mapEnvErr = cel.NewEnv(append(zoneEnvOptions(),
			cel.Variable("tool", cel.StringType),
			cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
			cel.CrossTypeNumericComparisons(true))...)
	})
	if mapEnvErr != nil {
		return nil, mapEnvErr
	}
	ast, iss := mapEnv.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("%w: --context %s: %s", ErrCondition, name, strings.ReplaceAll(iss.Err().Error(), "\n", " "))
	}
	prog, err := mapEnv.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.CostLimit(conditionCostLimit))
	if err != nil {
		return nil, fmt.Errorf("%w: --context %s: %v", ErrCondition, name, err)
	}
	return &Mapping{Name: name, Source: src, prog: prog}, nil
}

// Eval derives the field from a call: a string, a finite number
// (float64), a boolean, a list of strings, or a timestamp as RFC 3339
// text. An error (a missing argument, a wrong type, another result) is
// returned, and the caller leaves the field out, so that a rule reading
// it fails closed.
func (m *Mapping) Eval(tool string, args map[string]any) (any, error) {
	out, _, err := m.prog.Eval(map[string]any{"tool": tool, "args": types.DefaultTypeAdapter.NativeToValue(args)})
	if err != nil {
		return nil, fmt.Errorf("--context %s: %v", m.Name, err)
	}
	switch v := out.(type) {
	case types.String:
		return string(v), nil
	case types.Bool:
		return bool(v), nil
	case types.Int:
		return float64(v), nil
	case types.Uint:
		return float64(v), nil
	case types.Double:
		if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
			return nil, fmt.Errorf("--context %s: not a finite number", m.Name)
		}
		return float64(v), nil
	case types.Timestamp:
		return v.Time.UTC().Format(time.RFC3339Nano), nil
	}
	if out.Type() == types.ListType {
		if raw, err := out.ConvertToNative(reflect.TypeOf([]string(nil))); err == nil {
			return raw, nil
		}
	}
	return nil, fmt.Errorf("--context %s: evaluated to %s, not a string, number, boolean, list of strings or timestamp", m.Name, out.Type())
}

// MappingArgs reads a call's arguments (JSON) as a mapping sees them:
// every number a double.
func MappingArgs(body string) (map[string]any, error) {
	var args map[string]any
	if err := json.Unmarshal([]byte(body), &args); err != nil {
		return nil, err
	}
	return args, nil
}
