package mcpgate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// KeyArgument is the optional argument the proxy adds to every tool: the
// caller's own action key. Without it the key is derived from the tool
// and the digest of its arguments.
const KeyArgument = "idempotency_key"

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
	// Log receives one line per refused, lost or unreported call, naming
	// keys, never arguments. Nil means no log.
	Log io.Writer
}

// Proxy is an MCP server that offers an upstream server's tools and puts
// guard in front of each call.
type Proxy struct {
	store    Ledger
	upstream *mcp.ClientSession
	server   *mcp.Server
	opt      ProxyOptions
	// gone is set once the upstream's session has ended (it exited or
	// closed its pipe): no call is guarded after that, so no permit is
	// issued for a call that cannot be forwarded.
	gone atomic.Bool
}

// NewProxy connects to the upstream server over transport (for a
// command, an mcp.CommandTransport), lists its tools, and returns the
// proxy offering them. Close stops the upstream.
func NewProxy(ctx context.Context, store Ledger, upstream mcp.Transport, opt ProxyOptions) (*Proxy, error) {
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
	client := mcp.NewClient(&mcp.Implementation{Name: "tollgate-proxy", Version: Version}, nil)
	cs, err := client.Connect(ctx, upstream, nil)
	if err != nil {
		return nil, fmt.Errorf("upstream MCP server: %w", err)
	}
	p := &Proxy{store: store, upstream: cs, opt: opt}
	go func() {
		cs.Wait()
		p.gone.Store(true)
	}()
	if p.opt.Target == "" {
		if r := cs.InitializeResult(); r != nil && r.ServerInfo != nil {
			p.opt.Target = r.ServerInfo.Name
		}
		if p.opt.Target == "" {
			p.opt.Target = "upstream"
		}
	}
	p.server = mcp.NewServer(&mcp.Implementation{Name: "tollgate-proxy", Version: Version}, &mcp.ServerOptions{
		Instructions: "Every tool here is guarded by tollgate: a call runs only with a permit. A call that waits for an operator returns PENDING: stop, and repeat the same call later. " +
			"Give the same idempotency_key (or the same arguments) when you repeat a call; never change them to get around an answer.",
	})
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("upstream MCP server: listing tools: %w", err)
		}
		offered, err := withKeyArgument(t)
		if err != nil {
			cs.Close()
			return nil, err
		}
		p.server.AddTool(offered, p.handler(t.Name))
	}
	return p, nil
}

// Server is the MCP server to run on the agent's transport.
func (p *Proxy) Server() *mcp.Server { return p.server }

// Close ends the upstream session (and its process).
func (p *Proxy) Close() error { return p.upstream.Close() }

// withKeyArgument is the upstream's tool, unchanged but for the optional
// idempotency_key argument added to its input schema.
func withKeyArgument(t *mcp.Tool) (*mcp.Tool, error) {
	var schema map[string]any
	raw, err := json.Marshal(t.InputSchema)
	if err == nil {
		err = json.Unmarshal(raw, &schema)
	}
	if err != nil || schema == nil {
		return nil, fmt.Errorf("upstream tool %q: its input schema is not a JSON object", safetext.Escape(t.Name))
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if _, taken := props[KeyArgument]; taken {
		return nil, fmt.Errorf("upstream tool %q already takes an argument named %s: the proxy cannot add its own", safetext.Escape(t.Name), KeyArgument)
	}
	props[KeyArgument] = map[string]any{"type": "string", "description": "optional: this action's stable tollgate key ([a-z0-9-] segments joined by ':'); " +
		"repeat it with the same arguments on every retry. Without it the key is derived from the tool and its arguments."}
	schema["properties"] = props
	out := *t
	out.InputSchema = schema
	return &out, nil
}

// handler guards, forwards and reports one tool's calls.
func (p *Proxy) handler(tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, key, err := splitArguments(req.Params.Arguments)
		if err != nil {
			return textResult("REFUSED before guard: "+err.Error()+"; nothing was recorded or forwarded.", true), nil
		}
		body, err := canonicalJSON(args)
		if err != nil {
			return textResult("REFUSED before guard: "+err.Error()+"; nothing was recorded or forwarded.", true), nil
		}
		if key == "" {
			if key, err = p.derivedKey(ctx, tool, body); err != nil {
				return textResult("REFUSED: "+safetext.Escape(err.Error())+"; nothing was forwarded.", true), nil
			}
		}
		agent := p.opt.Agent
		if agent == "" {
			agent = clientName(req)
		}
		payload := ledger.Payload{Kind: "mcp." + tool, Target: p.opt.Target, Body: body}
		gopt := ledger.GuardOptions{Agent: agent, Lease: p.opt.Lease}
		if _, err := ledger.CheckGuardInput(key, payload, gopt); err != nil {
			return textResult("REFUSED before guard: "+safetext.Escape(err.Error())+"; nothing was recorded or forwarded.", true), nil
		}
		if p.gone.Load() {
			return textResult("UNAVAILABLE: the upstream MCP server has exited; nothing was recorded or forwarded. Restart the proxy.", true), nil
		}
		a, err := p.store.Guard(ctx, key, payload, gopt)
		if err != nil {
			text, _ := refusalAdvice(err)
			p.logf("refused %s: %s", key, text)
			return textResult(text, true), nil
		}
		if a.Verdict != ledger.Permitted {
			return textResult(advice(a, retryCall), true), nil
		}
		return p.forward(ctx, tool, args, a), nil
	}
}

