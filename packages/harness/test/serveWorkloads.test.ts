/**
 * DaemonSets and Jobs driven by the real `kubectl` against `podsim serve` (issue #17): `apply` a
 * DaemonSet on 3 nodes (one pod per node, `get ds` columns, `rollout status ds`), `drain` refusing
 * the daemon pod without `--ignore-daemonsets` and leaving it running with the flag; `apply` a
 * Job, `wait --for=condition=complete`, `get jobs`, `describe job`, `delete job` (background: its
 * pod goes too), `create job` (a protobuf body); cronjobs are not served. Fresh discovery cache per test (KUBECACHEDIR).
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { kubectlClient, until } from './support/kubectl.js';

const SPEED = 20;

let dir = '';
let server: RunningServer;
let kubeconfig: string;

const kubectl = (t: ExecutionContext) => kubectlClient(t, kubeconfig, dir);

const DS = `apiVersion: apps/v1
kind: DaemonSet
metadata: { name: agent }
spec:
  selector: { matchLabels: { app: agent } }
  template:
    metadata: { labels: { app: agent } }
    spec:
      containers: [{ name: agent, image: busybox:1.34 }]
`;

const JOB = `apiVersion: batch/v1
kind: Job
metadata: { name: pi }
spec:
  template:
    metadata:
      annotations: { podsim.dev/crash: "5s:0" }
    spec:
      restartPolicy: Never
      containers: [{ name: pi, image: perl:5.34 }]
`;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'podsim-workloads-'));
  writeFileSync(join(dir, 'ds.yaml'), DS);
  writeFileSync(join(dir, 'job.yaml'), JOB);
  server = await startServer(servePlan({ nodes: 3, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: SPEED });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test.serial('kubectl apply a DaemonSet on 3 nodes: one pod per node, rolled out; drain refuses its pod without --ignore-daemonsets and leaves it running with it', async (t) => {
  const k = kubectl(t);
  const apply = await k.run(['apply', '-f', join(dir, 'ds.yaml')]);
  t.is(apply.code, 0, apply.stderr);
  t.is(apply.stdout.trim(), 'daemonset.apps/agent created');
  const rollout = await k.run(['rollout', 'status', 'ds/agent', '--timeout=60s']);
  t.is(rollout.code, 0, rollout.stderr);
  t.regex(rollout.stdout, /daemon set "agent" successfully rolled out/);
  const get = await k.run(['get', 'ds', 'agent', '--no-headers']);
  t.regex(get.stdout, /^agent\s+3\s+3\s+3\s+3\s+3\s+<none>\s+\S+$/m);
  const nodes = await k.run(['get', 'pods', '-l', 'app=agent', '-o', 'jsonpath={range .items[*]}{.spec.nodeName}{"\\n"}{end}']);
  t.deepEqual(nodes.stdout.split('\n').filter(Boolean).sort(), ['node-1', 'node-2', 'node-3']);
  const onNode1 = await k.run(['get', 'pods', '-l', 'app=agent', '--field-selector', 'spec.nodeName=node-1', '-o', 'jsonpath={.items[0].metadata.name}']);
  const agent1 = onNode1.stdout.trim();
  t.regex(agent1, /^agent-[a-z0-9]{5}$/);

  const refused = await k.run(['drain', 'node-1', '--timeout=30s']);
  t.not(refused.code, 0);
  t.regex(refused.stderr, new RegExp(`cannot delete DaemonSet-managed Pods \\(use --ignore-daemonsets to ignore\\): default/${agent1}`));
  const drain = await k.run(['drain', 'node-1', '--ignore-daemonsets', '--timeout=60s']);
  t.is(drain.code, 0, drain.stderr);
  t.regex(drain.stdout + drain.stderr, new RegExp(`ignoring DaemonSet-managed Pods: default/${agent1}`));
  t.regex(drain.stdout, /^node\/node-1 drained$/m);
  const still = await k.run(['get', 'pod', agent1, '-o', 'jsonpath={.status.phase} {.metadata.deletionTimestamp}']);
  t.is(still.stdout.trim(), 'Running', 'the daemon pod keeps running on the drained node');
  const uncordon = await k.run(['uncordon', 'node-1']);
  t.is(uncordon.code, 0, uncordon.stderr);
});

test.serial('kubectl apply a Job, wait --for=condition=complete, get and describe it, delete job removes its pod; cronjobs are not served', async (t) => {
  const k = kubectl(t);
  const apply = await k.run(['apply', '-f', join(dir, 'job.yaml')]);
  t.is(apply.code, 0, apply.stderr);
  t.is(apply.stdout.trim(), 'job.batch/pi created');
  const wait = await k.run(['wait', '--for=condition=complete', 'job/pi', '--timeout=60s']);
  t.is(wait.code, 0, wait.stderr);
  t.is(wait.stdout.trim(), 'job.batch/pi condition met');
  const get = await k.run(['get', 'jobs', '--no-headers']);
  t.regex(get.stdout, /^pi\s+1\/1\s+\d+s\s+\S+$/m);
  const labelled = await k.run(['get', 'jobs', '-l', 'job-name=pi', '-o', 'name']);
  t.is(labelled.stdout.trim(), 'job.batch/pi', 'the Job carries its template labels');
  const pod = await k.run(['get', 'pods', '-l', 'job-name=pi', '--no-headers']);
  t.regex(pod.stdout, /^pi-[a-z0-9]{5}\s+0\/1\s+Completed\s+0\s/m);
  const describe = await k.run(['describe', 'job', 'pi']);
  t.is(describe.code, 0, describe.stderr);
  t.regex(describe.stdout, /Pods Statuses:\s+0 Active \/ 1 Succeeded \/ 0 Failed/);
  t.regex(describe.stdout, /Normal\s+SuccessfulCreate\s+.*job-controller\s+Created pod: pi-/);
  t.regex(describe.stdout, /Normal\s+Completed\s+.*job-controller\s+Job completed/);
  const del = await k.run(['delete', 'job', 'pi']);
  t.is(del.code, 0, del.stderr);
  t.is(del.stdout.trim(), 'job.batch "pi" deleted');
  await until('the Job’s finished pod to be gone', async () => (await k.run(['get', 'pods', '-l', 'job-name=pi', '-o', 'name'])).stdout.trim() === '');
  // kubectl create job sends a protobuf body (typed client).
  const created = await k.run(['create', 'job', 'hello', '--image=busybox']);
  t.is(created.code, 0, created.stderr);
  t.is(created.stdout.trim(), 'job.batch/hello created');
  const spec = await k.run(['get', 'job', 'hello', '-o', 'jsonpath={.spec.completions} {.spec.backoffLimit} {.spec.template.spec.restartPolicy} {.spec.template.spec.containers[0].image}']);
  t.is(spec.stdout.trim(), '1 6 Never busybox');
  const cron = await k.run(['get', 'cronjobs']);
  t.not(cron.code, 0);
  t.regex(cron.stderr, /the server doesn't have a resource type "cronjobs"/);
});

test.serial('deploy/explore-job.yaml (the Indexed Job of README "Seed sweeps on a Kubernetes cluster") is accepted by kubectl apply --dry-run=server, and nothing is created', async (t) => {
  const k = kubectl(t);
  const r = await k.run(['apply', '--dry-run=server', '-f', 'deploy/explore-job.yaml']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^job\.batch\/podsim-explore created \(server dry run\)$/m);
  const get = await k.run(['get', 'job', 'podsim-explore']);
  t.not(get.code, 0);
  t.regex(get.stderr, /NotFound|not found/);
  // The same manifest with a broken field is refused by the server (validation ran).
  const bad = join(dir, 'bad-job.yaml');
  writeFileSync(bad, readFileSync('deploy/explore-job.yaml', 'utf8').replace(/completionMode: Indexed/, 'completionMode: Sorted'));
  const r2 = await k.run(['apply', '--dry-run=server', '-f', bad]);
  t.not(r2.code, 0, r2.stdout);
  t.regex(r2.stderr, /completionMode/);
});
