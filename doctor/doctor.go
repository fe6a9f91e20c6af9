// Package doctor checks a tollgate deployment the way an operator asks
// about it: does it enforce approval against the agent, a process that
// runs shell commands as its own user on the same host, writes whatever
// that user may write and sets its own environment (SPEC 7)?
//
// It is a package of its own, apart from ledger, because what it inspects
// is the host, not the ledger's facts: file owners and modes, the agent's
// Unix identity, the operator key's permissions, the database's grants and
// its TLS. The ledger proves what happened; doctor says whether that proof
// binds the agent here. It reads and never changes anything: it opens the
// ledger only through the reading path its caller hands it.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// Severity says what a finding does to the verdict.
type Severity string

const (
	// OK: the check passed.
	OK Severity = "ok"
	// Info: nothing to do, but worth knowing (the ledger is the agent's to
	// write, as SQLite needs, so the checks after it carry the weight).
	Info Severity = "info"
	// Warn: weaker than it should be, but approval still holds.
	Warn Severity = "warn"
	// Fail: approval is not enforced against the agent.
	Fail Severity = "fail"
)

// Finding is one thing doctor found: Message says what, Fix what it means
// and what to do about it.
type Finding struct {
	ID       string   `json:"id"`
	OK       bool     `json:"ok"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix"`
}

func pass(id, msg, fix string) Finding {
	return Finding{ID: id, OK: true, Severity: OK, Message: msg, Fix: fix}
}
func note(id, msg, fix string) Finding {
	return Finding{ID: id, OK: true, Severity: Info, Message: msg, Fix: fix}
}
func warn(id, msg, fix string) Finding {
	return Finding{ID: id, Severity: Warn, Message: msg, Fix: fix}
}
func fail(id, msg, fix string) Finding {
	return Finding{ID: id, Severity: Fail, Message: msg, Fix: fix}
}

// failOr is a failing finding when it breaks enforcement, else a warning.
func failOr(breaks bool, id, msg, fix string) Finding {
	if breaks {
		return fail(id, msg, fix)
	}
	return warn(id, msg, fix)
}

// Exit codes of 'tollgate doctor'.
const (
	// ExitEnforced: no finding fails.
	ExitEnforced = 0
	// ExitNotEnforced: at least one finding fails; the same number as
	// tollgate's "error" exit, so a script that treats non-zero as "stop"
	// needs no table.
	ExitNotEnforced = 1
)

// Report is doctor's answer.
type Report struct {
	ExitCode int       `json:"exit_code"`
	Enforces bool      `json:"enforces"`
	Agent    Agent     `json:"agent"`
	Findings []Finding `json:"findings"`
}

// Failing returns the findings that fail.
func (r Report) Failing() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == Fail {
			out = append(out, f)
		}
	}
	return out
}

// Find returns the finding with this id.
func (r Report) Find(id string) (Finding, bool) {
	i := slices.IndexFunc(r.Findings, func(f Finding) bool { return f.ID == id })
	if i < 0 {
		return Finding{}, false
	}
	return r.Findings[i], true
}

// LedgerFacts is what doctor needs from the ledger itself, read through
// the ledger's reading path.
type LedgerFacts struct {
	ID        string
	Signed    bool
	Operators int
	// Problems counts operator changes that count for nothing.
	Problems int
}

