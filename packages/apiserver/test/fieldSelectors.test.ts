/** Field selectors: parsing, matching, upstream error texts. */
import test from 'ava';
import type { Pod } from '@podsim/api';
import { checkFieldLabels, fieldsMatch, parseFieldSelector, selectableFields, type ParsedFieldSelector } from '../src/selectors/fields.js';

function fsel(s: string): ParsedFieldSelector {
  const r = parseFieldSelector(s);
  if ('error' in r) throw new Error(r.error);
  return r;
}

const pod: Pod = {
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [], nodeName: 'node-1', restartPolicy: 'Always' },
  status: { phase: 'Running', podIPs: [{ ip: '10.0.0.1' }] },
};

const fieldCases: Array<[string, boolean]> = [
  ['spec.nodeName=node-1', true],
  ['spec.nodeName==node-1', true],
  ['spec.nodeName=node-2', false],
  ['spec.nodeName!=node-2', true],
  ['metadata.name=p,metadata.namespace=default', true],
  ['spec.nodeName=node-1,status.phase!=Succeeded,status.phase!=Failed', true],
  ['status.phase=Pending', false],
  ['status.podIP=10.0.0.1', true],
  ['spec.nodeName=', false],
];

for (const [s, want] of fieldCases) {
  test(`field selector ${JSON.stringify(s)} ${want ? 'matches' : 'does not match'} a pod on node-1`, (t) => {
    t.is(fieldsMatch(fsel(s), selectableFields('pods', pod)), want);
  });
}

test('field selector spec.nodeName= matches unscheduled pods (what the scheduler watches)', (t) => {
  const unscheduled: Pod = { metadata: { name: 'q', namespace: 'default' }, spec: { containers: [] } };
  t.true(fieldsMatch(fsel('spec.nodeName='), selectableFields('pods', unscheduled)));
});

test('field selector: unsupported field labels and unparseable terms', (t) => {
  t.is(checkFieldLabels('pods', fsel('spec.hostname=x')), 'field label not supported: spec.hostname');
  t.is(checkFieldLabels('pods', fsel('spec.nodeName=x')), undefined);
  t.is(checkFieldLabels('events', fsel('involvedObject.uid=u,involvedObject.kind=Pod')), undefined);
  t.deepEqual(parseFieldSelector('nonsense'), { error: "invalid selector: 'nonsense'; can't understand 'nonsense'" });
});

test('events expose involvedObject.* as selectable fields', (t) => {
  const f = selectableFields('events', {
    metadata: { name: 'e', namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'web-1', namespace: 'default', uid: 'u1' },
    source: { component: 'kubelet' },
  } as never);
  t.true(fieldsMatch(fsel('involvedObject.name=web-1,involvedObject.namespace=default,involvedObject.uid=u1,involvedObject.kind=Pod,source=kubelet'), f));
});
