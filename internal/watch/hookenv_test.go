package watch

import (
	"slices"
	"testing"

	"github.com/healthctl/healthctl/internal/redact"
)

func TestHookEnviron(t *testing.T) {
	red := redact.NewRedactor(nil, nil)
	red.AddSecret("SECRETPW")
	got := hookEnviron([]string{
		"PATH=/usr/bin", "HOME=/home/u", "KUBECONFIG=/k",
		"HEALTHCTL_USER=u:SECRETPW", "HEALTHCTL_WATCH_HEADER=Authorization: Bearer T", "healthctl_header=x",
		"HTTPS_PROXY=http://pu:PROXYPW@proxy:3128", "no_proxy=localhost", "all_proxy=pu:PW2@proxy:1080",
		"OTHER=has SECRETPW inside", "GIT_URL=https://bob:PW3@git.invalid/r",
	}, red, []string{"HEALTHCTL_TARGET=api"})
	want := []string{
		"PATH=/usr/bin", "HOME=/home/u", "KUBECONFIG=/k",
		"HTTPS_PROXY=http://***@proxy:3128", "no_proxy=localhost", "all_proxy=***@proxy:1080",
		"HEALTHCTL_TARGET=api",
	}
	if !slices.Equal(got, want) {
		t.Errorf("hookEnviron:\n got %q\nwant %q", got, want)
	}
}
