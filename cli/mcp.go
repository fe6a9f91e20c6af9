package cli

import (
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/tollgate-dev/tollgate/mcpgate"
)

// mcpServeFlags are `mcp serve`'s flags.
type mcpServeFlags struct {
	agent  string
	remote remoteArg
}

func bindMCPServe(fs *flag.FlagSet, f *mcpServeFlags) {
	fs.StringVar(&f.agent, "agent", "", "the agent's name in the evidence when a guard call names none (default the MCP client's name)")
	f.remote.bind(fs)
}

// mcpProxyFlags are `mcp proxy`'s flags.
type mcpProxyFlags struct {
	agent      string
	target     string
	timeout    time.Duration
	lease      time.Duration
	guardReads bool
	keyArg     string
	redact     bool
	window     time.Duration
	remote     remoteArg
}

func bindMCPProxy(fs *flag.FlagSet, f *mcpProxyFlags) {
	fs.StringVar(&f.agent, "agent", "", "the agent's name in the evidence (default the MCP client's name)")
	fs.StringVar(&f.target, "target", "", "the payload target of every call (default the upstream server's name)")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "how long a forwarded call may take before it is reported unknown")
	fs.DurationVar(&f.lease, "lease", 0, "each permit's lease (default timeout + 1m)")
	fs.BoolVar(&f.guardReads, "guard-reads", false, "guard the tools the upstream marks read-only too (by default they pass unguarded and unrecorded)")
	fs.StringVar(&f.keyArg, "key-arg", "", "also pass the action's key as this argument to the tools whose input schema has it (it always goes in _meta)")
	fs.BoolVar(&f.redact, "redact", false, "record each call's arguments by their digests only, and store no result (a settled call's retry is then answered SETTLED, not given its result)")
	fs.DurationVar(&f.window, "repeat-window", mcpgate.DefaultRepeatWindow, "how long a key derived from the arguments lasts: after it, once the action has ended, an identical call is a new action (0: for ever; an idempotency_key never expires)")
	f.remote.bind(fs)
}

// runMCPServe serves the guard, report and status tools on stdin and
// stdout until the client disconnects.
func runMCPServe(ctx context.Context, c *cmdCtx, f *mcpServeFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	s, closeLedger, err := f.remote.mcpLedger(ctx, c)
	if err != nil {
		return 0, err
	}
	defer closeLedger()
	srv := mcpgate.NewServer(s, mcpgate.ServeOptions{Agent: f.agent})
	return ExitOK, srv.Run(ctx, mcpgate.Stdio(stdin(c), c.stdout))
}

// runMCPProxy runs the upstream command and serves its tools, each call
// guarded (reads unless --guard-reads pass), on stdin and stdout; the
// upstream is restarted when it exits.
func runMCPProxy(ctx context.Context, c *cmdCtx, f *mcpProxyFlags) (int, error) {
	if len(c.pos) == 0 {
		return 0, usagef("give the upstream MCP server's command after --: tollgate mcp proxy -- CMD ARGS...")
	}
	if _, err := exec.LookPath(c.pos[0]); err != nil {
		return 0, usagef("upstream command %q: %v", c.pos[0], err)
	}
	if f.window < 0 {
		return 0, usagef("--repeat-window must be 0 (for ever) or more (got %s)", f.window)
	}
	window := f.window
	if window == 0 {
		window = -1 // ProxyOptions: negative is for ever, zero the default
	}
	s, closeLedger, err := f.remote.mcpLedger(ctx, c)
	if err != nil {
		return 0, err
	}
	defer closeLedger()
	p, err := mcpgate.NewProxy(ctx, s, mcpgate.Command(c.env.Stderr, c.pos[0], c.pos[1:]...),
		mcpgate.ProxyOptions{Agent: f.agent, Target: f.target, Timeout: f.timeout, Lease: f.lease,
			GuardReads: f.guardReads, KeyArg: f.keyArg, Redact: f.redact, RepeatWindow: window, Log: c.env.Stderr})
	if err != nil {
		return 0, err
	}
	defer p.Close()
	return ExitOK, p.Server().Run(ctx, mcpgate.Stdio(stdin(c), c.stdout))
}

// stdin is the command's input.
func stdin(c *cmdCtx) io.Reader {
	if c.env.Stdin == nil {
		return os.Stdin
	}
	return c.env.Stdin
}
