package listen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/probe"
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
	tmpl *target.Template
}

// ModulesError is a modules file that cannot be used: the file (and line,
// module and field) and what is wrong. It is the user's input (exit 2).
type ModulesError struct {
	Where string
	Err   error
}

func (e *ModulesError) Error() string { return e.Where + ": " + e.Err.Error() }

// DefaultModules are the modules without a file: http_2xx over the
// flags' options (redirects not followed: see noFollow).
func DefaultModules(base target.Input, getenv func(string) string) (map[string]*Module, error) {
	in := base
	in.Follow = 0
	tmpl, err := in.Build(getenv)
	if err != nil {
		return nil, err
	}
	return map[string]*Module{DefaultModule: {Name: DefaultModule, Prober: "http", tmpl: tmpl}}, nil
}

// noFollow is why /probe never follows a redirect (blackbox's http prober
// does by default): the next hop's host is the server's choice, and
// following it would let any allowed target send the listener to an
// address outside --probe-allow. A 3xx is reported as it is (redirect),
// as healthctl's probe does by default.
const noFollow = "/probe does not follow redirects (the next hop could leave --probe-allow): list the 3xx in valid_status_codes, or probe the final URL"

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
	for i := 0; i+1 < len(mods.Content); i += 2 {
		k, v := mods.Content[i], deref(mods.Content[i+1])
		name := k.Value
		if _, dup := out[name]; dup {
			return nil, fail(k.Line, name, "", "given twice")
		}
		m, err := parseModule(name, v, base, getenv, fail)
		if err != nil {
			return nil, err
		}
		out[name] = m
	}
	return out, nil
}

// failFunc words a modules file error.
type failFunc func(line int, module, field string, format string, args ...any) error

// refused are blackbox fields healthctl knows and does not map, with why.
var refused = map[string]string{
	"fail_if_ssl":                   "healthctl has no condition on whether TLS was used",
	"fail_if_not_ssl":               "healthctl has no condition on whether TLS was used: probe an https:// target",
	"fail_if_body_matches_regexp":   "healthctl's body conditions are positive (--expect-body-regex)",
	"fail_if_header_matches":        "healthctl's header conditions are positive (--expect-header)",
	"valid_http_versions":           "healthctl has no condition on the HTTP version",
	"body_size_limit":               "healthctl reads the body up to --max-body and does not fail past it",
	"compression":                   "healthctl asks for no compression",
	"proxy_url":                     "healthctl takes proxies from HTTP(S)_PROXY/NO_PROXY",
	"bearer_token":                  "give the header (headers: Authorization) instead",
	"bearer_token_file":             "give the header (headers: Authorization) instead",
	"oauth2":                        "healthctl has no OAuth2 client",
	"http_client_config":            "healthctl has no HTTP client configuration block",
	"query_response":                "healthctl's tcp prober only connects (and handshakes for tls)",
	"source_ip_address":             "healthctl does not bind a source address",
	"skip_resolve_phase_with_proxy": "healthctl takes proxies from HTTP(S)_PROXY/NO_PROXY",
	"min_version":                   "healthctl uses Go's TLS versions",
	"max_version":                   "healthctl uses Go's TLS versions",
	"password_file":                 "give password: (read at start-up) instead",
	"health_check":                  "use grpc: service:",
	"icmp":                          "healthctl has no icmp prober",
	"dns":                           "healthctl has no dns prober",
	"enable_http2":                  "healthctl negotiates HTTP/2 by ALPN (--http2-prior-knowledge for h2c)",
}

func parseModule(name string, v *yaml.Node, base target.Input, getenv func(string) string, fail failFunc) (*Module, error) {
	if v.Kind != yaml.MappingNode {
		return nil, fail(v.Line, name, "", "want a mapping (prober:, timeout:, http:/tcp:/grpc:)")
	}
	in := base
	// A module is blackbox's: its defaults, not the flags' conditions.
	in.ExpectStatus = "2xx"
	in.ExpectBody, in.ExpectBodyRegex, in.ExpectJSON, in.ExpectHeader = nil, nil, nil, nil
	in.Headers = slices.Clone(base.Headers)
	m := &Module{Name: name, Prober: "http"}
	var section *yaml.Node
	var sectionName string
	src := func(field string) string { return "module " + strconv.Quote(name) + ": " + field }
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], deref(v.Content[i+1])
		switch k.Value {
		case "prober":
			switch val.Value {
			case "http", "tcp", "grpc":
				m.Prober = val.Value
			case "icmp", "dns":
				return nil, fail(val.Line, name, "prober", "%s: healthctl has no %s prober (http, tcp and grpc are mapped)", val.Value, val.Value)
			default:
				return nil, fail(val.Line, name, "prober", "%q: want http, tcp or grpc", val.Value)
			}
		case "timeout":
			d, err := time.ParseDuration(val.Value)
			if err != nil || d <= 0 {
				return nil, fail(val.Line, name, "timeout", "%q: want a positive duration (5s)", val.Value)
			}
			m.Timeout = d
		case "http", "tcp", "grpc":
			section, sectionName = val, k.Value
			if section.Kind != yaml.MappingNode {
				return nil, fail(val.Line, name, k.Value, "want a mapping")
			}
		default:
			if why, ok := refused[k.Value]; ok {
				return nil, fail(k.Line, name, k.Value, "not supported: %s", why)
			}
			return nil, fail(k.Line, name, k.Value, "unknown field (want prober, timeout, http, tcp or grpc)")
		}
	}
	if section != nil && sectionName != m.Prober {
		return nil, fail(section.Line, name, sectionName, "given for prober %s: want %s:", m.Prober, m.Prober)
	}
	in.Follow = 0
	if section != nil {
		if err := m.section(section, &in, fail, src); err != nil {
			return nil, err
		}
	}
	if m.Timeout > 0 {
		in.ConnectTimeout, in.ReadTimeout, in.MaxTime = m.Timeout, m.Timeout, m.Timeout
	}
	in.Sources = make(map[string]string, len(target.Options))
	for _, o := range target.Options {
		in.Sources[o.Flag] = src(o.Flag)
	}
	tmpl, err := in.Build(getenv)
	if err != nil {
		return nil, fail(v.Line, name, "", "%v", err)
	}
	m.tmpl = tmpl
	return m, nil
}

