/**
 * PodDisruptionBudgets (policy/v1) and the eviction check (eviction.go v1.22.8): what `kubectl
 * drain` / `kubectl get pdb` see — an allowed eviction takes one disruption and records the pod,
 * a budget with none left answers 429 with upstream's message and cause, several budgets 500,
 * an unobserved generation 429; storage, status subresource, validation and the Table columns.
 */
import test from 'ava';
import type { ApiResult, Pod, PodDisruptionBudget, PodDisruptionBudgetStatus, Table } from '@podsim/api';
import { Harness, status } from './helpers.js';

function evict(h: Harness, name: string, dryRun = false): ApiResult {
  return h.req({
    type: 'ApiCreate',
    resource: 'pods',
    namespace: 'default',
    name,
    subresource: 'eviction',
    object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } } as never,
    ...(dryRun ? { dryRun: true } : {}),
  });
}

function readyPod(h: Harness, name: string, labels: Record<string, string> = { app: 'web' }): Pod {
  h.createPod(name, { nodeName: 'node-1' }, { labels });
  h.req({
    type: 'ApiPatch',
    resource: 'pods',
    namespace: 'default',
    name,
    subresource: 'status',
    patchType: 'merge',
    patch: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
  });
  return h.get(name).body as Pod;
}

function createPdb(h: Harness, name: string, spec: PodDisruptionBudget['spec']): ApiResult {
  return h.req({ type: 'ApiCreate', resource: 'poddisruptionbudgets', namespace: 'default', object: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec } as never });
}

/** What the disruption controller would write: status at the current generation. */
function setStatus(h: Harness, name: string, st: Partial<PodDisruptionBudgetStatus>): ApiResult {
  const pdb = h.get(name, 'poddisruptionbudgets').body as PodDisruptionBudget;
  const status: PodDisruptionBudgetStatus = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, observedGeneration: pdb.metadata.generation, ...st };
  return h.req({ type: 'ApiUpdate', resource: 'poddisruptionbudgets', namespace: 'default', name, subresource: 'status', object: { ...pdb, status } as never });
}

function pdbOf(h: Harness, name: string): PodDisruptionBudget {
  return h.get(name, 'poddisruptionbudgets').body as PodDisruptionBudget;
}

test('a created PDB has generation 1 and a zero status; a spec change bumps the generation, the main resource cannot write status', (t) => {
  const h = new Harness();
  const r = createPdb(h, 'web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } });
  t.is(r.code, 201);
  const pdb = r.body as PodDisruptionBudget;
  t.is(pdb.metadata.generation, 1);
  t.deepEqual(pdb.status, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 });
  const upd = h.req({ type: 'ApiUpdate', resource: 'poddisruptionbudgets', namespace: 'default', name: 'web', object: { ...pdb, spec: { ...pdb.spec, minAvailable: 1 }, status: { ...pdb.status!, disruptionsAllowed: 5 } } as never });
  t.is(upd.code, 200);
  t.is((upd.body as PodDisruptionBudget).metadata.generation, 2);
  t.is((upd.body as PodDisruptionBudget).status?.disruptionsAllowed, 0);
  t.is(setStatus(h, 'web', { disruptionsAllowed: 1 }).code, 200);
  t.is(pdbOf(h, 'web').status?.disruptionsAllowed, 1);
  t.is(pdbOf(h, 'web').metadata.generation, 2);
});

test('validation: minAvailable and maxUnavailable together, a negative count, a percent over 100% are 422; a negative status count is 422', (t) => {
  const h = new Harness();
  const both = createPdb(h, 'a', { minAvailable: 1, maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } });
  t.is(both.code, 422);
  t.regex(status(both).message ?? '', /minAvailable and maxUnavailable cannot be both set/);
  const neg = createPdb(h, 'b', { minAvailable: -1 });
  t.is(neg.code, 422);
  t.regex(status(neg).message ?? '', /spec\.minAvailable: Invalid value: -1: must be greater than or equal to 0/);
  const pct = createPdb(h, 'c', { maxUnavailable: '150%' });
  t.is(pct.code, 422);
  t.regex(status(pct).message ?? '', /must not be greater than 100%/);
  t.is(createPdb(h, 'd', { maxUnavailable: '50%', selector: { matchLabels: { app: 'web' } } }).code, 201);
  const badStatus = setStatus(h, 'd', { currentHealthy: -1 });
  t.is(badStatus.code, 422);
  t.regex(status(badStatus).message ?? '', /status\.currentHealthy/);
});

