package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// KeyArgument is the optional argument the proxy adds to every tool: the
// caller's own action key. Without it the key is derived from the tool
// and the digest of its arguments.
const KeyArgument = "idempotency_key"

// ContextArgument is the argument in which a caller may assert context
// fields (SPEC 10) itself, only those the operator opted into by name
// (ProxyOptions.CallerContext), and only then is it advertised. The
// context is otherwise derived on the proxy's side from the arguments
// that will execute (ProxyOptions.Context): the model never chooses the
// facts its approval depends on. It is taken out before the call is
// forwarded and bound to the key like the arguments.
const ContextArgument = "tollgate_context"

// MetaKey is the _meta entry in which the proxy passes the action's key
// with every guarded call it forwards, so that an upstream that
// deduplicates (a payment API's server, say) can do so under the same key.
const MetaKey = "io.tollgate/idempotency_key"

// ProxyOptions are the proxy's settings.
type ProxyOptions struct {
	// Agent names the calling agent in the evidence; empty means the MCP
	// client's name.
	Agent string
	// Target is the payload's target for every call; empty means the
	// upstream server's own name.
	Target string
	// Timeout bounds each forwarded call; a call that runs out is reported
	// unknown. Zero means one minute.
	Timeout time.Duration
	// Lease is each permit's lease; zero means Timeout plus a minute, so a
	// call that ends in time always reports within its lease.
	Lease time.Duration
	// GuardReads guards the tools the upstream marks read-only too. By
	// default they pass unguarded and unrecorded: a read changes nothing,
	// and a key would refuse its second identical call as settled for
	// ever.
	GuardReads bool
	// KeyArg names an argument the proxy fills with the action's key in
	// the tools whose input schema has it (a provider's own idempotency
	// key); empty means none. The key always travels in _meta (MetaKey).
	KeyArg string
	// Wait bounds how long a call waits for an upstream that is being
	// restarted before it is refused, with nothing recorded. Zero means
	// ten seconds.
	Wait time.Duration
	// Restarts is how many failures in a row (a start that fails, or an
	// upstream that exits within a minute) the proxy restarts the
	// upstream after; then it gives up. Zero means ten.
	Restarts int
	// RestartDelay is the first restart's backoff, doubled for each
	// failure in a row up to 30 seconds. Zero means a quarter second.
	RestartDelay time.Duration
	// Redact records each call's arguments by their digests only (the
	// ledger's --redact) and stores no result, so a settled call's retry
	// is answered SETTLED, never given the result again.
	Redact bool
	// RepeatWindow is how long a key derived from a call's arguments (a
	// call without idempotency_key) lasts: within it an identical call is
	// a retry; once the key has ended and its first record is older, an
	// identical call is a new action under the next key of its chain
	// (see repeatKey). Zero means DefaultRepeatWindow; negative, for ever.
	// A caller's own idempotency_key never expires.
	RepeatWindow time.Duration
	// Context derives context fields from each call's tool name and
	// arguments (tollgate mcp proxy --context NAME=CEL). A mapping that
	// fails for a call leaves its field out, so that a rule reading it
	// fails closed.
	Context []*approvals.Mapping
	// CallerContext names the context fields a caller may assert itself
	// in tollgate_context (--caller-context NAME); none by default, and
	// tollgate_context is then neither advertised nor accepted. Fields a
	// caller asserted are listed in the context's caller_asserted field.
	CallerContext []string
	// Log receives one line per refused, lost or unreported call, per
	// result not stored, per new key after the repeat window and per
	// restart, naming keys, never arguments. Nil means no log.
	Log io.Writer
}

