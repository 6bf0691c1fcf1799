package main

import (
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/healthctl/healthctl/internal/fixture/pkifix"
)

// Script commands for the TLS seam scripts (probe_tls_clientcert_*):
//
//	clientpki
//	    writes the script CA's server certificate for 127.0.0.1 and client
//	    certificates wrong in one way each, for a real TLS server (openssl
//	    s_server) to be started with: sets $PKI_CA, $PKI_SERVER_CERT,
//	    $PKI_SERVER_KEY, $PKI_CLIENT_CERT / $PKI_CLIENT_KEY (good),
//	    $PKI_EXPIRED_CERT / $PKI_EXPIRED_KEY (issued by the CA, expired) and
//	    $PKI_SELF_CERT / $PKI_SELF_KEY (self-signed: unknown to the server).
func init() {
	extraCmds["clientpki"] = cmdClientPKI
}

// cmdClientPKI implements clientpki.
func cmdClientPKI(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "clientpki")
	if len(args) != 0 {
		ts.Fatalf("usage: clientpki")
	}
	p := state(ts).PKI(ts)
	good, err := p.ServerCertificate(pkifix.CertGood)
	ts.Check(err)
	certFile, keyFile, err := p.WriteServerFiles("seam-server", good)
	ts.Check(err)
	ts.Setenv("PKI_CA", p.CAFile)
	ts.Setenv("PKI_SERVER_CERT", certFile)
	ts.Setenv("PKI_SERVER_KEY", keyFile)
	ts.Setenv("PKI_CLIENT_CERT", p.ClientCertFile)
	ts.Setenv("PKI_CLIENT_KEY", p.ClientKeyFile)
	for _, k := range []struct {
		kind pkifix.ClientKind
		name string
	}{{pkifix.ClientExpired, "EXPIRED"}, {pkifix.ClientSelfSigned, "SELF"}} {
		c, key, err := p.WriteClientFiles("client-"+string(k.kind), k.kind)
		ts.Check(err)
		ts.Setenv("PKI_"+k.name+"_CERT", c)
		ts.Setenv("PKI_"+k.name+"_KEY", key)
	}
}
