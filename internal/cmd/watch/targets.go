package watchcmd

import (
	"bytes"
	"errors"
	"maps"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/healthctl/healthctl/internal/cli"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/targetsfile"
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
	targets, _, err := buildTargets(f, opts)
	return targets, err
}

// buildTargets is watchTargets, also saying how many of the file's
// entries got a template of their own (what a target costs beyond the
// others: the memory limit counts them).
func buildTargets(f *cli.Factory, opts *Options) ([]*watch.Endpoint, int, error) {
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
			return nil, 0, err
		}
		// The URL each name was shown for: two that differ only in a
		// password are two targets, told apart by a number.
		rawOf := map[string]string{}
		for _, raw := range opts.URLs {
			o, err := tmpl.ForURL(raw)
			if err != nil {
				return nil, 0, err
			}
			u := o.Redactor.URL(o.URL)
			name := u
			for n := 2; rawOf[name] != "" && rawOf[name] != o.URL.String(); n++ {
				name = u + " (" + strconv.Itoa(n) + ")"
			}
			rawOf[name] = o.URL.String()
			if err := add(&watch.Endpoint{Name: name, URL: u, Options: o, Recover: true}, 0); err != nil {
				return nil, 0, err
			}
		}
	}
	if opts.TargetsFile == "" {
		return out, 0, nil
	}
	if opts.OnRedeploy != "" { // the file decides what the hook runs for (issue 43)
		if err := inputfile.TrustInput(opts.TargetsFile, inputfile.Targets); err != nil {
			return nil, 0, cli.UsageErrorf("%s: %v", opts.source("targets"), err)
		}
	}
	fts, err := targetsfile.ReadTargets(opts.TargetsFile)
	if err != nil {
		var te *targetsfile.TargetsError
		if errors.As(err, &te) && te.Unreadable {
			// The path as given, and where: --targets "t.yaml", or
			// HEALTHCTL_WATCH_TARGETS="t.yaml".
			return nil, 0, cli.UsageErrorf("%s: %v", opts.named("targets"), te.Err)
		}
		return nil, 0, cli.UsageError(err)
	}
	// The entries are built on every core (10,000 URLs parsed and their
	// options copied were a twentieth of a --once run on one), then added
	// in the file's order: the error reported is the first entry's, as
	// when they were built one by one.
	b := &entryBuilder{f: f, opts: opts, byOptions: map[string]*target.Template{},
		base: sync.OnceValues(func() (*cli.Template, error) { return opts.Flags.Build(f.Getenv) })}
	built := make([]*watch.Endpoint, len(fts))
	errs := make([]error, len(fts))
	inParallel(len(fts), func(i int) { built[i], errs[i] = b.endpoint(&fts[i]) })
	for i := range fts {
		if errs[i] != nil {
			return nil, 0, errs[i]
		}
		if len(lines) == 0 {
			// The file's names are its own to check (ReadTargets
			// refuses one given twice): only a URL argument's can clash.
			out = append(out, built[i])
			continue
		}
		if err := add(built[i], fts[i].Line); err != nil {
			return nil, 0, err
		}
	}
	return out, int(b.own.Load()), nil
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
	// byOptions holds, by the entries' option values (optionsKey), the
	// template built for the first entry of those values, shared by the
	// entries that set the same ones: a fleet's entries repeat a few sets
	// of headers and expectations, and a template each (its redactor, TLS
	// configuration, headers: ~2 KiB) was most of a 100,000-target
	// sweep's memory in users' files.
	mu        sync.Mutex
	byOptions map[string]*target.Template
	// own counts the templates built for entries (an entry's own, or
	// the first of a shared set).
	own atomic.Int64
}

// optionsKey is one text for an entry's option values, equal for two
// entries exactly when they set the same keys to the same values (in any
// order in the file).
func optionsKey(probe map[string]targetsfile.Value) string {
	keys := make([]string, 0, len(probe))
	for k := range probe {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		for _, v := range probe[k].Strings {
			b.WriteByte(0)
			b.WriteString(strconv.Itoa(len(v)))
			b.WriteByte(':')
			b.WriteString(v)
		}
		b.WriteByte(1)
	}
	return b.String()
}

// ownTemplate builds the template of an entry's own options (the file's
// values over the flags); errors name file, line, target and key (or the
// flag, for a flag's value).
func (b *entryBuilder) ownTemplate(ft *targetsfile.FileEntry) (*target.Template, error) {
	in, err := ft.Input(b.opts.Flags.Input(), b.opts.TargetsFile)
	if err == nil {
		var tmpl *target.Template
		if tmpl, err = in.Build(b.f.Getenv); err == nil {
			b.own.Add(1)
			return tmpl, nil
		}
	}
	return nil, cli.UsageError(err)
}