// Proxy is an MCP server that offers an upstream server's tools and puts
// guard in front of each call. It restarts the upstream when it exits.
type Proxy struct {
	store  Ledger
	dial   Dial
	client *mcp.Client
	server *mcp.Server
	opt    ProxyOptions
	stop   chan struct{} // closed by Close
	done   chan struct{} // closed when supervise has returned

	mu sync.Mutex
	// session is the live upstream; nil while it restarts.
	session *mcp.ClientSession
	// up is closed when session is set or down is: a call waits on it.
	up chan struct{}
	// down is why no call will be forwarded again: the proxy gave up
	// restarting, or is closed.
	down   error
	closed bool
	tools  map[string]*upstreamTool
}

// NewProxy starts the upstream server through dial, lists its tools, and
// returns the proxy offering them. Close stops the upstream.
func NewProxy(ctx context.Context, store Ledger, dial Dial, opt ProxyOptions) (*Proxy, error) {
	if opt.Timeout <= 0 {
		opt.Timeout = time.Minute
	}
	if opt.Lease <= 0 {
		opt.Lease = min(opt.Timeout+time.Minute, ledger.MaxLease)
	}
	if opt.Lease < opt.Timeout {
		return nil, fmt.Errorf("%w: the lease (%s) must be at least the call timeout (%s), or a call in time would report after its lease",
			ledger.ErrInvalidInput, opt.Lease, opt.Timeout)
	}
	if opt.KeyArg == KeyArgument {
		return nil, fmt.Errorf("%w: the key argument cannot be %s, the proxy's own", ledger.ErrInvalidInput, KeyArgument)
	}
	derived := map[string]bool{}
	for _, m := range opt.Context {
		if m.Name == PredecessorField || m.Name == ledger.CallerAssertedField || derived[m.Name] {
			return nil, fmt.Errorf("%w: --context %s: the name is the proxy's or given twice", ledger.ErrInvalidInput, m.Name)
		}
		derived[m.Name] = true
	}
	for _, n := range opt.CallerContext {
		if n == PredecessorField || n == ledger.CallerAssertedField || derived[n] || !ledger.ContextFieldName(n) {
			return nil, fmt.Errorf("%w: --caller-context %q: a context field's name, not the proxy's own and not one --context derives", ledger.ErrInvalidInput, n)
		}
	}
	if opt.Wait <= 0 {
		opt.Wait = 10 * time.Second
	}
	if opt.Restarts <= 0 {
		opt.Restarts = 10
	}
	if opt.RestartDelay <= 0 {
		opt.RestartDelay = 250 * time.Millisecond
	}
	if opt.RepeatWindow == 0 {
		opt.RepeatWindow = DefaultRepeatWindow
	}
	p := &Proxy{store: store, dial: dial, opt: opt, stop: make(chan struct{}), done: make(chan struct{}), up: make(chan struct{})}
	p.client = mcp.NewClient(&mcp.Implementation{Name: "tollgate-proxy", Version: Version}, nil)
	p.server = mcp.NewServer(&mcp.Implementation{Name: "tollgate-proxy", Version: Version}, &mcp.ServerOptions{
		Instructions: "Every tool here that can change something is guarded by tollgate: a call runs only with a permit. A call that waits for an operator returns PENDING: stop, and repeat the same call later. " +
			"Give the same idempotency_key (or the same arguments) when you repeat a call; never change them to get around an answer. " +
			"A repeat of a call that already ran is answered with its stored result, marked REPLAYED: it did not run again.",
	})
	cs, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	if p.opt.Target == "" {
		if r := cs.InitializeResult(); r != nil && r.ServerInfo != nil {
			p.opt.Target = r.ServerInfo.Name
		}
		if p.opt.Target == "" {
			p.opt.Target = "upstream"
		}
	}
	go p.supervise(cs)
	return p, nil
}

// Server is the MCP server to run on the agent's transport.
func (p *Proxy) Server() *mcp.Server { return p.server }

// Close ends the upstream session (and its process) and its restarts.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	cs := p.session
	p.setDownLocked(errClosed)
	p.mu.Unlock()
	close(p.stop)
	var err error
	if cs != nil {
		err = cs.Close()
	}
	<-p.done
	return err
}

