//go:build tools

// Keeps the conformance package's dependencies in this build module's go.sum; nothing here is compiled.
package tools

import _ "sigs.k8s.io/network-policy-api/conformance"
