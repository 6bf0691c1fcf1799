//go:build !linux

package service

import (
	"syscall"
	"time"
)

// keepDescendants: only Linux has a child subreaper; elsewhere the process
// group is what can be killed.
func keepDescendants() {}

// childAttr: Pdeathsig is Linux's.
func childAttr(*syscall.SysProcAttr) {}

// othersLeft: without /proc, the process group stands for the descendants.
func othersLeft(int) int { return 0 }

// killTree: the process group is killed by the caller.
func killTree(int, time.Duration) int { return 0 }

// leftAlive: without /proc, a process group that still has a member.
func leftAlive(main int) bool { return groupExists(main) }
