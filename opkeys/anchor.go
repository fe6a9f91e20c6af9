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
}

type anchorEntry struct {
	principals []string
	key        []byte
}

// FindAnchor reads envPath (the value of TOLLGATE_OPERATORS_FILE) when
// set, and the file must then exist; else /etc/tollgate/operators when it
// exists; with neither it returns nil: no anchor.
func FindAnchor(envPath string) (*Anchor, error) {
	if envPath != "" {
		return ReadAnchor(envPath)
	}
	if exists(SystemAnchorPath) {
		return ReadAnchor(SystemAnchorPath)
	}
	return nil, nil
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
