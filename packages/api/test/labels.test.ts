/** Label selectors: parsing, matching, upstream error texts (apimachinery `pkg/labels`, `metav1` helpers). */
import test from 'ava';
import {
  formatLabelSelector,
  labelSelectorAsSelector,
  labelSelectorString,
  labelSetMatches,
  labelsMatch,
  parseLabelSelector,
  selectorEmpty,
  type ParsedLabelSelector,
} from '../src/index.js';

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

test('LabelSelectorAsSelector: nil matches nothing, {} everything (Empty), matchLabels and matchExpressions are ANDed', (t) => {
  const compile = (ls: Parameters<typeof labelSelectorAsSelector>[0]): ParsedLabelSelector => {
    const r = labelSelectorAsSelector(ls);
    if ('error' in r) throw new Error(r.error);
    return r;
  };
  const none = compile(undefined);
  const all = compile({});
  const web = compile({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }, { key: 'canary', operator: 'DoesNotExist' }] });
  t.false(labelsMatch(none, { app: 'web' }));
  t.false(selectorEmpty(none));
  t.true(labelsMatch(all, undefined));
  t.true(selectorEmpty(all));
  t.false(selectorEmpty(web));
  t.true(labelsMatch(web, { app: 'web', tier: 'a' }));
  t.false(labelsMatch(web, { app: 'web', tier: 'c' }));
  t.false(labelsMatch(web, { app: 'web', tier: 'a', canary: '1' }));
  t.true('error' in labelSelectorAsSelector({ matchExpressions: [{ key: 'x', operator: 'In', values: [] }] }));
});

test('SelectorFromSet(set).Matches: every key of the set with the same value; no set matches everything', (t) => {
  t.true(labelSetMatches({ app: 'web' }, { app: 'web', tier: 'a' }));
  t.false(labelSetMatches({ app: 'web', tier: 'b' }, { app: 'web', tier: 'a' }));
  t.false(labelSetMatches({ app: 'web' }, undefined));
  t.true(labelSetMatches(undefined, { app: 'web' }));
  t.true(labelSetMatches({}, undefined));
});
