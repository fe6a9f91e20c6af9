package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/mcpgate"
	"github.com/tollgate-dev/tollgate/safetext"
	"github.com/tollgate-dev/tollgate/service"
)

// remoteArg is how an agent's command reaches `tollgate serve` instead of
// a ledger: --url (else $TOLLGATE_URL unless --db is given) and a token
// from --token-file (else $TOLLGATE_TOKEN).
type remoteArg struct{ url, tokenFile string }

func (r *remoteArg) bind(fs *flag.FlagSet) {
	fs.StringVar(&r.url, "url", "", "use the service at this URL instead of a ledger: unix:///path.sock, https://host:port (default $TOLLGATE_URL unless --db is given)")
	fs.StringVar(&r.tokenFile, "token-file", "", "read the service's bearer token from this file (default $TOLLGATE_TOKEN)")
}

func bindRemote(fs *flag.FlagSet, r *remoteArg) { r.bind(fs) }

// target is the service's URL, or "" for a ledger: --url, else --db
// (a ledger named on the command line wins over the environment's
// service), else $TOLLGATE_URL.
func (r *remoteArg) target(c *cmdCtx) string {
	switch {
	case r.url != "":
		return r.url
	case c.db != "":
		return ""
	}
	return c.env.Getenv("TOLLGATE_URL")
}

// client makes the service's client, or nil when the command uses a
// ledger.
func (r *remoteArg) client(c *cmdCtx) (*service.Client, error) {
	if r.url != "" && c.db != "" {
		return nil, usagef("--url and --db each name where the call goes: give one")
	}
	u := r.target(c)
	if u == "" {
		if r.tokenFile != "" {
			return nil, usagef("--token-file is for the service: give --url or $TOLLGATE_URL too")
		}
		return nil, nil
	}
	token := c.env.Getenv("TOLLGATE_TOKEN")
	if r.tokenFile != "" {
		b, err := os.ReadFile(r.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --token-file: %v", ledger.ErrInvalidInput, err)
		}
		token = strings.TrimSpace(string(b))
	}
	if strings.ContainsAny(token, "\r\n\x00") {
		return nil, fmt.Errorf("%w: the token holds a line break or NUL", ledger.ErrInvalidInput)
	}
	return service.NewClient(u, service.ClientOptions{Token: token, RetryFor: c.retryFor, AttemptTimeout: c.attempt})
}

// withLedger is the one runner for an agent's command that may use the
// service: given a URL it runs fn on the service's client and never
// opens a ledger, else it is withLedger.
func (r *remoteArg) withLedger(ctx context.Context, c *cmdCtx, acc access, fn func(Ledger) (answer, error)) (int, error) {
	cl, err := r.client(c)
	if err != nil {
		return 0, err
	}
	if cl == nil {
		return withLedger(ctx, c, acc, fn)
	}
	return runWith(c, remoteLedger{cl}, fn)
}

// authorityOf is what approvals rest on, for guard's and status's
// answers: the service's word when the answer came from it, else the
// operators file this process reads.
func authorityOf(c *cmdCtx, s Ledger) string {
	if r, ok := s.(remoteLedger); ok {
		return r.Authority()
	}
	return c.authority()
}

// errRemote refuses a call the service does not offer an agent.
var errRemote = fmt.Errorf("%w: the service serves an agent's calls only (guard, report, status, epoch show); run operators' commands against the ledger", ledger.ErrNotPermitted)

// remoteLedger is the service's client as the commands' Ledger: the
// agent's calls go to the service, every other call is refused.
type remoteLedger struct{ *service.Client }

func (remoteLedger) Record(context.Context, string, ledger.Payload, ledger.RecordOptions) (ledger.Intent, error) {
	return ledger.Intent{}, errRemote
}
func (remoteLedger) List(context.Context, ledger.Filter) ([]ledger.Row, error) { return nil, errRemote }
func (remoteLedger) Conflicts(context.Context, bool, string, int64, int) ([]ledger.ConflictRow, error) {
	return nil, errRemote
}
func (remoteLedger) Fenced(context.Context, bool, string, int64, int) ([]ledger.FencedRow, error) {
	return nil, errRemote
}
func (remoteLedger) Approve(context.Context, string, string, string) (ledger.Decision, error) {
	return ledger.Decision{}, errRemote
}
func (remoteLedger) Reject(context.Context, string, string, string) (ledger.Decision, error) {
	return ledger.Decision{}, errRemote
}
func (remoteLedger) Reconcile(context.Context, string, ledger.Result, string, string) (ledger.Reconciliation, error) {
	return ledger.Reconciliation{}, errRemote
}
func (remoteLedger) SetPolicy(context.Context, approvals.Rule, string) (approvals.Rule, error) {
	return approvals.Rule{}, errRemote
}
func (remoteLedger) PolicyStandings(context.Context) ([]ledger.PolicyRule, error) {
	return nil, errRemote
}
func (remoteLedger) PolicyTest(context.Context, approvals.Facts) (approvals.Rule, approvals.Explain, error) {
	return approvals.Rule{}, approvals.Explain{}, errRemote
}
func (remoteLedger) ActivateEpoch(context.Context, string, string) (ledger.EpochInfo, error) {
	return ledger.EpochInfo{}, errRemote
}
func (remoteLedger) Operators(context.Context) (ledger.OperatorSet, error) {
	return ledger.OperatorSet{}, errRemote
}
func (remoteLedger) AddOperator(context.Context, string, string) (ledger.Operator, error) {
	return ledger.Operator{}, errRemote
}
func (remoteLedger) RemoveOperator(context.Context, string) (ledger.Operator, error) {
	return ledger.Operator{}, errRemote
}
func (remoteLedger) Head(context.Context) (ledger.Head, error) { return ledger.Head{}, errRemote }
func (remoteLedger) Verify(context.Context, ...ledger.Head) (ledger.VerifyReport, error) {
	return ledger.VerifyReport{}, errRemote
}
func (remoteLedger) VerifyWith(context.Context, func(int, string), ...ledger.Head) (ledger.VerifyReport, error) {
	return ledger.VerifyReport{}, errRemote
}
func (remoteLedger) ExportWith(context.Context, io.Writer, func(int)) (ledger.ExportEnd, error) {
	return ledger.ExportEnd{}, errRemote
}
func (remoteLedger) Backup(context.Context, string) (ledger.Head, error) {
	return ledger.Head{}, errRemote
}
func (remoteLedger) Watch(context.Context) (ledger.Watch, error) { return nil, errRemote }

var _ Ledger = remoteLedger{}

// identified makes the client learn who the server takes it for (the
// MCP gate's default agent name) and fails early on a refused token.
func identified(ctx context.Context, cl *service.Client) error {
	if _, err := cl.Identify(ctx); err != nil {
		var p *service.Problem
		if errors.As(err, &p) {
			return err
		}
		return fmt.Errorf("%s: %w", safetext.Escape(cl.Path()), err)
	}
	return nil
}

// mcpLedger is the ledger the MCP gate runs on: the service's client
// given a URL (identified first), else the ledger opened for many
// callers (group commit).
func (r *remoteArg) mcpLedger(ctx context.Context, c *cmdCtx) (mcpgate.Ledger, func() error, error) {
	cl, err := r.client(c)
	if err != nil {
		return nil, nil, err
	}
	if cl != nil {
		if err := identified(ctx, cl); err != nil {
			return nil, nil, err
		}
		return cl, cl.Close, nil
	}
	s, err := c.openWith(ctx, ledger.Options{GroupCommit: true})
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}
