package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture"
)

// hostile NAME [-status N] [-header 'K: V']... [-body S] [-cn CN]
//
//	a server that sends what a hostile one would: every value is read with
//	Go's escapes (\x1b, \n, \x7f, \u009b…), so a script can write control
//	characters; headers are sent as given (no check, no canonical form).
//	-cn serves HTTPS with a self-signed certificate whose subject CN,
//	organisation and DNS SAN are CN. Sets $NAME_URL, $NAME_HOSTPORT,
//	$NAME_PORT.
func init() { extraCmds["hostile"] = cmdHostile }

// unescape reads s with Go's string escapes.
func unescape(ts *testscript.TestScript, s string) string {
	v, err := strconv.Unquote(`"` + strings.ReplaceAll(s, `"`, `\"`) + `"`)
	if err != nil {
		ts.Fatalf("hostile: %q: %v", s, err)
	}
	return v
}

func cmdHostile(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "hostile")
	const usage = "usage: hostile NAME [-status N] [-header 'K: V']... [-body S] [-cn CN]"
	if len(args) < 1 || strings.HasPrefix(args[0], "-") {
		ts.Fatalf(usage)
	}
	var (
		status   int
		body, cn string
		headers  []string
	)
	fs := flag.NewFlagSet("hostile", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	fs.IntVar(&status, "status", 200, "")
	fs.StringVar(&body, "body", `ok\n`, "")
	fs.StringVar(&cn, "cn", "", "")
	fs.Func("header", "", func(s string) error { headers = append(headers, s); return nil })
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		ts.Fatalf("hostile: %v\n%s", err, usage)
	}
	body = unescape(ts, body)
	h := http.Header{}
	for _, kv := range headers {
		k, v, ok := strings.Cut(unescape(ts, kv), ":")
		if !ok {
			ts.Fatalf("hostile: header %q: want 'Name: value'", kv)
		}
		h[strings.TrimSpace(k)] = append(h[strings.TrimSpace(k)], strings.TrimSpace(v))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	scheme := "http"
	if cn != "" {
		cert := hostileCert(ts, unescape(ts, cn))
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}})
		scheme = "https"
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range h {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		w.Write([]byte(body))
	})}
	go srv.Serve(l)
	ts.Defer(func() { srv.Close() })
	addr := l.Addr().(*net.TCPAddr)
	setAddrVars(ts, args[0], scheme+"://"+addr.String(), addr.String(), addr.Port)
}

// hostileCert makes a self-signed certificate whose names are cn.
func hostileCert(ts *testscript.TestScript, cn string) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ts.Check(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{cn}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if isASCII(cn) {
		// A SAN is IA5 (ASCII): a CN with C1 or bidi characters is in
		// the subject and issuer only.
		tmpl.DNSNames = []string{cn}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	ts.Check(err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// httpget [-timeout D] URL FILE REGEXP
//
//	GETs URL until the body matches REGEXP (default 10s), then writes the
//	body to FILE: reads /metrics from a background watch without sleeping.
func init() { extraCmds["httpget"] = cmdHTTPGet }

func cmdHTTPGet(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "httpget")
	timeout := 10 * time.Second
	if len(args) > 1 && args[0] == "-timeout" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		timeout, args = d, args[2:]
	}
	if len(args) != 3 {
		ts.Fatalf("usage: httpget [-timeout D] URL FILE REGEXP")
	}
	re, err := regexp.Compile(args[2])
	ts.Check(err)
	var body []byte
	ok := fixture.WaitFor(timeout, func() bool {
		resp, err := http.Get(args[0])
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		return re.Match(body)
	})
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), body, 0o644))
	if !ok {
		ts.Fatalf("httpget %s: no body matching %q within %v (last %d bytes)", args[0], args[2], timeout, len(body))
	}
}
