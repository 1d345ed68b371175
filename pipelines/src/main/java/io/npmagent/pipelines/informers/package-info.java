/** The informer benchmark: cache memory per pod and time to first full apply, against a real kube-apiserver. */
package io.npmagent.pipelines.informers;
