//go:build !linux

package main

import "syscall"

// childAttr has no death signal to ask for outside Linux.
func childAttr() *syscall.SysProcAttr { return nil }
