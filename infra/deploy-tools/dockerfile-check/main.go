// dockerfile-check runs BuildKit's Dockerfile checks (the rules `docker build --check` applies)
// on a Dockerfile without a Docker engine or a registry: base images are answered from a stub
// (an empty linux/amd64 image) instead of being resolved. It prints the result as JSON, as
// BuildKit's lint subrequest does, and exits 1 when there is a warning or an error.
//
// `dockerfile-check --stages <Dockerfile>` prints instead the stages and their instructions as
// BuildKit's parser reads them (JSON), for tests that assert what the image is made of.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerui"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

// offline answers every base image with the same small config, so nothing is fetched.
type offline struct{}

func (offline) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	config := map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + fmt.Sprintf("%064d", 0)}},
		"config":       map[string]any{"Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
	}
	dt, err := json.Marshal(config)
	return ref, "", dt, err
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "--stages" {
		stages(os.Args[2])
		return
	}
	if len(os.Args) != 2 {
		fail(2, "usage: dockerfile-check [--stages] <Dockerfile>")
	}
	dt, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(2, err)
	}
	platform := ocispecs.Platform{OS: "linux", Architecture: runtime.GOARCH}
	ctx := context.Background()
	// The source map names the file in the results; BuildKit marshals its (local) context.
	local := llb.Local("dockerfile")
	sourceMap := llb.NewSourceMap(&local, os.Args[1], "Dockerfile", dt)
	if sourceMap.Definition, err = local.Marshal(ctx); err != nil {
		fail(2, err)
	}
	results, err := dockerfile2llb.DockerfileLint(ctx, dt, dockerfile2llb.ConvertOpt{
		Config: dockerui.Config{
			TargetPlatforms: []ocispecs.Platform{platform},
			BuildPlatforms:  []ocispecs.Platform{platform},
			// Every rule, the experimental ones too.
			LinterConfig: &linter.Config{ExperimentalAll: true},
		},
		SourceMap:    sourceMap,
		MetaResolver: offline{},
	})
	if err != nil {
		fail(2, err)
	}
	type warning struct {
		Rule        string `json:"rule"`
		Description string `json:"description"`
		Detail      string `json:"detail"`
		Line        int32  `json:"line"`
		URL         string `json:"url,omitempty"`
	}
	out := struct {
		Warnings []warning `json:"warnings"`
		Error    string    `json:"error,omitempty"`
	}{Warnings: []warning{}}
	for _, w := range results.Warnings {
		line := int32(0)
		if w.Location != nil && len(w.Location.Ranges) > 0 {
			line = w.Location.Ranges[0].Start.Line
		}
		out.Warnings = append(out.Warnings, warning{w.RuleName, w.Description, w.Detail, line, w.URL})
	}
	if results.Error != nil {
		out.Error = results.Error.Message
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
	if len(out.Warnings) > 0 || out.Error != "" {
		os.Exit(1)
	}
}

// stages prints each stage's name, base and instructions: every instruction's parsed fields
// (BuildKit's own structs), its name and its source text.
func stages(path string) {
	f, err := os.Open(path)
	if err != nil {
		fail(2, err)
	}
	defer f.Close()
	ast, err := parser.Parse(f)
	if err != nil {
		fail(1, err)
	}
	parsed, _, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		fail(1, err)
	}
	type stage struct {
		Name     string           `json:"name"`
		Base     string           `json:"base"`
		Commands []map[string]any `json:"commands"`
	}
	out := []stage{}
	for _, s := range parsed {
		st := stage{Name: s.Name, Base: s.BaseName, Commands: []map[string]any{}}
		for _, c := range s.Commands {
			fields := map[string]any{}
			if dt, err := json.Marshal(c); err == nil {
				_ = json.Unmarshal(dt, &fields)
			}
			fields["instruction"] = c.Name()
			if str, ok := c.(fmt.Stringer); ok {
				fields["source"] = str.String()
			}
			st.Commands = append(st.Commands, fields)
		}
		out = append(out, st)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

func fail(code int, reason any) {
	fmt.Fprintln(os.Stderr, reason)
	os.Exit(code)
}
