package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Context is what an agent tells policy about an action beside its
// payload (SPEC 10): safe identifiers, normalized amounts, risk flags,
// schedule data, redaction status. Values are strings, numbers
// (float64), booleans and lists of strings; a timestamp is an RFC 3339
// string, which a condition reads with timestamp(context.due). It is
// bound to the key like the payload: its canonical form has a digest of
// its own, stored with the intent, and a changed context under the same
// key is a conflict that names the fields.
type Context map[string]any

// Context limits: small enough to store with every intent and to read
// in a condition at no cost that matters.
const (
	MaxContextFields = 32
	MaxContextString = 1000 // code points
	MaxContextList   = 64
	MaxContextBytes  = 8192 // canonical form
)

// CallerAssertedField is the context field in which a transport that
// derives the context itself (the MCP proxy's --context) lists the
// fields the caller asserted (--caller-context): guard --json, status
// and the console mark them as the caller's.
const CallerAssertedField = "caller_asserted"

// ContextFieldName says whether name is a context field's name.
func ContextFieldName(name string) bool { return contextField(name) }

// CallerAsserted lists the fields of a context that its caller asserted,
// as its caller_asserted field names them.
func (c Context) CallerAsserted() []string {
	l, _ := c[CallerAssertedField].([]string)
	return l
}

// contextField says whether name is a context field's name:
// [a-z][a-z0-9_]{0,63}. A loop, not a regexp: a package-level regexp is
// compiled at the start of every process, and a guard process is mostly
// start-up.
func contextField(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// ParseContext reads a context from JSON: one object of at most
// MaxContextFields fields named [a-z][a-z0-9_]*, each a string, a finite
// number, a boolean or a list of strings. Bad input is refused with the
// field named.
func ParseContext(data []byte) (Context, error) {
	bad := func(format string, args ...any) (Context, error) {
		return nil, fmt.Errorf("%w: context: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
	}
	if !utf8.Valid(data) {
		return bad("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return bad("must be one JSON object (%v)", err)
	}
	if dec.More() {
		return bad("must be one JSON object, nothing after it")
	}
	if len(raw) > MaxContextFields {
		return bad("at most %d fields", MaxContextFields)
	}
	c := Context{}
	for k, v := range raw {
		if !contextField(k) {
			return bad("field %q: names are a lower-case letter, then letters, digits or _ (at most 64)", k)
		}
		switch x := v.(type) {
		case string:
			if err := contextString(k, x); err != nil {
				return nil, err
			}
			c[k] = x
		case bool:
			c[k] = x
		case json.Number:
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return bad("field %q: a number must be finite", k)
			}
			c[k] = f
		case []any:
			if len(x) > MaxContextList {
				return bad("field %q: a list holds at most %d strings", k, MaxContextList)
			}
			list := make([]string, 0, len(x))
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					return bad("field %q: a list holds strings only", k)
				}
				if err := contextString(k, s); err != nil {
					return nil, err
				}
				list = append(list, s)
			}
			c[k] = list
		default:
			return bad("field %q: a value is a string, a number, true or false, or a list of strings (no nested objects or null)", k)
		}
	}
	if n := len(c.Canonical()); n > MaxContextBytes {
		return bad("%d bytes in canonical form; at most %d", n, MaxContextBytes)
	}
	return c, nil
}

func contextString(field, s string) error {
	if utf8.RuneCountInString(s) > MaxContextString {
		return fmt.Errorf("%w: context: field %q: a string is at most %d code points", ErrInvalidInput, field, MaxContextString)
	}
	if err := validateField("context."+field, s); err != nil {
		return err
	}
	return nil
}

// Canonical is the context's canonical JSON: keys sorted, strings as the
// payload's canonical form writes them, an integral number without a
// fraction (50 and 50.0 are one amount), any other number in its
// shortest form. An empty context is the empty string: no context.
func (c Context) Canonical() []byte {
	if len(c) == 0 {
		return nil
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPyString(b, k)
		b = append(b, ':')
		b = appendContextValue(b, c[k])
	}
	return append(b, '}')
}

func appendContextValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return appendPyString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.AppendInt(b, int64(x), 10)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64)
	case []string:
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPyString(b, s)
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}

// Digest is the SHA-256 of the canonical form, empty for no context.
func (c Context) Digest() string {
	if len(c) == 0 {
		return ""
	}
	return sha256Hex(c.Canonical())
}

// contextDiffers names the context fields that differ between a stored
// canonical context and an attempted one, as "context.NAME".
func contextDiffers(stored string, attempted Context) []string {
	var s Context
	if stored != "" {
		var err error
		if s, err = ParseContext([]byte(stored)); err != nil {
			return []string{"context"}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range []Context{s, attempted} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			if !bytes.Equal(appendContextValue(nil, s[k]), appendContextValue(nil, attempted[k])) || (s[k] == nil) != (attempted[k] == nil) {
				out = append(out, "context."+k)
			}
		}
	}
	slices.Sort(out)
	return out
}
