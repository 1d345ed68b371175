//go:build tools

// Keeps alertmanager's main package in this build module's go.sum; nothing here is compiled.
package tools

import (
	_ "github.com/prometheus/alertmanager/cmd/alertmanager"
)
