//go:build !race

package ui

// slowdown stretches the tests' waits under the race detector.
const slowdown = 1