// refused is a call answered before guard: nothing was recorded or
// forwarded.
func refused(why string) *mcp.CallToolResult {
	return textResult("REFUSED before guard: "+why+"; nothing was recorded or forwarded.", true)
}

// handler checks, guards, forwards and reports one tool's calls. What can
// be refused without the ledger is refused first (text that is not
// Unicode, arguments the tool's schema rejects, a down upstream), so that
// a key is used only by a call that is forwarded.
func (p *Proxy) handler(tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := checkText(req.Params.Arguments); err != nil {
			return refused(err.Error()), nil
		}
		t := p.tool(tool)
		if t == nil {
			return textResult(fmt.Sprintf("UNAVAILABLE: the upstream MCP server no longer offers %q; nothing was recorded or forwarded.", safetext.Escape(tool)), true), nil
		}
		if t.passes {
			return p.read(ctx, tool, req.Params.Arguments), nil
		}
		args, key, err := splitArguments(req.Params.Arguments)
		if err != nil {
			return refused(err.Error()), nil
		}
		cx, err := splitContext(args, p.opt.CallerContext)
		if err != nil {
			return refused(safetext.Escape(err.Error())), nil
		}
		if v, given := args[p.opt.KeyArg]; given && t.takesKey {
			if s, _ := v.(string); s != key || key == "" {
				return refused(fmt.Sprintf("%s is set by the proxy to the action's key: leave it out (give the key as %s)", safetext.Escape(p.opt.KeyArg), KeyArgument)), nil
			}
			delete(args, p.opt.KeyArg)
		}
		body, err := canonicalJSON(args)
		if err != nil {
			return refused(err.Error()), nil
		}
		if cx, err = p.derive(tool, body, cx); err != nil {
			return refused(safetext.Escape(err.Error())), nil
		}
		predecessor := ""
		if key == "" {
			if key, predecessor, err = p.repeatKey(ctx, tool, body); err != nil {
				return textResult("REFUSED: "+safetext.Escape(err.Error())+"; nothing was forwarded.", true), nil
			}
		}
		agent := p.opt.Agent
		if agent == "" {
			agent = defaultAgent(p.store, req)
		}
		payload := ledger.Payload{Kind: "mcp." + tool, Target: p.opt.Target, Body: body}
		gopt := ledger.GuardOptions{Agent: agent, Lease: p.opt.Lease, Redact: p.opt.Redact, Context: cx}
		if predecessor != "" {
			if gopt.Context == nil {
				gopt.Context = ledger.Context{}
			}
			gopt.Context[PredecessorField] = predecessor
		}
		if _, err := ledger.CheckGuardInput(key, payload, gopt); err != nil {
			return refused(safetext.Escape(err.Error())), nil
		}
		if t.takesKey {
			args[p.opt.KeyArg] = key
		}
		if err := validate(t, args); err != nil {
			return refused(err.Error()), nil
		}
		cs, err := p.live(ctx, p.opt.Wait)
		if err != nil {
			return unavailable(err), nil
		}
		a, err := p.store.Guard(ctx, key, payload, gopt)
		if text, _, ok := faultAdvice(err, key, callProxied); ok {
			p.logf("guard of %s: %s", key, safetext.Escape(err.Error()))
			return textResult(text, true), nil
		}
		if err != nil {
			text, _ := refusalAdvice(err)
			p.logf("refused %s: %s", key, text)
			return textResult(text, true), nil
		}
		m := actionMeta{Key: a.Key, State: a.State, Replayed: a.Replayed, Predecessor: predecessor}
		switch a.Verdict {
		case ledger.Permitted:
			if predecessor != "" && !a.Replayed {
				p.logf("%s is a new action: an identical call ended under %s, first recorded more than %s (the repeat window) ago", a.Key, predecessor, p.opt.RepeatWindow)
			}
			return p.forward(ctx, cs, tool, args, a, m), nil
		case ledger.Settled:
			return p.replay(ctx, a, m), nil
		}
		return withMeta(textResult(advice(a, retryCall), true), m), nil
	}
}

