package evidence

import (
	"testing"
	"time"
)

// TestTheWordsForWhatWasSeen: what a poll, an in-flight request, an exit
// and the traffic endpoint are called in the details and setup errors.
func TestTheWordsForWhatWasSeen(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Describe(Poll{Status: 503}), "HTTP 503"},
		{Describe(Poll{Status: 200, Cut: true, Err: "conn_reset"}), "HTTP 200 with its body cut (conn_reset)"},
		{Describe(Poll{Status: 503, GRPC: "NOT_SERVING"}), "gRPC NOT_SERVING"},
		{Describe(Poll{Refused: true, Err: "connection refused"}), "connection refused"},
		{Describe(Poll{Err: "timeout (headers_timeout)"}), "timeout (headers_timeout)"},
		{Describe(Poll{}), "no answer"},
		{DescribeRequest(Request{Err: "protocol_error: EOF", Status: 200}), "protocol_error: EOF"},
		{DescribeRequest(Request{Status: 404, Complete: true}), "HTTP 404"},
		{DescribeRequest(Request{Status: 200, Bytes: 120}), "body cut after 120 bytes"},
		{DescribeRequest(Request{Status: 204, Complete: true}), "ok"},
		{Poll{Status: 503}.Said(), "503"},
		{Poll{Status: 200, GRPC: "SERVING"}.Said(), "SERVING"},
		{Exit{Gone: true}.String(), "gone (exit status unknown)"},
		{Exit{Known: true, Signal: "SIGKILL"}.String(), "killed by SIGKILL"},
		{Exit{Known: true, Code: 143}.String(), "exit status 143"},
		{TrafficInfo{URL: "http://h/slow", FromInflight: true, Window: 5 * time.Second}.String(), "http://h/slow (the --inflight URL: no --traffic given; each request within 5000 ms)"},
		{TrafficInfo{URL: "http://h/app", Window: 1500 * time.Millisecond}.String(), "http://h/app (--traffic; each request within 1500 ms)"},
		{TrafficInfo{}.Source(), "--traffic"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestWhatCountsAsServed: the kubelet's 200-399 for a poll; 2xx with the
// whole body and no error for an in-flight request.
func TestWhatCountsAsServed(t *testing.T) {
	for status, want := range map[int]bool{0: false, 199: false, 200: true, 302: true, 399: true, 400: false, 503: false} {
		if OKStatus(status) != want {
			t.Errorf("OKStatus(%d) = %v", status, !want)
		}
	}
	for _, tt := range []struct {
		r    Request
		want bool
	}{
		{Request{Status: 200, Complete: true}, true},
		{Request{Status: 302, Complete: true}, false},
		{Request{Status: 200}, false},
		{Request{Status: 200, Complete: true, Err: "reset"}, false},
	} {
		if tt.r.OK() != tt.want {
			t.Errorf("%+v: OK() = %v", tt.r, !tt.want)
		}
	}
	if (Poll{At: 100 * time.Millisecond, Took: 30 * time.Millisecond}).End() != 130*time.Millisecond || (Poll{}).Answered() || !(Poll{Status: 503}).Answered() {
		t.Error("a poll's end or answer")
	}
}
