/** Label and field selectors: parsing, matching, upstream error texts. */
import test from 'ava';
import type { Pod } from '@podsim/api';
import { formatLabelSelector, labelsMatch, labelSelectorString, parseLabelSelector, type ParsedLabelSelector } from '../src/selectors/labels.js';
import { checkFieldLabels, fieldsMatch, parseFieldSelector, selectableFields, type ParsedFieldSelector } from '../src/selectors/fields.js';

function sel(s: string): ParsedLabelSelector {
  const r = parseLabelSelector(s);
  if ('error' in r) throw new Error(r.error);
  return r;
}

const labels = { app: 'web', tier: 'front', env: 'prod' };

const labelCases: Array<[string, boolean]> = [
  ['', true],
  ['app=web', true],
  ['app==web', true],
  ['app=db', false],
  ['app!=db', true],
  ['app!=web', false],
  ['missing!=x', true],
  ['tier in (front,back)', true],
  ['tier in (back)', false],
  ['tier notin (back)', true],
  ['tier notin (front, back)', false],
  ['missing notin (a)', true],
  ['env', true],
  ['missing', false],
  ['!missing', true],
  ['!env', false],
  ['app=web,tier=front,env', true],
  ['app=web,tier=back', false],
  ['  app = web , !gone ', true],
];

for (const [s, want] of labelCases) {
  test(`label selector ${JSON.stringify(s)} ${want ? 'matches' : 'does not match'}`, (t) => {
    t.is(labelsMatch(sel(s), labels), want);
  });
}

test('label selector: gt / lt on integer values', (t) => {
  t.true(labelsMatch(sel('n>3'), { n: '5' }));
  t.false(labelsMatch(sel('n<3'), { n: '5' }));
  t.false(labelsMatch(sel('n>3'), { n: 'x' }));
});

test('label selector: String() sorts requirements by key (not by text) and values in sets', (t) => {
  t.is(labelSelectorString(sel('tier in (b,a),app=web,!old')), 'app=web,!old,tier in (a,b)');
});

test('label selector: parse errors are reported, not thrown', (t) => {
  for (const bad of ['app in web', 'app=', '=web', 'a b', 'app in (a', 'app=x y']) {
    const r = parseLabelSelector(bad);
    if (bad === 'app=') {
      t.false('error' in r, 'an empty value is allowed');
      continue;
    }
    t.true('error' in r, bad);
    if ('error' in r) t.regex(r.error, /^(found '.*', expected|unable to parse requirement)/);
  }
  t.deepEqual(parseLabelSelector('app in web'), { error: "found 'web', expected: '('" });
  const r = parseLabelSelector('app=-bad');
  t.true('error' in r);
  if ('error' in r) t.true(r.error.startsWith('unable to parse requirement: values[0][app]: Invalid value: "-bad"'), r.error);
});

test('FormatLabelSelector: <none> for empty, matchExpressions rendered', (t) => {
  t.is(formatLabelSelector({}), '<none>');
  t.is(formatLabelSelector({ matchLabels: { app: 'x' }, matchExpressions: [{ key: 'k', operator: 'DoesNotExist' }] }), 'app=x,!k');
  t.is(formatLabelSelector({ matchExpressions: [{ key: 'k', operator: 'In', values: [] }] }), '<error>');
});

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
