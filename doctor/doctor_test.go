package doctor_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/doctor"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/opkeys"
)

// nobody is the agent's user in these layouts: a uid other than the
// root running the tests, so ownership and modes decide.
var nobody = doctor.Agent{Name: "nobody", UID: 65534, GIDs: []int{65534}}

// host is a deployment laid out in a temporary folder.
type host struct {
	root                                   string
	ledger, anchor, witness, key, sockPath string
	in                                     doctor.Inputs
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// chown and chmod set a path's owner and mode, failing the test.
func chown(t *testing.T, p string, uid, gid int)  { t.Helper(); must(t, os.Chown(p, uid, gid)) }
func chmod(t *testing.T, p string, m os.FileMode) { t.Helper(); must(t, os.Chmod(p, m)) }

func write(t *testing.T, p, body string, m os.FileMode) {
	t.Helper()
	must(t, os.WriteFile(p, []byte(body), m))
	chmod(t, p, m)
}

// anchorLine is a valid allowed_signers line for a fresh Ed25519 key.
func anchorLine(t *testing.T) string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	sp, err := ssh.NewPublicKey(pub)
	must(t, err)
	return "alice " + opkeys.Line(sp) + "\n"
}

// goodHost is the deployment doctor passes: the ledger the agent's
// (SQLite needs it), signed; the anchor and the witness root's, readable
// by all; the operator's key root's alone.
func goodHost(t *testing.T) *host {
	if os.Geteuid() != 0 {
		t.Skip("laying out files owned by other users needs root (CI runs as root)")
	}
	h := &host{root: t.TempDir()}
	// t.TempDir's folders are 0700: open them as a system folder would be.
	chmod(t, filepath.Dir(h.root), 0o755)
	chmod(t, h.root, 0o755)
	for _, d := range []string{"etc", "data", "witness", "op"} {
		must(t, os.Mkdir(filepath.Join(h.root, d), 0o755))
	}
	h.ledger = filepath.Join(h.root, "data", "ledger.db")
	write(t, h.ledger, "not read: Facts stands in for the ledger", 0o600)
	chown(t, h.ledger, nobody.UID, nobody.GIDs[0])
	chown(t, filepath.Dir(h.ledger), nobody.UID, nobody.GIDs[0])
	chmod(t, filepath.Dir(h.ledger), 0o700)
	h.anchor = filepath.Join(h.root, "etc", "operators")
	write(t, h.anchor, anchorLine(t), 0o644)
	h.witness = filepath.Join(h.root, "witness", "witness")
	must(t, ledger.AppendWitness(h.witness, ledger.Head{LedgerID: "L1", Seq: 3, Hash: strings.Repeat("a", 64)}, "verify", time.Now()))
	chmod(t, h.witness, 0o664)
	chmod(t, filepath.Dir(h.witness), 0o775)
	h.key = filepath.Join(h.root, "op", "operator_ed25519")
	write(t, h.key, "a private key", 0o600)
	chmod(t, filepath.Dir(h.key), 0o700)
	h.sockPath = filepath.Join(h.root, "op", "agent.sock")
	h.in = doctor.Inputs{Agent: nobody, Self: 0, Ledger: h.ledger, Anchor: h.anchor, Witness: h.witness, Key: h.key,
		Facts: func(context.Context) (doctor.LedgerFacts, error) {
			return doctor.LedgerFacts{ID: "L1", Signed: true, Operators: 1}, nil
		}}
	return h
}

// absent marks a finding that must not be reported at all.
const absent doctor.Severity = "absent"

