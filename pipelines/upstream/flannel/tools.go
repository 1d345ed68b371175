//go:build tools

// Keeps flanneld's main package in this build module's go.sum; nothing here is compiled.
package tools

import _ "github.com/flannel-io/flannel"
