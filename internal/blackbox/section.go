package blackbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/blackbox/oauth2"
	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/proxyenv"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
	"github.com/healthctl/healthctl/internal/target"
)

// A module's http:, tcp: and grpc: sections: each field onto the probe's
// input, with blackbox's meaning.

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
		f := newField(val, fail, name, field)
		bad, str, list, boolean := f.bad, f.str, f.list, f.boolean
		// A field of another prober's: the table's rows say whose.
		only := func(a scheme.Applies) error { return bad("only for prober %s", scheme.ProbersWith(a)) }
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
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
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
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
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
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
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
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
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
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
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
			if !m.speaks(scheme.AppliesDialogue) {
				return only(scheme.AppliesDialogue)
			}
			m.dialogue, err = queryResponse(val, bad)
		case "method":
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
			}
			in.Method, err = str()
		case "headers":
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
			}
			if val.Kind != yaml.MappingNode {
				return bad("want a mapping of header names to values")
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				in.Headers = append(in.Headers, val.Content[j].Value+": "+deref(val.Content[j+1]).Value)
			}
		case "body":
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
			}
			// blackbox sends the text as it is: "@FILE" is the text
			// "@FILE", never a file read (the options' Body, set per
			// request, not --data's curl syntax).
			var b string
			if b, err = str(); err == nil {
				m.body = []byte(b)
			}
		case "fail_if_body_not_matches_regexp", "fail_if_body_matches_regexp":
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
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
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
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
			if m.speaks(scheme.AppliesRequest) {
				return bad("unknown field for prober %s (%s target uses TLS)", m.Prober, strings.TrimSuffix(scheme.SchemeList(true, func(s scheme.Scheme) bool { return s.Name == m.row.Secure }), " URL"))
			}
			m.TLS, err = boolean()
		case "service":
			if !m.speaks(scheme.AppliesGRPCService) {
				return only(scheme.AppliesGRPCService)
			}
			in.GRPCService, err = str()
		case "proxy_url":
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
			}
			var p string
			if p, err = str(); err == nil {
				if cerr := proxyenv.Check(p); cerr != nil {
					return bad("%q: %v", redact.NewRedactor(nil, nil).RawURL(p), cerr)
				}
				m.proxy, _ = proxyenv.Parse(p)
			}
		case "no_proxy":
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
			}
			m.noProxy, err = str()
		case "oauth2":
			if !m.speaks(scheme.AppliesRequest) {
				return only(scheme.AppliesRequest)
			}
			m.oauth, err = oauth2.Parse(val, func(f string) string { return inDir(dir, f) }, func(f string, line int, format string, args ...any) error {
				if f != "" {
					f = "." + f
				}
				return fail(line, name, field+f, format, args...)
			})
		default:
			if why, ok := refused()[k.Value]; ok {
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
