//go:build linux

package sandbox

import _ "embed"

// nsenterHelper is helper/awl-nsenter.c built for arm64 (the command in
// that file builds it): a program of one thread, without a C library,
// that joins the namespaces, closes their descriptors and clears every
// capability but those it is told to keep (root's keptCaps) from every
// set before it execs the command, which nsenter(1) cannot.
//
//go:embed helper/awl-nsenter-arm64
var nsenterHelper []byte
