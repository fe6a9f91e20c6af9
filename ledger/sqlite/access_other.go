//go:build !unix

package sqlite

// mayWrite is true where access(2) is missing: the mode bits and SQLite's
// own errors are then all there is to go by.
func mayWrite(string) bool { return true }

// mayRead is true where access(2) is missing.
func mayRead(string) bool { return true }

// onReadOnlyMount is false where access(2) is missing.
func onReadOnlyMount(string) bool { return false }