test('kubectl get pdb: NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE, N/A for the unset bound', (t) => {
  const h = new Harness();
  createPdb(h, 'web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } });
  setStatus(h, 'web', { disruptionsAllowed: 1 });
  const r = h.at(90).req({ type: 'ApiList', resource: 'poddisruptionbudgets', namespace: 'default', asTable: true });
  const table = r.body as Table;
  t.deepEqual(
    table.columnDefinitions.map((c) => c.name),
    ['Name', 'Min Available', 'Max Unavailable', 'Allowed Disruptions', 'Age'],
  );
  t.deepEqual(table.rows[0].cells, ['web', '2', 'N/A', 1, '90s']);
});

test('an eviction the budget allows takes one disruption, records the pod in disruptedPods and deletes it gracefully', (t) => {
  const h = new Harness();
  readyPod(h, 'web-1');
  readyPod(h, 'web-2');
  createPdb(h, 'web', { minAvailable: 1, selector: { matchLabels: { app: 'web' } } });
  setStatus(h, 'web', { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 });
  const r = h.at(20).req({
    type: 'ApiCreate',
    resource: 'pods',
    namespace: 'default',
    name: 'web-1',
    subresource: 'eviction',
    object: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1' } } as never,
  });
  t.is(r.code, 201);
  const pod = h.get('web-1').body as Pod;
  t.truthy(pod.metadata.deletionTimestamp);
  const pdb = pdbOf(h, 'web');
  t.is(pdb.status?.disruptionsAllowed, 0);
  t.deepEqual(pdb.status?.disruptedPods, { 'web-1': h.api.clock.format(20_000_000) });
  t.like(pdb.status?.conditions?.[0], { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' });
});

test("with no disruption allowed the eviction is 429 TooManyRequests with upstream's message and DisruptionBudget cause; the pod stays", (t) => {
  const h = new Harness();
  readyPod(h, 'web-1');
  readyPod(h, 'web-2');
  createPdb(h, 'web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } });
  setStatus(h, 'web', { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 });
  const r = evict(h, 'web-1');
  t.is(r.code, 429);
  const st = status(r);
  t.is(st.reason, 'TooManyRequests');
  t.is(st.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  t.deepEqual(st.details?.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 2 currently' }]);
  t.falsy((h.get('web-1').body as Pod).metadata.deletionTimestamp);
});

test('a budget whose generation the controller has not observed yet refuses with 429 "still being processed"', (t) => {
  const h = new Harness();
  readyPod(h, 'web-1');
  createPdb(h, 'web', { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } });
  const r = evict(h, 'web-1');
  t.is(r.code, 429);
  t.deepEqual(status(r).details, { retryAfterSeconds: 10, causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web is still being processed by the server.' }] });
});

test('two matching budgets are a 500; a budget with an empty selector or another label matches nothing', (t) => {
  const h = new Harness();
  readyPod(h, 'web-1');
  createPdb(h, 'a', { minAvailable: 1, selector: { matchLabels: { app: 'web' } } });
  createPdb(h, 'b', { minAvailable: 1, selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } });
  const r = evict(h, 'web-1');
  t.is(r.code, 500);
  t.is(status(r).message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  readyPod(h, 'db-1', { app: 'db' });
  createPdb(h, 'everything', { minAvailable: 5, selector: {} });
  t.is(evict(h, 'db-1').code, 201);
});

test('a dry-run eviction neither writes the budget nor deletes the pod; an unready pod of a satisfied budget goes without taking a disruption', (t) => {
  const h = new Harness();
  readyPod(h, 'web-1');
  readyPod(h, 'web-2');
  h.createPod('web-3', { nodeName: 'node-1' }, { labels: { app: 'web' } });
  h.setPhase('web-3', 'Running');
  createPdb(h, 'web', { minAvailable: 1, selector: { matchLabels: { app: 'web' } } });
  setStatus(h, 'web', { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 3 });
  const rv = pdbOf(h, 'web').metadata.resourceVersion;
  t.is(evict(h, 'web-1', true).code, 201);
  t.is(pdbOf(h, 'web').metadata.resourceVersion, rv);
  t.falsy((h.get('web-1').body as Pod).metadata.deletionTimestamp);
  t.is(evict(h, 'web-3').code, 201);
  t.truthy((h.get('web-3').body as Pod).metadata.deletionTimestamp);
  t.is(pdbOf(h, 'web').status?.disruptionsAllowed, 1);
});
