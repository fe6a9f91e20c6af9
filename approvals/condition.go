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

// Facts are what a condition may read: the action (kind, target, agent
// and body), its context, and the ledger's clock.
type Facts struct {
	Kind, Target, Agent string
	// Body is the payload's body as stored: conditions read it as
	// action.body when it is one JSON object (ParseBody); empty when
	// the payload is redacted, so that action.body is absent.
	Body    string
	Context map[string]any
	Now     time.Time
}

// Condition is a compiled, type-checked CEL condition over action.kind,
// action.target, action.agent, context.* and now.
type Condition struct {
	Source string
	prog   cel.Program
	reads  []string // the action and context fields it names, sorted
	// unguarded are the fields it reads (context.x, action.body.x) that
	// no has() in it tests: a missing one fails the condition, closed.
	unguarded []string
	// localZones are the literal "Local" or "" zones it names.
	localZones []string
	now        bool
	loops      bool // it has a comprehension: its evaluation's cost is limited
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
		opts, err := actionEnvOptions()
		if err != nil {
			envErr = err
			return
		}
		opts = append(opts, zoneEnvOptions()...)
		env, envErr = cel.NewEnv(append(opts,
			cel.Variable("context", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("now", cel.TimestampType),
			cel.CrossTypeNumericComparisons(true),
		)...)
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
	tested := map[string]bool{} // the fields a has() tests
	used := map[string]bool{}   // the fields read outside has()
	inner := map[int64]bool{}   // selects that are a longer path's operand
	loops := false
	celast.PreOrderVisit(ast.NativeRep().Expr(), celast.NewExprVisitor(func(x celast.Expr) {
		switch x.Kind() {
		case celast.ComprehensionKind:
			loops = true
		case celast.SelectKind:
			s := x.AsSelect()
			if s.Operand().Kind() == celast.SelectKind {
				inner[s.Operand().ID()] = true
			}
			path, ok := fieldPath(x)
			if !ok {
				return
			}
			if s.IsTestOnly() {
				tested[path] = true
			} else if !inner[x.ID()] {
				used[path] = true
			}
			if !inner[x.ID()] || s.IsTestOnly() {
				reads[path] = true
			}
		case celast.IdentKind:
			c.now = c.now || x.AsIdent() == "now"
		}
	}))
	for p := range used {
		if (strings.HasPrefix(p, "context.") || strings.HasPrefix(p, "action.body")) && !tested[p] {
			c.unguarded = append(c.unguarded, p)
		}
	}
	sort.Strings(c.unguarded)
	c.localZones = localZoneUses(ast.NativeRep())
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

// fieldPath is a selection's dotted path from action or context
// (action.body.customer.id), or false for any other operand.
func fieldPath(x celast.Expr) (string, bool) {
	var parts []string
	for x.Kind() == celast.SelectKind {
		parts = append(parts, x.AsSelect().FieldName())
		x = x.AsSelect().Operand()
	}
	if x.Kind() != celast.IdentKind || (x.AsIdent() != "action" && x.AsIdent() != "context") {
		return "", false
	}
	if x.AsIdent() == "action" && len(parts) > 1 && parts[len(parts)-1] != "body" {
		return "", false
	}
	parts = append(parts, x.AsIdent())
	slices.Reverse(parts)
	return strings.Join(parts, "."), true
}

// Unguarded lists the fields the condition reads without a has() that
// tests them (context.amount, action.body.cents): an action that does
// not send one gets the most restrictive outcome of this rule and the
// rules after it (Decide), which policy set says when the rule is set.
func (c *Condition) Unguarded() []string { return slices.Clone(c.unguarded) }

// CallerAsserted lists the inputs the condition reads that are the
// caller's own assertion rather than what will execute: each context
// field, and action.agent (authenticated on PostgreSQL, the name the
// agent sends on SQLite). Rules on action.body read what will execute.
func (c *Condition) CallerAsserted() []string {
	var out []string
	for _, r := range c.reads {
		if strings.HasPrefix(r, "context.") || r == "action.agent" {
			out = append(out, r)
		}
	}
	return out
}

// Eval evaluates the condition against f and returns its result and the
// values it read (the fields it names that f has, and now when it reads
// the clock), which the ledger keeps to explain the decision. A field it
// reads that f does not have is an error naming the field.
func (c *Condition) Eval(f Facts) (bool, map[string]any, error) {
	a := newActivation(f)
	ok, err := c.eval(a, Current)
	return ok, c.read(a), err
}

// activation is what conditions are evaluated against, converted once
// for all the rules of one decision.
type activation struct {
	f      Facts
	action *actionValue
	ctxv   map[string]any
	vars   interpreter.Activation
}

func newActivation(f Facts) *activation {
	a := &activation{f: f, action: &actionValue{kind: f.Kind, target: f.Target, agent: f.Agent, body: f.Body}, ctxv: f.Context}
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
		"action":  actionVal{a.action},
		"context": types.NewMap(types.DefaultTypeAdapter, cv),
		"now":     types.Timestamp{Time: f.Now.UTC()},
	})
	return a
}

