package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
)

// The flag structs, one per command, built from these parts.

// payloadArgs are the flags that give an action's payload.
type payloadArgs struct {
	kind, target, body, bodyFile, payloadJSON, agent string
	redact                                           bool
}

func (p *payloadArgs) bind(fs *flag.FlagSet) {
	fs.StringVar(&p.kind, "kind", "", "payload kind (the action name policy matches)")
	fs.StringVar(&p.target, "target", "", "payload target")
	fs.StringVar(&p.body, "body", "", "payload body")
	fs.StringVar(&p.bodyFile, "body-file", "", "read the body from a file, or - for stdin")
	fs.StringVar(&p.payloadJSON, "payload-json", "", "read the whole payload as JSON {kind,target,body} from a file, or - for stdin")
	fs.StringVar(&p.agent, "agent", "", "the calling agent's name")
	fs.BoolVar(&p.redact, "redact", false, "retain only the payload's hashes, not its text")
}

// operatorArgs name the operator and the key they sign with.
type operatorArgs struct {
	operator string
	keyArg
}

func (o *operatorArgs) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.operator, "operator", "", "operator name (default $TOLLGATE_OPERATOR; on a signed ledger the key's registered name, else the login name)")
	o.keyArg.bind(fs)
}

// keyArg is the operator key file.
type keyArg struct{ key string }

func (k *keyArg) bind(fs *flag.FlagSet) {
	fs.StringVar(&k.key, "key", "", "operator private key file (default $TOLLGATE_OPERATOR_KEY, else ssh-agent's keys and the key operator init made)")
}

// witnessArg is the witness file of chain heads.
type witnessArg struct{ witness string }

func (w *witnessArg) bind(fs *flag.FlagSet) {
	fs.StringVar(&w.witness, "witness", "", "the witness file of chain heads (default $XDG_STATE_HOME/tollgate/witness)")
}

// migrateFlags: --from copies a file ledger into PostgreSQL.
type migrateFlags struct{ from string }

func bindMigrate(fs *flag.FlagSet, f *migrateFlags) {
	fs.StringVar(&f.from, "from", "", "an SQLite ledger to copy into the empty PostgreSQL database --db names")
}

type consoleFlags struct {
	operatorArgs
	witnessArg
	readOnly bool
}

type demoFlags struct {
	operator string
	headless time.Duration
}

type guardFlags struct {
	payloadArgs
	lease, wait time.Duration
	context     string
	remote      remoteArg
}

type reportFlags struct {
	permit, outcome, ref string
	latency              time.Duration
	remote               remoteArg
}

type listFlags struct {
	state, agent, kind, prefix, epoch string
	limit                             int
	all                               bool
}

type showFlags struct{ payload bool }

func bindShow(fs *flag.FlagSet, f *showFlags) {
	fs.BoolVar(&f.payload, "payload", false, "also print the retained payload (kind, target, body), escaped")
}

type decideFlags struct {
	operatorArgs
	reason string
}

type reconcileFlags struct {
	operatorArgs
	result, note string
}

type policySetFlags struct {
	operatorArgs
	mode      string
	ttl       time.Duration
	approvers int
	condition string
	priority  int
}

type policyTestFlags struct {
	kind, target, agent, context, at string
}

type epochFlags struct {
	operatorArgs
	epoch string
}

func bindConsole(fs *flag.FlagSet, f *consoleFlags) {
	f.operatorArgs.bind(fs)
	fs.BoolVar(&f.readOnly, "read-only", false, "disable every decision")
	f.witnessArg.bind(fs)
}

func bindDemo(fs *flag.FlagSet, f *demoFlags) {
	fs.StringVar(&f.operator, "operator", "", "operator name (default $TOLLGATE_OPERATOR, else the login name)")
	fs.DurationVar(&f.headless, "headless", 0, "run only the simulated agents for this long, without the console")
}

func bindPayload(fs *flag.FlagSet, f *payloadArgs) { f.bind(fs) }

func bindGuard(fs *flag.FlagSet, f *guardFlags) {
	f.payloadArgs.bind(fs)
	fs.DurationVar(&f.lease, "lease", ledger.DefaultLease, "how long the permit holder has to report")
	fs.DurationVar(&f.wait, "wait", 0, "poll until the answer is no longer 75 (retry later) or this long passes")
	fs.StringVar(&f.context, "context", "", `what policy may read beside the payload, one JSON object ({"amount": 40.5, "flags": ["vip"]}); bound to the key`)
	f.remote.bind(fs)
}

func bindReport(fs *flag.FlagSet, f *reportFlags) {
	fs.StringVar(&f.permit, "permit", "", "the permit id guard returned")
	fs.StringVar(&f.outcome, "outcome", "", "succeeded, failed or unknown")
	fs.StringVar(&f.ref, "ref", "", "a safe reference to the external effect (never the body)")
	fs.DurationVar(&f.latency, "latency", 0, "how long the action took")
	f.remote.bind(fs)
}