// Inputs is everything the checks look at, given rather than found so
// that a test can lay out a host in a temporary folder.
type Inputs struct {
	// Agent is the identity judged against.
	Agent Agent
	// Self is the uid running doctor: an operator key should be its own.
	Self int
	// Ledger is the ledger as named (--db, TOLLGATE_DB or the default):
	// a file path, or a postgres:// URL.
	Ledger string
	// Facts reads the ledger without creating or migrating anything;
	// nil reads nothing, and ledger.signed then fails.
	Facts func(ctx context.Context) (LedgerFacts, error)
	// Anchor is the system anchor (opkeys.SystemAnchorPath) and AnchorEnv
	// the value of TOLLGATE_OPERATORS_FILE.
	Anchor, AnchorEnv string
	// Witness is the shared witness (ledger.SystemWitnessPath).
	Witness string
	// Key is the operator key file; KeyExplicit says --key or
	// TOLLGATE_OPERATOR_KEY named it (else it is operator init's default).
	Key         string
	KeyExplicit bool
	// SSHAuthSock is the value of SSH_AUTH_SOCK.
	SSHAuthSock string
	// Stat is os.Stat when nil.
	Stat func(string) (fs.FileInfo, error)
	// Socket is the service's Unix socket. Set, doctor also checks the
	// recommended single-host deployment (service.go): the service
	// answers there, the agent's user can connect and others cannot, and
	// the ledger is the service user's alone.
	Socket string
	// Health asks the service on Socket whether it runs; nil is
	// SocketHealth.
	Health func(ctx context.Context, socket string) error
}

// Check runs every check and returns the report: exit 0 only when no
// finding fails.
func Check(ctx context.Context, in Inputs) Report {
	if in.Stat == nil {
		in.Stat = os.Stat
	}
	if in.Facts == nil {
		in.Facts = func(context.Context) (LedgerFacts, error) {
			return LedgerFacts{}, errors.New("no way to read the ledger was given")
		}
	}
	if in.Health == nil {
		in.Health = SocketHealth
	}
	in.Ledger, in.Anchor, in.Witness, in.Key, in.SSHAuthSock = absPath(in.Ledger), absPath(in.Anchor), absPath(in.Witness), absPath(in.Key), absPath(in.SSHAuthSock)
	in.Socket = absPath(in.Socket)
	c := checker{in: in, files: files{stat: in.Stat, agent: in.Agent}}
	out := []Finding{c.agentUser()}
	onPG := postgres.IsURL(in.Ledger)
	var facts LedgerFacts
	var factsErr error
	readable := true
	if onPG {
		out = append(out, CheckPostgres(ctx, in.Ledger)...)
	} else {
		f, ok := c.ledgerFile()
		out = append(out, f)
		readable = ok
	}
	if readable {
		facts, factsErr = in.Facts(ctx)
	}
	anchor, sound := c.anchor(onPG)
	if readable {
		out = append(out, c.signed(facts, factsErr, sound))
	}
	out = append(out, anchor)
	if f, ok := c.anchorEnv(); ok {
		out = append(out, f)
	}
	out = append(out, c.witness(onPG, facts))
	if f, ok := c.key(); ok {
		out = append(out, f)
	}
	if f, ok := c.sshAgent(); ok {
		out = append(out, f)
	}
	if in.Socket != "" {
		out = append(out, c.service(ctx)...)
	}
	return newReport(in.Agent, out)
}

func newReport(a Agent, fs []Finding) Report {
	r := Report{Agent: a, Findings: fs, Enforces: true}
	for _, f := range fs {
		if f.Severity == Fail {
			r.Enforces = false
		}
	}
	if !r.Enforces {
		r.ExitCode = ExitNotEnforced
	}
	return r
}

type checker struct {
	in Inputs
	files
	// agentWrites is set when the agent's user can change the SQLite
	// ledger: approval then rests on signatures, the anchor and the
	// witness alone, so each of those missing fails.
	agentWrites bool
}

func (c *checker) agentUser() Finding {
	a := c.in.Agent
	if a.UID == 0 {
		return fail("agent.user", "the agent's user is root (uid 0)",
			"root writes every file and reads every key here, so nothing on this host holds against it: run agents as an unprivileged user of their own, and run doctor as that user or with --agent-user NAME")
	}
	groups := make([]string, len(a.GIDs))
	for i, g := range a.GIDs {
		groups[i] = groupName(g)
	}
	return pass("agent.user", fmt.Sprintf("judging against the agent's user %s (uid %d, groups %s)", a.Name, a.UID, strings.Join(groups, ",")),
		"each check asks what this user can do; run doctor as the agents' user or name it with --agent-user NAME")
}

