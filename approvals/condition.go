package approvals

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // schedule windows name zones (Europe/Berlin) on hosts without a zone database

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// ErrCondition means a rule's condition does not compile, is not boolean,
// or could not be evaluated.
var ErrCondition = errors.New("policy condition")

// MaxConditionLen bounds a condition's text.
const MaxConditionLen = 2000

// conditionCostLimit bounds one evaluation: a condition is a few
// comparisons, never a loop over a large list.
const conditionCostLimit = 10_000

// Facts are what a condition may read: the action (kind, target, agent),
// its context, and the ledger's clock.
type Facts struct {
	Kind, Target, Agent string
	Context             map[string]any
	Now                 time.Time
}

// Condition is a compiled, type-checked CEL condition over action.kind,
// action.target, action.agent, context.* and now.
type Condition struct {
	Source string
	prog   cel.Program
	reads  []string // the action and context fields it names, sorted
	now    bool
	loops  bool // it has a comprehension: its evaluation's cost is limited
	// portable is the condition as the PostgreSQL ledger evaluates it,
	// or why it cannot be (PortableAST).
	portable    string
	portableErr error
}

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
	cache   sync.Map // source -> *Condition
)

func celEnv() (*cel.Env, error) {
	envOnce.Do(func() {
		env, envErr = cel.NewEnv(
			cel.Variable("action", cel.MapType(cel.StringType, cel.StringType)),
			cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("now", cel.TimestampType),
			cel.CrossTypeNumericComparisons(true),
		)
	})
	return env, envErr
}

// CompileCondition compiles and type-checks a condition, refusing it with
// the position of the error. Compiled conditions are cached by text: a
// guard evaluates the same few conditions many times.
func CompileCondition(src string) (*Condition, error) {
	if c, ok := cache.Load(src); ok {
		return c.(*Condition), nil
	}
	if len(src) > MaxConditionLen {
		return nil, fmt.Errorf("%w: at most %d bytes", ErrCondition, MaxConditionLen)
	}
	e, err := celEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("%w: %s", ErrCondition, strings.ReplaceAll(iss.Err().Error(), "\n", " "))
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("%w: %q is of type %s; a condition must be true or false", ErrCondition, src, ast.OutputType())
	}
	c := &Condition{Source: src}
	reads := map[string]bool{}
	loops := false
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(x celast.Expr) {
		switch x.Kind() {
		case celast.ComprehensionKind:
			loops = true
		case celast.SelectKind:
			s := x.AsSelect()
			if op := s.Operand(); op.Kind() == celast.IdentKind && (op.AsIdent() == "action" || op.AsIdent() == "context") {
				reads[op.AsIdent()+"."+s.FieldName()] = true
			}
		case celast.IdentKind:
			c.now = c.now || x.AsIdent() == "now"
		}
	}))
	// Without a comprehension (all, exists, map, filter) a condition's
	// cost is bounded by its length; with one it grows with the lists it
	// walks, and a runtime cost limit stops it. Tracking cost doubles the
	// price of every evaluation, so only conditions that loop pay it.
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if loops {
		opts = append(opts, cel.CostLimit(conditionCostLimit))
	}
	c.loops = loops
	if c.prog, err = e.Program(ast, opts...); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCondition, err)
	}
	for r := range reads {
		c.reads = append(c.reads, r)
	}
	sort.Strings(c.reads)
	c.portable, c.portableErr = c.translate(ast.NativeRep())
	cache.Store(src, c)
	return c, nil
}

// Eval evaluates the condition against f and returns its result and the
// values it read (the fields it names that f has, and now when it reads
// the clock), which the ledger keeps to explain the decision.
func (c *Condition) Eval(f Facts) (bool, map[string]any, error) {
	a := newActivation(f)
	ok, err := c.eval(a)
	return ok, c.read(a), err
}

// activation is what conditions are evaluated against, converted once
// for all the rules of one decision.
type activation struct {
	f      Facts
	action map[string]string
	ctxv   map[string]any
	vars   interpreter.Activation
}

