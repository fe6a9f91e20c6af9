//go:build !linux

package ui

// lockHolder cannot tell who holds the lock outside Linux (no /proc/locks).
func lockHolder(string) string { return "" }
