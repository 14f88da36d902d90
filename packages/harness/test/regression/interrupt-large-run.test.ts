/**
 * Ctrl-C on a large run (issue #23 item 6): on a 20k-pod run podsim took ~30 s to exit after
 * SIGINT — the engine only looked at the signal between segments of virtual time and a segment
 * that had been quick could take several seconds once the load rose (it never shrank), then the
 * report read every pod's processes from the whole list (quadratic). Now the hosts stop within a
 * few events (Simulation.interrupt) and the report indexes by pod. A real SIGINT on a
 * 1,500-pod mass deletion: podsim exits 1 with the report of the run so far. The bound on the
 * time is generous on purpose (speed is measured by benchmarks, not tests); docs/benchmarks.md
 * and the commit carry the figures.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NODES = 30;
const PODS = 1500;

const scenario = [
  'kind: Scenario',
  'cluster:',
  '  nodes:',
  ...Array.from({ length: NODES }, (_, i) => `    - { name: node-${i + 1} }`),
  'steps:',
  '  - apply: all',
  `  - wait: { for: ready, selector: app=web, count: ${PODS}, timeout: 1h }`,
  '  - id: del',
  '    delete: { selector: app=web }',
  '  - wait: { for: gone, selector: app=web, timeout: 1h }',
  '---',
  'apiVersion: apps/v1',
  'kind: ReplicaSet',
  'metadata: { name: web }',
  'spec:',
  `  replicas: ${PODS}`,
  '  selector: { matchLabels: { app: web } }',
  '  template:',
  '    metadata: { labels: { app: web } }',
  '    spec:',
  '      terminationGracePeriodSeconds: 30',
  '      containers:',
  '        - name: app',
  '          image: nginx',
  "          lifecycle: { preStop: { exec: { command: [sleep, '15'] } } }",
  '',
].join('\n');

test('a real SIGINT during a 1,500-pod run: podsim exits 1 soon after, with the digest, the tally and the interrupted line', async (t) => {
  t.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'podsim-interrupt-large-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'mass.yaml');
  writeFileSync(file, scenario);
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../src/cli.js', import.meta.url)), 'run', file, '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let sentAt = 0;
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => {
    child.stdout.on('data', (c: Buffer) => {
      const first = out === '';
      out += c.toString();
      // The seed line is out: let the run get busy (pods being created), then Ctrl-C.
      if (first)
        setTimeout(() => {
          sentAt = performance.now();
          child.kill('SIGINT');
        }, 6_000);
    });
    child.on('close', (c) => resolve(c));
  });
  const seconds = (performance.now() - sentAt) / 1000;
  t.log(`exited ${seconds.toFixed(2)} s after SIGINT`);
  t.is(code, 1, out + err);
  t.regex(err, /interrupted; reporting the run so far/);
  t.regex(out, /^virtual .* trace digest [0-9a-f]{16}$/m);
  t.regex(out, /^ {2}interrupted \(Ctrl-C\) at virtual /m);
  t.notRegex(err, /\n\s+at /, 'no stack trace');
  t.true(seconds < 60, `exited ${seconds.toFixed(1)} s after SIGINT`);
});
