/**
 * Issue #20 item 1 for the newer kinds: StatefulSet, ControllerRevision, Service, Endpoints,
 * EndpointSlice, PersistentVolumeClaim and Lease have entries in podsim's type table
 * (protobufSchema.ts), so the real kubectl's `explain` finds their fields in `/openapi/v3`, and a
 * manifest typo is refused by Strict field validation (kubectl 1.32's default) instead of stored.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { servePlan } from '../src/serve/servePlan.js';
import { writeKubeconfig } from '../src/serve/kubeconfig.js';
import { kubectlClient } from './support/kubectl.js';

let dir = '';
let server: RunningServer;
let kubeconfig: string;

const client = (t: ExecutionContext) => kubectlClient(t, kubeconfig, dir);

function manifest(name: string, doc: unknown): string {
  const f = join(dir, name);
  writeFileSync(f, JSON.stringify(doc, null, 2));
  return f;
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'podsim-schemas-'));
  server = await startServer(servePlan({ epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: 10 });
  kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
});

test.after.always(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test('kubectl explain finds the fields of StatefulSet, Service, Endpoints, EndpointSlice, PVC, ControllerRevision and Lease', async (t) => {
  const k = client(t);
  const cases: [string, RegExp][] = [
    ['sts.spec', /GROUP:\s+apps\nKIND:\s+StatefulSet\nVERSION:\s+v1\n\nFIELD: spec <StatefulSetSpec>[\s\S]*\n {2}podManagementPolicy\t<string>\n[\s\S]*\n {2}volumeClaimTemplates\t<\[\]PersistentVolumeClaim>\n/],
    ['sts.spec.volumeClaimTemplates.spec.storageClassName', /FIELD: storageClassName <string>/],
    ['svc.spec.sessionAffinityConfig.clientIP.timeoutSeconds', /KIND:\s+Service\n[\s\S]*FIELD: timeoutSeconds <integer>/],
    ['ep.subsets.addresses.ip', /KIND:\s+Endpoints\n[\s\S]*FIELD: ip <string>/],
    ['endpointslice.endpoints.conditions.ready', /GROUP:\s+discovery.k8s.io\nKIND:\s+EndpointSlice\n[\s\S]*FIELD: ready <boolean>/],
    ['pvc.status.phase', /KIND:\s+PersistentVolumeClaim\n[\s\S]*FIELD: phase <string>/],
    ['controllerrevision.revision', /KIND:\s+ControllerRevision\n[\s\S]*FIELD: revision <integer>/],
    ['lease.spec.renewTime', /GROUP:\s+coordination.k8s.io\nKIND:\s+Lease\n[\s\S]*FIELD: renewTime <string>/],
    ['ds.spec.updateStrategy.type', /KIND:\s+DaemonSet\n[\s\S]*FIELD: type <string>/],
    ['job.spec.backoffLimit', /KIND:\s+Job\n[\s\S]*FIELD: backoffLimit <integer>/],
  ];
  for (const [path, want] of cases) {
    const r = await k.run(['explain', path]);
    t.is(r.code, 0, `${path}: ${r.stderr}`);
    t.regex(r.stdout, want, path);
  }
});

const selector = { matchLabels: { app: 'web' } };
const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.21' }] } };

test('a typo in a StatefulSet, Service, Endpoints, EndpointSlice, PVC or Lease manifest is refused with strict decoding errors and nothing is stored', async (t) => {
  const k = client(t);
  const cases: [string, string, Record<string, unknown>, string][] = [
    [
      'statefulset',
      'web',
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'web' },
        spec: {
          replcas: 3,
          serviceName: 'web',
          selector,
          template,
          // A claim template is a whole PVC: its apiVersion / kind are fields, its typo is not.
          volumeClaimTemplates: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClas: 'x' } }],
        },
      },
      'StatefulSet in version "v1" cannot be handled as a StatefulSet: strict decoding error: unknown field "spec.replcas", unknown field "spec.volumeClaimTemplates[0].spec.storageClas"',
    ],
    [
      'service',
      'web',
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { slector: { app: 'web' }, ports: [{ port: 80, targetPrt: 8080 }] } },
      'Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "spec.slector", unknown field "spec.ports[0].targetPrt"',
    ],
    [
      'endpoints',
      'web',
      { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' }, subsets: [{ adresses: [{ ip: '10.0.0.1' }] }] },
      'Endpoints in version "v1" cannot be handled as a Endpoints: strict decoding error: unknown field "subsets[0].adresses"',
    ],
    [
      'endpointslice',
      'web-1',
      { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'web-1' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], condition: { ready: true } }] },
      'EndpointSlice in version "v1" cannot be handled as a EndpointSlice: strict decoding error: unknown field "endpoints[0].condition"',
    ],
    [
      'pvc',
      'data',
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { request: { storage: '1Gi' } } } },
      'PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: strict decoding error: unknown field "spec.resources.request"',
    ],
    [
      'lease',
      'l',
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'a', leaseDurationSecond: 3 } },
      'Lease in version "v1" cannot be handled as a Lease: strict decoding error: unknown field "spec.leaseDurationSecond"',
    ],
  ];
  for (const [resource, name, doc, message] of cases) {
    const file = manifest(`${resource}.json`, doc);
    const r = await k.run(['apply', '-f', file]);
    t.is(r.code, 1, resource);
    // kubectl prints the fields in its own order; the set is what matters.
    const got = r.stderr.trim();
    t.true(got.startsWith(`Error from server (BadRequest): error when creating "${file}": ${message.slice(0, message.indexOf('unknown field'))}`), got);
    for (const f of message.match(/unknown field "[^"]+"/g)!) t.true(got.includes(f), `${resource}: ${f} in ${got}`);
    t.is((await k.run(['get', resource, name])).code, 1, `${resource}: nothing was created`);
  }
  // The same manifests without the typos are accepted (the table has every field they use).
  const sts = await k.run(['apply', '-f', manifest('sts-ok.json', { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'ok' }, spec: { replicas: 1, serviceName: 'ok', selector, template, volumeClaimTemplates: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] } })]);
  t.is(sts.code, 0, sts.stderr);
  const svc = await k.run(['apply', '-f', manifest('svc-ok.json', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ok' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }], sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } } })]);
  t.is(svc.code, 0, svc.stderr);
});

test('/openapi/v2: kubectl explain --output=plaintext-openapiv2 reads the protobuf document; JSON for other clients', async (t) => {
  const k = client(t);
  const field = await k.run(['explain', 'pod.spec.terminationGracePeriodSeconds', '--output=plaintext-openapiv2']);
  t.is(field.code, 0, field.stderr);
  t.regex(field.stdout, /^KIND:\s+Pod\nVERSION:\s+v1\n\nFIELD:\s+terminationGracePeriodSeconds <integer>\n\nDESCRIPTION:\n\s+Seconds the pod gets to stop gracefully once it is deleted/);
  const sts = await k.run(['explain', 'sts.spec', '--output=plaintext-openapiv2']);
  t.is(sts.code, 0, sts.stderr);
  t.regex(sts.stdout, /KIND:\s+StatefulSet\nVERSION:\s+apps\/v1\n[\s\S]*RESOURCE:\s+spec <Object>[\s\S]*\n {3}volumeClaimTemplates\t<\[\]Object>\n/);
  const rec = await k.run(['explain', 'lease', '--recursive', '--output=plaintext-openapiv2']);
  t.is(rec.code, 0, rec.stderr);
  t.regex(rec.stdout, /\n {6}renewTime\t<string>\n/);

  const res = await fetch(`${server.url}/openapi/v2`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  const doc = (await res.json()) as { swagger: string; definitions: Record<string, { 'x-kubernetes-group-version-kind'?: { group: string; kind: string }[]; properties?: Record<string, { $ref?: string }> }> };
  t.is(doc.swagger, '2.0');
  t.deepEqual(doc.definitions['io.k8s.api.apps.v1.StatefulSet']['x-kubernetes-group-version-kind'], [{ group: 'apps', version: 'v1', kind: 'StatefulSet' }]);
  t.is(doc.definitions['io.k8s.api.apps.v1.StatefulSet'].properties?.spec.$ref, '#/definitions/io.k8s.api.apps.v1.StatefulSetSpec');
  // The PVC is a kind of the core group: its own definition (with its GVK) wins over the StatefulSet's reference.
  t.deepEqual(doc.definitions['io.k8s.api.core.v1.PersistentVolumeClaim']['x-kubernetes-group-version-kind']?.map((g) => g.kind), ['PersistentVolumeClaim']);
});

test('managedFields: kubectl create / label record Update entries per manager; an apply conflicts with them; a field an applier drops is removed', async (t) => {
  const k = client(t);
  const d = (replicas: number, labels: Record<string, string>) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'mf', labels },
    spec: { replicas, selector: { matchLabels: { app: 'mf' } }, template: { metadata: { labels: { app: 'mf' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.21' }] } } },
  });
  t.is((await k.run(['create', '-f', manifest('mf.json', d(2, { a: 'b' }))])).code, 0);
  t.is((await k.run(['label', 'deployment', 'mf', 'x=y'])).code, 0);
  const managed = async () =>
    (JSON.parse((await k.run(['get', 'deployment', 'mf', '-o', 'json', '--show-managed-fields'])).stdout) as { metadata: { managedFields: { manager: string; operation: string; apiVersion: string; fieldsV1: Record<string, unknown> }[] } }).metadata.managedFields;
  const first = await managed();
  t.deepEqual(first.map((m) => [m.manager, m.operation, m.apiVersion]), [
    ['kubectl-create', 'Update', 'apps/v1'],
    ['kubectl-label', 'Update', 'apps/v1'],
  ]);
  t.like(first[0].fieldsV1, { 'f:metadata': { 'f:labels': { 'f:a': {} } }, 'f:spec': { 'f:replicas': {} } });
  t.deepEqual(first[1].fieldsV1, { 'f:metadata': { 'f:labels': { 'f:x': {} } } });
  // An applier changing a field an Update manager owns conflicts, named as upstream names Update managers.
  const conflict = await k.run(['apply', '--server-side', '--field-manager=alice', '-f', manifest('mf-3.json', d(3, { a: 'b' }))]);
  t.is(conflict.code, 1);
  t.regex(conflict.stderr, /Apply failed with 1 conflict: conflict with "kubectl-create" using apps\/v1: \.spec\.replicas/);
  // alice applies a label z, then a configuration without it: z goes (nobody else owns it); x (kubectl-label's) stays.
  t.is((await k.run(['apply', '--server-side', '--field-manager=alice', '-f', manifest('mf-z.json', d(2, { a: 'b', z: 'q' }))])).code, 0);
  t.is((await k.run(['get', 'deployment', 'mf', '-o', 'jsonpath={.metadata.labels.z}'])).stdout, 'q');
  t.is((await k.run(['apply', '--server-side', '--field-manager=alice', '-f', manifest('mf-noz.json', d(2, { a: 'b' }))])).code, 0);
  t.deepEqual(JSON.parse((await k.run(['get', 'deployment', 'mf', '-o', 'jsonpath={.metadata.labels}'])).stdout), { a: 'b', x: 'y' });
});
