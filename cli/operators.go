package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/term"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
	"github.com/tollgate-dev/tollgate/safetext"
)

// claimed is the name given with --operator or TOLLGATE_OPERATOR, empty
// when none was: then the key's registered name is used.
func (o *operatorArgs) claimed(c *cmdCtx) string {
	if o.operator != "" {
		return o.operator
	}
	return c.env.Getenv("TOLLGATE_OPERATOR")
}

// loginName is the operator's name on a ledger that was never signed and
// for which no name was given.
func (c *cmdCtx) loginName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return c.env.Getenv("USER")
}

// keyPath is --key, else TOLLGATE_OPERATOR_KEY; explicit says whether one
// was given, else it is the default path from operator init.
func (k *keyArg) keyPath(c *cmdCtx) (path string, explicit bool, err error) {
	if k.key != "" {
		return k.key, true, nil
	}
	if p := c.env.Getenv("TOLLGATE_OPERATOR_KEY"); p != "" {
		return p, true, nil
	}
	p, err := opkeys.DefaultPath(c.env.Getenv("XDG_CONFIG_HOME"))
	return p, false, err
}

// signers gathers the keys this command may sign with. An explicit key
// file must load; ssh-agent's key for the same public key signs in its
// place, so the file is not decrypted. Without one: every Ed25519 key in
// ssh-agent, then the default key file if it exists. The ledger picks the
// first that is a registered operator.
func (k *keyArg) signers(c *cmdCtx, ask func(path string) ([]byte, error)) ([]ssh.Signer, error) {
	path, explicit, err := k.keyPath(c)
	if err != nil {
		return nil, err
	}
	agentKeys, closeAgent, err := opkeys.AgentSigners(c.env.Getenv("SSH_AUTH_SOCK"))
	if err != nil && explicit {
		return nil, err
	}
	c.cleanup = append(c.cleanup, closeAgent)
	var file *opkeys.Key
	if _, statErr := os.Stat(path); explicit || statErr == nil {
		if file, err = opkeys.Load(path); err != nil {
			return nil, err
		}
	}
	if file == nil {
		return agentKeys, nil
	}
	for _, a := range agentKeys {
		if string(a.PublicKey().Marshal()) == string(file.Public.Marshal()) {
			return []ssh.Signer{a}, nil
		}
	}
	fs := file.Signer(ask)
	if explicit {
		return []ssh.Signer{fs}, nil
	}
	return append(agentKeys, fs), nil
}

// askPassphrase reads a key's passphrase from the terminal without echo.
func askPassphrase(path string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is passphrase-protected and there is no terminal to ask on: add it to ssh-agent (ssh-add)", opkeys.ErrKey, path)
	}
	defer tty.Close()
	fmt.Fprintf(tty, "passphrase for %s: ", safetext.Escape(path))
	p, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	return p, err
}

// anchor reads the operators file (TOLLGATE_OPERATORS_FILE, else
// /etc/tollgate/operators); a file that exists but does not parse stops
// the command: it must not quietly allow more than it lists.
func (c *cmdCtx) anchor() (*opkeys.Anchor, error) {
	a, err := opkeys.FindAnchor(c.env.Getenv("TOLLGATE_OPERATORS_FILE"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ledger.ErrInvalidInput, err)
	}
	return a, nil
}

// authority says what approvals rest on, for status and guard --json:
// the operators file in force, or that there is none and approvals are
// only as safe as the ledger file's permissions.
func (c *cmdCtx) authority() string {
	a, err := c.anchor()
	if err != nil {
		return "operators file unreadable: " + err.Error()
	}
	return a.Describe()
}

// asOperator is the one runner for operator-authored writes: it opens the
// ledger with the operator's keys, the anchor and the login name as the
// unsigned default, then runs fn as withLedger does.
func (k *keyArg) asOperator(ctx context.Context, c *cmdCtx, fn func(Ledger) (answer, error)) (int, error) {
	signers, err := k.signers(c, askPassphrase)
	if err != nil {
		return 0, err
	}
	s, err := c.openWith(ctx, ledger.Options{OneShot: true, Signers: signers, Operator: c.loginName()})
	if err != nil {
		return 0, err
	}
	return runWith(c, s, fn)
}

