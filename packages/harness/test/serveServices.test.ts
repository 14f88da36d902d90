/**
 * The real `kubectl` against `podsim serve` for Services (issue #18): `kubectl apply` a
 * Deployment and its Service, then `get svc`, `get endpoints`, `get endpointslices -o wide` and
 * `describe svc` print what the apiserver's ClusterIP allocation and the endpoints controllers
 * wrote (the pods' IPs on their ports). Without a kubectl on PATH (or in $KUBECTL) these fail.
 */
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { KUBECTL, kubectlClient, until } from './support/kubectl.js';

let dir = '';
let server: RunningServer;
let kubeconfig: string;
let manifests: string;
let validateFlags: string[] = [];
const client = (t: ExecutionContext) => kubectlClient(t, kubeconfig, dir);

test.before(async () => {
  const probe = spawnSync(KUBECTL, ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) throw new Error(`kubectl is required for these tests (${KUBECTL}: ${probe.error?.message ?? probe.stderr})`);
  const v = (JSON.parse(probe.stdout) as { clientVersion: { minor: string; gitVersion: string } }).clientVersion;
  if (!v.gitVersion.includes('dispatcher') && Number.parseInt(v.minor, 10) < 22) validateFlags = ['--validate=false'];
  dir = mkdtempSync(join(tmpdir(), 'podsim-kubectl-svc-'));
  const scenario = join(dir, 'cluster.yaml');
  writeFileSync(scenario, ['kind: Scenario', 'cluster:', '  seed: 1', '  nodes: [{name: node-1}, {name: node-2}]', 'steps:', '  - sleep: 1s', ''].join('\n'));
  manifests = join(dir, 'web.yaml');
  writeFileSync(
    manifests,
    `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  replicas: 2
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers:
        - name: app
          image: nginx:1.21
          ports: [{ name: http, containerPort: 8080 }]
          readinessProbe: { httpGet: { port: 8080 }, periodSeconds: 1 }
---
apiVersion: v1
kind: Service
metadata: { name: web, labels: { app: web } }
spec:
  selector: { app: web }
  ports: [{ name: http, port: 80, targetPort: http }]
`,
  );
  server = await startServer(servePlan({ scenario, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: 20 });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test.serial('kubectl get svc / endpoints / endpointslices -o wide and describe svc show the ClusterIP and the Ready pods', async (t) => {
  t.timeout(120_000);
  const k = client(t);
  const applied = await k.run(['apply', '-f', manifests, ...validateFlags]);
  t.is(applied.code, 0, applied.stderr);
  t.deepEqual(applied.stdout.trim().split('\n'), ['deployment.apps/web created', 'service/web created']);
  const ready = await k.run(['wait', '--for=condition=Ready', 'pod', '-l', 'app=web', '--timeout=60s']);
  t.is(ready.code, 0, ready.stderr);

  const svc = await k.run(['get', 'svc', 'web']);
  t.is(svc.code, 0, svc.stderr);
  const [sh, sr] = svc.stdout.trim().split('\n');
  t.deepEqual(sh.split(/\s{2,}/), ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
  t.regex(sr, /^web\s+ClusterIP\s+10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+\s+<none>\s+80\/TCP\s+\S+$/);
  const clusterIP = sr.split(/\s+/)[2];

  // The endpoints controllers follow the pods' readiness: both IPs on the named target port.
  let ep = '';
  await until('both pods in Endpoints', async () => {
    ep = (await k.run(['get', 'endpoints', 'web'])).stdout;
    return (ep.match(/10\.224\.\d+\.\d+:8080/g) ?? []).length === 2;
  });
  t.regex(ep, /^NAME\s+ENDPOINTS\s+AGE$/m);
  const slices = await k.run(['get', 'endpointslices', '-o', 'wide']);
  t.is(slices.code, 0, slices.stderr);
  const [lh, lr] = slices.stdout.trim().split('\n');
  t.deepEqual(lh.split(/\s{2,}/), ['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE']);
  t.regex(lr, /^web-[a-z0-9]{5}\s+IPv4\s+8080\s+10\.224\.\d+\.\d+,10\.224\.\d+\.\d+\s+\S+$/);

  const d = await k.run(['describe', 'svc', 'web']);
  t.is(d.code, 0, d.stderr);
  t.regex(d.stdout, /^Name:\s+web$/m);
  t.regex(d.stdout, /^Selector:\s+app=web$/m);
  t.regex(d.stdout, /^Type:\s+ClusterIP$/m);
  t.regex(d.stdout, new RegExp(`^IP:\\s+${clusterIP.replaceAll('.', '\\.')}$`, 'm'));
  t.regex(d.stdout, /^Port:\s+http\s+80\/TCP$/m);
  t.regex(d.stdout, /^TargetPort:\s+http\/TCP$/m);
  t.regex(d.stdout, /^Endpoints:\s+10\.224\.\d+\.\d+:8080,10\.224\.\d+\.\d+:8080$/m);
  t.regex(d.stdout, /^Session Affinity:\s+None$/m);
});

test.serial('kubectl: a NodePort and a LoadBalancer (ETP Local, ClientIP) show nodePort:port in PORT(S), <pending> EXTERNAL-IP, the policy, health check port and affinity in describe; a taken nodePort is 422', async (t) => {
  t.timeout(120_000);
  const k = client(t);
  const file = join(dir, 'types.yaml');
  writeFileSync(
    file,
    `apiVersion: v1
kind: Service
metadata: { name: web-np }
spec:
  type: NodePort
  selector: { app: web }
  ports: [{ name: http, port: 80, targetPort: http, nodePort: 30080 }]
---
apiVersion: v1
kind: Service
metadata: { name: web-lb }
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  sessionAffinity: ClientIP
  selector: { app: web }
  ports: [{ name: http, port: 80, targetPort: http }]
`,
  );
  const applied = await k.run(['apply', '-f', file, ...validateFlags]);
  t.is(applied.code, 0, applied.stderr);
  const get = await k.run(['get', 'svc', 'web-np', 'web-lb']);
  t.is(get.code, 0, get.stderr);
  const rows = get.stdout.trim().split('\n').slice(1);
  t.regex(rows[0], /^web-np\s+NodePort\s+10\.\d+\.\d+\.\d+\s+<none>\s+80:30080\/TCP\s+\S+$/);
  t.regex(rows[1], /^web-lb\s+LoadBalancer\s+10\.\d+\.\d+\.\d+\s+<pending>\s+80:3\d{4}\/TCP\s+\S+$/);
  const lbPort = /80:(3\d{4})\/TCP/.exec(rows[1])![1];
  const d = await k.run(['describe', 'svc', 'web-lb']);
  t.is(d.code, 0, d.stderr);
  t.regex(d.stdout, /^Type:\s+LoadBalancer$/m);
  t.regex(d.stdout, new RegExp(`^NodePort:\\s+http\\s+${lbPort}/TCP$`, 'm'));
  t.regex(d.stdout, /^Session Affinity:\s+ClientIP$/m);
  t.regex(d.stdout, /^External Traffic Policy:\s+Local$/m);
  t.regex(d.stdout, /^HealthCheck NodePort:\s+3\d{4}$/m);
  const np = await k.run(['describe', 'svc', 'web-np']);
  t.regex(np.stdout, /^NodePort:\s+http\s+30080\/TCP$/m);
  t.regex(np.stdout, /^External Traffic Policy:\s+Cluster$/m);
  const taken = await k.run(['create', 'service', 'nodeport', 'dup', '--tcp=80:80', '--node-port=30080']);
  t.not(taken.code, 0);
  t.regex(taken.stderr, /Service "dup" is invalid: spec\.ports\[0\]\.nodePort: Invalid value: 30080: provided port is already allocated/);
});
