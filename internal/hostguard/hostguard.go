// Package hostguard keeps tests off the host's shared tollgate places:
// the shared witness (/var/lib/tollgate) and the operators' anchor
// (/etc/tollgate). A test binary's TestMain points the build-time
// variables that name them (ledger.SystemWitnessPath,
// opkeys.SystemAnchorPath) at a temporary folder, builds any tollgate
// binary with the same places (LDFlags), and runs under Main, which fails
// the run when either host place was created, changed or removed while
// it ran. Nothing here is read from the environment or a flag: an agent
// cannot use it to move what guard consults.
package hostguard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// HostPaths are the host's shared places no test may touch.
var HostPaths = []string{"/var/lib/tollgate", "/etc/tollgate"}

// Places are a test run's stand-ins for the host's places.
type Places struct {
	Dir     string // the temporary folder that holds both
	Witness string // stands for /var/lib/tollgate/witness; its folder is not made
	Anchor  string // stands for /etc/tollgate/operators; not made
}

// LDFlags are the -X flags that build a tollgate binary using p's places.
func (p Places) LDFlags() string {
	return "-X github.com/tollgate-dev/tollgate/ledger.SystemWitnessPath=" + p.Witness +
		" -X github.com/tollgate-dev/tollgate/opkeys.SystemAnchorPath=" + p.Anchor
}

// Snapshot describes the host's places: every name under them with its
// mode, size and modification time, or that it is absent.
func Snapshot() string {
	var lines []string
	for _, root := range HostPaths {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				lines = append(lines, fmt.Sprintf("%s: %v", p, err))
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				lines = append(lines, fmt.Sprintf("%s: %v", p, err))
				return nil
			}
			lines = append(lines, fmt.Sprintf("%s %v %d %d", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano()))
			return nil
		})
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", root, err))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Main makes the run's places, hands them to set (which points the
// package's variables at them), runs run and removes the places. It
// returns run's exit code, or 1 when the host's places differ afterwards
// from before (naming what changed).
func Main(set func(Places), run func() int) int {
	dir, err := os.MkdirTemp("", "tollgate-host")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostguard:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	p := Places{Dir: dir, Witness: filepath.Join(dir, "var-lib-tollgate", "witness"), Anchor: filepath.Join(dir, "etc-tollgate", "operators")}
	set(p)
	before := Snapshot()
	code := run()
	if after := Snapshot(); after != before {
		fmt.Fprintf(os.Stderr, "FAIL: the tests created or changed the host's shared tollgate places (%s):\nbefore:\n%s\nafter:\n%s\n",
			strings.Join(HostPaths, ", "), before, after)
		return 1
	}
	return code
}
