package watch

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/target"
)

// keyOfFlag maps a probe flag name to its targets-file key.
func keyOfFlag(flag string) string {
	if flag == "header" {
		return "headers"
	}
	return strings.ReplaceAll(flag, "-", "_")
}

// Input applies the target's probe keys (defaults and its own) over base,
// the command's probe flags, and returns the input to build with
// target.Input.Build. Its Source names file, line, target and key for every
// value that came from the file (`targets.yaml:12: target "api":
// expect_status`), and defers to base's Source for the rest. Durations and
// sizes are read here; everything else is validated by Build, as flags are.
func (t *FileTarget) Input(base target.Input, file string) (target.Input, error) {
	in := base
	baseSource := base.Source
	in.Source = func(flag string) string {
		if _, ok := t.Probe[keyOfFlag(flag)]; ok {
			return Source(file, t, keyOfFlag(flag))
		}
		if baseSource != nil {
			return baseSource(flag)
		}
		return ""
	}
	for key, v := range t.Probe {
		bad := func(format string, args ...any) error {
			return &target.Error{Source: fmt.Sprintf("%s %q", Source(file, t, key), v.Str()), Err: fmt.Errorf(format, args...)}
		}
		dur := func(dst *time.Duration) error {
			d, err := time.ParseDuration(v.Str())
			if err != nil {
				return bad("want a duration like 2s or 500ms")
			}
			*dst = d
			return nil
		}
		var err error
		switch key {
		case "headers":
			in.Headers = v.Strings
		case "method":
			in.Method = v.Str()
		case "data":
			in.Data = v.Str()
		case "user":
			in.User = v.Str()
		case "user_agent":
			in.UserAgent = v.Str()
		case "ipv4":
			in.IPv4 = v.Str() == "true"
		case "ipv6":
			in.IPv6 = v.Str() == "true"
		case "insecure":
			in.Insecure = v.Str() == "true"
		case "cacert":
			in.CACert = v.Str()
		case "cert":
			in.Cert = v.Str()
		case "key":
			in.Key = v.Str()
		case "servername":
			in.ServerName = v.Str()
		case "resolve":
			in.Resolve = v.Strings
		case "dns_server":
			in.DNSServer = v.Str()
		case "follow":
			n, perr := strconv.Atoi(v.Str())
			if perr != nil {
				err = bad("want an integer")
			}
			in.Follow = n
		case "noproxy":
			in.NoProxy = v.Str()
		case "connect_timeout":
			err = dur(&in.ConnectTimeout)
		case "read_timeout":
			err = dur(&in.ReadTimeout)
		case "max_time":
			err = dur(&in.MaxTime)
		case "max_body":
			n, serr := target.ParseSize(v.Str())
			if serr != nil {
				err = bad("%v", serr)
			}
			in.MaxBody = n
		case "expect_status":
			in.ExpectStatus = v.Str()
		case "expect_body":
			in.ExpectBody = v.Strings
		case "expect_body_regex":
			in.ExpectBodyRegex = v.Strings
		case "expect_json":
			in.ExpectJSON = v.Strings
		case "expect_header":
			in.ExpectHeader = v.Strings
		case "secret_header":
			in.SecretHeader = v.Strings
		case "secret_param":
			in.SecretParam = v.Strings
		default:
			err = bad("unknown key")
		}
		if err != nil {
			return in, err
		}
	}
	return in, nil
}

// URLSource names the url: line of the target, for URL errors.
func (t *FileTarget) URLSource(file string) string {
	return fmt.Sprintf("%s:%d: target %q: url", file, t.URLLine, t.Name)
}
