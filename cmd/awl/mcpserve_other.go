//go:build !unix

package main

import (
	"context"
	"io"
	"syscall"
)

func childAttr() *syscall.SysProcAttr { return nil }

// runWatch has no watchdog to start outside Unix.
type runWatch struct{}

func (*runWatch) track(int, bool) {}

// watchReader watches nothing outside Unix: a failed write tells the
// server that its client is gone.
func watchReader(context.Context, io.Writer, func(error)) {}
