//go:build tools

// Keeps the operator's and its config reloader's main packages in this build module's go.sum; nothing here is compiled.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
	_ "github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader"
)
