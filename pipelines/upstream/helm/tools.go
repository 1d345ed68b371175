//go:build tools

// Keeps helm's main package in this build module's go.sum; nothing here is compiled.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
