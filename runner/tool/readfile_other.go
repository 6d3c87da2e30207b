//go:build !unix

package tool

import "os"

// searchFile is a file opened for grep.
type searchFile struct{ *os.File }

func openSearchFile(name string) (searchFile, error) {
	f, err := os.Open(name)
	return searchFile{f}, err
}
