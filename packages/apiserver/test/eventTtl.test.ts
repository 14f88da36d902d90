import test from 'ava';
import type { Event, KubeList } from '@podsim/api';
import { Harness } from './helpers.js';

const event = (name: string): Event => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
  reason: 'Started',
  message: 'Started container c',
  count: 1,
  type: 'Normal',
});

const names = (h: Harness) => (h.req({ type: 'ApiList', resource: 'events', namespace: 'default' }).body as KubeList).items.map((e) => e.metadata.name);

test('--event-ttl: an Event is deleted 1 h (virtual) after its last write; a patch renews it; watchers see DELETED', (t) => {
  const h = new Harness();
  h.at(0).req({ type: 'ApiCreate', resource: 'events', namespace: 'default', object: event('a') });
  h.at(10).req({ type: 'ApiCreate', resource: 'events', namespace: 'default', object: event('b') });
  h.at(1800).req({ type: 'ApiPatch', resource: 'events', namespace: 'default', name: 'b', patchType: 'merge', patch: { count: 2 } });
  h.req({ type: 'ApiWatch', resource: 'events', namespace: 'default', watchId: 'w', resourceVersion: String(h.writes.at(-1)!.rv) }, 'watcher');
  h.at(3599);
  t.deepEqual(names(h), ['a', 'b']);
  h.at(3600);
  t.deepEqual(names(h), ['b'], 'a expired at 0 + 3600 s');
  t.like(h.eventsFor('watcher').at(-1)!.event, { type: 'DELETED', object: { metadata: { name: 'a' } } });
  h.at(5399);
  t.deepEqual(names(h), ['b'], 'b was renewed at 1800 s');
  h.at(5400);
  t.deepEqual(names(h), []);
});

test('eventTtlSeconds configures the TTL', (t) => {
  const h = new Harness({ eventTtlSeconds: 60 });
  h.at(0).req({ type: 'ApiCreate', resource: 'events', namespace: 'default', object: event('a') });
  h.at(59);
  t.deepEqual(names(h), ['a']);
  h.at(60);
  t.deepEqual(names(h), []);
});
