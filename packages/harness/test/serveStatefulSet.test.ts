/**
 * The real `kubectl` against `podsim serve` for a StatefulSet (issue #16): `apply`, `rollout
 * status sts` (1.22's "partitioned roll out complete" wording: partition defaults to 0),
 * `get sts|pvc|controllerrevisions`, `scale --replicas=1` with `get pods -w` showing the pods go
 * in reverse ordinal order one at a time, `set image` + `rollout history|undo sts` (the rollback
 * bumps the old ControllerRevision to revision 3 instead of adding one), `describe sts` with the
 * controller's events, and `delete sts` leaving the claims.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { kubectlClient, until } from './support/kubectl.js';

let dir = '';
let server: RunningServer;
let kubeconfig: string;
let file: string;

const STS = `apiVersion: apps/v1
kind: StatefulSet
metadata: { name: web }
spec:
  replicas: 3
  serviceName: web
  selector: { matchLabels: { app: web } }
  template:
    metadata:
      labels: { app: web }
      annotations: { podsim.dev/on-sigterm: "exit:2s:0" }
    spec:
      terminationGracePeriodSeconds: 10
      containers: [{ name: app, image: "nginx:1.21" }]
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 1Gi } } }
`;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'podsim-sts-'));
  file = join(dir, 'web.yaml');
  writeFileSync(file, STS);
  server = await startServer(servePlan({ nodes: 1, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: 20 });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test.serial('kubectl apply, rollout status, scale down in reverse order, rollout history and undo, describe, delete on a StatefulSet', async (t) => {
  t.timeout(180_000);
  const k = kubectlClient(t, kubeconfig, dir);
  const applied = await k.run(['apply', '-f', file]);
  t.is(applied.code, 0, applied.stderr);
  t.is(applied.stdout.trim(), 'statefulset.apps/web created');
  const status = await k.run(['rollout', 'status', 'sts/web', '--timeout=60s']);
  t.is(status.code, 0, status.stderr);
  t.regex(status.stdout, /partitioned roll out complete: 3 new pods have been updated\.\.\.\n$/);

  const sts = await k.run(['get', 'sts', 'web']);
  t.regex(sts.stdout, /^NAME\s+READY\s+AGE\nweb\s+3\/3\s+\S+\n$/);
  const pvcs = await k.run(['get', 'pvc', '-o', 'custom-columns=NAME:.metadata.name,STATUS:.status.phase', '--no-headers']);
  t.deepEqual(pvcs.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/)), [
    ['data-web-0', 'Bound'],
    ['data-web-1', 'Bound'],
    ['data-web-2', 'Bound'],
  ]);
  const revs = await k.run(['get', 'controllerrevisions']);
  t.regex(revs.stdout, /^web-\S+\s+statefulset\.apps\/web\s+1\s+\S+$/m);

  // Scale to 1 while watching: web-2 goes first and is gone before web-1 starts terminating.
  const watch = k.background(['get', 'pods', '-w', '--output-watch-events']);
  await until('the watch to list the pods', () => watch.out().includes('web-2'), 30_000);
  const scaled = await k.run(['scale', 'sts', 'web', '--replicas=1']);
  t.is(scaled.stdout.trim(), 'statefulset.apps/web scaled');
  await until('web-1 to be deleted', () => /DELETED\s+web-1\s/.test(watch.out()), 60_000);
  watch.proc.kill('SIGTERM');
  const events = watch
    .out()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => c.length >= 4 && c[0] !== 'EVENT');
  const first = (pred: (c: string[]) => boolean) => events.findIndex(pred);
  const web2Terminating = first((c) => c[1] === 'web-2' && c.includes('Terminating'));
  const web2Gone = first((c) => c[0] === 'DELETED' && c[1] === 'web-2');
  const web1Terminating = first((c) => c[1] === 'web-1' && c.includes('Terminating'));
  t.true(web2Terminating >= 0 && web2Gone > web2Terminating, watch.out());
  t.true(web1Terminating > web2Gone, `web-1 started terminating before web-2 was gone:\n${watch.out()}`);
  t.false(events.some((c) => c[1] === 'web-0' && c.includes('Terminating')), 'web-0 was touched');

  // A template change makes revision 2; undo goes back to revision 1's template as revision 3.
  const setImage = await k.run(['set', 'image', 'sts/web', 'app=nginx:1.22']);
  t.is(setImage.code, 0, setImage.stderr);
  t.is((await k.run(['rollout', 'status', 'sts/web', '--timeout=60s'])).code, 0);
  const history = await k.run(['rollout', 'history', 'sts/web']);
  t.regex(history.stdout, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
  const undo = await k.run(['rollout', 'undo', 'sts/web']);
  t.is(undo.stdout.trim(), 'statefulset.apps/web rolled back', undo.stderr);
  t.is((await k.run(['rollout', 'status', 'sts/web', '--timeout=60s'])).code, 0);
  const after = await k.run(['rollout', 'history', 'sts/web']);
  t.regex(after.stdout, /REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);
  const image = await k.run(['get', 'pod', 'web-0', '-o', 'jsonpath={.spec.containers[0].image}']);
  t.is(image.stdout, 'nginx:1.21');

  const describe = await k.run(['describe', 'sts', 'web']);
  t.regex(describe.stdout, /^Replicas:\s+1 desired \| 1 total$/m);
  t.regex(describe.stdout, /^Update Strategy:\s+RollingUpdate\n\s+Partition:\s+0$/m);
  t.regex(describe.stdout, /Volume Claims:\n\s+Name:\s+data/);
  t.regex(describe.stdout, /SuccessfulCreate\s+\S+\s+statefulset-controller\s+create Claim data-web-0 Pod web-0 in StatefulSet web success/);
  t.regex(describe.stdout, /SuccessfulDelete\s+\S+\s+statefulset-controller\s+delete Pod web-2 in StatefulSet web successful/);

  // Deleting the set removes its pods and revisions (GC); the claims stay (1.22 has no retention policy).
  t.is((await k.run(['delete', 'sts', 'web'])).code, 0);
  await until('the pods and revisions to go', async () => {
    const r = await k.run(['get', 'pods,controllerrevisions', '-o', 'name']);
    return r.stdout.trim() === '';
  }, 60_000);
  const left = await k.run(['get', 'pvc', '-o', 'name']);
  t.deepEqual(left.stdout.trim().split('\n'), ['persistentvolumeclaim/data-web-0', 'persistentvolumeclaim/data-web-1', 'persistentvolumeclaim/data-web-2']);
});
