/**
 * The manifest-directory source: {@link io.npmagent.agent.source.manifest.Manifests} reads Namespace,
 * Pod and NetworkPolicy manifests (untrusted YAML or JSON, parsed without constructing any Java type)
 * into the dataplane model, reporting each problem and loading everything else.
 */
package io.npmagent.agent.source.manifest;