// TestDoctorLayouts: each layout of a host, against the agent's user,
// gives exactly the listed findings that are not ok (every other one
// passes or only informs) and the exit code.
func TestDoctorLayouts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout func(t *testing.T, h *host)
		bad    map[string]doctor.Severity
		exit   int
	}{
		{name: "good", layout: func(*testing.T, *host) {}, exit: 0},
		{name: "the agent is root", layout: func(t *testing.T, h *host) { h.in.Agent = doctor.Agent{Name: "root", UID: 0, GIDs: []int{0}} },
			bad: map[string]doctor.Severity{"agent.user": doctor.Fail, "anchor.system": doctor.Fail, "witness.system": doctor.Fail, "key.file": doctor.Fail}, exit: 1},
		{name: "no anchor", layout: func(t *testing.T, h *host) { must(t, os.Remove(h.anchor)) },
			bad: map[string]doctor.Severity{"anchor.system": doctor.Fail}, exit: 1},
		{name: "anchor world-writable", layout: func(t *testing.T, h *host) { chmod(t, h.anchor, 0o666) },
			bad: map[string]doctor.Severity{"anchor.system": doctor.Fail}, exit: 1},
		{name: "anchor writable by a group the agent is in", layout: func(t *testing.T, h *host) { chown(t, h.anchor, 0, 65534); chmod(t, h.anchor, 0o664) },
			bad: map[string]doctor.Severity{"anchor.system": doctor.Fail}, exit: 1},
		{name: "anchor writable by a group the agent is not in", layout: func(t *testing.T, h *host) { chown(t, h.anchor, 0, 4); chmod(t, h.anchor, 0o664) }, exit: 0},
		{name: "anchor the agent's", layout: func(t *testing.T, h *host) { chown(t, h.anchor, nobody.UID, 0) },
			bad: map[string]doctor.Severity{"anchor.system": doctor.Fail}, exit: 1},
		{name: "anchor's folder writable by the agent", layout: func(t *testing.T, h *host) { chmod(t, filepath.Dir(h.anchor), 0o777) },
			bad: map[string]doctor.Severity{"anchor.system": doctor.Fail}, exit: 1},
		{name: "a folder two above the anchor the agent's", layout: func(t *testing.T, h *host) {
			deep := filepath.Join(h.root, "etc", "tollgate")
			must(t, os.Mkdir(deep, 0o755))
			must(t, os.Rename(h.anchor, filepath.Join(deep, "operators")))
			h.in.Anchor = filepath.Join(deep, "operators")
			chown(t, filepath.Join(h.root, "etc"), nobody.UID, 0)
		}, bad: map[string]doctor.Severity{"anchor.system": doctor.Fail}, exit: 1},
		{name: "anchor in a sticky world-writable folder, root's", layout: func(t *testing.T, h *host) { chmod(t, filepath.Dir(h.anchor), os.ModeSticky|0o777) }, exit: 0},
		{name: "anchor in a sticky folder, the agent's", layout: func(t *testing.T, h *host) {
			chmod(t, filepath.Dir(h.anchor), os.ModeSticky|0o777)
			chown(t, h.anchor, nobody.UID, 0)
		}, bad: map[string]doctor.Severity{"anchor.system": doctor.Fail}, exit: 1},
		{name: "anchor does not parse", layout: func(t *testing.T, h *host) { write(t, h.anchor, "alice ssh-rsa AAAA\n", 0o644) },
			bad: map[string]doctor.Severity{"anchor.system": doctor.Fail}, exit: 1},
		{name: "anchor unreadable by the agent", layout: func(t *testing.T, h *host) { chmod(t, h.anchor, 0o600) },
			bad: map[string]doctor.Severity{"anchor.system": doctor.Warn}, exit: 0},
		{name: "operators file only in the environment", layout: func(t *testing.T, h *host) {
			must(t, os.Rename(h.anchor, h.anchor+".mine"))
			h.in.AnchorEnv = h.anchor + ".mine"
		}, bad: map[string]doctor.Severity{"anchor.system": doctor.Fail, "anchor.env": doctor.Warn}, exit: 1},
		{name: "operators file in the environment beside the anchor", layout: func(t *testing.T, h *host) { h.in.AnchorEnv = "/elsewhere" }, exit: 0},
		{name: "no witness", layout: func(t *testing.T, h *host) { must(t, os.Remove(h.witness)) },
			bad: map[string]doctor.Severity{"witness.system": doctor.Fail}, exit: 1},
		{name: "witness writable by the agent", layout: func(t *testing.T, h *host) { chmod(t, h.witness, 0o666) },
			bad: map[string]doctor.Severity{"witness.system": doctor.Fail}, exit: 1},
		{name: "witness folder in the agent's group, group-writable", layout: func(t *testing.T, h *host) { chown(t, filepath.Dir(h.witness), 0, 65534) },
			bad: map[string]doctor.Severity{"witness.system": doctor.Fail}, exit: 1},
		{name: "witness unreadable by the agent", layout: func(t *testing.T, h *host) { chmod(t, filepath.Dir(h.witness), 0o770) },
			bad: map[string]doctor.Severity{"witness.system": doctor.Fail}, exit: 1},
		{name: "witness never saw this ledger", layout: func(t *testing.T, h *host) { write(t, h.witness, "", 0o664) },
			bad: map[string]doctor.Severity{"witness.system": doctor.Warn}, exit: 0},
		{name: "ledger unsigned, no anchor", layout: func(t *testing.T, h *host) {
			must(t, os.Remove(h.anchor))
			h.in.Facts = func(context.Context) (doctor.LedgerFacts, error) { return doctor.LedgerFacts{ID: "L1"}, nil }
		}, bad: map[string]doctor.Severity{"ledger.signed": doctor.Fail, "anchor.system": doctor.Fail}, exit: 1},
		{name: "ledger unsigned under a sound anchor", layout: func(t *testing.T, h *host) {
			h.in.Facts = func(context.Context) (doctor.LedgerFacts, error) { return doctor.LedgerFacts{ID: "L1"}, nil }
		}, bad: map[string]doctor.Severity{"ledger.signed": doctor.Warn}, exit: 0},
		{name: "ledger with forged operator changes", layout: func(t *testing.T, h *host) {
			h.in.Facts = func(context.Context) (doctor.LedgerFacts, error) {
				return doctor.LedgerFacts{ID: "L1", Signed: true, Operators: 2, Problems: 1}, nil
			}
		}, bad: map[string]doctor.Severity{"ledger.signed": doctor.Warn}, exit: 0},
		{name: "ledger unreadable", layout: func(t *testing.T, h *host) {
			h.in.Facts = func(context.Context) (doctor.LedgerFacts, error) {
				return doctor.LedgerFacts{}, errors.New("not a ledger")
			}
		}, bad: map[string]doctor.Severity{"ledger.signed": doctor.Fail}, exit: 1},
		{name: "no ledger", layout: func(t *testing.T, h *host) { must(t, os.Remove(h.ledger)) },
			bad: map[string]doctor.Severity{"ledger.file": doctor.Fail, "ledger.signed": absent}, exit: 1},
		{name: "ledger world-writable", layout: func(t *testing.T, h *host) { chmod(t, h.ledger, 0o666) },
			bad: map[string]doctor.Severity{"ledger.file": doctor.Warn}, exit: 0},
		{name: "ledger not the agent's, unsigned, no anchor, no witness", layout: func(t *testing.T, h *host) {
			chown(t, h.ledger, 0, 0)
			chown(t, filepath.Dir(h.ledger), 0, 0)
			must(t, os.Remove(h.anchor))
			must(t, os.Remove(h.witness))
			h.in.Facts = func(context.Context) (doctor.LedgerFacts, error) { return doctor.LedgerFacts{ID: "L1"}, nil }
		}, bad: map[string]doctor.Severity{"ledger.signed": doctor.Warn, "anchor.system": doctor.Warn, "witness.system": doctor.Warn}, exit: 0},
		{name: "key readable by all", layout: func(t *testing.T, h *host) { chmod(t, h.key, 0o644); chmod(t, filepath.Dir(h.key), 0o755) },
			bad: map[string]doctor.Severity{"key.file": doctor.Fail}, exit: 1},
		{name: "key group-readable, agent not in the group", layout: func(t *testing.T, h *host) { chmod(t, h.key, 0o640) },
			bad: map[string]doctor.Severity{"key.file": doctor.Fail}, exit: 1},
		{name: "key the agent's own", layout: func(t *testing.T, h *host) {
			chown(t, h.key, nobody.UID, 0)
			chmod(t, filepath.Dir(h.key), 0o755)
		}, bad: map[string]doctor.Severity{"key.file": doctor.Fail}, exit: 1},
		{name: "key another user's", layout: func(t *testing.T, h *host) { chown(t, h.key, 1, 1) },
			bad: map[string]doctor.Severity{"key.file": doctor.Warn}, exit: 0},
		{name: "key named but missing", layout: func(t *testing.T, h *host) { must(t, os.Remove(h.key)); h.in.KeyExplicit = true },
			bad: map[string]doctor.Severity{"key.file": doctor.Warn}, exit: 0},
		{name: "default key missing", layout: func(t *testing.T, h *host) { must(t, os.Remove(h.key)) }, exit: 0},
		{name: "ssh-agent the agent can use", layout: func(t *testing.T, h *host) {
			listen(t, h)
			chmod(t, h.sockPath, 0o777)
			chmod(t, filepath.Dir(h.sockPath), 0o755)
		}, bad: map[string]doctor.Severity{"key.ssh-agent": doctor.Warn}, exit: 0},
		{name: "ssh-agent only its owner uses", layout: func(t *testing.T, h *host) { listen(t, h); chmod(t, h.sockPath, 0o600) }, exit: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := goodHost(t)
			tc.layout(t, h)
			checkLayout(t, h, tc.bad, tc.exit)
		})
	}
}