// forward calls the upstream with the permit and reports what came back:
// a result succeeded, a tool error failed, anything else (a lost
// connection, a timeout, a crash) unknown, which leaves the key for an
// operator and never runs it again.
func (p *Proxy) forward(ctx context.Context, tool string, args map[string]any, a ledger.Answer) *mcp.CallToolResult {
	cctx, cancel := context.WithTimeout(ctx, p.opt.Timeout)
	defer cancel()
	start := time.Now()
	res, err := p.upstream.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	outcome := ledger.Succeeded
	switch {
	case err != nil || res == nil:
		outcome = ledger.Unknown
	case res.IsError:
		outcome = ledger.Failed
	}
	// The report must land even when the agent gave up on this request.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer rcancel()
	if _, rerr := p.store.Report(rctx, a.Key, a.PermitID, outcome, ledger.ReportOptions{Latency: time.Since(start)}); rerr != nil {
		p.logf("report %s for %s failed: %s", outcome, a.Key, safetext.Escape(rerr.Error()))
	}
	if outcome == ledger.Unknown {
		why := "no result"
		if err != nil {
			why = err.Error()
		}
		p.logf("upstream call for %s lost: %s", a.Key, safetext.Escape(why))
		return textResult(fmt.Sprintf("UNKNOWN: the call to the upstream server for %s was lost or timed out (%s); it may or may not have taken effect. "+
			"The key is uncertain: do not repeat the action, under this key or a new one; an operator reconciles it.",
			safetext.Escape(a.Key), safetext.Escape(why)), true)
	}
	return res
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

// derivedKey is mcp:<tool>:<digest> for a call without its own key: the
// tool's name in key characters, then 32 hex digits of the SHA-256 of the
// tool's exact name and the canonical arguments. Under an active operator
// epoch it is epoch-qualified, as new work must be.
func (p *Proxy) derivedKey(ctx context.Context, tool, body string) (string, error) {
	sum := sha256.Sum256([]byte(tool + "\x00" + body))
	logical := "mcp:" + keySegment(tool) + ":" + hex.EncodeToString(sum[:16])
	e, err := p.store.Epoch(ctx)
	if err != nil {
		return "", err
	}
	if e.Epoch != "" {
		return "hsr1:" + e.Epoch + ":" + logical, nil
	}
	return logical, nil
}

// keySegment maps a tool name into one key segment: lowercase letters,
// digits and '-', at most 40 characters.
func keySegment(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "tool"
	}
	return s
}

func (p *Proxy) logf(format string, args ...any) {
	if p.opt.Log != nil {
		fmt.Fprintf(p.opt.Log, "tollgate mcp proxy: "+format+"\n", args...)
	}
}