// value is the value of a field path the condition names, and whether
// the action has it.
func (a *activation) value(path string) (any, bool) {
	obj, field, _ := strings.Cut(path, ".")
	if obj == "context" {
		v, ok := a.ctxv[field]
		return v, ok
	}
	switch field {
	case "kind":
		return a.action.kind, true
	case "target":
		return a.action.target, true
	case "agent":
		return a.action.agent, true
	}
	a.action.bodyValue()
	if a.action.native == nil {
		return nil, false
	}
	rest, ok := strings.CutPrefix(field, "body.")
	if !ok {
		return a.action.native, true
	}
	return lookupBody(a.action.native, rest)
}

// read is the values the condition names that the action has.
func (c *Condition) read(a *activation) map[string]any {
	read := map[string]any{}
	for _, r := range c.reads {
		if r == "action.body" {
			continue // the whole body is the payload's, not a figure to repeat
		}
		if v, ok := a.value(r); ok {
			read[r] = v
		}
	}
	if c.now {
		read["now"] = a.f.Now.UTC().Format(time.RFC3339Nano)
	}
	return read
}

// missing is the first field the condition reads that the action did
// not send, or "".
func (c *Condition) missing(a *activation) string {
	for _, r := range c.reads {
		if _, ok := a.value(r); !ok {
			return r
		}
	}
	return ""
}

// errMissing is a condition's failure because it reads a field the
// action did not send.
var errMissing = errors.New("reads a field the action did not send")

// eval is the condition's result. Under V1 a missing context field made
// it false; from V2 any failure is an error, and Decide fails closed.
func (c *Condition) eval(a *activation, sem Semantics) (bool, error) {
	out, _, err := c.prog.Eval(a.vars)
	if err != nil {
		if a.action.err != nil && slices.ContainsFunc(c.reads, func(r string) bool { return strings.HasPrefix(r, "action.body") }) {
			return false, fmt.Errorf("%w %q: %w", ErrCondition, c.Source, a.action.err)
		}
		if m := c.missing(a); m != "" {
			if sem == V1 && strings.HasPrefix(m, "context.") {
				return false, nil
			}
			return false, fmt.Errorf("%w %q: %w: %s", ErrCondition, c.Source, errMissing, m)
		}
		return false, fmt.Errorf("%w %q: %v", ErrCondition, c.Source, err)
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("%w %q: evaluated to %v, not true or false", ErrCondition, c.Source, out)
	}
	return bool(b), nil
}

// Semantics numbers the rules by which a failing condition decides; an
// evaluation records the version it was made under (Explain.Semantics)
// so that verify re-derives it by the same rules.
type Semantics int

const (
	// V1: a condition that reads a context field the action did not
	// send is false, and one that fails otherwise sends the key to the
	// default rule (one approval). Evaluations made before V2 record no
	// version.
	V1 Semantics = 1
	// V2 fails closed (SPEC 10): a condition that reads a field the
	// action did not send, or fails for any other reason, gives the most
	// restrictive outcome among its own rule and every rule that could
	// still match after it (deny, then approval with the highest quorum,
	// then auto).
	V2 Semantics = 2
	// Current is the version guard decides under.
	Current = V2
)

// Explain is why a rule applied: its id (its version: each set is a new
// row), its pattern and condition, and the values its condition read.
// When a condition failed, Error says why, FailedRule names the rule
// whose condition failed (Condition and Read are that condition's), and
// the rule named by RuleID is the most restrictive one it could have let
// through. Semantics is the version the decision was made under, set
// when any condition was evaluated.
type Explain struct {
	RuleID     int64          `json:"rule_id,omitempty"`
	Pattern    string         `json:"pattern,omitempty"`
	Condition  string         `json:"condition,omitempty"`
	Read       map[string]any `json:"read,omitempty"`
	Error      string         `json:"error,omitempty"`
	FailedRule int64          `json:"failed_rule,omitempty"`
	Semantics  Semantics      `json:"semantics,omitempty"`
}

