// Package dnswire is the DNS side of a dns:// probe, pure: the query a URL
// asks (name, type, class, recursion desired, the rcodes that pass, the
// record validators: blackbox_exporter's dns prober), the query's bytes,
// the reply read into its rcode and its records written as blackbox
// writes them (miekg/dns's presentation format: "name.\tTTL\tIN\tA\t…"),
// and the validators run over them. The probe carries the bytes (UDP or
// TCP).
package dnswire

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// Query is what a dns:// URL asks: one question to the server the URL
// names.
type Query struct {
	// Name is the query name, fully qualified ("app.invalid.").
	Name string
	// Type and Class are the question's (default A and IN).
	Type  dnsmessage.Type
	Class dnsmessage.Class
	// TCP: transport=tcp (default UDP, as blackbox and dig).
	TCP bool
	// Recursion is the RD flag (default set, as blackbox).
	Recursion bool
	// Rcodes are the rcodes that pass (default NOERROR alone).
	Rcodes []dnsmessage.RCode
	// Validators are the record validators of the answer, authority and
	// additional sections, in that order.
	Validators [3]Validator
}

// The sections a validator applies to, as the URL's parameters name them.
var Sections = [3]string{"answer", "authority", "additional"}

// Form is a dns:// URL's shape, for errors.
const Form = "dns://SERVER[:PORT]/NAME[?type=A&transport=udp|tcp&rcode=NOERROR&…]"

// Parameters are the parameters a dns:// URL takes, besides the
// validators' (SECTION_VALIDATOR).
var Parameters = []string{"type", "class", "transport", "recursion_desired", "rcode"}

// CheckURL holds a dns:// URL to its form (the scheme table's row
// applies it): the server as host[:port], the query name as the path, the
// parameters ParseURL reads.
func CheckURL(u *url.URL) error {
	_, err := ParseURL(u)
	return err
}

// ParseURL reads a dns:// URL's query: the path is the query name, the
// parameters the rest. Every error names the part that is wrong.
func ParseURL(u *url.URL) (Query, error) {
	q := Query{Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, Recursion: true}
	switch {
	case u.User != nil:
		return q, fmt.Errorf("%s URL has credentials, which DNS cannot send (want %s)", u.Scheme, Form)
	case u.Fragment != "":
		return q, fmt.Errorf("%s URL has a fragment (want %s)", u.Scheme, Form)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || strings.HasPrefix(name, "/") {
		return q, fmt.Errorf("%s URL has no query name (want %s; the root is /.)", u.Scheme, Form)
	}
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	if _, err := dnsmessage.NewName(name); err != nil || strings.Contains(name, "..") || strings.HasPrefix(name, ".") && name != "." {
		return q, fmt.Errorf("%s URL's query name %q is not a domain name", u.Scheme, strings.TrimPrefix(u.Path, "/"))
	}
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if len(l) > 63 {
			return q, fmt.Errorf("%s URL's query name has a label longer than 63 bytes", u.Scheme)
		}
	}
	q.Name = name
	vals, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return q, fmt.Errorf("%s URL's query: %v", u.Scheme, err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vs := vals[k]
		bad := func(v, want string) error {
			return fmt.Errorf("%s URL's %s=%q: want %s", u.Scheme, k, v, want)
		}
		one := func() (string, error) {
			if len(vs) > 1 {
				return "", fmt.Errorf("%s URL has %s twice", u.Scheme, k)
			}
			return vs[0], nil
		}
		switch k {
		case "type":
			v, err := one()
			if err != nil {
				return q, err
			}
			t, ok := ParseType(v)
			if !ok {
				return q, bad(v, "a record type (A, AAAA, CNAME, MX, NS, PTR, SOA, SRV, TXT, ANY, TYPE65…)")
			}
			q.Type = t
		case "class":
			v, err := one()
			if err != nil {
				return q, err
			}
			c, ok := ParseClass(v)
			if !ok {
				return q, bad(v, "IN, CH, HS, NONE, ANY or CLASSn")
			}
			q.Class = c
		case "transport":
			v, err := one()
			if err != nil {
				return q, err
			}
			switch strings.ToLower(v) {
			case "udp":
			case "tcp":
				q.TCP = true
			default:
				return q, bad(v, "udp or tcp")
			}
		case "recursion_desired":
			v, err := one()
			if err != nil {
				return q, err
			}
			b, err := strconv.ParseBool(v)
			if err != nil {
				return q, bad(v, "true or false")
			}
			q.Recursion = b
		case "rcode":
			for _, v := range vs {
				for r := range strings.SplitSeq(v, ",") {
					rc, ok := ParseRcode(strings.TrimSpace(r))
					if !ok {
						return q, bad(r, "rcode names (NOERROR, NXDOMAIN, SERVFAIL, REFUSED…)")
					}
					q.Rcodes = append(q.Rcodes, rc)
				}
			}
		default:
			sec, name, ok := strings.Cut(k, "_")
			si, vi := slices.Index(Sections[:], sec), slices.Index(validatorNames[:], name)
			if !ok || si < 0 || vi < 0 {
				return q, fmt.Errorf("%s URL has an unknown parameter %q (want %s, or SECTION_VALIDATOR: SECTION answer, authority or additional, VALIDATOR %s)",
					u.Scheme, k, strings.Join(Parameters, ", "), strings.Join(validatorNames[:], ", "))
			}
			l := q.Validators[si].list(vi)
			for _, v := range vs {
				re, err := regexp.Compile(v)
				if err != nil {
					return q, fmt.Errorf("%s URL's %s=%q: %v", u.Scheme, k, v, err)
				}
				*l = append(*l, re)
			}
		}
	}
	if len(q.Rcodes) == 0 {
		q.Rcodes = []dnsmessage.RCode{dnsmessage.RCodeSuccess}
	}
	return q, nil
}
