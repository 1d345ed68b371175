/** The informer benchmark: cache memory per pod and time to first full apply, against fabric8's mock API server. */
package io.npmagent.pipelines.informers;
