//go:build unix

package tool

import "github.com/awlrun/awl/internal/rawfile"

// searchFile is a file opened for grep. On Unix it is a bare descriptor
// (rawfile.FD): an os.File would also try (and fail) to register a regular
// file with the poller, one more system call for each of thousands of
// files.
type searchFile = rawfile.FD

// openSearchFile opens name for reading. O_NONBLOCK keeps a named pipe
// that took a file's place from blocking the open.
func openSearchFile(name string) (searchFile, error) { return rawfile.OpenFD(name) }
