package proc

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

func TestReadStatOfSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil || st.PPID != os.Getppid() || st.Start == 0 || st.Zombie {
		t.Fatalf("ReadStat(self) = %+v, %v; want parent %d, a start time, running", st, err, os.Getppid())
	}
}

func TestReadStatOfAZombie(t *testing.T) {
	// A child that exited and is not yet waited for is a zombie: dead.
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = cmd.Wait() }()
	for range 2000 {
		if st, err := ReadStat(cmd.Process.Pid); err == nil && st.Zombie {
			return
		}
	}
	t.Fatal("an exited, unreaped child never read as a zombie")
}

func TestReadStatOfNoProcess(t *testing.T) {
	if _, err := ReadStat(1 << 30); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadStat(no such pid) = %v, want a not-exist error", err)
	}
}

func TestDescendantsWalksTheTree(t *testing.T) {
	tab := []Stat{{PID: 1}, {PID: 10, PPID: 1}, {PID: 11, PPID: 10}, {PID: 12, PPID: 11}, {PID: 20, PPID: 1}, {PID: 13, PPID: 10}}
	got := Descendants(tab, 10, 100)
	want := []int{11, 13, 12}
	if len(got) != len(want) {
		t.Fatalf("Descendants(10) = %+v, want pids %v", got, want)
	}
	for i, p := range got {
		if p.PID != want[i] {
			t.Fatalf("Descendants(10) = %+v, want pids %v in that order", got, want)
		}
	}
	if n := len(Descendants(tab, 10, 1)); n != 1 {
		t.Fatalf("Descendants with limit 1 gave %d", n)
	}
}