// Decide applies rules in order, first match wins: priority (highest
// first), then the pattern's specificity (an exact kind before the
// longest glob), then a rule with a condition before the one without,
// oldest first. A rule matches when its pattern matches the kind and its
// condition (if any) is true. No match: the default rule (approval).
//
// It fails closed (V2): a condition that reads a field the action did
// not send (write has() to make a field optional on purpose), or that
// cannot be evaluated (a wrong type, a cost over the limit, a body
// number beyond int64), gives the most restrictive outcome among its own
// rule and every rule that could still match after it, the default
// included when no unconditional rule ends the list: deny, then approval
// with the highest quorum, then auto; among equals the earliest.
func Decide(rules []Rule, f Facts) (Rule, Explain) { return DecideUnder(rules, f, Current) }

// DecideUnder is Decide by the rules of a semantics version: verify
// re-derives an evaluation under the version it records.
func DecideUnder(rules []Rule, f Facts, sem Semantics) (Rule, Explain) {
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
	if sem != V1 && conds > 0 {
		sem = V2
	} else if conds == 0 {
		sem = 0 // no condition read: every version decides alike
	}
	// Many conditions run as one program (chainFor); a condition error
	// anywhere falls back to one at a time below, which says which
	// condition failed.
	if chain != nil {
		a = newActivation(f)
		if out, _, err := chain.Eval(a.vars); err == nil {
			if i, ok := out.(types.Int); ok && i >= 0 && int(i) <= conds {
				if i == 0 {
					cands = cands[conds:]
				} else {
					r := &rules[cands[i-1]]
					c, _ := CompileCondition(r.Condition)
					return withDefaults(*r), Explain{RuleID: r.ID, Pattern: r.Pattern, Condition: r.Condition, Read: c.read(a), Semantics: sem}
				}
			}
		}
	}
	for n, i := range cands {
		r := &rules[i]
		ex := Explain{RuleID: r.ID, Pattern: r.Pattern, Condition: r.Condition, Semantics: sem}
		if r.Condition != "" {
			if a == nil {
				a = newActivation(f)
			}
			c, err := CompileCondition(r.Condition)
			var ok bool
			if err == nil {
				ok, err = c.eval(a, sem)
			}
			if err == nil && ok || c != nil && err != nil {
				ex.Read = c.read(a)
			}
			if err != nil {
				if sem == V1 {
					ex.Error = err.Error()
					return withDefaults(DefaultRule()), ex
				}
				return failClosed(rules, cands[n:], err, ex)
			}
			if !ok {
				continue
			}
		}
		return withDefaults(*r), ex
	}
	ex := Explain{Semantics: sem}
	if sem == 0 {
		ex = Explain{}
	}
	return withDefaults(DefaultRule()), ex
}

// failClosed is the outcome when the condition of rules[rest[0]]
// failed: the most restrictive of that rule and every candidate after
// it, and the default when the last of them has a condition.
func failClosed(rules []Rule, rest []int, err error, ex Explain) (Rule, Explain) {
	failed := rules[rest[0]]
	best := withDefaults(failed)
	names := []string{fmt.Sprint(failed.ID)}
	for _, i := range rest[1:] {
		r := withDefaults(rules[i])
		names = append(names, fmt.Sprint(r.ID))
		if restrictiveness(r) > restrictiveness(best) {
			best = r
		}
	}
	if last := rules[rest[len(rest)-1]]; last.Condition != "" {
		names = append(names, "the default (no rule matches)")
		if d := withDefaults(DefaultRule()); restrictiveness(d) > restrictiveness(best) {
			best = d
		}
	}
	ex.FailedRule = failed.ID
	ex.RuleID, ex.Pattern = best.ID, best.Pattern
	ex.Error = fmt.Sprintf("rule %d: %v; failed closed to the most restrictive of rules %s: %s", failed.ID, err, strings.Join(names, ", "), outcome(best))
	return best, ex
}

// restrictiveness orders outcomes: deny, then approval by its quorum,
// then auto.
func restrictiveness(r Rule) int {
	switch r.Mode {
	case Deny:
		return 1 << 10
	case Approval:
		return 1 + r.Approvers
	}
	return 0
}

func outcome(r Rule) string {
	who := "rule " + fmt.Sprint(r.ID)
	if r.ID == 0 {
		who = "the default"
	}
	if r.Mode == Approval {
		return fmt.Sprintf("approval by %d operator(s), %s", r.Approvers, who)
	}
	return fmt.Sprintf("%s, %s", r.Mode, who)
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
