//go:build !unix

package sqlite

// fileLocks is false where flock(2) is missing: the writer queue then
// orders only one process's writers, and SQLite's lock the rest.
const fileLocks = false

func tryLock(uintptr) error { return nil }
func lock(uintptr) error    { return nil }
func unlock(uintptr)        {}
