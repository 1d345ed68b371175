/** Small helpers the dataplane modules share. */
package io.npmagent.dataplane.util;
