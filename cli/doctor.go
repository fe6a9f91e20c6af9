package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tollgate-dev/tollgate/doctor"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
	"github.com/tollgate-dev/tollgate/safetext"
)

// Its --help example, beside every other command's (help.go).
func init() {
	examples["doctor"] = "tollgate doctor --agent-user refund-bot --socket /run/tollgate/tollgate.sock"
}

// doctorFlags: the operator key to judge, as the deciding commands find
// it, and the user to judge against.
type doctorFlags struct {
	keyArg
	agentUser string
	socket    string
}

func bindDoctor(fs *flag.FlagSet, f *doctorFlags) {
	fs.StringVar(&f.agentUser, "agent-user", "", "judge against this user, as the agents run (default: the user running doctor)")
	fs.StringVar(&f.socket, "socket", "", "also check the single-host service deployment around this socket of tollgate serve (default: $TOLLGATE_URL's, when it is unix://)")
	f.keyArg.bind(fs)
}

// runDoctor is 'tollgate doctor': it gathers where this build and this
// environment put the ledger, the anchor, the witness and the key, and
// lets package doctor judge them. It exits 0 only when the deployment
// enforces approval against the agent's user, else 1 (ExitError).
func runDoctor(ctx context.Context, c *cmdCtx, f *doctorFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	agent, err := doctor.CurrentAgent()
	if f.agentUser != "" {
		agent, err = doctor.LookupAgent(f.agentUser)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: --agent-user: %v", ledger.ErrInvalidInput, err)
	}
	db, err := c.ledgerPath()
	if err != nil {
		return 0, err
	}
	// No config directory means no default key: nothing to judge there.
	key, explicit, _ := f.keyPath(c)
	in := doctor.Inputs{Agent: agent, Self: os.Getuid(), Ledger: db,
		Anchor: opkeys.SystemAnchorPath, AnchorEnv: c.env.Getenv("TOLLGATE_OPERATORS_FILE"), Witness: ledger.SystemWitnessPath,
		Key: key, KeyExplicit: explicit, SSHAuthSock: c.env.Getenv("SSH_AUTH_SOCK"),
		Facts:  func(ctx context.Context) (doctor.LedgerFacts, error) { return ledgerFacts(ctx, c) },
		Socket: doctorSocket(c, f.socket)}
	r := doctor.Check(ctx, in)
	r.ExitCode = ExitOK
	if !r.Enforces {
		r.ExitCode = ExitError
	}
	c.print(answer{code: r.ExitCode, json: r, text: func(w io.Writer) { doctorText(w, r) }})
	return r.ExitCode, nil
}

// doctorSocket is the service socket doctor checks the deployment
// around: --socket (a path, or a unix:// URL), else the socket
// $TOLLGATE_URL names, else none.
func doctorSocket(c *cmdCtx, flagValue string) string {
	if flagValue == "" {
		u := c.env.Getenv("TOLLGATE_URL")
		if !strings.HasPrefix(u, "unix://") {
			return ""
		}
		flagValue = u
	}
	return strings.TrimPrefix(flagValue, "unix://")
}

// ledgerFacts reads what doctor needs through the reading path: it
// never creates, migrates or changes a ledger.
func ledgerFacts(ctx context.Context, c *cmdCtx) (doctor.LedgerFacts, error) {
	s, err := c.open(ctx, true)
	if err != nil {
		return doctor.LedgerFacts{}, err
	}
	defer s.Close()
	h, err := s.Head(ctx)
	if err != nil {
		return doctor.LedgerFacts{}, err
	}
	set, err := s.Operators(ctx)
	return doctor.LedgerFacts{ID: h.LedgerID, Signed: set.Signed, Operators: len(set.Operators), Problems: len(set.Problems)}, err
}

// doctorText prints each finding on one line and what it means or how
// to fix it on the next, then the verdict. Messages carry paths, user
// and role names: all escaped.
func doctorText(w io.Writer, r doctor.Report) {
	for _, f := range r.Findings {
		label := string(f.Severity)
		if f.Severity == doctor.Warn || f.Severity == doctor.Fail {
			label = strings.ToUpper(label)
		}
		fmt.Fprintf(w, "%-5s %s: %s\n      %s\n", label, f.ID, safetext.Escape(f.Message), safetext.Escape(f.Fix))
	}
	who := safetext.Escape(r.Agent.Name)
	if r.Enforces {
		fmt.Fprintf(w, "this deployment enforces approval against the agent's user %s (exit %d)\n", who, r.ExitCode)
		return
	}
	fmt.Fprintf(w, "this deployment does NOT enforce approval against the agent's user %s: %d failing finding(s) (exit %d)\n", who, len(r.Failing()), r.ExitCode)
}
