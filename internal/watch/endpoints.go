package watch

import (
	"fmt"
	"maps"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/targetsfile"
)

// Builder builds the endpoints of the URL arguments and of the targets
// file's entries, every option validated before anything is probed. Its
// errors are bad input, each naming its source (the command's exit 2).
type Builder struct {
	// Base is the probe flags' input: a URL argument's options, and what
	// an entry's probe keys go over.
	Base target.Input
	// Getenv is the environment the options are built with.
	Getenv func(string) string
	// File is the targets file's path, which the entries' sources name.
	File string
}

// URLs builds the endpoints of URL arguments, each named by its redacted
// URL (two that differ only in a password are two targets, told apart by
// a number).
func (bd *Builder) URLs(raws []string) ([]*Endpoint, error) {
	var out []*Endpoint
	lines := map[string]int{}
	if len(raws) > 0 {
		tmpl, err := bd.Base.Build(bd.Getenv)
		if err != nil {
			return nil, err
		}
		// The URL each name was shown for: two that differ only in a
		// password are two targets, told apart by a number.
		rawOf := map[string]string{}
		for _, raw := range raws {
			o, err := tmpl.ForURL(raw)
			if err != nil {
				return nil, err
			}
			u := o.Redactor.URL(o.URL)
			name := u
			for n := 2; rawOf[name] != "" && rawOf[name] != o.URL.String(); n++ {
				name = u + " (" + strconv.Itoa(n) + ")"
			}
			rawOf[name] = o.URL.String()
			if err := bd.given(lines, name, 0); err != nil {
				return nil, err
			}
			out = append(out, &Endpoint{Name: name, URL: u, Options: o, Recover: true})
		}
	}
	return out, nil
}

// given records name's line in lines (each name's line in the targets
// file, 0: a URL argument, named only if the name comes again), or says
// that the name was given before.
func (bd *Builder) given(lines map[string]int, name string, line int) error {
	if prev, dup := lines[name]; dup {
		return fmt.Errorf("%s: target %q given twice (first: %s)", bd.where(line), name, bd.where(prev))
	}
	lines[name] = line
	return nil
}

// where names a target's line in the targets file (0: a URL argument).
func (bd *Builder) where(line int) string {
	if line == 0 {
		return "URL argument"
	}
	return bd.File + ":" + strconv.Itoa(line)
}

// Entries appends the endpoints of the targets file's entries fts to out
// (the URL arguments'), and says how many of the entries got a template
// of their own (what a target costs beyond the others: the memory limit
// counts them). A name the file shares with a URL argument is an error.
func (bd *Builder) Entries(out []*Endpoint, fts []targetsfile.FileEntry) ([]*Endpoint, int, error) {
	lines := make(map[string]int, len(out))
	for _, t := range out {
		lines[t.Name] = 0
	}
	// The entries are built on every core (10,000 URLs parsed and their
	// options copied were a twentieth of a --once run on one), then added
	// in the file's order: the error reported is the first entry's, as
	// when they were built one by one.
	b := &entryBuilder{bd: bd, byOptions: map[string]*target.Template{},
		base: sync.OnceValues(func() (*target.Template, error) { return bd.Base.Build(bd.Getenv) })}
	built := make([]*Endpoint, len(fts))
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
		if err := bd.given(lines, built[i].Name, fts[i].Line); err != nil {
			return nil, 0, err
		}
		out = append(out, built[i])
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
	bd *Builder
	// base is the template of the flags, shared by the entries without
	// options of their own, built once.
	base func() (*target.Template, error)
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
	in, err := ft.Input(b.bd.Base, b.bd.File)
	if err == nil {
		var tmpl *target.Template
		if tmpl, err = in.Build(b.bd.Getenv); err == nil {
			b.own.Add(1)
			return tmpl, nil
		}
	}
	return nil, err
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
func (b *entryBuilder) endpoint(ft *targetsfile.FileEntry) (*Endpoint, error) {
	t := &Endpoint{Name: ft.Name, Recover: ft.Recover, StartedAt: ft.StartedAt}
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
		tmpl = base
	default:
		var err error
		if tmpl, fromOther, err = b.sharedTemplate(ft); err != nil {
			return nil, err
		}
	}
	raw, file, name, line := ft.URL, b.bd.File, ft.Name, ft.URLLine
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
		return nil, err
	}
	r := tmpl.Secrets(u, own)
	ownRed := r != nil
	if !ownRed {
		r = tmpl.Redactor()
	}
	disp := scheme.DisplayOf(r, u)
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
	t.Build = func() (*scheme.Options, error) {
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
	disp scheme.Display
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
