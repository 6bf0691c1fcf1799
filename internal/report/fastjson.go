package report

import (
	"slices"
	"strconv"

	"github.com/healthctl/healthctl/internal/output"
)

// AppendFields appends the JSON object j is, without its closing brace, for
// a caller that adds fields of its own (watch's line embeds the result), as
// encoding/json writes it through output.JSONLine: the same fields in the
// same order, the same omissions, the timings' keys sorted. It covers the
// common shape only: strings of plain printable ASCII, and no redirect,
// proxy, dial attempts, Retry-After, TLS, gRPC or per-address results; for
// anything else ok is false and the caller uses encoding/json
// (TestAppendFieldsAsEncodingJSON compares the two).
func (j *ResultJSON) AppendFields(b []byte) (_ []byte, ok bool) {
	if j.Redirect != nil || len(j.Redirects) > 0 || j.Proxy != "" || len(j.DialAttempts) > 0 || len(j.DialErrors) > 0 ||
		j.RetryAfterS != nil || j.TLS != nil || j.GRPC != nil || j.Redis != nil || j.Postgres != nil || len(j.Addresses) > 0 {
		return b, false
	}
	b = append(b, `{"schema_version":`...)
	b = strconv.AppendInt(b, int64(j.SchemaVersion), 10)
	str := func(name, v string, omitEmpty bool) {
		if !ok || (omitEmpty && v == "") {
			return
		}
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b, ok = output.AppendPlainString(b, v)
	}
	num := func(name string, v int, omitEmpty bool) {
		if omitEmpty && v == 0 {
			return
		}
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, int64(v), 10)
	}
	ok = true
	str("target", j.Target, true)
	str("url", j.URL, false)
	str("outcome", string(j.Outcome), false)
	str("reason", string(j.Reason), false)
	num("exit_code", j.ExitCode, false)
	num("http_status", j.HTTPStatus, true)
	str("http_version", j.HTTPVersion, true)
	str("error", j.Error, true)
	str("address", j.Address, true)
	num("ip_family", j.IPFamily, true)
	if !ok {
		return b, false
	}
	b = append(b, `,"timings_ms":`...)
	if j.TimingsMS == nil {
		b = append(b, "null"...)
	} else {
		// The phases by name in encoding/json's order (sorted), looked up:
		// the map is ranged over (and its keys sorted) only when it holds
		// a name that is not a phase's.
		start, found := len(b), 0
		b = append(b, '{')
		for _, k := range phaseKeys {
			v, has := j.TimingsMS[k]
			if !has {
				continue
			}
			if found > 0 {
				b = append(b, ',')
			}
			found++
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, '"', ':')
			if b, ok = output.AppendFloat(b, v); !ok {
				return b, false
			}
		}
		if found < len(j.TimingsMS) {
			b = b[:start]
			keys := make([]string, 0, len(j.TimingsMS))
			for k := range j.TimingsMS {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b = append(b, '{')
			for i, k := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				if b, ok = output.AppendPlainString(b, k); !ok {
					return b, false
				}
				b = append(b, ':')
				if b, ok = output.AppendFloat(b, j.TimingsMS[k]); !ok {
					return b, false
				}
			}
		}
		b = append(b, '}')
	}
	b = append(b, `,"body_truncated":`...)
	b = strconv.AppendBool(b, j.BodyTruncated)
	if j.HTTPSDowngrade {
		b = append(b, `,"https_downgrade":true`...)
	}
	if d := j.Decision; d != nil {
		b = append(b, `,"decision":{"action":`...)
		if b, ok = output.AppendPlainString(b, string(d.Action)); !ok {
			return b, false
		}
		b = append(b, `,"why":`...)
		if b, ok = output.AppendPlainString(b, d.Why); !ok {
			return b, false
		}
		b = append(b, `,"cleared":`...)
		b = strconv.AppendBool(b, d.Cleared)
		b = append(b, '}')
	}
	return b, true
}

// phaseKeys are the probe's phases (probe.Phases) by name, sorted as
// encoding/json writes a map's keys (TestPhaseKeys holds them equal).
var phaseKeys = [...]string{"connect", "dns", "proxy", "tls", "total", "transfer", "ttfb"}
