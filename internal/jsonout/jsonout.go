// Package jsonout writes JSON for people and programs to read, not for a
// web page: '<', '>' and '&' stay as they are, where encoding/json writes
// them as \u003c, \u003e and \u0026 (its HTML escaping). A condition such
// as "context.amount <= 50" then reads as it was written.
package jsonout

import (
	"bytes"
	"encoding/json"
	"io"
)

// Marshal is json.Marshal without HTML escaping: one value, no trailing
// newline.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// UnescapeHTML undoes encoding/json's HTML escaping in JSON text made by
// another encoder (an SDK's): each \u003c, \u003e and \u0026 escape
// becomes its character. An escaped backslash followed by "u003c" (the
// six characters typed by someone) is left as it is, since escapes are
// read pair by pair. Text without a backslash is returned unchanged.
func UnescapeHTML(b []byte) []byte {
	if bytes.IndexByte(b, '\\') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c", "003C":
				out = append(out, '<')
				i += 5
				continue
			case "003e", "003E":
				out = append(out, '>')
				i += 5
				continue
			case "0026":
				out = append(out, '&')
				i += 5
				continue
			}
		}
		out = append(out, c, b[i+1])
		i++
	}
	return out
}

// Writer returns a writer that passes each write to w with its HTML
// escapes undone (UnescapeHTML). Each write must hold whole JSON
// escapes, as an encoder's message does.
func Writer(w io.Writer) io.Writer { return unescaper{w} }

type unescaper struct{ w io.Writer }

func (u unescaper) Write(p []byte) (int, error) {
	if _, err := u.w.Write(UnescapeHTML(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
