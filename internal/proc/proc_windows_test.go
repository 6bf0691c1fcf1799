package proc

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// Windows: a shell line runs through cmd.exe with its quoting intact, exit
// codes come back, POSIX signals are refused and SIGKILL still ends a child.
// (CI cross-compiles this; it runs only on a Windows machine.)
func TestWindowsShellStatusAndSignals(t *testing.T) {
	c, err := Start(Spec{Argv: Shell(`if "a b"=="a b" exit 3`)})
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Status(); !st.Exited || st.Code != 3 {
		t.Fatalf("got %s, want exit status 3", st)
	}

	c, err = Start(Spec{Argv: Shell(`ping -n 30 127.0.0.1 >NUL`)})
	if err != nil {
		t.Fatal(err)
	}
	if SignalsSupported {
		t.Fatal("SignalsSupported is true on windows")
	}
	if err := c.Signal(syscall.SIGTERM); !errors.Is(err, ErrUnsupported) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("SIGTERM: got %v, want ErrUnsupported", err)
	}
	start := time.Now()
	c.Kill()
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("Kill took %v", el)
	}
}

func TestWindowsParseSignal(t *testing.T) {
	for _, in := range []string{"TERM", "INT", "USR1", "USR2", "KILL"} {
		if _, err := ParseSignal(in); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
}
