/**
 * apps/v1 StatefulSet, ControllerRevision and core/v1 PersistentVolumeClaim through the ApiServer
 * (v1.22 strategies): defaults, the alpha minReadySeconds dropped, spec fields other than
 * replicas / template / updateStrategy immutable, /scale, the claim bound at once, and the
 * `kubectl get` columns.
 */
import test from 'ava';
import type { ControllerRevision, PersistentVolumeClaim, Scale, StatefulSet, Status, Table } from '@podsim/api';
import { Harness } from './helpers.js';

const sts = (spec: Partial<StatefulSet['spec']> = {}): StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.21', volumeMounts: [{ name: 'data', mountPath: '/d' }] }] } },
    ...spec,
  },
});

test('create: SetDefaults_StatefulSet, status {replicas: 0}, generation 1, minReadySeconds dropped (gate off); the pod spec is not validated', (t) => {
  const h = new Harness();
  const r = h.req({ type: 'ApiCreate', resource: 'statefulsets', namespace: 'default', object: sts({ minReadySeconds: 10 }) });
  t.is(r.code, 201, JSON.stringify(r.body));
  const s = r.body as StatefulSet;
  t.like(s.spec, { replicas: 1, podManagementPolicy: 'OrderedReady', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, revisionHistoryLimit: 10, minReadySeconds: 0 });
  t.deepEqual(s.status, { replicas: 0 });
  t.is(s.metadata.generation, 1);
});

test('validation: selector must match the template, restartPolicy Always, immutable spec fields', (t) => {
  const h = new Harness();
  const bad = h.req({ type: 'ApiCreate', resource: 'statefulsets', namespace: 'default', object: sts({ selector: { matchLabels: { app: 'other' } } }) });
  t.is(bad.code, 422);
  t.regex((bad.body as Status).message ?? '', /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/);
  const created = h.req({ type: 'ApiCreate', resource: 'statefulsets', namespace: 'default', object: sts() }).body as StatefulSet;
  const upd = h.req({ type: 'ApiUpdate', resource: 'statefulsets', namespace: 'default', name: 'web', object: { ...created, spec: { ...created.spec, serviceName: 'x' } } as StatefulSet });
  t.is(upd.code, 422);
  t.regex((upd.body as Status).message ?? '', /spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy' and 'minReadySeconds' are forbidden/);
  const ok = h.req({ type: 'ApiUpdate', resource: 'statefulsets', namespace: 'default', name: 'web', object: { ...created, spec: { ...created.spec, replicas: 3 } } as StatefulSet });
  t.is(ok.code, 200);
  t.is((ok.body as StatefulSet).metadata.generation, 2);
});

test('/scale of a StatefulSet reads and writes spec.replicas', (t) => {
  const h = new Harness();
  h.req({ type: 'ApiCreate', resource: 'statefulsets', namespace: 'default', object: sts({ replicas: 3 }) });
  const get = h.req({ type: 'ApiGet', resource: 'statefulsets', namespace: 'default', name: 'web', subresource: 'scale' });
  t.like(get.body as Scale, { kind: 'Scale', spec: { replicas: 3 }, status: { replicas: 0, selector: 'app=web' } });
  const put = h.req({ type: 'ApiPatch', resource: 'statefulsets', namespace: 'default', name: 'web', subresource: 'scale', patchType: 'merge', patch: { spec: { replicas: 1 } } });
  t.is(put.code, 200);
  const s = h.req({ type: 'ApiGet', resource: 'statefulsets', namespace: 'default', name: 'web' }).body as StatefulSet;
  t.is(s.spec.replicas, 1);
});

test('a PersistentVolumeClaim is stored Bound to an instant volume; no spec is a 422, not a crash', (t) => {
  const h = new Harness();
  const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-web-0' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } as PersistentVolumeClaim;
  const r = h.req({ type: 'ApiCreate', resource: 'persistentvolumeclaims', namespace: 'default', object: pvc });
  t.is(r.code, 201);
  const c = r.body as PersistentVolumeClaim;
  t.regex(c.spec.volumeName ?? '', /^pvc-[0-9a-f-]{36}$/);
  t.deepEqual(c.status, { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } });
  const table = h.req({ type: 'ApiList', resource: 'persistentvolumeclaims', namespace: 'default', asTable: true }).body as Table;
  t.deepEqual(table.columnDefinitions.map((d) => d.name), ['Name', 'Status', 'Volume', 'Capacity', 'Access Modes', 'StorageClass', 'Age']);
  t.deepEqual(table.rows[0].cells.slice(0, 6), ['data-web-0', 'Bound', c.spec.volumeName, '1Gi', 'RWO', '']);
  const none = h.req({ type: 'ApiCreate', resource: 'persistentvolumeclaims', namespace: 'default', object: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'x' } } as PersistentVolumeClaim });
  t.is(none.code, 422);
});

test('get sts / controllerrevisions columns: READY ready/desired; CONTROLLER kind.group/name and REVISION', (t) => {
  const h = new Harness();
  const s = h.req({ type: 'ApiCreate', resource: 'statefulsets', namespace: 'default', object: sts({ replicas: 3 }) }).body as StatefulSet;
  const table = h.req({ type: 'ApiList', resource: 'statefulsets', namespace: 'default', asTable: true }).body as Table;
  t.deepEqual(table.columnDefinitions.map((d) => d.name), ['Name', 'Ready', 'Age']);
  t.deepEqual(table.rows[0].cells.slice(0, 2), ['web', '0/3']);
  const cr: ControllerRevision = {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: { name: 'web-abc', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: s.metadata.uid ?? '', controller: true }] },
    data: { spec: {} },
    revision: 2,
  };
  t.is(h.req({ type: 'ApiCreate', resource: 'controllerrevisions', namespace: 'default', object: cr }).code, 201);
  const crs = h.req({ type: 'ApiList', resource: 'controllerrevisions', namespace: 'default', asTable: true }).body as Table;
  t.deepEqual(crs.rows[0].cells.slice(0, 3), ['web-abc', 'statefulset.apps/web', 2]);
  const changed = h.req({ type: 'ApiUpdate', resource: 'controllerrevisions', namespace: 'default', name: 'web-abc', object: { ...cr, data: { spec: { x: 1 } } } as ControllerRevision });
  t.is(changed.code, 422, 'data is immutable');
});