// ledgerFile checks the SQLite ledger and its folder; ok is false when
// there is no ledger to read.
func (c *checker) ledgerFile() (Finding, bool) {
	e := c.look(c.in.Ledger)
	// A ledger the agent can change, or create where there is none yet,
	// is the agent's to write.
	c.agentWrites = e.changes != ""
	switch {
	case e.missing():
		return fail("ledger.file", "no ledger at "+e.path,
			"doctor reads and never creates: create it before agents run (tollgate migrate), give it to the agents' user, register operators"), false
	case e.err != nil:
		return fail("ledger.file", fmt.Sprintf("ledger %s: %v", e.path, e.err), "doctor must read the ledger to judge it: run it as a user who can"), false
	case !e.fi.Mode().IsRegular():
		return fail("ledger.file", fmt.Sprintf("the ledger %s is not a regular file (%s)", e.path, e.fi.Mode().Type()), "point --db or TOLLGATE_DB at the ledger file"), false
	}
	if w := c.worldWritable(e); w != "" {
		return warn("ledger.file", fmt.Sprintf("ledger %s: any user on this host can write %s", c.where(e), w),
			"chmod o-w "+w+" (tollgate creates the file 0600 in a 0700 folder; share it through a group if agents run as several users)"), true
	}
	if e.changes != "" {
		return note("ledger.file", fmt.Sprintf("ledger %s: %s", c.where(e), e.changes),
			"as SQLite needs, agents write the file, so approval holds only through signatures, the anchor and the witness (the findings below); for a boundary the database keeps, use PostgreSQL"), true
	}
	return pass("ledger.file", fmt.Sprintf("ledger %s: the agent's user cannot change it", c.where(e)),
		"the agent cannot touch the ledger's bytes (nor record in it: is --agent-user the agents' user?)"), true
}

// signed checks that decisions need operator keys.
func (c *checker) signed(f LedgerFacts, err error, anchorSound bool) Finding {
	if err != nil {
		return fail("ledger.signed", "cannot read the ledger: "+err.Error(), "doctor reads the ledger without changing it; fix what the error names and run it again")
	}
	switch {
	case f.Problems > 0:
		return warn("ledger.signed", fmt.Sprintf("ledger %s is signed (%d operators), but %d operator change(s) in it count for nothing", f.ID, f.Operators, f.Problems),
			"someone wrote the operator table outside tollgate: run tollgate verify and find out who")
	case f.Signed:
		return pass("ledger.signed", fmt.Sprintf("ledger %s is signed: %d operator(s) registered", f.ID, f.Operators),
			"every decision needs a registered operator's key, whatever name is claimed")
	case anchorSound:
		return warn("ledger.signed", fmt.Sprintf("ledger %s has no operator yet", f.ID),
			"the anchor refuses every decision until one is registered: tollgate operators add NAME PUBKEY, with a key the anchor lists")
	}
	return failOr(c.agentWrites, "ledger.signed", fmt.Sprintf("ledger %s is not signed: decisions carry no key", f.ID),
		"whoever can write an unsigned ledger approves: register each operator's key before agents run (tollgate operator init, then tollgate operators add NAME PUBKEY)")
}

const anchorFix = "allowed_signers lines (NAME ssh-ed25519 KEY), root's, mode 0644, in folders only root can write (install -d -m 0755)"

