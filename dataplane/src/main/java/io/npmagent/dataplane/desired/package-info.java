/**
 * The backend-neutral desired state and its deltas: identities, the address-to-identity table, peer
 * sets and their members, compiled policies and local pods. Backends render these rows; none of them
 * re-derives NetworkPolicy semantics.
 */
package io.npmagent.dataplane.desired;
