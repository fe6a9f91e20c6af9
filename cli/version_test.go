package cli

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-05T00:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, tc := range []struct {
		name    string
		info    *debug.BuildInfo
		ok      bool
		stamp   string
		want    string
		wantMod bool
	}{
		{"a modified tree", info, true, "", "tollgate devel 0123456789abcdef (modified) go1.99\n", true},
		{"a release stamp", info, true, "v1.2.3", "tollgate v1.2.3 0123456789abcdef (modified) go1.99\n", true},
		{"a module version", &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v0.9.0"}, Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "false"}}}, true, "", "tollgate v0.9.0 unknown commit go1.99\n", false},
		{"no build information", nil, false, "", "tollgate devel unknown commit \n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := releaseVersion
			releaseVersion = tc.stamp
			defer func() { releaseVersion = old }()
			v := readVersion(tc.info, tc.ok)
			var b bytes.Buffer
			v.text(&b)
			if b.String() != tc.want || v.Modified != tc.wantMod {
				t.Fatalf("got %q (modified %v), want %q (modified %v)", b.String(), v.Modified, tc.want, tc.wantMod)
			}
		})
	}
}

// TestVersionCommandAndFlag: `tollgate --version` and `tollgate version`
// print the same line, and --json the same facts as an object.
func TestVersionCommandAndFlag(t *testing.T) {
	want := readVersion(debug.ReadBuildInfo())
	var texts []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errb bytes.Buffer
		if code := Main(t.Context(), args, Env{Stdout: &out, Stderr: &errb}); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if !strings.HasPrefix(out.String(), "tollgate "+want.Version+" ") {
			t.Fatalf("%v printed %q", args, out.String())
		}
		texts = append(texts, out.String())
	}
	if texts[0] != texts[1] {
		t.Fatalf("--version %q, version %q", texts[0], texts[1])
	}
	var out, errb bytes.Buffer
	if code := Main(t.Context(), []string{"version", "--json"}, Env{Stdout: &out, Stderr: &errb}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got buildVersion
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got != want {
		t.Fatalf("version --json %s (%v), want %+v", out.String(), err, want)
	}
}
