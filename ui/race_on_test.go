//go:build race

package ui

// slowdown stretches the tests' waits under the race detector, which
// makes the pure-Go SQLite many times slower.
const slowdown = 5
