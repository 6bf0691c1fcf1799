package blackbox

import (
	"crypto/tls"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/inputfile"
	"github.com/healthctl/healthctl/internal/target"
	"github.com/healthctl/healthctl/internal/yamlsafe"
)

// The sections' nested fields: tls_config, the header conditions and
// basic_auth.

// tlsVersion reads tls_config's min_version and max_version values.
func tlsVersion(s string) (uint16, bool) {
	switch s {
	case "TLS10":
		return tls.VersionTLS10, true
	case "TLS11":
		return tls.VersionTLS11, true
	case "TLS12":
		return tls.VersionTLS12, true
	case "TLS13":
		return tls.VersionTLS13, true
	}
	return 0, false
}

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
			ver, ok := tlsVersion(strings.ToUpper(val.Value))
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
			if why, ok := refused()[k.Value]; ok {
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
