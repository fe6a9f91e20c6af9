//go:build unix

package sqlite

import (
	"errors"
	"syscall"
)

const (
	wOK = 2 // access(2)'s W_OK
	rOK = 4 // access(2)'s R_OK
)

// mayRead reports whether this process may read path, as access(2) says
// (no file is opened: opening and closing one beside a database would
// drop SQLite's POSIX locks on it).
func mayRead(path string) bool { return syscall.Access(path, rOK) == nil }

// mayWrite reports whether this process may write path, as access(2)
// says: root passes it whatever the mode bits say, so callers that must
// respect an owner's read-only bits check those too.
func mayWrite(path string) bool { return syscall.Access(path, wOK) == nil }

// onReadOnlyMount reports whether path is on a file system mounted
// read-only, which stops root too.
func onReadOnlyMount(path string) bool {
	return errors.Is(syscall.Access(path, wOK), syscall.EROFS)
}