// checkLayout runs doctor on h and checks that exactly the findings in
// bad are not ok, each with its severity (absent: not reported at all),
// that every finding names what and what to do, and the exit code.
func checkLayout(t *testing.T, h *host, bad map[string]doctor.Severity, exit int) doctor.Report {
	t.Helper()
	r := doctor.Check(context.Background(), h.in)
	got := map[string]doctor.Severity{}
	for _, f := range r.Findings {
		if f.Message == "" || f.Fix == "" || f.OK != (f.Severity == doctor.OK || f.Severity == doctor.Info) {
			t.Errorf("malformed finding %+v", f)
		}
		if !f.OK {
			got[f.ID] = f.Severity
		}
	}
	for id, sev := range bad {
		if _, ok := r.Find(id); sev == absent && ok {
			t.Errorf("%s reported, want none", id)
		} else if sev != absent && got[id] != sev {
			t.Errorf("%s: %q, want %q", id, got[id], sev)
		}
		delete(got, id)
	}
	for id, sev := range got {
		t.Errorf("unexpected %s finding %s", sev, id)
	}
	if r.ExitCode != exit || r.Enforces != (exit == 0) {
		t.Errorf("exit %d (enforces %v), want %d", r.ExitCode, r.Enforces, exit)
	}
	if t.Failed() {
		for _, f := range r.Findings {
			t.Logf("%-5s %-15s %s\n      %s", f.Severity, f.ID, f.Message, f.Fix)
		}
	}
	return r
}

// listen puts an ssh-agent stand-in socket at h.sockPath: doctor only
// stats it.
func listen(t *testing.T, h *host) {
	t.Helper()
	l, err := net.Listen("unix", h.sockPath)
	must(t, err)
	t.Cleanup(func() { l.Close() })
	h.in.SSHAuthSock = h.sockPath
}