func newActivation(f Facts) *activation {
	a := &activation{f: f, action: map[string]string{"kind": f.Kind, "target": f.Target, "agent": f.Agent}, ctxv: f.Context}
	if a.ctxv == nil {
		a.ctxv = map[string]any{}
	}
	// Each context value is converted to CEL's own once per decision, not
	// at each condition's every read (a list by reflection each time).
	// String keys: a field's lookup is a string map's, not an interface
	// key's hash and comparison.
	cv := make(map[string]ref.Val, len(a.ctxv))
	for k, v := range a.ctxv {
		cv[k] = types.DefaultTypeAdapter.NativeToValue(v)
	}
	a.vars, _ = interpreter.NewActivation(map[string]any{
		"action":  types.NewStringStringMap(types.DefaultTypeAdapter, a.action),
		"context": types.NewMap(types.DefaultTypeAdapter, cv),
		"now":     types.Timestamp{Time: f.Now},
	})
	return a
}

// read is the values the condition names that the action has.
func (c *Condition) read(a *activation) map[string]any {
	action, ctxv, f := a.action, a.ctxv, a.f
	read := map[string]any{}
	for _, r := range c.reads {
		obj, field, _ := strings.Cut(r, ".")
		if obj == "action" {
			read[r] = action[field]
		} else if v, ok := ctxv[field]; ok {
			read[r] = v
		}
	}
	if c.now {
		read["now"] = f.Now.UTC().Format(time.RFC3339Nano)
	}
	return read
}

func (c *Condition) eval(a *activation) (bool, error) {
	ctxv := a.ctxv
	out, _, err := c.prog.Eval(a.vars)
	if err != nil {
		// A context field the condition names but the action did not
		// send: the condition does not hold (write has(context.x) to say
		// otherwise). Any other failure is an error.
		for _, r := range c.reads {
			if field, ok := strings.CutPrefix(r, "context."); ok {
				if _, present := ctxv[field]; !present {
					return false, nil
				}
			}
		}
		return false, fmt.Errorf("%w %q: %v", ErrCondition, c.Source, err)
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("%w %q: evaluated to %v, not true or false", ErrCondition, c.Source, out)
	}
	return bool(b), nil
}

// Explain is why a rule applied: its id (its version: each set is a new
// row), its pattern and condition, and the values its condition read; or
// the condition error that sent the key to approval.
type Explain struct {
	RuleID    int64          `json:"rule_id,omitempty"`
	Pattern   string         `json:"pattern,omitempty"`
	Condition string         `json:"condition,omitempty"`
	Read      map[string]any `json:"read,omitempty"`
	Error     string         `json:"error,omitempty"`
}

// Decide applies rules in order, first match wins: priority (highest
// first), then the pattern's specificity (an exact kind before the
// longest glob), then a rule with a condition before the one without,
// oldest first. A rule matches when its pattern matches the kind and its
// condition (if any) is true. A condition that cannot be evaluated (a
// wrong type, a cost over the limit) stops the evaluation and sends the
// key to approval, the default: a person decides when the policy cannot.
// A context field that the action did not send makes a condition that
// reads it false (the rule does not apply), unless it guards with has(). No match: the default rule (approval).
func Decide(rules []Rule, f Facts) (Rule, Explain) {
	var cands []int
	var chain cel.Program
	if chained {
		p := planFor(rules, f.Kind)
		cands, chain = p.cands, p.chain
	} else {
		cands = candidates(rules, f.Kind)
	}
	var a *activation
	conds := len(cands)
	if conds > 0 && rules[cands[conds-1]].Condition == "" {
		conds--
	}
	// Many conditions run as one program (chainFor); a condition error
	// anywhere falls back to one at a time below, which says which
	// condition failed and treats a missing context field as false.
	if chain != nil {
		a = newActivation(f)
		if out, _, err := chain.Eval(a.vars); err == nil {
			if i, ok := out.(types.Int); ok && i >= 0 && int(i) <= conds {
				if i == 0 {
					cands = cands[conds:]
				} else {
					r := &rules[cands[i-1]]
					c, _ := CompileCondition(r.Condition)
					return withDefaults(*r), Explain{RuleID: r.ID, Pattern: r.Pattern, Condition: r.Condition, Read: c.read(a)}
				}
			}
		}
	}
	for _, i := range cands {
		r := &rules[i]
		ex := Explain{RuleID: r.ID, Pattern: r.Pattern, Condition: r.Condition}
		if r.Condition != "" {
			if a == nil {
				a = newActivation(f)
			}
			c, err := CompileCondition(r.Condition)
			var ok bool
			if err == nil {
				ok, err = c.eval(a)
			}
			if err == nil && ok || c != nil && err != nil {
				ex.Read = c.read(a)
			}
			if err != nil {
				ex.Error = err.Error()
				return withDefaults(DefaultRule()), ex
			}
			if !ok {
				continue
			}
		}
		return withDefaults(*r), ex
	}
	return withDefaults(DefaultRule()), Explain{}
}

