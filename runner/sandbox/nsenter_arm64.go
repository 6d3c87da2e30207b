//go:build linux

package sandbox

import _ "embed"

// nsenterHelper is helper/awl-nsenter.c built for arm64 (the command in
// that file builds it): a program of one thread, without a C library,
// that joins the namespaces and clears the bounding set before it execs
// the command, which nsenter(1) cannot.
//
//go:embed helper/awl-nsenter-arm64
var nsenterHelper []byte
