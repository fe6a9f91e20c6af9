//go:build probe_cel

package main

import _ "cel.dev/cel-go/cel"
