// Package blackbox is blackbox_exporter's module configuration for
// watch --listen's /probe: a modules file read into modules, and a module
// with a /probe target made into the probe's options.
package blackbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/blackbox/oauth2"
	"github.com/healthctl/healthctl/internal/dnswire"
	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/icmpwire"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/yamlsafe"
)

// ModulesFile is the kind of --probe-modules: blackbox_exporter's own
// configuration files are a few KiB.
var ModulesFile = inputfile.Kind{Name: "probe modules file", Max: 1 << 20}

// DefaultModule is the module /probe uses without --probe-modules:
// blackbox_exporter's example http_2xx (prober http, any 2xx).
const DefaultModule = "http_2xx"

// Module is one probe module of /probe: how a target of the query is
// probed. Its options were validated at start-up.
type Module struct {
	Name string
	// Prober is blackbox's prober: http, tcp, grpc, dns or icmp (the
	// scheme table's Prober column), row the row it names.
	Prober string
	row    scheme.Scheme
	// TLS is tcp's and grpc's tls: true (tls://, grpcs://).
	TLS bool
	// Timeout is the module's timeout (0: none given): the budget when
	// shorter than the scrape's (Budget).
	Timeout time.Duration
	// body is http.body, sent as it is (nil: none).
	body []byte
	// follow: redirects are followed (blackbox's follow_redirects,
	// true by default), each hop checked against the allow list.
	follow bool
	// hopAllowed is the listener's allow list (BindAllow): without one,
	// no redirect is followed.
	hopAllowed func(*url.URL) bool
	// prefer is preferred_ip_protocol with ip_protocol_fallback (4, 6).
	prefer int
	// answer are the conditions on the answer itself (fail_if_ssl,
	// valid_http_versions, body_size_limit).
	answer expect.AnswerExpect
	// minTLS and maxTLS are tls_config's min_version and max_version.
	minTLS, maxTLS uint16
	// dialogue is tcp.query_response.
	dialogue []scheme.Step
	// dnsQuery is a dns module's question, as a dns:// URL's path and
	// parameters (dnsmodule.go).
	dnsQuery string
	// headerOptional are the indexes of the header conditions with
	// allow_missing; headerRE the template's conditions with them marked.
	headerOptional []int
	headerRE       []expect.HeaderExpect
	// proxy is http_client_config's proxy_url (nil: the environment's
	// proxies), noProxy its no_proxy.
	proxy   *url.URL
	noProxy string
	// oauth is http_client_config's oauth2 (nil: none).
	oauth *oauth2.Config
	// icmpQuery is an icmp module's icmp:// parameters ("?ttl=…"; "?"
	// none).
	icmpQuery string
	// config is the module as /config shows it (secrets masked).
	config string
	tmpl   *target.Template
}

// Config is the module as /config shows it: as the modules file has it,
// secrets masked.
func (m *Module) Config() string { return m.config }

// Redactor is the module's own redactor, shared by its requests (each
// probe's options carry a copy of their own).
func (m *Module) Redactor() *redact.Redactor { return m.tmpl.Redactor() }

// HasToken says the module fetches an OAuth 2.0 token before each probe
// (http_client_config.oauth2).
func (m *Module) HasToken() bool { return m.oauth != nil }

// Token fetches the module's OAuth 2.0 token within ctx's deadline: the
// Authorization value to send ("Bearer …").
func (m *Module) Token(ctx context.Context) (string, error) { return m.oauth.Token(ctx) }

// MaxRedirects is how many redirects a module follows: Go's HTTP
// client's limit, which blackbox_exporter's http prober keeps.
const MaxRedirects = 10

// BindAllow gives each module the allow list its redirects' hops are
// checked against: a module with follow_redirects (blackbox's default)
// follows a redirect only to a host and port the list allows.
func BindAllow(mods map[string]*Module, permits func(*url.URL) bool) {
	for _, m := range mods {
		m.hopAllowed = permits
	}
}

