/**
 * `podsim serve --scenario FILE` prints the scenario's load warnings as `podsim run` does (they
 * were dropped): a manifest kind podsim skips (issue #25 item 13). A livenessProbe is run by the
 * kubelet since issue #26, so it is no warning.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runServe } from '../src/serve/command.js';
import { MANIFEST_KINDS } from '../src/scenario/schema.js';

test('podsim serve --scenario prints one warning per skipped kind (none for a livenessProbe), then serves', async (t) => {
  t.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'podsim-serve-warn-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'app.yaml');
  writeFileSync(
    file,
    `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
---
apiVersion: v1
kind: Pod
metadata: { name: web }
spec:
  containers:
    - name: app
      image: nginx:1.21
      livenessProbe: { tcpSocket: { port: 80 } }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: web }
`,
  );
  const out: string[] = [];
  const err: string[] = [];
  const code = await runServe({ scenario: file, host: '127.0.0.1', port: 0, speed: 1 }, { out: (l) => out.push(l), err: (l) => err.push(l) }, Promise.resolve());
  t.is(code, 0, err.join('\n'));
  t.deepEqual(err, [
    `${file}:17:7: warning: ConfigMap/web kind: skipped: podsim does not simulate ConfigMap (it simulates ${MANIFEST_KINDS.join(', ')})`,
  ]);
  t.regex(out[0], /^podsim serve: .*app\.yaml \(nodes node-1; seed 1\)/);
});
