/**
 * The incremental `kubectl wait` verdict (src/driver/waitTally.ts) against the reference it
 * replaced — conditionHolds over the informer's matches, judged again on every event — over
 * seeded random event sequences of a few pods: same verdict after every event, for each
 * condition, with and without a selector, across a relist (informer cleared).
 */
import test from 'ava';
import type { Pod, WatchEvent, KubeObject } from '@podsim/api';
import { parseLabelSelector, type ParsedLabelSelector } from '@podsim/api';
import { PodInformer, conditionHolds } from '../src/driver/informer.js';
import { WaitTally } from '../src/driver/waitTally.js';
import type { WaitCondition } from '../src/driver/steps.js';

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pod(uid: string, rv: number, r: () => number): Pod {
  const running = r() < 0.6;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      uid,
      name: `p-${uid}`,
      namespace: r() < 0.8 ? 'default' : 'other',
      resourceVersion: String(rv),
      labels: { app: r() < 0.7 ? 'web' : 'db' },
      ...(r() < 0.25 ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'x' }] },
    status: {
      phase: running ? 'Running' : 'Pending',
      ...(running ? { containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: {} } }] } : {}),
      conditions: [{ type: 'Ready', status: running && r() < 0.8 ? 'True' : 'False' }],
    },
  } as unknown as Pod;
}

const CONDITIONS: readonly WaitCondition[] = ['exists', 'terminating', 'running', 'ready', 'gone'];

test('WaitTally gives the verdict of conditionHolds over the informer after every event (200 seeded sequences per condition)', (t) => {
  let checked = 0;
  for (const condition of CONDITIONS) {
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed * 31 + condition.length);
      const inf = new PodInformer();
      const uids = ['a', 'b', 'c', 'd', 'e', 'f'];
      let rv = 0;
      const apply = (ev: WatchEvent<KubeObject>) => {
        inf.apply(ev);
        tally.update((ev.object as Pod).metadata.uid!, ev.type === 'DELETED' ? undefined : (ev.object as Pod));
      };
      // Some pods exist before the wait begins.
      for (const u of uids) if (r() < 0.5) inf.apply({ type: 'ADDED', object: pod(u, ++rv, r) });
      const selector: ParsedLabelSelector | undefined = r() < 0.5 ? (parseLabelSelector('app=web') as ParsedLabelSelector) : undefined;
      const target = r() < 0.5 ? { namespace: 'default' } : undefined;
      const count = 1 + Math.floor(r() * 3);
      const goneUids = new Set(inf.select(target?.namespace, undefined, selector).map((p) => p.metadata.uid!));
      const tally = condition === 'gone' ? new WaitTally('gone', 0, undefined, undefined, goneUids) : new WaitTally(condition, count, target, selector);
      const reference = () =>
        condition === 'gone' ? [...goneUids].every((u) => !inf.has(u)) : conditionHolds(condition, inf.select(target?.namespace, undefined, selector), count);
      t.is(tally.holds(inf), reference(), `${condition} seed ${seed} at the start`);
      // UIDs are never reused: once a pod is gone, its UID never comes back.
      const deleted = new Set<string>();
      for (let step = 0; step < 30; step++) {
        const u = uids[Math.floor(r() * uids.length)];
        const x = r();
        if (x < 0.05) {
          // A relist: the informer forgets everything and refills (pods deleted meanwhile stay away).
          const before = uids.filter((v) => inf.has(v));
          inf.clear();
          tally.invalidate();
          for (const v of uids) if (!deleted.has(v) && r() < 0.5) inf.apply({ type: 'ADDED', object: pod(v, ++rv, r) });
          for (const v of before) if (!inf.has(v)) deleted.add(v);
        } else if (deleted.has(u)) continue;
        else if (x < 0.3 && inf.has(u)) {
          deleted.add(u);
          apply({ type: 'DELETED', object: pod(u, ++rv, r) });
        } else apply({ type: inf.has(u) ? 'MODIFIED' : 'ADDED', object: pod(u, ++rv, r) });
        t.is(tally.holds(inf), reference(), `${condition} seed ${seed} after event ${step}`);
        checked++;
      }
    }
  }
  t.true(checked >= 5 * 200 * 10, String(checked));
});