// unavailable is the answer to a call made while the upstream is down.
func unavailable(err error) *mcp.CallToolResult {
	next := "Repeat this exact call in a few seconds."
	if !errors.Is(err, errRestarting) {
		next = "Restart the proxy."
	}
	return textResult(fmt.Sprintf("UNAVAILABLE: %s; nothing was recorded or forwarded. %s", safetext.Escape(err.Error()), next), true)
}

// validate checks the arguments, as they will be forwarded, against the
// upstream tool's input schema: a call the upstream would reject for its
// shape is refused before guard, and leaves its key unused.
func validate(t *upstreamTool, args map[string]any) error {
	if t.schema == nil {
		return nil
	}
	// The schema compares numbers by value: decode them as JSON numbers
	// are, not as the exact text the forwarded arguments keep.
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("the arguments cannot be encoded: %v", err)
	}
	var instance map[string]any
	if err := json.Unmarshal(raw, &instance); err != nil {
		return fmt.Errorf("the arguments cannot be decoded: %v", err)
	}
	if err := t.schema.Validate(instance); err != nil {
		return fmt.Errorf("the arguments do not match the tool's input schema (%s)", safetext.Escape(err.Error()))
	}
	return nil
}

// read forwards a call to a read-only tool as it came, unguarded: it
// changes nothing, so it needs no permit, and an identical read later is
// a new read, not a retry to refuse. It is not recorded: the ledger
// keeps keyed actions only.
func (p *Proxy) read(ctx context.Context, tool string, raw json.RawMessage) *mcp.CallToolResult {
	cs, err := p.live(ctx, p.opt.Wait)
	if err != nil {
		return unavailable(err)
	}
	var args any = map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		args = raw
	}
	res, err := p.send(ctx, cs, &mcp.CallToolParams{Name: tool, Arguments: args}, time.Time{})
	if err != nil || res == nil {
		why := "no result"
		if err != nil {
			why = err.Error()
		}
		return textResult(fmt.Sprintf("LOST: the read-only call to %q got no answer (%s); it changes nothing, so it is safe to repeat.",
			safetext.Escape(tool), safetext.Escape(why)), true)
	}
	return res
}

// errNotSent marks a call that never reached the upstream.
var errNotSent = errors.New("the call was not sent")

// send calls the tool on the upstream, each attempt bounded by Timeout.
// A call the connection refused before writing it (mcp.ErrConnectionClosed:
// the upstream had exited) never reached the upstream, so it is sent
// again once the upstream is back, as long as a whole attempt still fits
// before deadline (the permit's lease; zero for a read): a permitted call
// waits for the restart as long as that, a read up to Wait. Otherwise the
// error wraps errNotSent. Any other failure may have been sent, and is
// returned as it is.
func (p *Proxy) send(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams, deadline time.Time) (*mcp.CallToolResult, error) {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		if p.current(cs) {
			cctx, cancel := context.WithTimeout(ctx, p.opt.Timeout)
			res, err := cs.CallTool(cctx, params)
			cancel()
			if !errors.Is(err, mcp.ErrConnectionClosed) {
				return res, err
			}
		}
		if attempt == attempts {
			return nil, fmt.Errorf("%w: the upstream exited %d times before it could be sent", errNotSent, attempts)
		}
		// A permitted call waits for the upstream as long as its lease
		// leaves room for the call: given up, it would use its key up.
		wait := p.opt.Wait
		if !deadline.IsZero() {
			wait = max(wait, time.Until(deadline)-p.opt.Timeout)
		}
		next, err := p.live(ctx, wait)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNotSent, err)
		}
		if !deadline.IsZero() && time.Until(deadline) < p.opt.Timeout {
			return nil, fmt.Errorf("%w: the permit's lease ends before a call could end", errNotSent)
		}
		cs = next
	}
}

