package probe_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/rediswire"
)

// respServer is a loopback server that reads RESP arrays, as Redis does,
// and answers each command (its words upper-cased and joined by spaces,
// the arguments after AUTH left out) with answer's reply, or "-ERR unknown
// command" when it has none.
func respServer(t *testing.T, answer map[string]string) string {
	t.Helper()
	return serve(t, func(br *bufio.Reader, c net.Conn) {
		for {
			args, err := readArray(br)
			if err != nil {
				return
			}
			key := strings.ToUpper(strings.Join(args, " "))
			if strings.EqualFold(args[0], "AUTH") {
				key = "AUTH " + strings.Join(args[1:], " ")
			}
			reply, ok := answer[key]
			if !ok {
				reply = fmt.Sprintf("-ERR unknown command '%s'\r\n", args[0])
			}
			if _, err := c.Write([]byte(reply)); err != nil {
				return
			}
		}
	})
}

// readArray reads one RESP array of bulk strings.
func readArray(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("not an array: %q %v", line, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("bad array %q", line)
	}
	args := make([]string, n)
	for i := range args {
		if _, err := br.ReadString('\n'); err != nil {
			return nil, err
		}
		s, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args[i] = strings.TrimRight(s, "\r\n")
	}
	return args, nil
}

// bulk is s as a RESP bulk string.
func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

// TestRedisFalsePasses: what Redis 7.0 answers (taken from redis-server
// 7.0.15) in the states where PING passes and the application cannot use
// the server: a refused AUTH (then PING as the default user), a cluster
// whose state is fail, a Sentinel's port.
func TestRedisFalsePasses(t *testing.T) {
	standalone := bulk("# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\ntcp_port:6379\r\n")
	noCluster := "-ERR This instance has cluster support disabled\r\n"
	// The default user needs no password; alice exists with "alicepw".
	noPassDefault := respServer(t, map[string]string{
		"AUTH alice alicepw": "+OK\r\n",
		"AUTH alice notit":   "-WRONGPASS invalid username-password pair or user is disabled.\r\n",
		"AUTH bob pw":        "-WRONGPASS invalid username-password pair or user is disabled.\r\n",
		"AUTH pw":            "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n",
		"PING":               "+PONG\r\n", "INFO SERVER": standalone, "CLUSTER INFO": noCluster,
	})
	cluster := func(state, ok string) string {
		return respServer(t, map[string]string{
			"PING":         "+PONG\r\n",
			"INFO SERVER":  bulk("# Server\r\nredis_version:7.0.15\r\nredis_mode:cluster\r\n"),
			"CLUSTER INFO": bulk("cluster_state:" + state + "\r\ncluster_slots_assigned:" + ok + "\r\ncluster_slots_ok:" + ok + "\r\ncluster_known_nodes:1\r\n"),
		})
	}
	sentinel := respServer(t, map[string]string{
		"PING":        "+PONG\r\n",
		"INFO SERVER": bulk("# Server\r\nredis_version:7.0.15\r\nredis_mode:sentinel\r\ntcp_port:26379\r\n"),
	})
	// An older server, or a proxy, that answers PING and closes.
	pingOnly := serve(t, func(br *bufio.Reader, c net.Conn) {
		readArray(br)
		c.Write([]byte("+PONG\r\n"))
	})
	for _, tc := range []struct {
		url    string
		reason classify.Reason
		text   string
		json   string
	}{
		{"redis://alice:alicepw@" + noPassDefault, classify.OK, "", `"auth":"+OK","ping":"+PONG"`},
		{"redis://alice:notit@" + noPassDefault, rediswire.AuthRefused, `Redis answered AUTH with "-WRONGPASS`, `"ping":"+PONG"`},
		{"redis://bob:pw@" + noPassDefault, rediswire.AuthRefused, `Redis answered AUTH with "-WRONGPASS`, ""},
		// A password the server does not need: redis-cli -a goes on.
		{"redis://:pw@" + noPassDefault, classify.OK, "", ""},
		{"redis://" + cluster("fail", "0"), rediswire.ClusterDown, "cluster_state:fail (0 of 16384 hash slots ok)", `"mode":"cluster","cluster_state":"fail"`},
		{"redis://" + cluster("ok", "16384"), classify.OK, "", `"cluster_state":"ok"`},
		{"redis://" + sentinel, rediswire.ErrorReply, "a Redis Sentinel answered", `"mode":"sentinel"`},
		{"redis://" + pingOnly, classify.OK, "", ""},
	} {
		res := probe.Run(t.Context(), opts(t, tc.url, "", nil))
		if res.Reason != tc.reason || !strings.Contains(res.Error, tc.text) {
			t.Errorf("%s: %s %q, want %s %q", tc.url, res.Reason, res.Error, tc.reason, tc.text)
		}
		if tc.json != "" {
			b, _ := json.Marshal(res.Answer.JSON())
			if !strings.Contains(string(b), tc.json) {
				t.Errorf("%s: redis %s, want %s", tc.url, b, tc.json)
			}
		}
		if strings.Contains(res.URL, "notit") || strings.Contains(res.URL, "alicepw") {
			t.Errorf("%s: the URL shown is %s", tc.url, res.URL)
		}
	}
}