func bindList(fs *flag.FlagSet, f *listFlags) {
	fs.StringVar(&f.state, "state", "", "only this state")
	fs.StringVar(&f.agent, "agent", "", "only this agent")
	fs.StringVar(&f.kind, "kind", "", "only this kind")
	fs.StringVar(&f.prefix, "prefix", "", "only logical keys with this prefix")
	fs.StringVar(&f.epoch, "epoch", "", "only keys under this epoch")
	fs.IntVar(&f.limit, "limit", 100, "at most this many rows (max 10000)")
	fs.BoolVar(&f.all, "all", false, "with --state fenced or conflict: reviewed ones too")
}

func bindDecide(fs *flag.FlagSet, f *decideFlags) {
	fs.StringVar(&f.reason, "reason", "", "why (required to reject)")
	f.operatorArgs.bind(fs)
}

func bindReconcile(fs *flag.FlagSet, f *reconcileFlags) {
	fs.StringVar(&f.result, "result", "", "executed or not-executed")
	fs.StringVar(&f.note, "note", "", "what the operator checked (required)")
	f.operatorArgs.bind(fs)
}

func bindPolicySet(fs *flag.FlagSet, f *policySetFlags) {
	fs.StringVar(&f.mode, "mode", "", "auto, approval or deny")
	fs.DurationVar(&f.ttl, "ttl", approvals.DefaultTTL, "approval deadline for mode approval")
	fs.IntVar(&f.approvers, "approvers", 1, fmt.Sprintf("how many distinct operators must approve (1 to %d; mode approval)", approvals.MaxApprovers))
	fs.StringVar(&f.condition, "if", "", `a CEL condition the action must meet (context.amount > 5000); the pattern and condition are the rule's identity`)
	fs.IntVar(&f.priority, "priority", 0, fmt.Sprintf("evaluation order before specificity, higher first (%d to %d)", -approvals.MaxPriority, approvals.MaxPriority))
	f.operatorArgs.bind(fs)
}

func bindPolicyTest(fs *flag.FlagSet, f *policyTestFlags) {
	fs.StringVar(&f.kind, "kind", "", "the action's kind")
	fs.StringVar(&f.target, "target", "", "the action's target")
	fs.StringVar(&f.agent, "agent", "", "the agent asking")
	fs.StringVar(&f.context, "context", "", "the action's context, one JSON object")
	fs.StringVar(&f.at, "at", "", "evaluate at this time (RFC 3339) instead of now")
}

func bindEpoch(fs *flag.FlagSet, f *epochFlags) {
	fs.StringVar(&f.epoch, "epoch", "", "use this lowercase UUID instead of a random one")
	f.operatorArgs.bind(fs)
}

func bindKey(fs *flag.FlagSet, f *keyArg)         { f.bind(fs) }
func bindWitness(fs *flag.FlagSet, f *witnessArg) { f.bind(fs) }

// maxBodyBytes is the most a 4000-code-point body can take in UTF-8; one
// byte more proves the bound is broken without reading the rest.
const maxBodyBytes = 4 * ledger.MaxFieldRunes

// payload builds the payload from --kind, --target and --body, --body-file
// or --payload-json, checking every rule before the ledger is opened.
func (p *payloadArgs) payload(c *cmdCtx) (ledger.Payload, error) {
	if p.payloadJSON != "" {
		if p.kind != "" || p.target != "" || p.body != "" || p.bodyFile != "" {
			return ledger.Payload{}, usagef("--payload-json replaces --kind, --target, --body and --body-file")
		}
		// Each field may be 4000 code points of 12 bytes once escaped
		// (a surrogate pair), plus the object's own punctuation.
		data, err := c.readInput(p.payloadJSON, 3*12*ledger.MaxFieldRunes+64)
		if err != nil {
			return ledger.Payload{}, err
		}
		return ledger.DecodePayload(data)
	}
	out := ledger.Payload{Kind: p.kind, Target: p.target, Body: p.body}
	for _, name := range []string{"kind", "target"} {
		if !c.flagSet(name) {
			return out, fmt.Errorf("%w: the payload field %q is required (--%s)", ledger.ErrInvalidInput, name, name)
		}
	}
	bodySet := c.flagSet("body")
	switch {
	case bodySet && p.bodyFile != "":
		return out, usagef("give the body with --body or --body-file, not both")
	case p.bodyFile != "":
		data, err := c.readInput(p.bodyFile, maxBodyBytes)
		if err != nil {
			return out, err
		}
		out.Body = string(data)
	case !bodySet:
		return out, fmt.Errorf("%w: the payload field \"body\" is required (--body, --body-file F or --body-file -)", ledger.ErrInvalidInput)
	}
	return out, out.Validate()
}

// flagSet reports whether a flag was given on the command line (an empty
// --body is a body; a missing one is not).
func (c *cmdCtx) flagSet(name string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// readInput reads a file or stdin ("-"), refusing more than limit bytes.
func (c *cmdCtx) readInput(name string, limit int) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = c.env.Stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%w: read %s: %v", ledger.ErrInvalidInput, name, err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is a directory, not a file", ledger.ErrInvalidInput, name)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", ledger.ErrInvalidInput, name, err)
	}
	if len(data) > limit {
		return nil, &ledger.PayloadError{Field: "body", Rule: fmt.Sprintf("must be at most %d code points (the input is longer than %d bytes)", ledger.MaxFieldRunes, limit)}
	}
	return data, nil
}
