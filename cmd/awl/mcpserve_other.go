//go:build !unix

package main

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }

// runWatch has no watchdog to start outside Unix.
type runWatch struct{}

func (*runWatch) track(int, bool) {}
