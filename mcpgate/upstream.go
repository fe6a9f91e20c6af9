package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/safetext"
)

// Dial makes a fresh transport to the upstream server. The proxy calls it
// to start the upstream and again to restart it after it exits: a
// transport, a command's above all, serves one connection only.
type Dial func() mcp.Transport

// Command is the Dial for an upstream server run as name with args, its
// standard error on stderr (the upstream's own log, as an MCP client
// would show it).
func Command(stderr io.Writer, name string, args ...string) Dial {
	return func() mcp.Transport {
		cmd := exec.Command(name, args...)
		cmd.Stderr = stderr
		return &mcp.CommandTransport{Command: cmd}
	}
}

const (
	// maxRestartDelay bounds the backoff between restarts.
	maxRestartDelay = 30 * time.Second
	// stableAfter is how long an upstream must stay up for its exit to
	// count as a new failure rather than one more of a crash loop.
	stableAfter = time.Minute
	// connectTimeout bounds one (re)start: the upstream's initialize and
	// its tool list.
	connectTimeout = 30 * time.Second
)

var (
	errRestarting = errors.New("the upstream MCP server exited and is being restarted")
	errClosed     = errors.New("the proxy is closed")
)

// upstreamTool is what a call needs to know of the upstream's tool.
type upstreamTool struct {
	// offered is the tool as the proxy lists it, kept to tell whether a
	// restarted upstream changed it.
	offered []byte
	// schema validates the arguments before anything is recorded; nil
	// when it cannot be resolved here (remote references, another
	// draft), and then the upstream alone validates.
	schema *jsonschema.Resolved
	// passes: a read-only tool whose calls are forwarded unguarded.
	passes bool
	// takesKey: its input has the --key-arg property, which the proxy
	// fills with the action's key.
	takesKey bool
}

// connect starts the upstream, lists its tools and offers them; from
// then on calls are forwarded to it. On a restart a changed tool is
// offered anew and a vanished one withdrawn.
func (p *Proxy) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	cs, err := p.client.Connect(ctx, p.dial(), nil)
	if err != nil {
		return nil, fmt.Errorf("upstream MCP server: %w", err)
	}
	tools := map[string]*upstreamTool{}
	var offered []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("upstream MCP server: listing tools: %w", err)
		}
		o, info, err := p.offer(t)
		if err != nil {
			cs.Close()
			return nil, err
		}
		tools[t.Name] = info
		offered = append(offered, o)
	}
	p.mu.Lock()
	if p.down != nil {
		p.mu.Unlock()
		cs.Close()
		return nil, p.down
	}
	var gone []string
	for name := range p.tools {
		if tools[name] == nil {
			gone = append(gone, name)
		}
	}
	var changed []*mcp.Tool
	for _, o := range offered {
		if old := p.tools[o.Name]; old == nil || string(old.offered) != string(tools[o.Name].offered) {
			changed = append(changed, o)
		}
	}
	p.tools, p.session = tools, cs
	close(p.up)
	p.mu.Unlock()
	// Outside the lock: the server notifies connected clients of changes.
	p.server.RemoveTools(gone...)
	for _, o := range changed {
		p.server.AddTool(o, p.handler(o.Name))
	}
	return cs, nil
}

// offer is the upstream's tool as the proxy lists it, and what a call
// needs to know of it: unchanged, but for the optional idempotency_key
// argument on a guarded tool, and the --key-arg property, which the
// proxy fills, no longer required of the caller.
func (p *Proxy) offer(t *mcp.Tool) (*mcp.Tool, *upstreamTool, error) {
	var schema map[string]any
	raw, err := json.Marshal(t.InputSchema)
	if err == nil {
		err = json.Unmarshal(raw, &schema)
	}
	if err != nil || schema == nil {
		return nil, nil, fmt.Errorf("upstream tool %q: its input schema is not a JSON object", safetext.Escape(t.Name))
	}
	info := &upstreamTool{schema: resolve(raw), passes: t.Annotations != nil && t.Annotations.ReadOnlyHint && !p.opt.GuardReads}
	out := *t
	if !info.passes {
		props, _ := schema["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		for _, own := range []string{KeyArgument, ContextArgument} {
			if _, taken := props[own]; taken {
				return nil, nil, fmt.Errorf("upstream tool %q already takes an argument named %s: the proxy cannot add its own", safetext.Escape(t.Name), own)
			}
		}
		if prop, ok := props[p.opt.KeyArg].(map[string]any); ok && p.opt.KeyArg != "" {
			info.takesKey = true
			desc, _ := prop["description"].(string)
			prop["description"] = strings.TrimSpace("Set by tollgate to the action's key: leave it out. " + desc)
			if req, ok := schema["required"].([]any); ok {
				var kept []any
				for _, r := range req {
					if r != p.opt.KeyArg {
						kept = append(kept, r)
					}
				}
				schema["required"] = kept
			}
		}
		props[KeyArgument] = map[string]any{"type": "string", "description": "optional: this action's stable tollgate key ([a-z0-9-] segments joined by ':'); " +
			"repeat it with the same arguments on every retry. Without it the key is derived from the tool and its arguments."}
		if len(p.opt.CallerContext) > 0 {
			// Only the fields the operator accepts from the caller.
			fields := map[string]any{}
			for _, n := range p.opt.CallerContext {
				fields[n] = map[string]any{"description": "asserted by the caller, and shown as the caller's: a string, number, boolean, list of strings or RFC 3339 time"}
			}
			props[ContextArgument] = map[string]any{"type": "object", "properties": fields, "additionalProperties": false,
				"description": "optional: facts about this action that tollgate's policy may read beside its arguments, as the caller asserts them; " +
					"not passed on; give the same on every retry."}
		}
		schema["properties"] = props
		out.InputSchema = schema
	}
	info.offered, _ = json.Marshal(&out)
	return &out, info, nil
}

