package listen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/words"
)

// ModuleSet is /probe's modules as they are now: read again from their
// file by Reload (POST /-/reload, SIGHUP), as blackbox_exporter reloads
// its configuration. A file that no longer loads keeps the modules in
// force, and Reload says why.
type ModuleSet struct {
	cur atomic.Pointer[map[string]*blackbox.Module]
	// mu makes reloads one at a time.
	mu sync.Mutex
	// path is the modules file ("": none, the default module).
	path string
	load func() (map[string]*blackbox.Module, error)
}

// ModuleSet is /probe's reloadable modules (nil: fixed modules).
func (s *Service) ModuleSet() *ModuleSet { return s.cfg.ModuleSet }

// NewModuleSet is the set of mods, read from path by load (nil load:
// nothing to reload).
func NewModuleSet(mods map[string]*blackbox.Module, path string, load func() (map[string]*blackbox.Module, error)) *ModuleSet {
	ms := &ModuleSet{path: path, load: load}
	ms.cur.Store(&mods)
	return ms
}

// Modules are the modules in force (never changed in place: a reload
// replaces them whole).
func (ms *ModuleSet) Modules() map[string]*blackbox.Module { return *ms.cur.Load() }

// Reload reads the modules file again. On success the new modules are in
// force for every /probe request from then on; on failure the modules in
// force stay, and the error says why (file, line, module, field).
func (ms *ModuleSet) Reload() (int, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.load == nil {
		return len(ms.Modules()), errNoModulesFile
	}
	mods, err := ms.load()
	if err != nil {
		return len(ms.Modules()), err
	}
	ms.cur.Store(&mods)
	return len(mods), nil
}

// errNoModulesFile is a reload without --probe-modules (errors.New, which
// the compiler lays out: fmt.Errorf would run at every start).
var errNoModulesFile = errors.New("no --probe-modules file to reload")

// ServeReload is POST /-/reload: the modules file read again. 200 with
// what is in force; 500 with why when the file does not load (the
// modules in force stay), as blackbox_exporter answers.
func (ms *ModuleSet) ServeReload(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	n, err := ms.Reload()
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "failed to reload config: %s (keeping the %s in force)\n", output.Bounded(err.Error(), 1024), words.Plural(n, "module"))
		return
	}
	fmt.Fprintf(w, "reloaded %s: %s\n", ms.path, words.Plural(n, "module"))
}

// ServeConfig is GET /config: the modules in force, in the modules
// file's shape, secrets (password, bearer_token, Authorization and Cookie
// headers) shown as <secret>.
func (ms *ModuleSet) ServeConfig(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, ConfigText(ms.Modules()))
}

// ConfigText is mods in the modules file's shape, by name, secrets
// masked (Module.Config).
func ConfigText(mods map[string]*blackbox.Module) string {
	names := make([]string, 0, len(mods))
	for n := range mods {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("modules:\n")
	for _, n := range names {
		b.WriteString("  " + yamlKey(n) + ":\n")
		for _, l := range strings.SplitAfter(strings.TrimRight(mods[n].Config(), "\n"), "\n") {
			b.WriteString("    " + l)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// yamlKey is a module name as a YAML key.
func yamlKey(s string) string {
	if s != "" && !strings.ContainsAny(s, ":#'\"{}[],&*!|>%@`\n\t ") {
		return s
	}
	return strconv.Quote(s)
}

// WriteDebug is /probe's answer with debug=true, as blackbox_exporter's:
// the probe's log (what it did, step by step, from what the probe
// recorded), the metrics the scrape would have got, and the module as
// /config shows it; text, never a scrape's exposition. Everything from the
// target or the server goes through the request's redactor.
func WriteDebug(w http.ResponseWriter, m *blackbox.Module, o *scheme.Options, budget time.Duration, r *probe.Result, exposition []byte) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var b bytes.Buffer
	red := func(s string) string {
		if o != nil && o.Redactor != nil {
			s = o.Redactor.String(s)
		}
		return strconv.Quote(s)
	}
	tgt := ""
	if o != nil && o.URL != nil && o.Redactor != nil {
		tgt = o.Redactor.URL(o.URL)
	}
	log := func(level, msg string, kv ...string) {
		fmt.Fprintf(&b, "module=%s target=%s level=%s msg=%q", strconv.Quote(m.Name), red(tgt), level, msg)
		for i := 0; i+1 < len(kv); i += 2 {
			fmt.Fprintf(&b, " %s=%s", kv[i], kv[i+1])
		}
		b.WriteByte('\n')
	}
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) }
	b.WriteString("Logs for the probe:\n")
	log("info", "Beginning probe", "probe", m.Prober, "timeout_seconds", secs(budget))
	if d, ok := r.Timings.Get(probe.PhaseDNS); ok {
		log("info", "Resolved target address", "duration_seconds", secs(d))
	}
	for _, a := range r.DialAttempts {
		kv := []string{"address", red(a.Address), "duration_seconds", secs(a.Duration)}
		if a.Error != "" {
			kv = append(kv, "error", red(a.Error))
		}
		log("info", "Connection attempt", kv...)
	}
	if r.Address != "" {
		log("info", "Connected", "address", red(r.Address), "ip_protocol", "ip"+strconv.Itoa(r.IPFamily))
	}
	if r.TLS != nil && r.TLS.Version != "" {
		log("info", "TLS handshake", "version", red(r.TLS.Version), "cipher", red(r.TLS.Cipher), "verified", strconv.FormatBool(r.TLS.Verified))
	}
	for _, h := range r.Hops {
		log("info", "Received redirect", "url", red(h.URL), "status_code", strconv.Itoa(h.Status), "location", red(h.Location))
	}
	if r.Redirect != nil {
		log("info", "Redirect not followed", "location", red(r.Redirect.Location))
	}
	if r.HTTPStatus != 0 {
		log("info", "Received HTTP response", "status_code", strconv.Itoa(r.HTTPStatus), "version", red(r.HTTPVersion),
			"content_length", strconv.FormatInt(r.ContentLength, 10), "body_bytes_read", strconv.FormatInt(r.BodyRead, 10))
	}
	var timings []string
	for _, p := range []probe.Phase{probe.PhaseDNS, probe.PhaseConnect, probe.PhaseTLS, probe.PhaseTTFB, probe.PhaseTransfer} {
		if d, ok := r.Timings.Get(p); ok {
			timings = append(timings, string(p), secs(d))
		}
	}
	if len(timings) > 0 {
		log("info", "Response timings", timings...)
	}
	total := secs(r.Timings.Of(probe.PhaseTotal))
	if r.Outcome == classify.Pass {
		log("info", "Probe succeeded", "duration_seconds", total, "reason", string(r.Reason))
	} else {
		log("error", "Probe failed", "duration_seconds", total, "outcome", string(r.Outcome), "reason", string(r.Reason), "error", red(r.Error))
	}
	b.WriteString("\n\n\nMetrics that would have been returned:\n")
	b.Write(exposition)
	b.WriteString("\n\n\nModule configuration:\n")
	b.WriteString(m.Config())
	w.Write(b.Bytes())
}