// ModulesError is a modules file that cannot be used: the file (and line,
// module and field) and what is wrong. It is the user's input (exit 2).
type ModulesError struct {
	Where string
	Err   error
}

func (e *ModulesError) Error() string { return e.Where + ": " + e.Err.Error() }

// DefaultModules are the modules without a file: blackbox's http_2xx
// (redirects followed within the allow list, IPv6 preferred) over the
// flags' options.
func DefaultModules(base target.Input, getenv func(string) string) (map[string]*Module, error) {
	in := base
	in.Follow = MaxRedirects
	in.Headers = noCompression(slices.Clone(base.Headers))
	tmpl, err := in.Build(getenv)
	if err != nil {
		return nil, err
	}
	return map[string]*Module{DefaultModule: {Name: DefaultModule, Prober: scheme.DefaultScheme().Prober, row: scheme.DefaultScheme(), follow: true, prefer: 6, tmpl: tmpl,
		config: "prober: http\n"}}, nil
}

// ReadModules reads a modules file in blackbox_exporter's shape
// (modules: NAME: {prober, timeout, http|tcp|grpc: …}) into modules over
// base (the watch's probe flags). A field healthctl does not map is
// refused, naming the module and the field: a module that silently probed
// differently from blackbox would change what a dashboard means.
func ReadModules(path string, base target.Input, getenv func(string) string) (map[string]*Module, error) {
	data, err := inputfile.Read(path, ModulesFile)
	if err != nil {
		return nil, &ModulesError{Where: path, Err: inputfile.Cause(err)}
	}
	return ParseModules(path, data, base, getenv)
}

// ParseModules is ReadModules on data already read.
func ParseModules(path string, data []byte, base target.Input, getenv func(string) string) (map[string]*Module, error) {
	fail := func(line int, module, field string, format string, args ...any) error {
		w := path
		if line > 0 {
			w += ":" + strconv.Itoa(line)
		}
		if module != "" {
			w += ": module " + strconv.Quote(module)
		}
		if field != "" {
			w += ": " + field
		}
		return &ModulesError{Where: w, Err: fmt.Errorf(format, args...)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fail(0, "", "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fail(0, "", "", "empty: want a modules: mapping (blackbox_exporter's shape)")
	}
	if err := yamlsafe.Check(&doc); err != nil {
		return nil, fail(0, "", "", "%v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fail(extra.Line, "", "", "a second YAML document: want one")
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "", "", "want a mapping with modules:")
	}
	var mods *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], deref(root.Content[i+1])
		if k.Value != "modules" {
			return nil, fail(k.Line, "", k.Value, "unknown key (want modules:)")
		}
		mods = v
	}
	if mods == nil || mods.Kind != yaml.MappingNode || len(mods.Content) == 0 {
		return nil, fail(root.Line, "", "modules", "want a mapping of module names to modules")
	}
	out := map[string]*Module{}
	dir := filepath.Dir(path)
	for i := 0; i+1 < len(mods.Content); i += 2 {
		k, v := mods.Content[i], deref(mods.Content[i+1])
		name := k.Value
		if _, dup := out[name]; dup {
			return nil, fail(k.Line, name, "", "given twice")
		}
		m, err := parseModule(name, v, base, getenv, fail, dir)
		if err != nil {
			return nil, err
		}
		secret := redact.NewRedactor(nil, nil).IsSecretHeader // a module that never probes
		if m.tmpl != nil {
			secret = m.tmpl.Redactor().IsSecretHeader
		}
		m.config = shownModule(v, secret)
		out[name] = m
	}
	return out, nil
}

// blackboxField names, for an error, the module field a probe flag's
// value came from.
var blackboxField = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"header": "headers", "method": "method", "user": "basic_auth", "insecure": "tls_config.insecure_skip_verify",
		"cacert": "tls_config.ca_file", "cert": "tls_config.cert_file", "key": "tls_config.key_file",
		"servername": "tls_config.server_name", "expect-status": "valid_status_codes",
		"expect-body-regex": "fail_if_body_not_matches_regexp", "expect-body-not": "fail_if_body_matches_regexp",
		"expect-header": "fail_if_header_not_matches", "expect-header-not": "fail_if_header_matches",
		"grpc-service": "service", "max-body": "body_size_limit", "ipv4": "preferred_ip_protocol", "ipv6": "preferred_ip_protocol",
	}
})

