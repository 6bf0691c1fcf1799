package watchcmd

import (
	"bytes"
	"errors"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
	// Each name's line in the targets file (0: a URL argument), named only
	// if the name comes again.
	lines := map[string]int{}
	where := func(line int) string {
		if line == 0 {
			return "URL argument"
		}
		return opts.TargetsFile + ":" + strconv.Itoa(line)
	}
	add := func(t *watch.Endpoint, line int) error {
		if prev, dup := lines[t.Name]; dup {
			return cli.UsageErrorf("%s: target %q given twice (first: %s)", where(line), t.Name, where(prev))
		}
		lines[t.Name] = line
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
			if err := add(&watch.Endpoint{Name: u, URL: u, Options: o, Recover: true}, 0); err != nil {
				return nil, err
			}
		}
	}
	if opts.TargetsFile == "" {
		return out, nil
	}
	if opts.OnRedeploy != "" { // the file decides what the hook runs for (issue 43)
		if err := inputfile.TrustInput(opts.TargetsFile, inputfile.Targets); err != nil {
			return nil, cli.UsageErrorf("%s: %v", opts.source("targets"), err)
		}
	}
	fts, err := watch.ReadTargets(opts.TargetsFile)
	if err != nil {
		var te *watch.TargetsError
		if errors.As(err, &te) && te.Unreadable {
			// The path as given, and where: --targets "t.yaml", or
			// HEALTHCTL_WATCH_TARGETS="t.yaml".
			return nil, cli.UsageErrorf("%s: %v", opts.named("targets"), te.Err)
		}
		return nil, cli.UsageError(err)
	}
	// The entries are built on every core (10,000 URLs parsed and their
	// options copied were a twentieth of a --once run on one), then added
	// in the file's order: the error reported is the first entry's, as
	// when they were built one by one.
	b := &entryBuilder{f: f, opts: opts,
		base: sync.OnceValues(func() (*cli.Template, error) { return opts.Flags.Build(f.Getenv) })}
	built := make([]*watch.Endpoint, len(fts))
	errs := make([]error, len(fts))
	inParallel(len(fts), func(i int) { built[i], errs[i] = b.endpoint(&fts[i]) })
	for i := range fts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if len(lines) == 0 {
			// The file's names are its own to check (ReadTargets
			// refuses one given twice): only a URL argument's can clash.
			out = append(out, built[i])
			continue
		}
		if err := add(built[i], fts[i].Line); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inParallel runs do(0) .. do(n-1) on every P, a block of entries at a
// time, and returns when all have returned.
func inParallel(n int, do func(i int)) {
	const block = 64
	procs := min(runtime.GOMAXPROCS(0), (n+block-1)/block)
	if procs < 2 {
		for i := range n {
			do(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(block)) - block
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+block, n); i++ {
					do(i)
				}
			}
		}()
	}
	wg.Wait()
}

// entryBuilder builds the endpoints of targets-file entries; safe for
// several goroutines.
type entryBuilder struct {
	f    *cli.Factory
	opts *Options
	// base is the template of the flags, shared by the entries without
	// options of their own, built once.
	base func() (*cli.Template, error)
}

// endpoint builds one entry's endpoint.
func (b *entryBuilder) endpoint(ft *watch.FileEntry) (*watch.Endpoint, error) {
	f, opts := b.f, b.opts
	t := &watch.Endpoint{Name: ft.Name, Recover: ft.Recover, StartedAt: ft.StartedAt}
	if ft.URL == "" {
		return t, nil
	}
	var tmpl *target.Template
	shared := len(ft.Probe) == 0 && !strings.ContainsAny(ft.URL, "@?")
	if shared {
		// Targets without options of their own share one template.
		// Not those whose URL may carry secrets (userinfo, query):
		// each secret is registered with the template's redactor, and
		// thousands of them in one redactor would make every line of
		// output scrub every other target's secrets.
		base, err := b.base()
		if err != nil {
			return nil, err
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
	raw, file, name, line := ft.URL, opts.TargetsFile, ft.Name, ft.URLLine
	if shared {
		// A shared template's options are a copy of the template's with
		// this URL: checked now, built for each probe, so 10,000 targets
		// do not keep 10,000 copies (an entry keeps its line, not the
		// source's text). What a build would register with the shared
		// redactor (a fragment's secret params) is registered now.
		u, err := fromFile(file, name, line, func(source string) (*url.URL, error) { return tmpl.CheckURL(raw, source) })
		if err != nil {
			return nil, cli.UsageError(err)
		}
		tmpl.Redactor().AddURL(u)
		disp := probe.DisplayOf(tmpl.Redactor(), u)
		disp.Text = oneCopy(disp.Text, raw)
		t.URL = disp.Text
		// The first build takes the URL checked now (a --once run's one
		// probe: one parse a target, not two); later ones parse its text
		// again, so a long-running watch keeps the text alone. Builds of
		// one target never overlap: its probes and its hook take turns.
		checked := u
		t.Build = func() (*probe.Options, error) {
			if u := checked; u != nil {
				checked = nil
				o := tmpl.ForCheckedURL(u)
				// Its text as rendered now, while the redactor's
				// secrets are the same: the probe need not render it.
				o.Display = disp
				return o, nil
			}
			return forURL(tmpl, raw, file, name, line)
		}
	} else {
		o, err := forURL(tmpl, raw, file, name, line)
		if err != nil {
			return nil, cli.UsageError(err)
		}
		o.Display = probe.DisplayOf(o.Redactor, o.URL)
		o.Display.Text = oneCopy(o.Display.Text, raw)
		t.Options, t.URL = o, o.Display.Text
	}
	return t, nil
}

// oneCopy is text, as raw's own string when they are equal: one copy of
// the text, the file's (a big fleet keeps every entry's).
func oneCopy(text, raw string) string {
	if text == raw {
		return raw
	}
	return text
}

// forURL is tmpl.ForURLFrom for the url: of a targets-file entry.
func forURL(tmpl *target.Template, raw, file, name string, line int) (*probe.Options, error) {
	return fromFile(file, name, line, func(source string) (*probe.Options, error) { return tmpl.ForURLFrom(raw, source) })
}

// fromFile runs a check or build of the url: of a targets-file entry: its
// source ("t.yaml:12: target \"api\": url") is formatted only when there is
// an error to name it in, not once per target (the source only words the
// error; a URL that passes is done without it).
func fromFile[T any](file, name string, line int, do func(source string) (T, error)) (T, error) {
	v, err := do("")
	if err != nil {
		ent := watch.FileEntry{Name: name, URLLine: line}
		v, err = do(ent.URLSource(file))
	}
	return v, err
}
