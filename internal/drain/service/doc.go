// Package service is drain-test's process side: it starts the service
// under test (--exec) or attaches to a running one (--pid), signals it as
// an orchestrator signals PID 1, waits for its exit (killing it past S
// plus a margin), and kills whatever it left: its process group and, on
// Linux, every descendant (healthctl is their subreaper).
package service