// sharedTemplate is the template of the entries with ft's option values:
// built for the first of them, or for ft. The second result is true when
// it was built for another entry (an error checking ft's URL against it
// would name that entry's lines: ft's own template says it instead).
func (b *entryBuilder) sharedTemplate(ft *targetsfile.FileEntry) (*target.Template, bool, error) {
	key := optionsKey(ft.Probe)
	b.mu.Lock()
	tmpl := b.byOptions[key]
	b.mu.Unlock()
	if tmpl != nil {
		return tmpl, true, nil
	}
	tmpl, err := b.ownTemplate(ft)
	if err != nil {
		return nil, false, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if have := b.byOptions[key]; have != nil {
		// Built beside another entry's: one is kept.
		return have, true, nil
	}
	b.byOptions[key] = tmpl
	return tmpl, false, nil
}

// endpoint builds one entry's endpoint.
func (b *entryBuilder) endpoint(ft *targetsfile.FileEntry) (*watch.Endpoint, error) {
	opts := b.opts
	t := &watch.Endpoint{Name: ft.Name, Recover: ft.Recover, StartedAt: ft.StartedAt}
	if ft.URL == "" {
		return t, nil
	}
	var tmpl *target.Template
	// Targets share a template: those without options of their own the
	// flags', those with the same option values the first one's. A URL's
	// secrets (userinfo, a secret query parameter) and a secret header's
	// value go to a redactor of the target's own (target.Secrets), never
	// to the shared one: thousands of them in one redactor would make
	// every line of output scrub every other target's secrets.
	fromOther := false
	// An entry's headers: ride on the template of its other options, as
	// data (a Host or a token of its own per entry must not cost a
	// template each); one that cannot (an @FILE, a body) gets its own
	// below.
	var own target.Headers
	if hv, ok := ft.Probe["headers"]; ok {
		rest := *ft
		rest.Probe = maps.Clone(ft.Probe)
		rest.Probe["headers"] = targetsfile.Value{Line: hv.Line} // replaces -H with none
		// An error here is said below, by a build with the headers, as
		// it would be without this path.
		if rt, other, err := b.sharedTemplate(&rest); err == nil {
			if h, ok := rt.OwnHeaders(hv.Strings); ok {
				tmpl, fromOther, own = rt, other, h
			}
		}
	}
	switch {
	case tmpl != nil:
	case len(ft.Probe) == 0:
		base, err := b.base()
		if err != nil {
			return nil, err
		}
		tmpl = base.Template
	default:
		var err error
		if tmpl, fromOther, err = b.sharedTemplate(ft); err != nil {
			return nil, err
		}
	}
	raw, file, name, line := ft.URL, opts.TargetsFile, ft.Name, ft.URLLine
	if fromOther {
		if _, err := tmpl.CheckURL(raw, ""); err != nil {
			// Said by the entry's own template, naming its own lines.
			if tmpl, err = b.ownTemplate(ft); err != nil {
				return nil, err
			}
			own = target.Headers{}
		}
	}
	// A shared template's options are a copy of the template's with this
	// URL: checked now, built for each probe, so 10,000 targets do not
	// keep 10,000 copies (an entry keeps its line, not the source's text).
	u, err := fromFile(file, name, line, func(source string) (*url.URL, error) { return tmpl.CheckURL(raw, source) })
	if err != nil {
		return nil, cli.UsageError(err)
	}
	r := tmpl.Secrets(u, own)
	ownRed := r != nil
	if !ownRed {
		r = tmpl.Redactor()
	}
	disp := probe.DisplayOf(r, u)
	disp.Text = oneCopy(disp.Text, raw)
	t.URL = disp.Text
	if ownRed {
		// Not kept until the first build: 100,000 targets with a token
		// each would hold 100,000 redactors (~25 MB) while they wait for
		// their probe. The build registers the same secrets again.
		disp.By = nil
	}
	// The first build takes the URL checked now and its display (a --once
	// run's one probe: one parse a target, not two); later ones parse its
	// text again, so a long-running watch keeps the text alone: the parsed
	// URL, which the display points at too, is let go with it (12 MB at
	// 100,000 targets). Every build registers the target's own secrets
	// with a redactor of its own. Builds of one target never overlap: its
	// probes and its hook take turns.
	first := &firstBuild{u, disp}
	t.Build = func() (*probe.Options, error) {
		if f := first; f != nil {
			first = nil
			red := tmpl.Secrets(f.u, own)
			o := tmpl.ForCheckedURLWith(f.u, own, red)
			// Its text as rendered now: the same secrets, registered in
			// the same order, render the same, so the probe need not
			// render it again.
			if red != nil {
				f.disp.By, f.disp.Gen = red, red.Generation()
			}
			o.Display = f.disp
			return o, nil
		}
		u, err := fromFile(file, t.Name, line, func(source string) (*url.URL, error) { return tmpl.CheckURL(raw, source) })
		if err != nil {
			return nil, err
		}
		return tmpl.ForCheckedURLWith(u, own, tmpl.Secrets(u, own)), nil
	}
	return t, nil
}

// firstBuild is what an endpoint's first build takes: its URL as checked
// when the file was read, and its display.
type firstBuild struct {
	u    *url.URL
	disp probe.Display
}

// oneCopy is text, as raw's own string when they are equal: one copy of
// the text, the file's (a big fleet keeps every entry's).
func oneCopy(text, raw string) string {
	if text == raw {
		return raw
	}
	return text
}

// fromFile runs a check or build of the url: of a targets-file entry: its
// source ("t.yaml:12: target \"api\": url") is formatted only when there is
// an error to name it in, not once per target (the source only words the
// error; a URL that passes is done without it).
func fromFile[T any](file, name string, line int, do func(source string) (T, error)) (T, error) {
	v, err := do("")
	if err != nil {
		ent := targetsfile.FileEntry{Name: name, URLLine: line}
		v, err = do(ent.URLSource(file))
	}
	return v, err
}
