//go:build tools

// Keeps kube-router's main package in this build module's go.sum; nothing here is compiled.
package tools

import _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
