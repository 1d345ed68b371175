//go:build tools

// Keeps promtool's and prometheus' main packages in this build module's go.sum; nothing here is compiled.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