// forward calls the upstream with the permit and reports what came back:
// a result succeeded, a tool error failed, an invalid-params rejection
// failed (the upstream refused it before running it), anything else (a
// lost connection, a timeout, a crash) unknown, which leaves the key for
// an operator and never runs it again. A succeeded or failed report keeps
// the answer the caller gets (see keep), for its retries. The key goes
// with the call, in _meta and in the --key-arg argument where the tool
// has one; the answer carries m, completed, in its own _meta.
func (p *Proxy) forward(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, a ledger.Answer, m actionMeta) *mcp.CallToolResult {
	// The report must land even when the agent gave up on this request.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer rcancel()
	m.Key, m.Replayed = a.Key, false
	start := time.Now()
	settle := func(res *mcp.CallToolResult, outcome ledger.Outcome, ref string) *mcp.CallToolResult {
		opt := ledger.ReportOptions{Ref: ref, Latency: time.Since(start)}
		m.State = ledger.StateUncertain
		if outcome != ledger.Unknown {
			m.State = ledger.State(outcome)
			opt.Result, m.NotStored = p.keep(res, a.Key)
			m.Stored = new(opt.Result != "")
		}
		p.report(rctx, a, outcome, opt)
		return withMeta(res, m)
	}
	key := safetext.Escape(a.Key)
	res, err := p.send(ctx, cs, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{MetaKey: a.Key}}, a.LeaseUntil)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.Is(err, errNotSent):
		p.logf("%s was not forwarded: %s; reported failed (not-forwarded)", a.Key, safetext.Escape(err.Error()))
		return settle(textResult(fmt.Sprintf("NOT FORWARDED: %s was permitted, but the upstream MCP server exited before the call was sent and did not come back in time; it did not run. "+
			"The key is settled failed (ref not-forwarded): to do it now, repeat the call with a new %s.", key, KeyArgument), true), ledger.Failed, "not-forwarded")
	case err == nil && res != nil && !res.IsError:
		return settle(res, ledger.Succeeded, "")
	case err == nil && res != nil:
		return settle(res, ledger.Failed, "")
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams:
		return settle(textResult(fmt.Sprintf("FAILED: the upstream MCP server refused the arguments of %s as invalid (-32602: %s) and did not run it. "+
			"The key is settled failed (ref invalid-params): correct the arguments (with a new %s if you gave one): that is a new action.", key, safetext.Escape(rpcErr.Message), KeyArgument), true),
			ledger.Failed, "invalid-params")
	}
	why := "no result"
	if err != nil {
		why = err.Error()
	}
	p.logf("upstream call for %s lost: %s", a.Key, safetext.Escape(why))
	return settle(textResult(fmt.Sprintf("UNKNOWN: the call to the upstream server for %s was lost or timed out (%s); it may or may not have taken effect. "+
		"The key is uncertain: do not repeat the action, under this key or a new one; an operator reconciles it.",
		key, safetext.Escape(why)), true), ledger.Unknown, "")
}

// report records the outcome of a's permit. A result the ledger refuses
// (it cannot be, after keep) does not cost the outcome: it is reported
// again without one.
func (p *Proxy) report(ctx context.Context, a ledger.Answer, outcome ledger.Outcome, opt ledger.ReportOptions) {
	_, err := p.store.Report(ctx, a.Key, a.PermitID, outcome, opt)
	if err != nil && opt.Result != "" && errors.Is(err, ledger.ErrInvalidInput) {
		p.logf("the result of %s was refused (%s); reported without it", a.Key, safetext.Escape(err.Error()))
		opt.Result = ""
		_, err = p.store.Report(ctx, a.Key, a.PermitID, outcome, opt)
	}
	if err != nil {
		p.logf("report %s for %s failed: %s", outcome, a.Key, safetext.Escape(err.Error()))
	}
}

