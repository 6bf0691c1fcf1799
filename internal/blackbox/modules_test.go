package blackbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/target"
)

// blackboxExample is the shape of blackbox_exporter's example.yml, with
// every field healthctl maps.
const blackboxExample = `modules:
  http_2xx:
    prober: http
    timeout: 5s
    http:
      preferred_ip_protocol: "ip4"
  http_post_2xx:
    prober: http
    http:
      method: POST
      headers:
        Content-Type: application/json
      body: '{}'
      valid_status_codes: [200, 204]
      fail_if_body_not_matches_regexp: ["ok|ready"]
      fail_if_header_not_matches:
        - header: Content-Type
          regexp: json
      no_follow_redirects: true
      tls_config:
        insecure_skip_verify: true
        server_name: app.test
      basic_auth: {username: u, password: p}
  tcp_connect:
    prober: tcp
  tls_connect:
    prober: tcp
    tcp:
      tls: true
      preferred_ip_protocol: ip6
      ip_protocol_fallback: false
  grpc_plain:
    prober: grpc
    grpc:
      service: pkg.Svc
      tls: false
`

func TestModulesMap(t *testing.T) {
	mods, err := ParseModules("bb.yml", []byte(blackboxExample), target.Defaults(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	post := mods["http_post_2xx"]
	o, err := post.Options("https://127.0.0.1:8443/x", 0)
	if err != nil {
		t.Fatal(err)
	}
	if o.Method != "POST" || o.Header.Get("Content-Type") != "application/json" || o.Follow != 0 || o.TLSConfig == nil || !o.TLSConfig.InsecureSkipVerify || o.TLSConfig.ServerName != "app.test" {
		t.Errorf("http_post_2xx: method %q, header %v, follow %d, tls %+v", o.Method, o.Header, o.Follow, o.TLSConfig)
	}
	for name, url := range map[string]string{"tcp_connect": "tcp://127.0.0.1:9", "grpc_plain": "grpc://127.0.0.1:9"} {
		o, err := mods[name].Options("127.0.0.1:9", 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if o.URL.String() != url {
			t.Errorf("%s: %s, want %s", name, o.URL, url)
		}
	}
	if o, err := mods["tls_connect"].Options("[::1]:9", 0); err != nil || o.URL.String() != "tls://[::1]:9" || o.Network != "tcp6" {
		t.Errorf("tls, ip6 without fallback: %v %+v", err, o)
	}
	h, _ := mods["http_2xx"].Options("127.0.0.1:9", 0)
	if h.MaxTime != 5*time.Second || h.ConnectTimeout != 5*time.Second || h.ReadTimeout != 5*time.Second || h.Network != "tcp" {
		t.Errorf("timeout 5s: max %v connect %v read %v; network %q (fallback: both families)", h.MaxTime, h.ConnectTimeout, h.ReadTimeout, h.Network)
	}
	// Without a module timeout, the scrape's budget (listen's Budget
	// for a 2 s scrape: 1.5 s).
	p, _ := mods["tcp_connect"].Options("127.0.0.1:9", 1500*time.Millisecond)
	if p.MaxTime != 1500*time.Millisecond {
		t.Errorf("scrape timeout 2s: max %v", p.MaxTime)
	}
}

// TestModulesRefused: each field healthctl does not map is refused,
// naming file, line, module and field.
func TestModulesRefused(t *testing.T) {
	for body, want := range map[string]string{
		"modules:\n  m:\n    prober: ping\n":                                                                           `bb.yml:3: module "m": prober: "ping": want http, grpc, tcp, dns or icmp`,
		"modules:\n  m:\n    prober: http\n    http:\n      body_file: b.txt\n":                                        `bb.yml:5: module "m": http.body_file: not supported: "read the HTTP request body from from a file"`,
		"modules:\n  m:\n    prober: http\n    http:\n      typo_field: 1\n":                                           `bb.yml:5: module "m": http.typo_field: unknown field`,
		"modules:\n  m:\n    prober: http\n    extra: 1\n":                                                             `bb.yml:4: module "m": extra: unknown field`,
		"modules:\n  m:\n    prober: http\n    tcp: {tls: true}\n":                                                     `module "m": tcp: given for prober http`,
		"modules:\n  m:\n    http:\n      follow_redirects: maybe\n":                                                   `module "m": http.follow_redirects: "maybe": want true or false`,
		"modules:\n  m:\n    http:\n      enable_http2: false\n":                                                       `bb.yml:4: module "m": http.enable_http2: false: "whether HTTP/2 is enabled"`,
		"modules:\n  m:\n    http:\n      oauth2: {client_id: x}\n":                                                    `module "m": http.oauth2: want client_id and token_url`,
		"modules:\n  m:\n    http:\n      tls_config: {min_version: TLS9}\n":                                           `module "m": http.tls_config.min_version: "TLS9": want TLS10, TLS11, TLS12 or TLS13`,
		"modules:\n  m:\n    http:\n      tls_config: {min_version: TLS13, max_version: TLS12}\n":                      `min_version is above max_version`,
		"modules:\n  m:\n    http:\n      valid_status_codes: [2xx]\n":                                                 `module "m": http.valid_status_codes: "2xx": want status codes`,
		"modules:\n  m:\n    http:\n      valid_http_versions: [h2]\n":                                                 `module "m": http.valid_http_versions: "h2": want HTTP versions`,
		"modules:\n  m:\n    http:\n      body_size_limit: lots\n":                                                     `module "m": http.body_size_limit: "lots": want a size`,
		"modules:\n  m:\n    http:\n      compression: zstd\n":                                                         `module "m": http.compression: "zstd": want gzip, br, deflate or identity`,
		"modules:\n  m:\n    http:\n      fail_if_ssl: true\n      fail_if_not_ssl: true\n":                            `no answer could pass`,
		"modules:\n  m:\n    http:\n      fail_if_body_matches_regexp: ['(']\n":                                        `bb.yml:3: module "m": http.fail_if_body_matches_regexp "(": error parsing regexp`,
		"modules:\n  m:\n    http:\n      fail_if_header_matches: [{header: X, regexp: '('}]\n":                        `http.fail_if_header_matches: regexp "("`,
		"modules:\n  m:\n    http:\n      bearer_token_file: /nonexistent/token\n":                                     `module "m": http.bearer_token_file: "/nonexistent/token": `,
		"modules:\n  m:\n    http:\n      basic_auth: {username: u, password_file: /nonexistent/pw}\n":                 `http.basic_auth: password_file "/nonexistent/pw"`,
		"modules:\n  m:\n    tcp:\n      query_response: [{expect: x}]\n":                                              `module "m": tcp: given for prober http`,
		"modules:\n  m:\n    prober: http\n    http:\n      headers: {Accept-Encoding: br}\n      compression: gzip\n": `http.compression: "gzip", but headers: has Accept-Encoding: br`,
		"modules:\n  m:\n    timeout: soon\n":                                                                          `module "m": timeout: "soon"`,
		"modules:\n  m:\n    http:\n      tls_config: {ca_file: /nonexistent/ca}\n":                                    `module "m"`,
		"other: 1\n": `bb.yml:1: other: unknown key`,
		"":           `bb.yml: empty`,
	} {
		_, err := ParseModules("bb.yml", []byte(body), target.Defaults(), func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

func TestReadModulesMissing(t *testing.T) {
	_, err := ReadModules(filepath.Join(t.TempDir(), "none.yml"), target.Defaults(), os.Getenv)
	if err == nil || !strings.Contains(err.Error(), "none.yml: ") {
		t.Errorf("%v", err)
	}
}

// TestFieldOfAnotherProber: a field of another prober's section names the
// prober that takes it, as the scheme table's rows say (their option
// groups and Prober column), and http's tls: names its TLS twin.
func TestFieldOfAnotherProber(t *testing.T) {
	for yml, want := range map[string]string{
		"modules:\n  m:\n    prober: tcp\n    tcp:\n      service: s\n":                    `tcp.service: only for prober grpc`,
		"modules:\n  m:\n    prober: grpc\n    grpc:\n      proxy_url: http://p.invalid\n": `grpc.proxy_url: only for prober http`,
		"modules:\n  m:\n    prober: http\n    http:\n      tls: true\n":                   `http.tls: unknown field for prober http (an https:// target uses TLS)`,
	} {
		_, err := ParseModules("bb.yml", []byte(yml), target.Defaults(), func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yml, err, want)
		}
	}
}
