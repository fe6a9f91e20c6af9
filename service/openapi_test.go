package service_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/tollgate-dev/tollgate/service"
)

// openAPIDoc is the served document, parsed.
type openAPIDoc struct {
	OpenAPI    string                            `json:"openapi"`
	Paths      map[string]map[string]openAPIOp   `json:"paths"`
	Components struct{ Schemas json.RawMessage } `json:"components"`
	schemas    map[string]*jsonschema.Resolved   // by the response's schema
}

type openAPIOp struct {
	Responses map[string]struct {
		Content map[string]struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"content"`
		Headers map[string]json.RawMessage `json:"headers"`
	} `json:"responses"`
}

func loadOpenAPI(t *testing.T) *openAPIDoc {
	t.Helper()
	var d openAPIDoc
	dec := json.NewDecoder(bytes.NewReader(service.OpenAPI()))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	return &d
}

// schema resolves a response's schema, its $refs into the document's
// components (as $defs of one JSON Schema 2020-12 document).
func (d *openAPIDoc) schema(t *testing.T, raw json.RawMessage) *jsonschema.Resolved {
	t.Helper()
	if d.schemas == nil {
		d.schemas = map[string]*jsonschema.Resolved{}
	}
	if r, ok := d.schemas[string(raw)]; ok {
		return r
	}
	defs := strings.ReplaceAll(string(d.Components.Schemas), "#/components/schemas/", "#/$defs/")
	own := strings.ReplaceAll(string(raw), "#/components/schemas/", "#/$defs/")
	var root map[string]any
	json.Unmarshal([]byte(own), &root)
	var dm map[string]any
	json.Unmarshal([]byte(defs), &dm)
	root["$defs"] = dm
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	b, _ := json.Marshal(root)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	d.schemas[string(raw)] = r
	return r
}

// TestOpenAPIDocument: the document is OpenAPI 3.1, every route it lists
// is served and every route served is listed.
func TestOpenAPIDocument(t *testing.T) {
	d := loadOpenAPI(t)
	if !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(d.OpenAPI) {
		t.Fatalf("openapi %q, want 3.1.x", d.OpenAPI)
	}
	var listed []string
	for path, ops := range d.Paths {
		for m := range ops {
			listed = append(listed, strings.ToUpper(m)+" "+path)
		}
	}
	slices.Sort(listed)
	srv := service.NewServer(service.Config{})
	served := srv.Routes()
	slices.Sort(served)
	if !slices.Equal(listed, served) {
		t.Fatalf("the document lists\n%v\nthe server serves\n%v", listed, served)
	}
	// Every schema the document names resolves.
	for path, ops := range d.Paths {
		for m, op := range ops {
			for code, r := range op.Responses {
				for ct, c := range r.Content {
					if c.Schema == nil {
						t.Errorf("%s %s %s %s: no schema", m, path, code, ct)
						continue
					}
					d.schema(t, c.Schema)
				}
			}
		}
	}
	// And the served document is the one in the repository, byte for byte.
	f := newFixture(t, service.Config{})
	resp, err := http.Get(f.url + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if !bytes.Equal(buf.Bytes(), service.OpenAPI()) || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("served document differs or has Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

// routeOf is the document's path template a request path falls under.
func (d *openAPIDoc) routeOf(path string) string {
	if _, ok := d.Paths[path]; ok {
		return path
	}
	for tmpl := range d.Paths {
		re := "^" + regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllString(regexp.QuoteMeta(tmpl), `[^/]+`) + "$"
		if regexp.MustCompile(re).MatchString(path) {
			return tmpl
		}
	}
	return ""
}

// validateSeen checks every response a fixture received against the
// document: its status is listed for its route and method, with its
// content type, and its body validates against the schema.
func validateSeen(t *testing.T, seen []seenResponse) {
	t.Helper()
	d := loadOpenAPI(t)
	for _, s := range seen {
		path, _, _ := strings.Cut(s.route, "?")
		tmpl := d.routeOf(path)
		if tmpl == "" {
			if s.status == 404 {
				continue // a route the server does not have: not the document's
			}
			t.Errorf("%s %s: no route in the document", s.method, path)
			continue
		}
		op, ok := d.Paths[tmpl][strings.ToLower(s.method)]
		if !ok {
			if s.status == 405 {
				continue
			}
			t.Errorf("%s %s: the document has no such operation", s.method, tmpl)
			continue
		}
		r, ok := op.Responses[strconv.Itoa(s.status)]
		if !ok {
			t.Errorf("%s %s: status %d is not in the document", s.method, tmpl, s.status)
			continue
		}
		ct, _, _ := strings.Cut(s.contentType, ";")
		c, ok := r.Content[ct]
		if !ok {
			t.Errorf("%s %s %d: content type %q is not in the document", s.method, tmpl, s.status, ct)
			continue
		}
		if ct == "text/plain" {
			continue // /metrics: checked by TestHealthAndMetrics
		}
		var v any
		if err := json.Unmarshal(s.body, &v); err != nil {
			t.Errorf("%s %s %d: %v", s.method, tmpl, s.status, err)
			continue
		}
		if err := d.schema(t, c.Schema).Validate(v); err != nil {
			t.Errorf("%s %s %d: the body does not validate: %v\n%s", s.method, tmpl, s.status, err, s.body)
		}
	}
}