// failFunc words a modules file error.
type failFunc func(line int, module, field string, format string, args ...any) error

// refused are blackbox fields healthctl knows and does not map, with why.
// Each says, in blackbox's documentation's words, what the field does,
// then why healthctl does not. Built on first use, as every table here: a
// package-level map literal is built at every start, probe included.
var refused = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"proxy_from_environment": "\"use environment HTTP_PROXY, HTTPS_PROXY and NO_PROXY\": healthctl always does (its own process's)",
		"proxy_connect_header":   "\"headers to send to proxies during CONNECT requests\": healthctl's proxies take none",
		"authorization":          "\"the HTTP authorization credentials for the targets\": give bearer_token or headers: Authorization",
		"credentials_file":       "\"the HTTP authorization credentials for the targets\": give bearer_token_file",
		"body_file":              "\"read the HTTP request body from from a file\": healthctl's /probe reads no local file a module names as a body",
		"source_ip_address":      "\"the source address for a connection\": healthctl does not bind a source address",
		"password_file":          "\"basic_auth password file\": give password: (read at start-up) instead",
		"health_check":           "use grpc: service:",
		"enable_http3":           "\"whether HTTP/3 is enabled\": healthctl speaks HTTP/1.1 and HTTP/2",
		"labels":                 "\"labels to add to the metric\" (query_response): healthctl adds no labels from an answer",
		"regexp":                 "want fail_if_*_matches_regexp with a list of regexps",
	}
})

// queryResponse maps tcp.query_response: [{expect, send, starttls}] onto
// the probe's dialogue (tcp:// and tls://).
func queryResponse(v *yaml.Node, bad func(string, ...any) error) ([]scheme.Step, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, bad("want a list of {expect, send, starttls}")
	}
	var steps []scheme.Step
	for _, e := range v.Content {
		e = deref(e)
		if e.Kind != yaml.MappingNode {
			return nil, bad("want a list of {expect, send, starttls}")
		}
		var st scheme.Step
		for j := 0; j+1 < len(e.Content); j += 2 {
			k, val := e.Content[j].Value, deref(e.Content[j+1])
			switch k {
			case "expect":
				re, err := regexp.Compile(val.Value)
				if err != nil {
					return nil, bad("expect %q: %v", val.Value, err)
				}
				st.Expect = re
			case "send":
				if strings.ContainsAny(val.Value, "\r\n") {
					return nil, bad("send %q: one line (the newline is added)", val.Value)
				}
				st.Send = val.Value
			case "starttls":
				b, err := strconv.ParseBool(val.Value)
				if err != nil {
					return nil, bad("starttls %q: want true or false", val.Value)
				}
				st.StartTLS = b
			default:
				if why, ok := refused()[k]; ok {
					return nil, bad("%s: not supported: %s", k, why)
				}
				return nil, bad("%s: unknown field (want expect, send, starttls)", k)
			}
		}
		steps = append(steps, st)
	}
	return steps, nil
}