// splitArguments decodes a call's arguments (a JSON object, or nothing)
// and takes out idempotency_key. Numbers stay as written, so that the
// canonical body and the forwarded arguments keep every digit.
func splitArguments(raw json.RawMessage) (map[string]any, string, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil || args == nil {
			return nil, "", errors.New("the arguments must be a JSON object")
		}
	}
	key := ""
	if v, ok := args[KeyArgument]; ok {
		s, isString := v.(string)
		if !isString || s == "" {
			return nil, "", fmt.Errorf("%s must be a non-empty string", KeyArgument)
		}
		key = s
		delete(args, KeyArgument)
	}
	return args, key, nil
}

// errCallerContext is the refusal of a context the model sent where the
// operator accepts none of its fields, or a field it did not opt into.
var errCallerContext = errors.New("this proxy derives the action's context from its arguments (the operator's --context); the caller does not supply the facts its approval depends on")

// splitContext takes tollgate_context out of the arguments and checks it
// as guard does (the field that breaks a rule is named); nil when the
// call gives none. Only the fields in allowed may be sent; the proxy's
// own are never the caller's to set.
func splitContext(args map[string]any, allowed []string) (ledger.Context, error) {
	v, ok := args[ContextArgument]
	if !ok {
		return nil, nil
	}
	delete(args, ContextArgument)
	if len(allowed) == 0 {
		return nil, fmt.Errorf("%s is not accepted: %w; call again without it", ContextArgument, errCallerContext)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", ContextArgument, err)
	}
	cx, err := ledger.ParseContext(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ContextArgument, err)
	}
	if _, taken := cx[PredecessorField]; taken {
		return nil, fmt.Errorf("%s: the field %q is the proxy's (it names the call a repeat follows)", ContextArgument, PredecessorField)
	}
	for k := range cx {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("%s: the field %q is not one the operator accepts from the caller (%s): %w", ContextArgument, k, strings.Join(allowed, ", "), errCallerContext)
		}
	}
	return cx, nil
}

// derive adds the fields the operator's mappings derive from the call's
// arguments to the caller's (cx), and lists the caller's, if any, in
// caller_asserted. A mapping that fails for this call leaves its field
// out: a rule that reads it then fails closed.
func (p *Proxy) derive(tool, body string, cx ledger.Context) (ledger.Context, error) {
	out := ledger.Context{}
	var asserted []string
	for k, v := range cx {
		out[k] = v
		asserted = append(asserted, k)
	}
	if len(asserted) > 0 {
		slices.Sort(asserted)
		out[ledger.CallerAssertedField] = asserted
	}
	if len(p.opt.Context) > 0 {
		args, err := approvals.MappingArgs(body)
		if err != nil {
			return nil, fmt.Errorf("the arguments cannot be read for the context: %v", err)
		}
		for _, m := range p.opt.Context {
			v, err := m.Eval(tool, args)
			if err != nil {
				p.logf("a call to %s: %s; the field is left out, so a rule that reads it fails closed", safetext.Escape(tool), safetext.Escape(err.Error()))
				continue
			}
			out[m.Name] = v
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	// Checked as guard checks a context: a derived string or list within
	// its bounds.
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if _, err := ledger.ParseContext(raw); err != nil {
		return nil, fmt.Errorf("the derived context: %w", err)
	}
	return out, nil
}

// canonicalJSON is the arguments as the payload's body: object keys
// sorted at every depth (encoding/json sorts map keys), no insignificant
// space, no HTML escaping, so the same arguments give the same digest.
func canonicalJSON(args map[string]any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return "", fmt.Errorf("the arguments cannot be encoded: %v", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (p *Proxy) logf(format string, args ...any) {
	if p.opt.Log != nil {
		fmt.Fprintf(p.opt.Log, "tollgate mcp proxy: "+format+"\n", args...)
	}
}