// anchor checks the system anchor; sound says it exists, parses and the
// agent cannot change it.
func (c *checker) anchor(onPG bool) (Finding, bool) {
	e := c.look(c.in.Anchor)
	switch {
	case e.missing():
		fix := "list each operator's key there: " + anchorFix + "; without it an agent that rewrites the ledger's operator table and its chain is caught only by verify"
		if onPG {
			fix += " (on PostgreSQL the database's roles stand in for it)"
		}
		return failOr(c.agentWrites, "anchor.system", "no operators file at "+e.path+" (the system anchor)", fix), false
	case e.err != nil:
		return fail("anchor.system", fmt.Sprintf("operators file %s: %v", e.path, e.err), "doctor must read the anchor to judge it: run it as a user who can"), false
	case e.changes != "":
		return fail("anchor.system", fmt.Sprintf("the agent's user can change the operators file %s: %s", c.where(e), e.changes),
			"an agent that can edit the anchor lists its own key: make it "+anchorFix), false
	}
	if _, err := opkeys.ReadAnchor(e.path); err != nil {
		return fail("anchor.system", fmt.Sprintf("operators file %s does not parse: %v", e.path, err),
			"every writing command stops while it does not parse: fix the line it names"), false
	}
	if !e.reads {
		return warn("anchor.system", fmt.Sprintf("operators file %s: the agent's user cannot read it", c.where(e)),
			"agents' guard stops with an error while it cannot: chmod 0644 it, and let agents search its folders"), true
	}
	return pass("anchor.system", fmt.Sprintf("operators file %s parses and the agent's user cannot change it", c.where(e)),
		"each signing key must be listed there, whatever the ledger's operator table says"), true
}

// anchorEnv says what TOLLGATE_OPERATORS_FILE is worth: the agent sets
// its own environment, so it binds nobody but a cooperating caller.
func (c *checker) anchorEnv() (Finding, bool) {
	env := c.in.AnchorEnv
	if env == "" {
		return Finding{}, false
	}
	if _, err := c.stat(c.in.Anchor); err == nil {
		return note("anchor.env", "TOLLGATE_OPERATORS_FILE="+env+" is set beside the system anchor "+c.in.Anchor,
			"the system anchor is what holds against the agent; the variable may narrow it, never widen it"), true
	}
	return warn("anchor.env", "TOLLGATE_OPERATORS_FILE="+env+" is set and there is no system anchor at "+c.in.Anchor+": a convenience, not a security boundary",
		"the agent controls its own environment and can unset or repoint it: put the list in "+c.in.Anchor), true
}

const witnessFix = "its folder owned by root and an operators' group no agent's user is in, mode 2775 (install -d -g tollgate-operators -m 2775), the file 0664: operators' verify, backup and console sessions append to it, agents only read it"

// witness checks the shared witness guard consults.
func (c *checker) witness(onPG bool, f LedgerFacts) Finding {
	e := c.look(c.in.Witness)
	switch {
	case e.missing():
		return failOr(c.agentWrites && !onPG, "witness.system", "no shared witness at "+e.path,
			"without it guard cannot see a ledger rolled back or swapped: make "+witnessFix)
	case e.err != nil:
		return fail("witness.system", fmt.Sprintf("shared witness %s: %v", e.path, e.err), "doctor must read the witness to judge it: run it as a user who can")
	case e.changes != "":
		return fail("witness.system", fmt.Sprintf("the agent's user can change the shared witness %s: %s", c.where(e), e.changes),
			"an agent that edits the witness hides its own rollback: make it "+witnessFix)
	case !e.reads:
		return fail("witness.system", fmt.Sprintf("shared witness %s: the agent's user cannot read it", c.where(e)),
			"guard consults only a witness it can read: make it "+witnessFix)
	}
	heads, bad, err := ledger.ReadWitness(e.path)
	switch {
	case err != nil:
		return fail("witness.system", err.Error(), "doctor must read the witness to judge it: run it as a user who can")
	case len(bad) > 0:
		return warn("witness.system", fmt.Sprintf("shared witness %s: %d line(s) do not parse", e.path, len(bad)),
			"someone edited it or a write was torn: tollgate verify names each line; find out which")
	case f.ID != "" && !slices.ContainsFunc(heads, func(h ledger.Head) bool { return h.LedgerID == f.ID }):
		return warn("witness.system", fmt.Sprintf("shared witness %s holds no head of ledger %s yet", e.path, f.ID),
			"a rollback before the first witnessed head goes unseen: an operator runs tollgate verify now, and regularly (it appends to the shared witness)")
	}
	return pass("witness.system", fmt.Sprintf("shared witness %s: agents read it, the agent's user cannot change it", c.where(e)),
		"guard refuses a permit on a ledger that lost a witnessed head or was swapped")
}