// section maps the prober's own fields onto the input.
func (m *Module) section(sec *yaml.Node, in *target.Input, fail failFunc, src func(string) string) error {
	name := m.Name
	fallback := true
	var preferred string
	var preferredLine int
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
			preferredLine = val.Line
		case "ip_protocol_fallback":
			fallback, err = boolean()
		case "tls_config":
			err = tlsConfig(val, in, func(f string, line int, format string, args ...any) error {
				return fail(line, name, field+"."+f, format, args...)
			})
		case "valid_status_codes":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			var codes []string
			if codes, err = list(); err == nil {
				for _, c := range codes {
					if n, perr := strconv.Atoi(c); perr != nil || n < 100 || n > 999 {
						return bad("%q: want status codes (200, 204)", c)
					}
				}
				in.ExpectStatus = strings.Join(codes, ",")
			}
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
		case "fail_if_body_not_matches_regexp":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			var res []string
			if res, err = list(); err == nil {
				in.ExpectBodyRegex = append(in.ExpectBodyRegex, res...)
			}
		case "fail_if_header_not_matches":
			if m.Prober != "http" {
				return bad("only for prober http")
			}
			err = headerMatches(val, in, bad)
		case "no_follow_redirects":
			var b bool
			if b, err = boolean(); err == nil && !b {
				err = bad("false: %s", noFollow)
			}
		case "follow_redirects":
			var b bool
			if b, err = boolean(); err == nil && b {
				err = bad("true: %s", noFollow)
			}
		case "basic_auth":
			err = basicAuth(val, in, bad)
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
	if preferred != "" && !fallback {
		// Only that family: -4 or -6. With fallback (blackbox's default)
		// healthctl races both families (RFC 8305), which is a fallback.
		in.IPv4, in.IPv6 = preferred == "ip4", preferred == "ip6"
	}
	_ = preferredLine
	return nil
}

// tlsConfig maps blackbox's tls_config.
func tlsConfig(v *yaml.Node, in *target.Input, fail func(field string, line int, format string, args ...any) error) error {
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
			in.CACert = val.Value
		case "cert_file":
			in.Cert = val.Value
		case "key_file":
			in.Key = val.Value
		case "server_name":
			in.ServerName = val.Value
		default:
			if why, ok := refused[k.Value]; ok {
				return fail(k.Value, k.Line, "not supported: %s", why)
			}
			return fail(k.Value, k.Line, "unknown field (want insecure_skip_verify, ca_file, cert_file, key_file or server_name)")
		}
	}
	return nil
}

// headerMatches maps fail_if_header_not_matches: [{header, regexp}].
func headerMatches(v *yaml.Node, in *target.Input, bad func(string, ...any) error) error {
	if v.Kind != yaml.SequenceNode {
		return bad("want a list of {header, regexp}")
	}
	for _, e := range v.Content {
		e = deref(e)
		if e.Kind != yaml.MappingNode {
			return bad("want a list of {header, regexp}")
		}
		var h, re string
		for j := 0; j+1 < len(e.Content); j += 2 {
			switch k, val := e.Content[j].Value, deref(e.Content[j+1]).Value; k {
			case "header":
				h = val
			case "regexp":
				re = val
			case "allow_missing":
				if b, _ := strconv.ParseBool(val); b {
					return bad("allow_missing: true is not supported (healthctl's --expect-header wants the header)")
				}
			default:
				return bad("%s: unknown field (want header, regexp)", k)
			}
		}
		if h == "" || re == "" {
			return bad("want header: and regexp:")
		}
		in.ExpectHeader = append(in.ExpectHeader, h+"="+re)
	}
	return nil
}

// basicAuth maps basic_auth: {username, password}.
func basicAuth(v *yaml.Node, in *target.Input, bad func(string, ...any) error) error {
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
			return bad("password_file: %s", refused["password_file"])
		default:
			return bad("%s: unknown field (want username, password)", k)
		}
	}
	in.User = user + ":" + pass
	return nil
}

// deref follows an alias.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// url is the URL module m probes for a /probe target: blackbox's http
// prober takes a URL (the default scheme's when none is given), tcp and
// grpc host:port, over TLS with tls: true. The prober's name is the row's
// (the scheme table's http, tcp and grpc).
func (m *Module) url(tgt string) (string, error) {
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
	return s.URL(tgt), nil
}

// options are the probe's options for a /probe target with a budget
// (Budget; 0: the module's windows as built): the module's windows are
// blackbox's one timeout, the budget, all three (connect, read and the
// whole probe). A module without timeout: gets the scrape's budget, not
// the flags' windows.
func (m *Module) options(tgt string, budget time.Duration) (*probe.Options, error) {
	raw, err := m.url(tgt)
	if err != nil {
		return nil, err
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
	if budget > 0 {
		o.ConnectTimeout, o.ReadTimeout, o.MaxTime = budget, budget, budget
	}
	return o, nil
}