// resolve is an input schema ready to validate arguments, or nil when
// this proxy cannot validate with it and leaves that to the upstream.
func resolve(raw []byte) *jsonschema.Resolved {
	var s jsonschema.Schema
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	if v := s.Schema; v != "" && !strings.Contains(v, "draft-07") && !strings.Contains(v, "2020-12") {
		return nil
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil
	}
	return r
}

// supervise restarts the upstream each time it exits, after a backoff
// that doubles from RestartDelay up to maxRestartDelay, and gives up
// after Restarts failures in a row (a start that fails, or an upstream
// that exits within stableAfter). While it is down no call is guarded:
// calls wait for it (up to Wait) or are refused with nothing recorded.
func (p *Proxy) supervise(cs *mcp.ClientSession) {
	defer close(p.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.stop
		cancel()
	}()
	failures, delay := 0, p.opt.RestartDelay
	for {
		started := time.Now()
		cs.Wait()
		p.mu.Lock()
		if p.down != nil {
			p.mu.Unlock()
			return
		}
		p.session, p.up = nil, make(chan struct{})
		p.mu.Unlock()
		if time.Since(started) >= stableAfter {
			failures, delay = 0, p.opt.RestartDelay
		}
		for cs = nil; cs == nil; {
			if failures++; failures > p.opt.Restarts {
				p.logf("the upstream MCP server failed %d times in a row; no more restarts: calls are refused until the proxy is restarted", p.opt.Restarts)
				p.setDown(fmt.Errorf("the upstream MCP server failed %d times in a row and is not restarted again", p.opt.Restarts))
				return
			}
			p.logf("the upstream MCP server exited; restart %d of at most %d in %s", failures, p.opt.Restarts, delay)
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, maxRestartDelay)
			var err error
			if cs, err = p.connect(ctx); err != nil {
				p.logf("restart %d failed: %s", failures, safetext.Escape(err.Error()))
				if errors.Is(err, errClosed) {
					return
				}
			}
		}
		p.logf("the upstream MCP server is back (restart %d)", failures)
	}
}

// setDown ends the proxy's use of the upstream for good: calls waiting
// for it are released and refused.
func (p *Proxy) setDown(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setDownLocked(err)
}

func (p *Proxy) setDownLocked(err error) {
	if p.down != nil {
		return
	}
	p.down = err
	if p.session == nil {
		close(p.up) // open exactly while session and down are both unset
	}
}

// live is the upstream's session once it is up, waiting up to wait while
// it restarts. Calls ask before guard (waiting up to Wait), so that
// nothing is recorded for a call that cannot be forwarded.
func (p *Proxy) live(ctx context.Context, wait time.Duration) (*mcp.ClientSession, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		p.mu.Lock()
		cs, up, down := p.session, p.up, p.down
		p.mu.Unlock()
		switch {
		case down != nil:
			return nil, down
		case cs != nil:
			return cs, nil
		}
		select {
		case <-up:
		case <-timer.C:
			return nil, errRestarting
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// current reports whether cs is still the live session: false once the
// proxy has seen it end.
func (p *Proxy) current(cs *mcp.ClientSession) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.session == cs
}

// tool is what the proxy knows of the upstream's tool name, nil if the
// upstream no longer offers it.
func (p *Proxy) tool(name string) *upstreamTool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tools[name]
}