// candidates are the rules that can apply to kind, as indices in
// evaluation order: those whose pattern matches, up to the first without
// a condition (it always applies). Kinds are matched once per distinct
// pattern: a rule set is mostly many conditions under a few patterns.
func candidates(rules []Rule, kind string) []int {
	var cands []int
	matched := make(map[string]bool, 4)
	for _, i := range order(rules) {
		r := &rules[i]
		m, seen := matched[r.Pattern]
		if !seen {
			m = patternMatches(r.Pattern, kind)
			matched[r.Pattern] = m
		}
		if !m {
			continue
		}
		cands = append(cands, i)
		if r.Condition == "" {
			break
		}
	}
	return cands
}

// A plan is what Decide works out from a rule set and a kind before it
// reads any context: the candidates in order and their conditions'
// chain. A guard reads the rules afresh each time, so plans are cached
// by a hash of what ordering and matching read (each rule's id,
// priority, pattern and condition, and the kind), checked field by
// field on a hit: sorting 50 rules and finding their chain was a third
// of a decision.
type plan struct {
	kind  string
	keys  []planKey
	cands []int
	chain cel.Program
}

type planKey struct {
	id                 int64
	priority           int
	pattern, condition string
}

// Both caches are emptied when they reach their bound: rule sets change
// rarely, and a ledger decides the few kinds its agents send.
var (
	plans      sync.Map // uint64 -> *plan
	planCount  atomic.Int64
	chains     sync.Map // uint64 -> *chainProg
	chainCount atomic.Int64
	cacheSeed  = maphash.MakeSeed()
)

const maxPlans, maxChains = 1024, 256

// chained is false only in the test that checks plans and chains against
// sorting and evaluating one condition at a time.
var chained = true

func planFor(rules []Rule, kind string) *plan {
	var h maphash.Hash
	h.SetSeed(cacheSeed)
	h.WriteString(kind)
	var n [16]byte
	for i := range rules {
		r := &rules[i]
		binary.LittleEndian.PutUint64(n[:8], uint64(r.ID))
		binary.LittleEndian.PutUint32(n[8:12], uint32(r.Priority))
		binary.LittleEndian.PutUint32(n[12:], uint32(len(r.Pattern)))
		h.Write(n[:])
		h.WriteString(r.Pattern)
		h.WriteString(r.Condition)
		h.WriteByte(0)
	}
	key := h.Sum64()
	if v, ok := plans.Load(key); ok {
		if p := v.(*plan); p.matches(rules, kind) {
			return p
		}
	}
	p := &plan{kind: kind, cands: candidates(rules, kind)}
	for i := range rules {
		r := &rules[i]
		p.keys = append(p.keys, planKey{r.ID, r.Priority, r.Pattern, r.Condition})
	}
	conds := p.cands
	if n := len(conds); n > 0 && rules[conds[n-1]].Condition == "" {
		conds = conds[:n-1]
	}
	p.chain = chainFor(rules, conds)
	if planCount.Add(1) > maxPlans {
		plans.Clear()
		planCount.Store(1)
	}
	plans.Store(key, p)
	return p
}

func (p *plan) matches(rules []Rule, kind string) bool {
	if p.kind != kind || len(p.keys) != len(rules) {
		return false
	}
	for i := range rules {
		r, k := &rules[i], &p.keys[i]
		if r.ID != k.id || r.Priority != k.priority || r.Pattern != k.pattern || r.Condition != k.condition {
			return false
		}
	}
	return true
}

type chainProg struct {
	conds []string
	prog  cel.Program
}

