//go:build tools

// Keeps cyclonus' main package in this build module's go.sum; nothing here is compiled.
package tools

import _ "github.com/mattfenwick/cyclonus/cmd/cyclonus"
