// Package blackbox is blackbox_exporter's module configuration for
// watch --listen's /probe: a modules file read into modules, and a module
// with a /probe target made into the probe's options.
package blackbox

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/blackbox/oauth2"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/expect"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/redact"
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
	// Prober is blackbox's prober: http, tcp or grpc.
	Prober string
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
	dialogue []probe.Step
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
	return map[string]*Module{DefaultModule: {Name: DefaultModule, Prober: "http", follow: true, prefer: 6, tmpl: tmpl,
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
var blackboxField = map[string]string{
	"header": "headers", "method": "method", "user": "basic_auth", "insecure": "tls_config.insecure_skip_verify",
	"cacert": "tls_config.ca_file", "cert": "tls_config.cert_file", "key": "tls_config.key_file",
	"servername": "tls_config.server_name", "expect-status": "valid_status_codes",
	"expect-body-regex": "fail_if_body_not_matches_regexp", "expect-body-not": "fail_if_body_matches_regexp",
	"expect-header": "fail_if_header_not_matches", "expect-header-not": "fail_if_header_matches",
	"grpc-service": "service", "max-body": "body_size_limit", "ipv4": "preferred_ip_protocol", "ipv6": "preferred_ip_protocol",
}

// failFunc words a modules file error.
type failFunc func(line int, module, field string, format string, args ...any) error

// refused are blackbox fields healthctl knows and does not map, with why.
// Each says, in blackbox's documentation's words, what the field does,
// then why healthctl does not.
var refused = map[string]string{
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

// queryResponse maps tcp.query_response: [{expect, send, starttls}] onto
// the probe's dialogue (tcp:// and tls://).
func queryResponse(v *yaml.Node, bad func(string, ...any) error) ([]probe.Step, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, bad("want a list of {expect, send, starttls}")
	}
	var steps []probe.Step
	for _, e := range v.Content {
		e = deref(e)
		if e.Kind != yaml.MappingNode {
			return nil, bad("want a list of {expect, send, starttls}")
		}
		var st probe.Step
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
				if why, ok := refused[k]; ok {
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
	m := &Module{Name: name, Prober: "http", follow: true, prefer: 6}
	var section *yaml.Node
	var sectionName string
	src := func(field string) string { return "module " + strconv.Quote(name) + ": " + field }
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], deref(v.Content[i+1])
		switch k.Value {
		case "prober":
			switch val.Value {
			case "http", "tcp", "grpc", "dns", "icmp":
				m.Prober = val.Value
			default:
				return nil, fail(val.Line, name, "prober", "%q: want http, tcp, grpc, dns or icmp", val.Value)
			}
		case "timeout":
			d, err := time.ParseDuration(val.Value)
			if err != nil || d <= 0 {
				return nil, fail(val.Line, name, "timeout", "%q: want a positive duration (5s)", val.Value)
			}
			m.Timeout = d
		case "http", "tcp", "grpc", "dns", "icmp":
			section, sectionName = val, k.Value
			if section.Kind != yaml.MappingNode {
				return nil, fail(val.Line, name, k.Value, "want a mapping")
			}
		default:
			if why, ok := refused[k.Value]; ok {
				return nil, fail(k.Line, name, k.Value, "not supported: %s", why)
			}
			return nil, fail(k.Line, name, k.Value, "unknown field (want prober, timeout, http, tcp, grpc, dns or icmp)")
		}
	}
	if section != nil && sectionName != m.Prober {
		return nil, fail(section.Line, name, sectionName, "given for prober %s: want %s:", m.Prober, m.Prober)
	}
	if m.Prober == "icmp" {
		if err := m.icmpSection(section, &in, fail); err != nil {
			return nil, err
		}
	} else if m.Prober == "dns" {
		if err := m.dnsSection(section, &in, fail, v.Line); err != nil {
			return nil, err
		}
	} else if section != nil {
		if err := m.section(section, &in, fail, src, dir, getenv); err != nil {
			return nil, err
		}
	}
	in.Follow = 0
	if m.follow && m.Prober == "http" {
		in.Follow = MaxRedirects
	}
	if m.Prober == "http" && m.answer.Encoding == "" {
		in.Headers = noCompression(in.Headers)
	}
	if m.Timeout > 0 {
		in.ConnectTimeout, in.ReadTimeout, in.MaxTime = m.Timeout, m.Timeout, m.Timeout
	}
	in.Sources = make(map[string]string, len(target.Options))
	for _, o := range target.Options {
		f := o.Flag
		if bb, ok := blackboxField[f]; ok {
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

// section maps the prober's own fields onto the input.
func (m *Module) section(sec *yaml.Node, in *target.Input, fail failFunc, src func(string) string, dir string, getenv func(string) string) error {
	name := m.Name
	fallback := true
	preferred := "ip6"
	var acceptEncoding string
	// authGiven: basic_auth, bearer_token(_file) given (headers0: the
	// module's own headers start there), which oauth2 excludes.
	authGiven, headers0 := false, len(in.Headers)
	for i := 0; i+1 < len(sec.Content); i += 2 {
		k, val := sec.Content[i], deref(sec.Content[i+1])
		field := m.Prober + "." + k.Value
		bad := func(format string, args ...any) error { return fail(val.Line, name, field, format, args...) }
		str := func() (string, error) {
			if val.Kind != yaml.ScalarNode {
				return "", bad("want a single value")
			}
			return val.Value, nil
		}
		list := func() ([]string, error) {
			if val.Kind != yaml.SequenceNode {
				return nil, bad("want a list")
			}
			var out []string
			for _, e := range val.Content {
				if e = deref(e); e.Kind != yaml.ScalarNode {
					return nil, bad("want a list of values")
				}
				out = append(out, e.Value)
			}
			return out, nil
		}
		boolean := func() (bool, error) {
			s, err := str()
			if err != nil {
				return false, err
			}
			b, err := strconv.ParseBool(s)
			if err != nil {
				return false, bad("%q: want true or false", s)
			}
			return b, nil
		}
		var err error
		switch k.Value {
		case "preferred_ip_protocol":
			if preferred, err = str(); err == nil && preferred != "ip4" && preferred != "ip6" {
				err = bad("%q: want ip4 or ip6", preferred)
			}
		case "ip_protocol_fallback":
			fallback, err = boolean()
		case "tls_config":
			err = m.tlsConfig(val, in, dir, func(f string, line int, format string, args ...any) error {
				return fail(line, name, field+"."+f, format, args...)
			})
		case "valid_status_codes":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			var codes []string
			if codes, err = list(); err == nil {
				for _, c := range codes {
					if n, perr := strconv.Atoi(c); perr != nil || n < 100 || n > 599 {
						return bad("%q: want status codes (200, 204)", c)
					}
				}
				// blackbox: "Defaults to 2xx" when none are listed.
				in.ExpectStatus = "2xx"
				if len(codes) > 0 {
					in.ExpectStatus = strings.Join(codes, ",")
				}
			}
		case "valid_http_versions":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			var vs []string
			if vs, err = list(); err == nil {
				for _, v := range vs {
					if !strings.HasPrefix(strings.ToUpper(v), "HTTP/") {
						return bad("%q: want HTTP versions (HTTP/1.1, HTTP/2.0)", v)
					}
				}
				m.answer.HTTPVersions = vs
			}
		case "fail_if_ssl", "fail_if_not_ssl":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			var b bool
			if b, err = boolean(); err == nil && b {
				want := map[string]string{"fail_if_ssl": "refused", "fail_if_not_ssl": "required"}[k.Value]
				if m.answer.TLS != "" && m.answer.TLS != want {
					return bad("true, with the other of fail_if_ssl and fail_if_not_ssl: no answer could pass")
				}
				m.answer.TLS = want
			}
		case "body_size_limit":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			var n int64
			var t string
			if t, err = str(); err == nil {
				if n, err = blackboxSize(t); err != nil {
					return bad("%q: %v", t, err)
				}
				if n > 0 {
					// blackbox: "the probe fails" past it; 0 or
					// less: no limit (the flags' --max-body
					// still bounds what is read).
					in.MaxBody, m.answer.BodyLimit = n, true
				}
			}
		case "compression":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			if acceptEncoding, err = str(); err == nil {
				switch acceptEncoding {
				case "", "gzip", "br", "deflate", "identity":
				default:
					return bad("%q: want gzip, br, deflate or identity", acceptEncoding)
				}
			}
		case "bearer_token":
			authGiven = true
			var t string
			if t, err = str(); err == nil {
				in.Headers = append(in.Headers, "Authorization: Bearer "+t)
			}
		case "bearer_token_file":
			authGiven = true
			var f string
			if f, err = str(); err == nil {
				var b []byte
				if b, err = inputfile.Read(inDir(dir, f), inputfile.Headers); err != nil {
					return bad("%q: %v", f, inputfile.Cause(err))
				}
				in.Headers = append(in.Headers, "Authorization: Bearer "+strings.TrimSpace(string(b)))
			}
		case "enable_http2":
			var b bool
			if b, err = boolean(); err == nil && !b {
				err = bad("false: \"whether HTTP/2 is enabled\": healthctl negotiates HTTP/2 by ALPN and cannot turn it off")
			}
		case "skip_resolve_phase_with_proxy":
			var b bool
			if b, err = boolean(); err == nil && b {
				err = bad("true: healthctl takes proxies from HTTP(S)_PROXY/NO_PROXY and always resolves without one")
			}
		case "query_response":
			if m.Prober != "tcp" {
				return bad("only for prober tcp")
			}
			m.dialogue, err = queryResponse(val, bad)
		case "method":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			in.Method, err = str()
		case "headers":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			if val.Kind != yaml.MappingNode {
				return bad("want a mapping of header names to values")
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				in.Headers = append(in.Headers, val.Content[j].Value+": "+deref(val.Content[j+1]).Value)
			}
		case "body":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			// blackbox sends the text as it is: "@FILE" is the text
			// "@FILE", never a file read (the options' Body, set per
			// request, not --data's curl syntax).
			var b string
			if b, err = str(); err == nil {
				m.body = []byte(b)
			}
		case "fail_if_body_not_matches_regexp", "fail_if_body_matches_regexp":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			var res []string
			if res, err = list(); err == nil {
				if k.Value == "fail_if_body_matches_regexp" {
					// The probe's --expect-body-not.
					in.ExpectBodyNot = append(in.ExpectBodyNot, res...)
				} else {
					in.ExpectBodyRegex = append(in.ExpectBodyRegex, res...)
				}
			}
		case "fail_if_header_not_matches", "fail_if_header_matches":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			err = m.headerMatches(val, in, k.Value == "fail_if_header_matches", bad)
		case "no_follow_redirects":
			var b bool
			if b, err = boolean(); err == nil {
				m.follow = !b
			}
		case "follow_redirects":
			m.follow, err = boolean()
		case "basic_auth":
			authGiven = true
			err = basicAuth(val, in, dir, bad)
		case "tls":
			if m.Prober == "http" {
				return bad("unknown field for prober http (an https:// target uses TLS)")
			}
			m.TLS, err = boolean()
		case "service":
			if m.Prober != "grpc" {
				return bad("only for prober grpc")
			}
			in.GRPCService, err = str()
		case "proxy_url":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			var p string
			if p, err = str(); err == nil {
				if cerr := proxyenv.Check(p); cerr != nil {
					return bad("%q: %v", redact.NewRedactor(nil, nil).RawURL(p), cerr)
				}
				m.proxy, _ = proxyenv.Parse(p)
			}
		case "no_proxy":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			m.noProxy, err = str()
		case "oauth2":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			m.oauth, err = oauth2.Parse(val, func(f string) string { return inDir(dir, f) }, func(f string, line int, format string, args ...any) error {
				if f != "" {
					f = "." + f
				}
				return fail(line, name, field+f, format, args...)
			})
		default:
			if why, ok := refused[k.Value]; ok {
				return fail(k.Line, name, field, "not supported: %s", why)
			}
			return fail(k.Line, name, field, "unknown field")
		}
		if err != nil {
			return err
		}
	}
	if m.noProxy != "" && m.proxy == nil {
		return fail(sec.Line, name, m.Prober+".no_proxy", "given without proxy_url (blackbox: \"if no_proxy is configured, proxy_url must also be configured\")")
	}
	if m.oauth != nil && (authGiven || hasAuthorization(in.Headers[headers0:])) {
		return fail(sec.Line, name, m.Prober+".oauth2", "with basic_auth, bearer_token or an Authorization header: blackbox takes at most one of basic_auth, oauth2, bearer_token and bearer_token_file")
	}
	m.prefer = map[string]int{"ip4": 4, "ip6": 6}[preferred]
	if !fallback {
		// Only that family: -4 or -6.
		in.IPv4, in.IPv6, m.prefer = preferred == "ip4", preferred == "ip6", 0
	}
	if acceptEncoding != "" {
		// blackbox asks for the encoding and decodes the answer with
		// it; a header of the module's own must agree.
		for _, h := range in.Headers {
			if n, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(strings.TrimSpace(n), "Accept-Encoding") && !strings.EqualFold(strings.TrimSpace(v), acceptEncoding) {
				return fail(sec.Line, name, m.Prober+".compression", "%q, but headers: has Accept-Encoding: %s", acceptEncoding, strings.TrimSpace(v))
			}
		}
		in.Headers = append(in.Headers, "Accept-Encoding: "+acceptEncoding)
		m.answer.Encoding = acceptEncoding
	}
	return nil
}

// hasAuthorization says one of the header lines is an Authorization.
func hasAuthorization(headers []string) bool {
	for _, h := range headers {
		if n, _, ok := strings.Cut(h, ":"); ok && strings.EqualFold(strings.TrimSpace(n), "Authorization") {
			return true
		}
	}
	return false
}

// noCompression asks for no compression (curl's -H 'Accept-Encoding:'
// turns Go's own gzip off) unless a header asks for one: blackbox's
// client sends no Accept-Encoding without compression:, so a server
// answers both alike (its Content-Length, its body).
func noCompression(headers []string) []string {
	for _, h := range headers {
		if n, _, ok := strings.Cut(h, ":"); ok && strings.EqualFold(strings.TrimSpace(n), "Accept-Encoding") {
			return headers
		}
	}
	return append(headers, "Accept-Encoding:")
}

// blackboxSize reads body_size_limit as blackbox does (its units are
// binary: 1KB and 1KiB are both 1024 bytes; 0 or less is no limit).
func blackboxSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return n, nil
	}
	mult := int64(1)
	up := strings.ToUpper(t)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(up, u.suffix) {
			up, mult = strings.TrimSuffix(up, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(up), 10, 64)
	if err != nil {
		return 0, errors.New("want a size (1048576, 1MB, 512KiB)")
	}
	if n > target.MaxSize/mult {
		return 0, fmt.Errorf("too large: at most %s", target.FormatSize(target.MaxSize))
	}
	return n * mult, nil
}

// inDir is a file a modules file names: relative to the modules file's
// directory, as blackbox resolves it.
func inDir(dir, f string) string {
	if f == "" || filepath.IsAbs(f) {
		return f
	}
	return filepath.Join(dir, f)
}

// tlsVersions are tls_config's min_version and max_version values.
var tlsVersions = map[string]uint16{"TLS10": tls.VersionTLS10, "TLS11": tls.VersionTLS11, "TLS12": tls.VersionTLS12, "TLS13": tls.VersionTLS13}

// tlsConfig maps blackbox's tls_config.
func (m *Module) tlsConfig(v *yaml.Node, in *target.Input, dir string, fail func(field string, line int, format string, args ...any) error) error {
	if v.Kind != yaml.MappingNode {
		return fail("", v.Line, "want a mapping")
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], deref(v.Content[i+1])
		switch k.Value {
		case "insecure_skip_verify":
			b, err := strconv.ParseBool(val.Value)
			if err != nil {
				return fail(k.Value, val.Line, "%q: want true or false", val.Value)
			}
			in.Insecure = b
		case "ca_file":
			in.CACert = inDir(dir, val.Value)
		case "cert_file":
			in.Cert = inDir(dir, val.Value)
		case "key_file":
			in.Key = inDir(dir, val.Value)
		case "server_name":
			in.ServerName = val.Value
		case "min_version", "max_version":
			ver, ok := tlsVersions[strings.ToUpper(val.Value)]
			if !ok {
				return fail(k.Value, val.Line, "%q: want TLS10, TLS11, TLS12 or TLS13", val.Value)
			}
			if k.Value == "min_version" {
				m.minTLS = ver
			} else {
				m.maxTLS = ver
			}
			if m.minTLS != 0 && m.maxTLS != 0 && m.minTLS > m.maxTLS {
				return fail(k.Value, val.Line, "%q: min_version is above max_version", val.Value)
			}
		default:
			if why, ok := refused[k.Value]; ok {
				return fail(k.Value, k.Line, "not supported: %s", why)
			}
			return fail(k.Value, k.Line, "unknown field (want insecure_skip_verify, ca_file, cert_file, key_file, server_name, min_version or max_version)")
		}
	}
	return nil
}

// headerMatches maps fail_if_header_not_matches and fail_if_header_matches:
// [{header, regexp, allow_missing}] onto the probe's --expect-header and
// --expect-header-not. As blackbox, a missing header fails either unless
// allow_missing is true.
func (m *Module) headerMatches(v *yaml.Node, in *target.Input, negative bool, bad func(string, ...any) error) error {
	if v.Kind != yaml.SequenceNode {
		return bad("want a list of {header, regexp}")
	}
	for _, e := range v.Content {
		e = deref(e)
		if e.Kind != yaml.MappingNode {
			return bad("want a list of {header, regexp}")
		}
		var h, re string
		allowMissing := false
		for j := 0; j+1 < len(e.Content); j += 2 {
			switch k, val := e.Content[j].Value, deref(e.Content[j+1]).Value; k {
			case "header":
				h = val
			case "regexp":
				re = val
			case "allow_missing":
				b, err := strconv.ParseBool(val)
				if err != nil {
					return bad("allow_missing: %q: want true or false", val)
				}
				allowMissing = b
			default:
				return bad("%s: unknown field (want header, regexp, allow_missing)", k)
			}
		}
		if h == "" || re == "" {
			return bad("want header: and regexp:")
		}
		if _, err := regexp.Compile(re); err != nil {
			return bad("regexp %q: %v", re, err)
		}
		switch {
		case negative:
			in.ExpectHeaderNot = append(in.ExpectHeaderNot, h+"="+re)
			if !allowMissing {
				// The header must be there (any value).
				in.ExpectHeader = append(in.ExpectHeader, h+"=")
			}
		case allowMissing:
			m.headerOptional = append(m.headerOptional, len(in.ExpectHeader))
			in.ExpectHeader = append(in.ExpectHeader, h+"="+re)
		default:
			in.ExpectHeader = append(in.ExpectHeader, h+"="+re)
		}
	}
	return nil
}

// basicAuth maps basic_auth: {username, password, password_file}.
func basicAuth(v *yaml.Node, in *target.Input, dir string, bad func(string, ...any) error) error {
	if v.Kind != yaml.MappingNode {
		return bad("want username: and password:")
	}
	var user, pass string
	for j := 0; j+1 < len(v.Content); j += 2 {
		switch k, val := v.Content[j].Value, deref(v.Content[j+1]).Value; k {
		case "username":
			user = val
		case "password":
			pass = val
		case "password_file":
			b, err := inputfile.Read(inDir(dir, val), inputfile.Headers)
			if err != nil {
				return bad("password_file %q: %v", val, inputfile.Cause(err))
			}
			pass = strings.TrimSpace(string(b))
		default:
			return bad("%s: unknown field (want username, password, password_file)", k)
		}
	}
	in.User = user + ":" + pass
	if user == "" && pass == "" {
		in.User = ""
	}
	return nil
}

// deref follows an alias.
var deref = yamlsafe.Deref

// url is the URL module m probes for a /probe target: blackbox's http
// prober takes a URL (the default scheme's when none is given), tcp and
// grpc host:port, over TLS with tls: true. The prober's name is the row's
// (the scheme table's http, tcp and grpc).
func (m *Module) url(tgt string) (string, error) {
	if m.dnsQuery != "" {
		return m.dnsURL(tgt)
	}
	if m.icmpQuery != "" {
		return m.icmpURL(tgt)
	}
	if m.Prober == "http" {
		if !strings.Contains(tgt, "://") {
			return probe.DefaultScheme().URL(tgt), nil
		}
		return tgt, nil
	}
	s, ok := probe.LookupScheme(m.Prober)
	if ok && m.TLS {
		s, ok = s.OverTLS()
	}
	if !ok {
		return "", fmt.Errorf("prober %q has no scheme", m.Prober)
	}
	if m.Prober == "grpc" && !strings.Contains(tgt, "/") {
		// blackbox's grpc prober: a target without a port is dialled
		// on 80, or 443 with tls: true.
		host := strings.TrimSuffix(strings.TrimPrefix(tgt, "["), "]")
		if _, err := netip.ParseAddr(host); err == nil || !strings.Contains(tgt, ":") {
			port := "80"
			if m.TLS {
				port = "443"
			}
			tgt = net.JoinHostPort(host, port)
		}
	}
	return s.URL(tgt), nil
}

// Options are the probe's options for a /probe target with a budget
// (Budget; 0: the module's windows as built): the module's windows are
// blackbox's one timeout, the budget, all three (connect, read and the
// whole probe). A module without timeout: gets the scrape's budget, not
// the flags' windows.
func (m *Module) Options(tgt string, budget time.Duration) (*probe.Options, error) {
	raw, err := m.url(tgt)
	if err != nil {
		return nil, err
	}
	if wf := m.wrongFamily(raw); wf != nil {
		wf.answer = m.notProbed()
		return nil, wf
	}
	// A redactor of the request's own: the module's secrets and the
	// target's, never another request's. The error names the target as
	// a redactor of no secrets shows it (userinfo and secret parameters
	// masked where they stand): it says nothing of what any secret is.
	blank := m.tmpl.Redactor().Blank()
	o, err := m.tmpl.ForURLAlone(raw, "target "+strconv.Quote(blank.RawURL(raw)))
	if err != nil {
		return nil, errors.New(blank.String(err.Error()))
	}
	if m.body != nil {
		o.Body, o.BodyFile, o.BodySize = m.body, "", 0
	}
	o.Follow, o.HopAllowed = 0, nil
	if m.follow && m.hopAllowed != nil && m.Prober == "http" {
		o.Follow, o.HopAllowed = MaxRedirects, m.hopAllowed
	}
	o.Prefer = m.prefer
	if m.proxy != nil {
		// The module's proxy for every hop, as blackbox's client.
		o.Proxy = proxyenv.Fixed(m.proxy, m.noProxy)
	}
	o.Dialogue = m.dialogue
	o.Expect.Answer = m.answer
	if m.headerRE != nil {
		o.Expect.HeaderRE = m.headerRE
	}
	if m.minTLS != 0 || m.maxTLS != 0 {
		tc := o.TLSConfig.Clone()
		if tc == nil {
			tc = &tls.Config{}
		}
		tc.MinVersion, tc.MaxVersion = m.minTLS, m.maxTLS
		o.TLSConfig = tc
	}
	if budget > 0 {
		o.ConnectTimeout, o.ReadTimeout, o.MaxTime = budget, budget, budget
	}
	return o, nil
}

// WrongFamily is a target that is an address of the family a module
// without ip_protocol_fallback does not use: blackbox finds no address of
// its family for it and answers probe_success 0, not a refusal.
type WrongFamily struct {
	URL    *url.URL
	family string
	// answer is the prober's answer to no probe (nil: none).
	answer classify.Answer
}

func (e *WrongFamily) Error() string {
	return e.URL.Hostname() + " has no " + e.family + " address (ip_protocol_fallback: false)"
}

// Result is the probe's answer: no address of the family.
func (e *WrongFamily) Result() probe.Result {
	return probe.Result{Outcome: classify.DNS, Reason: classify.DNSNoAddress, Error: e.Error(), Answer: e.answer}
}

// wrongFamily says raw's host is an address the module's one family
// excludes (nil otherwise).
func (m *Module) wrongFamily(raw string) *WrongFamily {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]"))
	if err != nil {
		return nil
	}
	switch n := m.tmpl.Options().Network; {
	case n == "tcp4" && !ip.Unmap().Is4():
		return &WrongFamily{URL: u, family: "IPv4"}
	case n == "tcp6" && ip.Is4():
		return &WrongFamily{URL: u, family: "IPv6"}
	}
	return nil
}

// secretFields are the module fields /config masks.
var secretFields = map[string]bool{"password": true, "bearer_token": true, "client_secret": true}

// shownModule is a module's YAML as /config shows it: as the file has
// it, secrets (password:, bearer_token:, the values of the headers the
// module's redactor keeps secret: Authorization, Cookie, … and every
// --secret-header) as <secret>.
func shownModule(v *yaml.Node, secretHeader func(string) bool) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(copyNode(v, false, secretHeader)); err != nil {
		return ""
	}
	enc.Close()
	return b.String()
}

func copyNode(n *yaml.Node, mask bool, secretHeader func(string) bool) *yaml.Node {
	n = deref(n)
	c := *n
	c.Anchor, c.Alias = "", nil
	if mask && n.Kind == yaml.ScalarNode {
		c.Value, c.Tag, c.Style = "<secret>", "!!str", 0
		return &c
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		m := mask
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			k := strings.ToLower(n.Content[i-1].Value)
			m = m || secretFields[k] || secretHeader(k)
			if k == "proxy_url" && !m && deref(e).Kind == yaml.ScalarNode {
				// The proxy's password masked where it stands.
				u := *deref(e)
				u.Anchor, u.Alias, u.Value = "", nil, redact.NewRedactor(nil, nil).RawURL(u.Value)
				c.Content[i] = &u
				continue
			}
		}
		c.Content[i] = copyNode(e, m, secretHeader)
	}
	return &c
}