func runOperatorInit(ctx context.Context, c *cmdCtx, f *keyArg) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	path, _, err := f.keyPath(c)
	if err != nil {
		return 0, err
	}
	comment := c.loginName()
	if h, err := os.Hostname(); err == nil {
		comment += "@" + h
	}
	pub, created, err := opkeys.Init(path, "tollgate "+comment)
	if err != nil {
		return 0, err
	}
	line := opkeys.Line(pub)
	c.print(ok(map[string]any{"key_file": path, "created": created, "public_key": line, "fingerprint": opkeys.Fingerprint(pub)}, func(w io.Writer) {
		verb := "created"
		if !created {
			verb = "exists, kept"
		}
		fmt.Fprintf(w, "%s: %s\n%s\nregister it: tollgate operators add NAME '%s'\n", safetext.Escape(path), verb, line, line)
		fmt.Fprint(w, setupAdvice(line))
	}))
	return ExitOK, nil
}

// setupAdvice offers the two steps that make approval hold against an
// agent on the same host, when they are missing: the system anchor and
// the shared witness, each made by root (tollgate never escalates).
func setupAdvice(line string) string {
	var b strings.Builder
	anchorDir, witnessDir := filepath.Dir(opkeys.SystemAnchorPath), filepath.Dir(ledger.SystemWitnessPath)
	if _, err := os.Stat(opkeys.SystemAnchorPath); err != nil {
		fmt.Fprintf(&b, "no operators file: approvals are only as safe as the ledger file's permissions. As root, pin the operators outside the ledger:\n"+
			"  install -d -m 0755 %s && echo 'NAME %s' >> %s && chmod 0644 %s\n", anchorDir, line, opkeys.SystemAnchorPath, opkeys.SystemAnchorPath)
	}
	if fi, err := os.Stat(witnessDir); err != nil || !fi.IsDir() {
		fmt.Fprintf(&b, "no shared witness: a restored or swapped ledger file is caught only by verify. As root, give the operators a witness agents can read:\n"+
			"  groupadd -f tollgate-operators && install -d -g tollgate-operators -m 2775 %s  (then add each operator's login to tollgate-operators)\n", witnessDir)
	}
	return b.String()
}

func runOperatorsAdd(ctx context.Context, c *cmdCtx, f *keyArg) (int, error) {
	if len(c.pos) != 2 {
		return 0, usagef("expected NAME and PUBKEY (one quoted line: 'ssh-ed25519 AAAA...')")
	}
	if _, err := opkeys.ParsePublicKey(c.pos[1]); err != nil {
		return 0, fmt.Errorf("%w: %v", ledger.ErrInvalidInput, err)
	}
	return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
		op, err := s.AddOperator(ctx, c.pos[0], c.pos[1])
		return operatorAnswer("added", op), err
	})
}

func runOperatorsRemove(ctx context.Context, c *cmdCtx, f *keyArg) (int, error) {
	if len(c.pos) != 1 {
		return 0, usagef("expected exactly one NAME")
	}
	return f.asOperator(ctx, c, func(s Ledger) (answer, error) {
		op, err := s.RemoveOperator(ctx, c.pos[0])
		return operatorAnswer("removed", op), err
	})
}

func operatorAnswer(verb string, op ledger.Operator) answer {
	return ok(map[string]any{verb: op}, func(w io.Writer) {
		fmt.Fprintf(w, "operator %s %s (%s)\n", safetext.Escape(op.Name), verb, op.Fingerprint)
	})
}

func runOperatorsList(ctx context.Context, c *cmdCtx, _ *noFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	return withLedger(ctx, c, reading, func(s Ledger) (answer, error) {
		set, err := s.Operators(ctx)
		return ok(set, func(w io.Writer) {
			if !set.Signed {
				fmt.Fprintln(w, "no operators: decisions unsigned (register one: tollgate operators add NAME PUBKEY)")
			}
			for _, o := range set.Operators {
				standing := "in force"
				if !o.InForce {
					standing = "NOT IN FORCE: " + o.Why
				}
				fmt.Fprintf(w, "%-20s %s  %s  added %s  %s\n", safetext.Escape(o.Name), o.Fingerprint, o.PublicKey, ts(o.Added), safetext.Escape(standing))
			}
			for _, p := range set.Problems {
				fmt.Fprintln(w, "INVALID "+safetext.Escape(p.String()))
			}
		}), err
	})
}
