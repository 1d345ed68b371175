// Build module for network-policy-api (pipelines/kube-binaries network-policy-api): the published module's
// ClusterNetworkPolicy CRDs (config/crd/standard and config/crd/experimental, applied as published) and its
// conformance suite, compiled unmodified with `go test -c` from the module's own conformance package, for
// pipelines/upstream-suites --suite cnp. Nothing here is our code.
module npm-agent.local/upstream/network-policy-api

go 1.26.6

require sigs.k8s.io/network-policy-api v0.3.0
