/**
 * Init containers through the real `kubectl get pods -w` against `podsim serve`: a pod with two
 * init containers that each exit 0 after 20 virtual seconds prints Init:0/2, Init:1/2,
 * PodInitializing, then 1/1 Running (the apiserver's printPod; the in-process counterpart is
 * scenarios/initContainers.test.ts). Only the order of the STATUS column is asserted, not ages.
 * The watch is known to be live (an anchor pod printed) before the pod is created, so no row is
 * lost to kubectl's start-up. Without a kubectl on PATH (or in $KUBECTL) this test fails.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { kubectlClient, until } from './support/kubectl.js';

/** 20 virtual seconds per init container are 2 s of wall time at 10x. */
const SPEED = 10;

let dir = '';
let server: RunningServer;
let kubeconfig: string;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'podsim-init-'));
  server = await startServer(servePlan({ nodes: 1, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: SPEED });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test('kubectl get pods -w prints Init:0/2, Init:1/2, PodInitializing, 1/1 Running for a pod with two init containers', async (t) => {
  const k = kubectlClient(t, kubeconfig, dir);
  const anchor = await k.run(['run', 'anchor', '--image=nginx']);
  t.is(anchor.code, 0, anchor.stderr);

  const file = join(dir, 'app.json');
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'app',
        annotations: { 'podsim.dev/wait-db.crash': '20s:0', 'podsim.dev/migrate.crash': '20s:0' },
      },
      spec: {
        containers: [{ name: 'app', image: 'nginx:1.21' }],
        initContainers: [
          { name: 'wait-db', image: 'busybox:1.35' },
          { name: 'migrate', image: 'busybox:1.35' },
        ],
      },
    }),
  );

  const watch = k.background(['get', 'pods', '-w']);
  const appRows = () =>
    watch
      .out()
      .split('\n')
      .filter((l) => l.startsWith('app '))
      .map((l) => l.trim().split(/\s+/).slice(1, 3).join(' '));
  try {
    await until('the watch to print the anchor pod', () => watch.out().includes('anchor'), 60_000);
    const created = await k.run(['apply', '-f', file]);
    t.is(created.code, 0, created.stderr);
    t.is(created.stdout.trim(), 'pod/app created');
    await until('the app pod to be 1/1 Running', () => appRows().includes('1/1 Running'), 120_000);
  } finally {
    watch.proc.kill('SIGTERM');
  }
  const rows = appRows();
  const order = ['0/1 Init:0/2', '0/1 Init:1/2', '0/1 PodInitializing', '1/1 Running'];
  const idx = order.map((r) => rows.indexOf(r));
  t.true(
    idx.every((i) => i >= 0) && idx.every((i, n) => n === 0 || i > idx[n - 1]),
    `expected ${order.join(' → ')} in order; the watch printed:\n${watch.out()}`,
  );
  t.false(rows.includes('0/1 ContainerCreating'), watch.out());
});
