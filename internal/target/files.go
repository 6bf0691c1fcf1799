package target

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"

	"github.com/healthctl/healthctl/internal/inputfile"
)

// pathErr drops the "open" verb Go puts before a file error.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (in *Input) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{InsecureSkipVerify: in.Insecure, ServerName: in.ServerName}
	if in.CACert != "" {
		pem, err := readInput(in.CACert, inputfile.CABundle)
		if err != nil {
			return nil, in.bad("cacert", ptr(in.CACert), "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, in.bad("cacert", ptr(in.CACert), "no PEM certificate in it")
		}
		tc.RootCAs = pool
	}
	switch {
	case in.Cert != "" && in.Key == "":
		return nil, in.bad("cert", nil, "no --key (--cert and --key go together)")
	case in.Cert == "" && in.Key != "":
		return nil, in.bad("key", nil, "no --cert (--cert and --key go together)")
	case in.Cert != "":
		// As tls.LoadX509KeyPair, through the same bounded reads.
		certPEM, err := readInput(in.Cert, inputfile.ClientCert)
		if err != nil {
			return nil, in.bad("cert", ptr(in.Cert), "%v", err)
		}
		keyPEM, err := readInput(in.Key, inputfile.ClientCert)
		if err != nil {
			return nil, in.bad("key", ptr(in.Key), "%v", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, &Error{Source: in.SourceOf("cert") + "/" + in.SourceOf("key"), Err: err}
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// maxDataBody is the most --data @- reads from standard input, as
// inputfile.Data bounds --data @file.
const maxDataBody = 64 << 20

// readInput reads an input file through inputfile (a regular file within
// its kind's cap: a FIFO or /dev/zero is refused at once), its error
// without the path, which the caller names with its flag.
func readInput(name string, k inputfile.Kind) ([]byte, error) {
	b, err := inputfile.Read(name, k)
	var ie *inputfile.Error
	if errors.As(err, &ie) {
		return nil, ie.Err
	}
	if err != nil {
		return nil, pathErr(err)
	}
	return b, nil
}

// statInput opens an input file streamed later (inputfile.Open: a regular
// file, readable, without blocking) and says its size, its error without
// the path, which the caller names with its flag.
func statInput(name string, k inputfile.Kind) (int64, error) {
	f, fi, err := inputfile.Open(name, k)
	var ie *inputfile.Error
	if errors.As(err, &ie) {
		return 0, ie.Err
	}
	if err != nil {
		return 0, pathErr(err)
	}
	f.Close()
	return fi.Size(), nil
}