// chainFor compiles the conditions of the rules at idx, in order, into
// one program, (c1) ? 1 : (c2) ? 2 : ... : 0, whose answer is the first
// that holds: each evaluation sets up a frame and resolves the context
// afresh, and with 50 conditions that set-up was half of a decision.
// Without an error the program's answer is the one-at-a-time loop's (a
// conditional evaluates only its chosen branch); with one, the caller
// runs the loop. Fewer than two conditions, or one that loops (its cost
// limit is per condition), gets no chain. Chains are cached by their
// conditions' text, which many kinds' plans share.
func chainFor(rules []Rule, idx []int) cel.Program {
	if len(idx) < 2 {
		return nil
	}
	conds := make([]string, len(idx))
	var h maphash.Hash
	h.SetSeed(cacheSeed)
	for j, i := range idx {
		conds[j] = rules[i].Condition
		h.WriteString(conds[j])
		h.WriteByte(0)
	}
	key := h.Sum64()
	if p, ok := chains.Load(key); ok {
		if cp := p.(*chainProg); slices.Equal(cp.conds, conds) {
			return cp.prog
		}
	}
	cp := compileChain(conds)
	if chainCount.Add(1) > maxChains {
		chains.Clear()
		chainCount.Store(1)
	}
	chains.Store(key, cp)
	return cp.prog
}

func compileChain(conds []string) *chainProg {
	cp := &chainProg{conds: conds}
	var src strings.Builder
	for i, cond := range conds {
		c, err := CompileCondition(cond)
		if err != nil || c.loops {
			return cp
		}
		fmt.Fprintf(&src, "(%s) ? %d : ", cond, i+1)
	}
	src.WriteString("0")
	e, err := celEnv()
	if err != nil {
		return cp
	}
	ast, iss := e.Compile(src.String())
	if iss != nil && iss.Err() != nil || !ast.OutputType().IsExactType(cel.IntType) {
		return cp
	}
	if p, err := e.Program(ast, cel.EvalOptions(cel.OptOptimize)); err == nil {
		cp.prog = p
	}
	return cp
}

// Ordered returns rules in evaluation order (see Decide).
func Ordered(rules []Rule) []Rule {
	out := make([]Rule, len(rules))
	for i, j := range order(rules) {
		out[i] = rules[j]
	}
	return out
}

// order is the evaluation order as indices into rules, each rule's sort
// key computed once: sorting the rules themselves moved every field of
// each at every swap, a quarter of a 50-rule decision.
func order(rules []Rule) []int {
	type keyed struct {
		i, prio, spec int
		cond          bool
		id            int64
	}
	var kbuf [64]keyed
	ks := kbuf[:0]
	for i := range rules {
		r := &rules[i]
		ks = append(ks, keyed{i, r.Priority, specificity(r.Pattern), r.Condition != "", r.ID})
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		switch {
		case a.prio != b.prio:
			return b.prio - a.prio
		case a.spec != b.spec:
			return b.spec - a.spec
		case a.cond != b.cond:
			if a.cond {
				return -1
			}
			return 1
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	out := make([]int, len(ks))
	for i, k := range ks {
		out[i] = k.i
	}
	return out
}

// specificity is an exact pattern's 1<<20, else a glob's count of
// literal characters: one pass over the bytes ('*' and '?' are ASCII).
func specificity(pattern string) int {
	wild := 0
	for i := 0; i < len(pattern); i++ {
		if c := pattern[i]; c == '*' || c == '?' {
			wild++
		}
	}
	if wild == 0 {
		return 1 << 20
	}
	return len(pattern) - wild
}

// PatternMatches reports whether a rule's pattern covers an action kind:
// the ledger checks that the rule an evaluation names could have been
// the one that applied.
func PatternMatches(pattern, kind string) bool { return patternMatches(pattern, kind) }

func patternMatches(pattern, kind string) bool {
	return pattern == kind || IsGlob(pattern) && glob(pattern, kind)
}

func withDefaults(r Rule) Rule {
	if r.Mode == Approval && r.TTL <= 0 {
		r.TTL = DefaultTTL
	}
	if r.Approvers < 1 {
		r.Approvers = 1
	}
	return r
}
