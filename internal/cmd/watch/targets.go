package watchcmd

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/watch"
)

// countTargets is about how many targets the file holds (its name: keys),
// 0 when it cannot be read (reading it for real then says why).
func countTargets(path string) int {
	data, err := inputfile.Read(path, inputfile.Targets)
	if err != nil {
		return 0
	}
	return bytes.Count(data, []byte("name:"))
}

// watchTargets builds the targets of the URL arguments and the targets file,
// with every option validated before anything is probed.
func watchTargets(f *cli.Factory, opts *Options) ([]*watch.Endpoint, error) {
	var out []*watch.Endpoint
	names := map[string]string{}
	add := func(t *watch.Endpoint, where string) error {
		if prev, dup := names[t.Name]; dup {
			return cli.UsageErrorf("%s: target %q given twice (first: %s)", where, t.Name, prev)
		}
		names[t.Name] = where
		out = append(out, t)
		return nil
	}
	if len(opts.URLs) > 0 {
		tmpl, err := opts.Flags.Build(f.Getenv)
		if err != nil {
			return nil, err
		}
		for _, raw := range opts.URLs {
			o, err := tmpl.ForURL(raw)
			if err != nil {
				return nil, err
			}
			u := o.Redactor.URL(o.URL)
			if err := add(&watch.Endpoint{Name: u, URL: u, Options: o, Recover: true}, "URL argument"); err != nil {
				return nil, err
			}
		}
	}
	if opts.TargetsFile == "" {
		return out, nil
	}
	fts, err := watch.ReadTargets(opts.TargetsFile)
	if err != nil {
		return nil, cli.UsageError(err)
	}
	var base *cli.Template
	for i := range fts {
		ft := &fts[i]
		where := fmt.Sprintf("%s:%d", opts.TargetsFile, ft.Line)
		t := &watch.Endpoint{Name: ft.Name, Recover: ft.Recover, StartedAt: ft.StartedAt}
		if ft.URL != "" {
			var tmpl *target.Template
			shared := len(ft.Probe) == 0 && !strings.ContainsAny(ft.URL, "@?")
			if shared {
				// Targets without options of their own share one template.
				// Not those whose URL may carry secrets (userinfo, query):
				// each secret is registered with the template's redactor, and
				// thousands of them in one redactor would make every line of
				// output scrub every other target's secrets.
				if base == nil {
					if base, err = opts.Flags.Build(f.Getenv); err != nil {
						return nil, err
					}
				}
				tmpl = base.Template
			} else {
				// The file's values over the flags; errors name file, line,
				// target and key (or the flag, for a flag's value).
				in, err := ft.Input(opts.Flags.Input(), opts.TargetsFile)
				if err == nil {
					tmpl, err = in.Build(f.Getenv)
				}
				if err != nil {
					return nil, cli.UsageError(err)
				}
			}
			raw, src := ft.URL, ft.URLSource(opts.TargetsFile)
			o, err := tmpl.ForURLFrom(raw, src)
			if err != nil {
				return nil, cli.UsageError(err)
			}
			t.Options, t.URL = o, o.Redactor.URL(o.URL)
			if t.URL == raw {
				t.URL = raw // one copy of the text, the file's
			}
			if shared {
				// A shared template's options are a copy of the template's
				// with this URL: made again for each probe (checked just
				// now), so 10,000 targets do not keep 10,000 copies. The
				// URL's source is named again only if it fails, which it
				// did not just now: an entry keeps its line, not the text.
				t.Options = nil
				file, name, line := opts.TargetsFile, ft.Name, ft.URLLine
				t.Build = func() (*probe.Options, error) {
					o, err := tmpl.ForURLFrom(raw, "")
					if err != nil {
						ent := watch.FileEntry{Name: name, URLLine: line}
						o, err = tmpl.ForURLFrom(raw, ent.URLSource(file))
					}
					return o, err
				}
			}
		}
		if err := add(t, where); err != nil {
			return nil, err
		}
	}
	return out, nil
}
