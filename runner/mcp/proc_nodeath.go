//go:build unix && !linux

package mcp

import "syscall"

// deathSignal does nothing where there is no parent-death signal.
func deathSignal(*syscall.SysProcAttr) {}
