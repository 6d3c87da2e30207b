//go:build !unix

package main

import "os"

// termWidth is the terminal's width in columns; 0 (the default) here.
func termWidth(*os.File) int { return 0 }
