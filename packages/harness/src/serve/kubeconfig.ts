/**
 * The kubeconfig that points kubectl at `podsim serve` (spec §1): one cluster with a plain-HTTP
 * `server:`, one user without credentials, one context with the default namespace. Written to a
 * fresh temporary directory unless the user names a file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** kubeconfig YAML for a server at `url` (`http://127.0.0.1:PORT`). */
export function kubeconfigText(url: string, namespace = 'default'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: podsim',
    '  cluster:',
    `    server: ${url}`,
    'contexts:',
    '- name: podsim',
    '  context:',
    '    cluster: podsim',
    '    user: podsim',
    `    namespace: ${namespace}`,
    'current-context: podsim',
    'preferences: {}',
    'users:',
    '- name: podsim',
    '  user: {}',
    '',
  ].join('\n');
}

/**
 * Writes the kubeconfig to `out` (created or overwritten, mode 0600), or to
 * `<tmp>/podsim-serve-XXXXXX/kubeconfig`. Returns the absolute path. Throws on I/O errors.
 */
export function writeKubeconfig(url: string, out?: string): string {
  const path = out !== undefined ? resolve(out) : join(mkdtempSync(join(tmpdir(), 'podsim-serve-')), 'kubeconfig');
  writeFileSync(path, kubeconfigText(url), { mode: 0o600 });
  return path;
}
