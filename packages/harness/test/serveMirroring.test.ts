/**
 * The real `kubectl` against `podsim serve` for EndpointSlice mirroring (issue #18; spec
 * endpoints-traffic §5): `kubectl apply` of a Service without a selector and its hand-written
 * Endpoints, then `kubectl get endpointslices` lists the slice the mirroring controller made
 * (labelled managed-by endpointslicemirroring-controller.k8s.io, the Endpoints' address on its
 * port), and deleting the Endpoints deletes the slice. Without a kubectl on PATH (or in
 * $KUBECTL) these fail.
 */
import test, { type ExecutionContext } from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlClient, startKubectlServer, until, type KubectlServer } from './support/kubectl.js';

let srv: KubectlServer | undefined;
let manifests: string;
const client = (t: ExecutionContext) => kubectlClient(t, srv!.kubeconfig, srv!.dir);

test.before(async () => {
  srv = await startKubectlServer('podsim-kubectl-mirror-', ['node-1']);
  manifests = join(srv.dir, 'external.yaml');
  writeFileSync(
    manifests,
    `apiVersion: v1
kind: Service
metadata: { name: external-db }
spec:
  ports: [{ name: pg, port: 5432 }]
---
apiVersion: v1
kind: Endpoints
metadata: { name: external-db, labels: { team: data } }
subsets:
  - addresses: [{ ip: 192.168.10.7 }]
    ports: [{ name: pg, port: 5432 }]
`,
  );
});

test.after.always(async () => {
  await srv?.close();
});

test.serial('kubectl apply of a selector-less Service + Endpoints: kubectl get endpointslices shows the mirrored slice; deleting the Endpoints removes it', async (t) => {
  t.timeout(120_000);
  const k = client(t);
  const applied = await k.run(['apply', '-f', manifests, ...srv!.validateFlags]);
  t.is(applied.code, 0, applied.stderr);
  t.deepEqual(applied.stdout.trim().split('\n'), ['service/external-db created', 'endpoints/external-db created']);
  let out = '';
  await until('the mirrored slice', async () => {
    out = (await k.run(['get', 'endpointslices', '-l', 'endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io'])).stdout;
    return /external-db-/.test(out);
  });
  const [head, row] = out.trim().split('\n');
  t.deepEqual(head.split(/\s{2,}/), ['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE']);
  t.regex(row, /^external-db-[a-z0-9]{5}\s+IPv4\s+5432\s+192\.168\.10\.7\s+\S+$/);
  const labels = await k.run(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=external-db', '-o', 'jsonpath={.items[0].metadata.labels.team} {.items[0].metadata.ownerReferences[0].kind} {.items[0].endpoints[0].conditions.ready}']);
  t.is(labels.code, 0, labels.stderr);
  t.is(labels.stdout.trim(), 'data Endpoints true');
  const del = await k.run(['delete', 'endpoints', 'external-db']);
  t.is(del.code, 0, del.stderr);
  await until('the mirrored slice deleted', async () => (await k.run(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=external-db', '-o', 'name'])).stdout.trim() === '');
  t.pass();
});
