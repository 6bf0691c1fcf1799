package mysqlwire

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
)

func packet(seq byte, p []byte) []byte {
	return append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), seq}, p...)
}

func errPkt(code uint16, state, msg string) []byte {
	p := binary.LittleEndian.AppendUint16([]byte{0xff}, code)
	if state != "" {
		p = append(append(p, '#'), state...)
	}
	return append(p, msg...)
}

// greeting is MariaDB 10.11's HandshakeV10 (its "5.5.5-" prefix kept).
func greeting(plugin string) []byte {
	g := append([]byte{10}, "5.5.5-10.11.6-MariaDB\x00"...)
	g = binary.LittleEndian.AppendUint32(g, 42)
	g = append(append(g, "abcdefgh"...), 0)
	g = binary.LittleEndian.AppendUint16(g, 0xf7fe)
	g = append(g, 45, 2, 0)
	g = binary.LittleEndian.AppendUint16(g, 0x81ff)
	g = append(g, 21)
	g = append(g, make([]byte, 10)...)
	g = append(append(g, "ijklmnopqrst"...), 0)
	return append(append(g, plugin...), 0)
}

func TestReadGreeting(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string // version, "ERROR n", or "not: …"
	}{
		{"mariadb", packet(0, greeting(NativePassword)), "10.11.6-MariaDB " + NativePassword},
		{"too many", packet(0, errPkt(1040, "", "Too many connections")), "ERROR 1040 - Too many connections"},
		{"with a state", packet(0, errPkt(1053, "08S01", "Server shutdown in progress")), "ERROR 1053 08S01 Server shutdown in progress"},
		{"ssh", []byte("SSH-2.0-OpenSSH_9.6\r\n"), `not: "SSH-2.0-OpenSSH_9.6"`},
		{"http", []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), `not: "HTTP/1.1 400 Bad Request"`},
		{"other packet", packet(0, []byte{0x42, 1, 2}), "not: a packet of 3 bytes"},
		{"cut", packet(0, greeting(NativePassword))[:20], "no answer"},
		{"three bytes", []byte{1, 0, 0}, `not: "\x01\x00\x00"`},
	} {
		g, e, err := ReadGreeting(bufio.NewReader(bytes.NewReader(tc.in)))
		var got string
		var nm *NotMySQLError
		switch {
		case errors.As(err, &nm):
			got = "not: " + nm.Seen
		case errors.Is(err, ErrNoAnswer):
			got = "no answer"
		case err != nil:
			got = err.Error()
		case e != nil:
			got = strings.Join([]string{"ERROR", strconv.Itoa(int(e.Code)), or(e.State, "-"), e.Message}, " ")
		default:
			got = g.Version + " " + g.Plugin
			if len(g.Scramble) != 20 {
				t.Errorf("%s: scramble %q", tc.name, g.Scramble)
			}
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// TestScramble pins the two plugins' responses to their definitions.
func TestScramble(t *testing.T) {
	nonce := []byte("abcdefghijklmnopqrst")
	// mysql_native_password: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw))).
	s1 := sha1.Sum([]byte("pw"))
	s2 := sha1.Sum(s1[:])
	s3 := sha1.Sum(append(append([]byte(nil), nonce...), s2[:]...))
	native := scramble(NativePassword, "pw", nonce)
	for i := range native {
		if native[i]^s3[i] != s1[i] {
			t.Fatalf("native: %x", native)
		}
	}
	if scramble(NativePassword, "", nonce) != nil || scramble(CachingSHA2, "", nonce) != nil {
		t.Error("an empty password sends an empty response")
	}
	p1 := sha256.Sum256([]byte("pw"))
	p2 := sha256.Sum256(p1[:])
	p3 := sha256.Sum256(append(p2[:], nonce...))
	got := scramble(CachingSHA2, "pw", nonce)
	for i := range got {
		if got[i]^p3[i] != p1[i] {
			t.Fatalf("caching_sha2: %x", got)
		}
	}
}

// TestLogin runs the login against scripted server answers: OK, a refusal,
// an auth switch, caching_sha2's fast path, an unsupported plugin.
func TestLogin(t *testing.T) {
	g, _, err := ReadGreeting(bufio.NewReader(bytes.NewReader(packet(0, greeting(CachingSHA2)))))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		answers [][]byte
		want    string
	}{
		{"ok", [][]byte{packet(2, []byte{0, 0, 0, 2, 0, 0, 0})}, "ok"},
		{"denied", [][]byte{packet(2, errPkt(1045, "28000", "Access denied"))}, "ERROR 1045"},
		{"fast auth", [][]byte{packet(2, []byte{1, 3}), packet(3, []byte{0, 0, 0})}, "ok"},
		{"switch to native", [][]byte{packet(2, append(append([]byte{0xfe}, NativePassword+"\x00"...), "01234567890123456789\x00"...)), packet(4, []byte{0, 0, 0})}, "ok"},
		{"ed25519", [][]byte{packet(2, append([]byte{0xfe}, "client_ed25519\x00abc"...))}, `plugin "client_ed25519"`},
		{"garbage", [][]byte{packet(2, []byte{0x77})}, "not a MySQL answer"},
	} {
		var out bytes.Buffer
		in := bufio.NewReader(bytes.NewReader(bytes.Join(tc.answers, nil)))
		e, err := Login(in, &out, g, "app", "pw", "appdb")
		got := "ok"
		switch {
		case err != nil:
			got = err.Error()
		case e != nil:
			got = e.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if !bytes.Contains(out.Bytes(), []byte("app\x00")) || !bytes.Contains(out.Bytes(), []byte("appdb\x00"+CachingSHA2+"\x00")) {
			t.Errorf("%s: the HandshakeResponse41 lacks the user, database or plugin: %q", tc.name, out.Bytes())
		}
	}
}

// TestReason holds each answer to its reason and sentence.
func TestReason(t *testing.T) {
	for _, tc := range []struct {
		a    Reply
		want classify.Reason
		text string
	}{
		{Reply{Read: true, Greeted: true, Version: "10.11.6-MariaDB"}, classify.OK, ""},
		// No password in the URL: the passwordless login refused is a
		// server that accepts connections (mysqladmin ping's answer).
		{Reply{Read: true, Greeted: true, ErrorCode: 1045, Message: "Access denied"}, classify.OK, ""},
		{Reply{Read: true, Greeted: true, ErrorCode: 1040, Message: "Too many connections"}, TooManyConnections, "1040"},
		{Reply{Read: true, Greeted: true, Login: true, ErrorCode: 1045, Message: "Access denied"}, AuthRefused, "1045"},
		{Reply{Read: true, Greeted: true, Version: "8.0.40", Login: true, LoggedIn: true}, classify.OK, ""},
		{Reply{Read: true, Greeted: true, Version: "8.0.40", Login: true}, Protocol, ""},
		{Reply{Read: true, ErrorCode: 1040, Message: "Too many connections"}, TooManyConnections, "ERROR 1040 (no SQLSTATE): Too many connections"},
		{Reply{Read: true, ErrorCode: 1203, Message: "User app already has more than 'max_user_connections' active connections"}, TooManyConnections, "1203"},
		{Reply{Read: true, ErrorCode: 1045, SQLState: "28000", Message: "Access denied"}, AuthRefused, "ERROR 1045 (28000)"},
		{Reply{Read: true, ErrorCode: 1044, Message: "Access denied for user 'app'@'%' to database 'x'"}, AuthRefused, "1044"},
		{Reply{Read: true, ErrorCode: 1129, Message: "Host '127.0.0.1' is blocked"}, HostBlocked, "blocked"},
		{Reply{Read: true, ErrorCode: 1130, Message: "Host 'x' is not allowed to connect"}, HostBlocked, "1130"},
		{Reply{Read: true, ErrorCode: 1049, Message: "Unknown database 'x'"}, NoDatabase, "1049"},
		{Reply{Read: true, ErrorCode: 1053, SQLState: "08S01", Message: "Server shutdown in progress"}, ShuttingDown, "1053"},
		{Reply{Read: true, ErrorCode: 1105, Message: "The server is starting up"}, StartingUp, "starting up"},
		{Reply{Read: true, ErrorCode: 1105, Message: "Unknown error"}, ServerError, "1105"},
		{Reply{Read: true, Seen: `"SSH-2.0-OpenSSH_9.6"`}, Protocol, `not MySQL: the server sent "SSH-2.0`},
		{Reply{}, Protocol, ""},
	} {
		o := classify.Observation{Kind: Kind, Answer: &tc.a}
		out, r := classify.Classify(o)
		if r != tc.want || out != tc.want.Outcome() {
			t.Errorf("%+v: %s %s, want %s", tc.a, out, r, tc.want)
		}
		if s := classify.Sentence(o, r, classify.Facts{}); !strings.Contains(s, tc.text) {
			t.Errorf("%+v: sentence %q, want it to contain %q", tc.a, s, tc.text)
		}
	}
	if !classify.Warming(StartingUp) || !classify.Warming(ShuttingDown) || classify.Warming(TooManyConnections) {
		t.Error("starting up and shutting down are warming, nothing else")
	}
}

// TestLoginFullAuth: caching_sha2_password's full authentication over a
// clear connection asks for the server's RSA key and sends the password
// XOR the nonce encrypted with it (OAEP, SHA-1), as MySQL 8 decrypts it.
func TestLoginFullAuth(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	g, _, err := ReadGreeting(bufio.NewReader(bytes.NewReader(packet(0, greeting(CachingSHA2)))))
	if err != nil {
		t.Fatal(err)
	}
	in := bufio.NewReader(bytes.NewReader(bytes.Join([][]byte{
		packet(2, []byte{1, 4}),
		packet(4, append([]byte{1}, pemKey...)),
		packet(6, []byte{0, 0, 0}),
	}, nil)))
	var out bytes.Buffer
	e, err := Login(in, &out, g, "app", "s3cret", "")
	if e != nil || err != nil {
		t.Fatalf("%v %v", e, err)
	}
	r := bufio.NewReader(&out)
	for _, want := range []byte{1, 3, 5} {
		seq, p, err := readPacket(r)
		if err != nil || seq != want {
			t.Fatalf("packet %d: seq %d, %v", want, seq, err)
		}
		switch seq {
		case 3:
			if !bytes.Equal(p, []byte{2}) {
				t.Errorf("the public key request is %q", p)
			}
		case 5:
			plain, err := rsa.DecryptOAEP(sha1.New(), nil, key, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := xor(plain, g.Scramble); !bytes.Equal(got, []byte("s3cret\x00")) {
				t.Errorf("decrypted %q", got)
			}
		}
	}
}