func parseModule(name string, v *yaml.Node, base target.Input, getenv func(string) string, fail failFunc, dir string) (*Module, error) {
	if v.Kind != yaml.MappingNode {
		return nil, fail(v.Line, name, "", "want a mapping (prober:, timeout:, http:/tcp:/grpc:)")
	}
	in := base
	// A module is blackbox's: its defaults, not the flags' conditions.
	in.ExpectStatus = "2xx"
	in.ExpectBody, in.ExpectBodyRegex, in.ExpectJSON, in.ExpectHeader = nil, nil, nil, nil
	in.ExpectBodyNot, in.ExpectHeaderNot, in.DegradedIfBody, in.DegradedIfJSON = nil, nil, nil, nil
	in.Headers = slices.Clone(base.Headers)
	// blackbox's defaults: redirects followed, IPv6 preferred with a
	// fallback to IPv4.
	m := &Module{Name: name, Prober: scheme.DefaultScheme().Prober, row: scheme.DefaultScheme(), follow: true, prefer: 6}
	var section *yaml.Node
	var sectionName string
	src := func(field string) string { return "module " + strconv.Quote(name) + ": " + field }
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], deref(v.Content[i+1])
		switch k.Value {
		case "prober":
			row, ok := scheme.ProberRow(val.Value)
			if !ok {
				return nil, fail(val.Line, name, "prober", "%q: want %s", val.Value, scheme.Probers())
			}
			m.Prober, m.row = val.Value, row
		case "timeout":
			d, err := time.ParseDuration(val.Value)
			if err != nil || d <= 0 {
				return nil, fail(val.Line, name, "timeout", "%q: want a positive duration (5s)", val.Value)
			}
			m.Timeout = d
		default:
			if _, ok := scheme.ProberRow(k.Value); ok {
				section, sectionName = val, k.Value
				if section.Kind != yaml.MappingNode {
					return nil, fail(val.Line, name, k.Value, "want a mapping")
				}
				continue
			}
			if why, ok := refused()[k.Value]; ok {
				return nil, fail(k.Line, name, k.Value, "not supported: %s", why)
			}
			return nil, fail(k.Line, name, k.Value, "unknown field (want prober, timeout, %s)", scheme.Probers())
		}
	}
	if section != nil && sectionName != m.Prober {
		return nil, fail(section.Line, name, sectionName, "given for prober %s: want %s:", m.Prober, m.Prober)
	}
	if m.row.Kind == icmpwire.Kind {
		if err := m.icmpSection(section, &in, fail); err != nil {
			return nil, err
		}
	} else if m.row.Kind == dnswire.Kind {
		if err := m.dnsSection(section, &in, fail, v.Line); err != nil {
			return nil, err
		}
	} else if section != nil {
		if err := m.section(section, &in, fail, src, dir, getenv); err != nil {
			return nil, err
		}
	}
	in.Follow = 0
	if m.follow && m.speaks(scheme.AppliesRequest) {
		in.Follow = MaxRedirects
	}
	if m.speaks(scheme.AppliesRequest) && m.answer.Encoding == "" {
		in.Headers = noCompression(in.Headers)
	}
	if m.Timeout > 0 {
		in.ConnectTimeout, in.ReadTimeout, in.MaxTime = m.Timeout, m.Timeout, m.Timeout
	}
	in.Sources = make(map[string]string, len(target.Options))
	for _, o := range target.Options {
		f := o.Flag
		if bb, ok := blackboxField()[f]; ok {
			f = m.Prober + "." + bb
		} else {
			f += " (from the flags)"
		}
		in.Sources[o.Flag] = src(f)
	}
	tmpl, err := in.Build(getenv)
	if err != nil {
		return nil, fail(v.Line, "", "", "%v", err)
	}
	m.tmpl = tmpl
	// The proxy's password and the client secret are the module's
	// secrets: masked in every answer, as its other credentials.
	if m.proxy != nil {
		tmpl.Redactor().AddURL(m.proxy)
	}
	if m.oauth != nil && m.oauth.Secret() != "" {
		tmpl.Redactor().AddSecret(m.oauth.Secret())
	}
	if len(m.headerOptional) > 0 {
		m.headerRE = slices.Clone(tmpl.Options().Expect.HeaderRE)
		for _, i := range m.headerOptional {
			m.headerRE[i].AllowMissing = true
		}
	}
	return m, nil
}

// speaks says whether the module's prober takes the option group a (its
// row's): http's request fields, tcp's query_response, grpc's service.
func (m *Module) speaks(a scheme.Applies) bool { return m.row.Options&a != 0 }