const keyFix = "keep operator keys under the operator's own user (0600, folder 0700), in ssh-agent or on a hardware key, never where the agents' user can read"

// key checks the operator key file; ok is false when there is nothing
// to say (no key configured, as on an agent host).
func (c *checker) key() (Finding, bool) {
	if c.in.Key == "" {
		return Finding{}, false
	}
	e := c.look(c.in.Key)
	switch {
	case e.missing() && c.in.KeyExplicit:
		return warn("key.file", "the operator key "+e.path+" named by --key or TOLLGATE_OPERATOR_KEY does not exist",
			"decisions fail until it does: tollgate operator init --key "+e.path), true
	case e.missing():
		return note("key.file", "no operator key at "+e.path, "an agent host needs none; an operator creates one with tollgate operator init"), true
	case e.err != nil:
		return warn("key.file", fmt.Sprintf("operator key %s: %v", e.path, e.err), "doctor must stat the key to judge it: run it as its owner"), true
	case !e.fi.Mode().IsRegular():
		return fail("key.file", "the operator key "+e.path+" is not a regular file", "point --key or TOLLGATE_OPERATOR_KEY at the key file"), true
	case e.reads:
		return fail("key.file", fmt.Sprintf("the agent's user can read the operator key %s", c.where(e)),
			"whoever reads an operator's key signs as that operator: "+keyFix), true
	case e.fi.Mode().Perm()&0o077 != 0:
		return fail("key.file", fmt.Sprintf("the operator key %s is readable or writable by others", c.where(e)),
			"chmod 600 "+e.path+" (tollgate refuses to load it as it is, as ssh does)"), true
	}
	if uid, _, ok := owner(e.fi); ok && uid != c.in.Self {
		return warn("key.file", fmt.Sprintf("the operator key %s belongs to %s, not to the user running doctor (%s)", c.where(e), userName(uid), userName(c.in.Self)),
			"a key should be its operator's alone: chown it to that operator"), true
	}
	return pass("key.file", fmt.Sprintf("operator key %s: only its owner reads it, and the agent's user cannot", c.where(e)),
		"the agent cannot sign with it"), true
}

// sshAgent notes the ssh-agent socket: whoever can connect to it signs
// with every key it holds that asks for no touch or confirmation.
func (c *checker) sshAgent() (Finding, bool) {
	sock := c.in.SSHAuthSock
	if sock == "" {
		return Finding{}, false
	}
	e := c.look(sock)
	switch {
	case e.err != nil:
		return warn("key.ssh-agent", fmt.Sprintf("SSH_AUTH_SOCK=%s: %v", sock, e.err), "unset it or start ssh-agent; tollgate then signs with a key file"), true
	case e.reach && c.files.agent.may(e.fi, permWrite):
		return warn("key.ssh-agent", fmt.Sprintf("the agent's user can use ssh-agent at %s", c.where(e)),
			"it signs with every key held there that asks for no touch: use a hardware key (sk-ssh-ed25519) or ssh-add -c, and keep the socket from the agents' user"), true
	}
	return note("key.ssh-agent", fmt.Sprintf("ssh-agent at %s: the agent's user cannot use it", c.where(e)),
		"decisions sign through it without the key file being read"), true
}

// absPath makes a path absolute so the folders above it can be walked;
// a URL is left as it is.
func absPath(p string) string {
	if p == "" || postgres.IsURL(p) {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
