//go:build !unix

package tool

import "os"

// searchFile is a file opened for grep.
type searchFile = *os.File

func openSearchFile(name string) (searchFile, error) { return os.Open(name) }
