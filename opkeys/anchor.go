package opkeys

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/tollgate-dev/tollgate/approvals"
)

// SystemAnchorPath is the anchor that always applies when it exists. It is
// a variable only so that a build or an install can fix another place
// (go build -ldflags "-X github.com/tollgate-dev/tollgate/opkeys.SystemAnchorPath=...")
// and tests can build a binary with their own; nothing at run time (flag
// or environment) can move it, since an agent controls its environment.
var SystemAnchorPath = "/etc/tollgate/operators"

// Anchor is a list of operator keys kept outside the ledger, in OpenSSH
// allowed_signers form ("NAME[,NAME...] [options] KEYTYPE KEY [comment]").
// An agent that can rewrite the ledger's own operator table cannot add
// itself here when the file belongs to another user (root, say).
type Anchor struct {
	Path    string
	entries []anchorEntry
	// within is the system anchor this one narrows (TOLLGATE_OPERATORS_FILE
	// under /etc/tollgate/operators): a key must be allowed by both.
	within *Anchor
	// system is set when a system anchor applies: this anchor is a
	// security boundary only then, since the agent chooses its own
	// environment and can write a file of its own.
	system bool
}

// Boundary reports whether the anchor holds against the agent: a system
// anchor applies (the file at SystemAnchorPath, which the agent's user
// must not be able to write). An anchor named only by the environment is
// a convenience, not a security boundary.
func (a *Anchor) Boundary() bool { return a != nil && a.system }

// Describe says which files make up the anchor and whether it is a
// boundary, for status, verify and doctor.
func (a *Anchor) Describe() string {
	switch {
	case a == nil:
		return "no operators file: approvals are only as safe as the ledger file's permissions"
	case a.within != nil:
		return a.within.Path + " narrowed by " + a.Path
	case a.system:
		return a.Path
	}
	return a.Path + " (TOLLGATE_OPERATORS_FILE without " + SystemAnchorPath + ": not a security boundary; approvals are only as safe as the ledger file's permissions)"
}

type anchorEntry struct {
	principals []string
	key        []byte
}

// FindAnchor returns the anchor in force. The system anchor
// (SystemAnchorPath), when it exists, always applies: envPath (the value
// of TOLLGATE_OPERATORS_FILE) may narrow it, never widen or replace it,
// since the agent sets its own environment and can write a file of its
// own. envPath alone (no system anchor) is a convenience and says so
// (Boundary). With neither it returns nil: no anchor.
func FindAnchor(envPath string) (*Anchor, error) {
	var sys *Anchor
	if exists(SystemAnchorPath) {
		var err error
		if sys, err = ReadAnchor(SystemAnchorPath); err != nil {
			return nil, err
		}
		sys.system = true
	}
	if envPath == "" || sys != nil && envPath == sys.Path {
		return sys, nil
	}
	a, err := ReadAnchor(envPath)
	if err != nil {
		return nil, err
	}
	if sys != nil {
		a.within, a.system = sys, true
	}
	return a, nil
}

// ReadAnchor parses an allowed_signers file. A line that does not parse,
// or holds a key that is not Ed25519, refuses the whole file by line
// number: a truncated or foreign file must not quietly allow less, or more.
func ReadAnchor(path string) (*Anchor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: operators file: %v", ErrKey, err)
	}
	a := &Anchor{Path: path}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseAnchorLine(line)
		if err != nil {
			return nil, fmt.Errorf("%w: operators file %s line %d: %v (want allowed_signers lines: NAME ssh-ed25519 KEY)", ErrKey, path, i+1, err)
		}
		a.entries = append(a.entries, e)
	}
	if len(a.entries) == 0 {
		return nil, fmt.Errorf("%w: operators file %s lists no key: an empty anchor would refuse every approval", ErrKey, path)
	}
	return a, nil
}

func parseAnchorLine(line string) (anchorEntry, error) {
	var principals, rest string
	if strings.HasPrefix(line, `"`) {
		end := strings.Index(line[1:], `"`)
		if end < 0 {
			return anchorEntry{}, fmt.Errorf("unterminated quoted principals")
		}
		principals, rest = line[1:end+1], line[end+2:]
	} else {
		var ok bool
		principals, rest, ok = strings.Cut(line, " ")
		if !ok {
			return anchorEntry{}, fmt.Errorf("no key after the principals")
		}
	}
	pub, _, opts, _, err := ssh.ParseAuthorizedKey([]byte(strings.TrimSpace(rest)))
	if err != nil {
		return anchorEntry{}, err
	}
	for _, o := range opts {
		if strings.EqualFold(o, "cert-authority") {
			return anchorEntry{}, fmt.Errorf("cert-authority lines are not supported: list each operator's key")
		}
	}
	if err := CheckType(pub); err != nil {
		return anchorEntry{}, err
	}
	return anchorEntry{principals: strings.Split(principals, ","), key: pub.Marshal()}, nil
}

// Allows checks that key is listed for name: a line with the same key
// whose principals include the name (compared as the ledger compares
// names) or "*".
func (a *Anchor) Allows(name string, key ssh.PublicKey) error {
	if a.within != nil {
		if err := a.within.Allows(name, key); err != nil {
			return err
		}
	}
	k := key.Marshal()
	for _, e := range a.entries {
		if !bytes.Equal(e.key, k) {
			continue
		}
		for _, p := range e.principals {
			if p == "*" || approvals.SameName(p, name) {
				return nil
			}
		}
		return fmt.Errorf("key %s is listed in %s, but not for operator %q", Fingerprint(key), a.Path, name)
	}
	return fmt.Errorf("key %s (operator %q) is not listed in the operators file %s", Fingerprint(key), name, a.Path)
}
