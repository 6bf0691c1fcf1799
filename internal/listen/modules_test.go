package listen

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
	o, err := post.options("https://127.0.0.1:8443/x", 0)
	if err != nil {
		t.Fatal(err)
	}
	if o.Method != "POST" || o.Header.Get("Content-Type") != "application/json" || o.Follow != 0 || o.TLSConfig == nil || !o.TLSConfig.InsecureSkipVerify || o.TLSConfig.ServerName != "app.test" {
		t.Errorf("http_post_2xx: method %q, header %v, follow %d, tls %+v", o.Method, o.Header, o.Follow, o.TLSConfig)
	}
	for name, url := range map[string]string{"tcp_connect": "tcp://127.0.0.1:9", "grpc_plain": "grpc://127.0.0.1:9"} {
		o, err := mods[name].options("127.0.0.1:9", 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if o.URL.String() != url {
			t.Errorf("%s: %s, want %s", name, o.URL, url)
		}
	}
	if o, err := mods["tls_connect"].options("[::1]:9", 0); err != nil || o.URL.String() != "tls://[::1]:9" || o.Network != "tcp6" {
		t.Errorf("tls, ip6 without fallback: %v %+v", err, o)
	}
	h, _ := mods["http_2xx"].options("127.0.0.1:9", 0)
	if h.MaxTime != 5*time.Second || h.ConnectTimeout != 5*time.Second || h.ReadTimeout != 5*time.Second || h.Network != "tcp" {
		t.Errorf("timeout 5s: max %v connect %v read %v; network %q (fallback: both families)", h.MaxTime, h.ConnectTimeout, h.ReadTimeout, h.Network)
	}
	// Without a module timeout, the scrape's budget (TestBudget).
	b, _ := Budget("2", mods["tcp_connect"].Timeout)
	p, _ := mods["tcp_connect"].options("127.0.0.1:9", b)
	if p.MaxTime != 1500*time.Millisecond {
		t.Errorf("scrape timeout 2s: max %v", p.MaxTime)
	}
}

// TestModulesRefused: each field healthctl does not map is refused,
// naming file, line, module and field.
func TestModulesRefused(t *testing.T) {
	for body, want := range map[string]string{
		"modules:\n  m:\n    prober: icmp\n":                                        `bb.yml:3: module "m": prober: icmp: healthctl has no icmp prober`,
		"modules:\n  m:\n    prober: http\n    http:\n      fail_if_ssl: true\n":    `bb.yml:5: module "m": http.fail_if_ssl: not supported`,
		"modules:\n  m:\n    prober: http\n    http:\n      typo_field: 1\n":        `bb.yml:5: module "m": http.typo_field: unknown field`,
		"modules:\n  m:\n    prober: http\n    extra: 1\n":                          `bb.yml:4: module "m": extra: unknown field`,
		"modules:\n  m:\n    prober: http\n    tcp: {tls: true}\n":                  `module "m": tcp: given for prober http`,
		"modules:\n  m:\n    http:\n      follow_redirects: true\n":                 `module "m": http.follow_redirects: true: /probe does not follow redirects`,
		"modules:\n  m:\n    http:\n      tls_config: {min_version: TLS13}\n":       `module "m": http.tls_config.min_version: not supported`,
		"modules:\n  m:\n    http:\n      valid_status_codes: [2xx]\n":              `module "m": http.valid_status_codes: "2xx": want status codes`,
		"modules:\n  m:\n    timeout: soon\n":                                       `module "m": timeout: "soon"`,
		"modules:\n  m:\n    http:\n      tls_config: {ca_file: /nonexistent/ca}\n": `module "m"`,
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
