package target

import (
	"strings"
	"testing"
)

// TestServiceURLs: redis and postgres URLs are held to what their probes
// send; the error names what is wrong.
func TestServiceURLs(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://h":                            "",
		"redis://:pw@h:6380/3":                 "",
		"rediss://user:pw@h/0":                 "",
		"REDIS://h":                            "",
		"redis://h/db":                         `path "/db" is not a database number`,
		"redis://h/1/2":                        `path "/1/2" is not a database number`,
		"redis://h?x=1":                        "redis URL has a query",
		"redis://h#f":                          "has a fragment",
		"postgres://h":                         "",
		"postgresql://u:pw@h:5433/app":         "",
		"postgres://h/app?sslmode=require":     "",
		"postgres://h/app?sslmode=disable":     "",
		"postgres://h/app?sslmode=prefer":      "",
		"postgres://h/app?sslmode=allow":       "",
		"postgres://h/app?sslmode=verify-ca":   "",
		"postgres://h/app?sslmode=verify-full": "",
		"postgres://h/app?sslmode=verify":      `sslmode "verify" is not one of libpq's`,
		"postgres://u:pw@h/app?target_session_attrs=read-write": "",
		"postgres://h/app?target_session_attrs=any":             "",
		"postgres://h/app?target_session_attrs=read-write":      "takes a login",
		"postgres://u:pw@h/app?target_session_attrs=standby":    `target_session_attrs "standby" is not any or read-write`,
		"postgres://h/app?connect_timeout=3":                    "",
		"postgres://h/app?connect_timeout=3s":                   `connect_timeout "3s" is not a number of seconds`,
		"postgres://h/app?application_name=x":                   `the parameter "application_name"`,
		"postgres://h/app?sslmode=require&a=b":                  `the parameter "a"`,
		"postgres://h/app?sslmode=require&sslmode=disable":      `sslmode "require,disable" is not one of libpq's`,
		"postgres://h/a/b":                                      "more than a database name",
		"postgres://h/a%01b":                                    "control character",
		"mongodb://h":                                           `unsupported scheme "mongodb"`,
		"mysql://h/db?tls=true":                                 "has a query",
		// An unsupported scheme suggests tcp:// for its port.
		"mongodb://u:pw@db.internal:27017/app": `unsupported scheme "mongodb" (want http, https`,
		"kafka://broker:9092":                  "probe tcp://broker:9092",
		"mongodb://u:pw@db:27017/app":          "probe tcp://db:27017",
		"amqp://mq/vhost":                      "",
		"amqps://guest:guest@mq/%2F":           "",
		"amqp://mq/a/b":                        "more than a virtual host",
		"amqp://mq/a%2Fb":                      "",
		"amqp://mq/?heartbeat=10":              "has a query",
		"amqp://mq/#x":                         "has a fragment",
		"amqp://u:p%0Aw@mq/":                   "password holds a LF byte (%0A)",
		"amqp://mq/v%00h":                      "path holds a NUL byte",
		"zmq://mq:5555":                        "probe tcp://mq:5555",
		"mongodb://h1:27017,h2:27017/app":      "probe tcp://HOST:PORT",
		// NUL, CR, LF in any decoded field, of every kind.
		"postgres://us%00er:pw@h/db":          "user name holds a NUL byte (%00)",
		"postgres://user:p%0Dw@h/db":          "password holds a CR byte (%0D)",
		"redis://:p%0Aw@h":                    "password holds a LF byte (%0A)",
		"redis://:pw@h/1%0A":                  "path holds a LF byte",
		"postgres://h/db?sslmode=require%00x": `query parameter "sslmode" holds a NUL byte`,
		"postgres://h/d%00b":                  "path holds a NUL byte",
		"http://u%0D%0AX-Evil:%20x:pw@h/":     "user name holds a CR byte",
		"https://user:p%00w@h/":               "password holds a NUL byte",
		"tcp://u%0A@h:1":                      "user name holds a LF byte",
		"grpc://h:1/svc%00":                   "path holds a NUL byte",
		"http://h/a%0Ab?q=%0D":                "", // HTTP's request target carries them encoded
		// One host, and a host name: never a resolver's query for h1:p1,h2.
		// libpq's several hosts, for postgres:// only, each checked.
		"postgres://h1:5432,h2:5432/db":  "",
		"postgres://u:pw@h1,h2:5433/db":  "",
		"postgres://h1:5432,:5433/db":    "one is empty",
		"postgres://h1:99999,h2:5432/db": `URL port "99999" out of range`,
		"postgres://h1:5432,h;2:5432/db": `host "h;2" is not a host name`,
		"postgres://h1:x,h2:5432/db":     `host "h1:x" is not a host name`,
		"rediss://h1:6379,h2:6379":       "more than one host",
		"redis://h1,h2:6379":             "more than one host",
		"http://a,b/":                    "more than one host",
		"http://a;b/":                    `host "a;b" is not a host name`,
		"http://a*b:80/":                 `host "a*b" is not a host name`,
		"http://my_svc:8080/":            "",
		"http://[fe80::1%25eth0]:80/":    "",
		"http://bücher.example/":         "",
		"http://h.example./":             "",
		// Unix sockets: libpq's host=/DIR, the Redis clients' unix:///PATH.
		"postgres:///db?host=/var/run/postgresql":      "",
		"postgresql://u:pw@/db?host=/tmp&port=5433":    "",
		"postgres://:5433/db?host=/tmp":                "",
		"postgres:///db?host=/tmp&sslmode=require":     "",
		"postgres:///db?host=db.internal":              `host parameter "db.internal" is not one Unix socket directory`,
		"postgres:///db?host=/a,/b":                    "is not one Unix socket directory",
		"postgres://h:5432/db?host=/tmp":               `names the host "h" and the socket directory "/tmp"`,
		"postgres://h/db?port=5433":                    `port parameter "5433"`,
		"postgres:///db?host=/tmp&port=0":              `port parameter "0"`,
		"postgres:///db?host=/tmp&port=5433&port=5434": `port parameter "5433,5434"`,
		"postgres:///db":                               "URL has no host",
		"postgresql://%2Fvar%2Frun%2Fpostgresql/db":    "a Unix socket's directory goes in the host parameter: postgresql:///DB?host=/DIR",
		"postgres://u:pw@%2ftmp:5433/db":               "goes in the host parameter",
		"unix:///var/run/redis/redis.sock":             "",
		"unix://:pw@/var/run/redis/redis.sock?db=2":    "",
		"UNIX://user:pw@/r.sock":                       "",
		"redis+socket:///var/run/redis/redis.sock":     "",
		"unix://localhost/var/run/redis.sock":          `names the host "localhost"`,
		"unix:///r.sock?db=x":                          `db "x" is not a database number`,
		"unix:///r.sock?timeout=3":                     `the parameter "timeout"`,
		"unix:///":                                     "names no socket path",
		"unix:///r.sock?db=1%0A":                       "holds a LF byte",
	} {
		_, err := ParseURL(raw)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}
