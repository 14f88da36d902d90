/**
 * What `podsim --version` prints: podsim's own version (this package's package.json) and the
 * Kubernetes release whose behaviour it simulates. The apiserver's `/version` (serve/discovery.ts)
 * reports the same Kubernetes release as `v1.22.8-podsim`.
 */
import { readFileSync } from 'node:fs';

/** The Kubernetes release podsim's actors mirror (kube-apiserver, kcm, scheduler, kubelet, kubectl). */
export const KUBERNETES_VERSION = 'v1.22.8';

/** podsim's version, from packages/harness/package.json (dist/src/version.js → ../../package.json). */
export const PODSIM_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** `podsim 0.1.0 (simulates Kubernetes v1.22.8)`. */
export function versionLine(): string {
  return `podsim ${PODSIM_VERSION} (simulates Kubernetes ${KUBERNETES_VERSION})`;
}
