/**
 * PLEG relist (pleg/generic.go: events per container state change, cache stamped with the relist
 * start, UpdateTime releasing GetNewerThan) and getPhase / generateAPIPodStatus (kubelet_pods.go).
 */
import test from 'ava';
import { Clock, type cri, type Pod } from '@podsim/api';
import { GenericPLEG, generateEvents, type PodLifecycleEvent } from '../src/pleg/generic.js';
import { PodCache } from '../src/pleg/podCache.js';
import { generateAPIPodStatus, getPhase } from '../src/status/generateStatus.js';
import { emptyPodStatus, type RuntimeContainerStatus } from '../src/container.js';
import { FakeEnv, S } from './fakeEnv.js';

test('generateEvents: the PLEG transition table', (t) => {
  const ev = (o: string, n: string) => generateEvents('u', 'c', o as never, n as never).map((e) => e.type);
  t.deepEqual(ev('non-existent', 'running'), ['ContainerStarted']);
  t.deepEqual(ev('running', 'exited'), ['ContainerDied']);
  t.deepEqual(ev('exited', 'non-existent'), ['ContainerRemoved']);
  t.deepEqual(ev('running', 'non-existent'), ['ContainerDied', 'ContainerRemoved']);
  t.deepEqual(ev('running', 'unknown'), ['ContainerChanged']);
  t.deepEqual(ev('running', 'running'), []);
});

test('relist: events for changed containers, cache stamped with the relist start, waiters released by UpdateTime', (t) => {
  const labels = { 'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.pod.name': 'p', 'io.kubernetes.pod.namespace': 'ns', 'io.kubernetes.container.name': 'app' };
  let state: cri.ContainerState = 'CONTAINER_RUNNING';
  const env = new FakeEnv((req, reply) => {
    switch (req.type) {
      case 'ListPodSandbox':
        return reply({ type: 'ListPodSandboxResult', items: [{ id: 'sb', metadata: { name: 'p', uid: 'u1', namespace: 'ns', attempt: 0 }, state: 'SANDBOX_READY', createdAt: 0, labels, annotations: {} }] });
      case 'ListContainers':
        return reply({ type: 'ListContainersResult', containers: [{ id: 'c1', podSandboxId: 'sb', metadata: { name: 'app', attempt: 0 }, image: { image: 'nginx' }, imageRef: 'x', state, createdAt: 1, labels, annotations: {} }] });
      case 'PodSandboxStatus':
        return reply({ type: 'PodSandboxStatusResult', status: { id: 'sb', metadata: { name: 'p', uid: 'u1', namespace: 'ns', attempt: 0 }, state: 'SANDBOX_READY', createdAt: 0, labels, annotations: {}, network: { ip: '10.0.0.9' } } });
      case 'ContainerStatus':
        return reply({
          type: 'ContainerStatusResult',
          status: { id: 'c1', podSandboxId: 'sb', metadata: { name: 'app', attempt: 0 }, image: { image: 'nginx' }, imageRef: 'x', state, createdAt: 1, labels, annotations: {}, startedAt: 1, finishedAt: state === 'CONTAINER_EXITED' ? 2 * S : 0, exitCode: state === 'CONTAINER_EXITED' ? 143 : 0, reason: state === 'CONTAINER_EXITED' ? 'Error' : '', message: '' },
        });
      default:
        return reply({ type: `${req.type}Result` } as never);
    }
  });
  const cache = new PodCache();
  const events: { t: number; e: PodLifecycleEvent }[] = [];
  const pleg = new GenericPLEG(env, cache, S, (evs) => evs.forEach((e) => events.push({ t: env.t, e })));
  let released: number | undefined;
  cache.getNewerThan('u1', -1, () => (released = env.t)); // -1: a worker's zero lastSyncTime
  pleg.start();
  env.runUntil(0.5 * S);
  t.deepEqual(events.map((x) => x.e.type), ['ContainerStarted', 'ContainerStarted']); // sandbox + container
  t.is(cache.get('u1').containerStatuses[0].state, 'running');
  t.is(cache.get('u1').ips[0], '10.0.0.9');
  t.true(released !== undefined && released < 0.01 * S);
  state = 'CONTAINER_EXITED';
  env.runUntil(1.5 * S);
  t.deepEqual(events.slice(2).map((x) => x.e.type), ['ContainerDied']);
  t.is(cache.get('u1').containerStatuses[0].exitCode, 143);
  t.deepEqual(pleg.runningPods().map((p) => p.sandboxes.length), [1]);
  // A waiter for data newer than "now" waits for the next relist (the relist period runs from the end of the previous one).
  let next: number | undefined;
  cache.getNewerThan('u1', env.t, () => (next = env.t));
  env.runUntil(3 * S);
  t.true(next !== undefined && next > 2 * S && next < 2.1 * S, `released at ${next}`);
});

const spec: Pod['spec'] = { containers: [{ name: 'a' }, { name: 'b' }] };
const cs = (name: string, state: Record<string, unknown>, last: Record<string, unknown> = {}) => ({ name, state, lastState: last, ready: false, restartCount: 0, image: '', imageID: '' });

test('getPhase (spec §9): Always keeps Running when everything stopped; Never/OnFailure per exit codes; waiting → Pending', (t) => {
  const term = (code: number) => ({ terminated: { exitCode: code } });
  t.is(getPhase(spec, [cs('a', { running: {} }), cs('b', { running: {} })]), 'Running');
  t.is(getPhase(spec, [cs('a', { running: {} }), cs('b', { waiting: { reason: 'ContainerCreating' } })]), 'Pending');
  t.is(getPhase(spec, [cs('a', term(137)), cs('b', term(0))]), 'Running');
  t.is(getPhase({ ...spec, restartPolicy: 'Never' }, [cs('a', term(0)), cs('b', term(0))]), 'Succeeded');
  t.is(getPhase({ ...spec, restartPolicy: 'Never' }, [cs('a', term(1)), cs('b', term(0))]), 'Failed');
  t.is(getPhase({ ...spec, restartPolicy: 'OnFailure' }, [cs('a', term(1)), cs('b', term(0))]), 'Running');
  t.is(getPhase(spec, [cs('a', { waiting: { reason: 'CrashLoopBackOff' } }, term(1)), cs('b', { running: {} })]), 'Running');
  t.is(getPhase(spec, [cs('a', { running: {} })]), 'Pending');
});

test('generateAPIPodStatus: a deleted pod\'s killed container is terminated (not CrashLoopBackOff), Ready False, phase Running', (t) => {
  const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u', deletionTimestamp: 'x', deletionGracePeriodSeconds: 30 }, spec: { containers: [{ name: 'app', image: 'nginx' }] } };
  const c: RuntimeContainerStatus = { id: 'c1', name: 'app', state: 'exited', createdAt: 1, startedAt: S, finishedAt: 5 * S, exitCode: 137, reason: 'Error', message: '', image: 'nginx', imageRef: 'r', restartCount: 0, podSandboxId: 'sb' };
  const s = generateAPIPodStatus(pod, { ...emptyPodStatus('u'), containerStatuses: [c] }, {
    clock: new Clock(),
    hostIP: '10.0.0.1',
    oldStatus: undefined,
    reason: () => ({ reason: 'CrashLoopBackOff', message: 'back-off' }),
  });
  t.is(s.phase, 'Running');
  t.deepEqual(s.containerStatuses![0].state, { terminated: { exitCode: 137, reason: 'Error', startedAt: '2025-01-01T00:00:01Z', finishedAt: '2025-01-01T00:00:05Z', containerID: 'containerd://c1' } });
  t.is(s.conditions!.find((x) => x.type === 'Ready')!.status, 'False');
  t.is(s.conditions!.find((x) => x.type === 'ContainersReady')!.reason, 'ContainersNotReady');
});

test('relist of the very same runtime lists (an unchanged runtime on one thread): no events, cache still stamped; a new list with the same sandboxes still finds the change', (t) => {
  const labels = { 'io.kubernetes.pod.uid': 'u1', 'io.kubernetes.pod.name': 'p', 'io.kubernetes.pod.namespace': 'ns', 'io.kubernetes.container.name': 'app' };
  const sandboxes: cri.PodSandbox[] = [{ id: 'sb', metadata: { name: 'p', uid: 'u1', namespace: 'ns', attempt: 0 }, state: 'SANDBOX_READY', createdAt: 0, labels, annotations: {} }];
  const container = (state: cri.ContainerState): cri.Container => ({ id: 'c1', podSandboxId: 'sb', metadata: { name: 'app', attempt: 0 }, image: { image: 'nginx' }, imageRef: 'x', state, createdAt: 1, labels, annotations: {} });
  let containers: cri.Container[] = [container('CONTAINER_RUNNING')];
  const inspected: number[] = [];
  const env = new FakeEnv((req, reply) => {
    switch (req.type) {
      case 'ListPodSandbox':
        return reply({ type: 'ListPodSandboxResult', items: sandboxes });
      case 'ListContainers':
        return reply({ type: 'ListContainersResult', containers });
      case 'PodSandboxStatus':
        inspected.push(env.t);
        return reply({ type: 'PodSandboxStatusResult', status: { ...sandboxes[0], network: { ip: '10.0.0.9' } } });
      case 'ContainerStatus': {
        const c = containers[0];
        const exited = c.state === 'CONTAINER_EXITED';
        return reply({ type: 'ContainerStatusResult', status: { ...c, startedAt: 1, finishedAt: exited ? 3 * S : 0, exitCode: exited ? 143 : 0, reason: exited ? 'Error' : '', message: '' } });
      }
      default:
        return reply({ type: `${req.type}Result` } as never);
    }
  });
  const cache = new PodCache();
  const events: string[] = [];
  const pleg = new GenericPLEG(env, cache, S, (evs) => evs.forEach((e) => events.push(e.type)));
  pleg.start();
  env.runUntil(0.5 * S);
  t.deepEqual(events, ['ContainerStarted', 'ContainerStarted']);
  t.is(inspected.length, 1);
  // Three relists of the same arrays: nothing to emit or inspect, but each still UpdateTime()s the cache.
  let released: number | undefined;
  cache.getNewerThan('u1', 1.5 * S, () => (released = env.t));
  env.runUntil(3.5 * S);
  t.deepEqual(events, ['ContainerStarted', 'ContainerStarted']);
  t.is(inspected.length, 1);
  t.true(released !== undefined && released > 2 * S && released < 2.1 * S, `released at ${released}`);
  t.true(pleg.lastRelistAt > 3 * S);
  t.deepEqual(pleg.runningPods().map((p) => p.containers.length), [1]);
  // The same sandbox array with a new container list: the container's death is found.
  containers = [container('CONTAINER_EXITED')];
  env.runUntil(4.5 * S);
  t.deepEqual(events, ['ContainerStarted', 'ContainerStarted', 'ContainerDied']);
  t.is(cache.get('u1').containerStatuses[0].exitCode, 143);
  t.deepEqual(pleg.runningPods().map((p) => p.containers.length), [0]);
});

test('relist of changed lists: events and running pods as a full rebuild gives them, over seeded random runtime changes (items shared while unchanged, as the runtime does)', (t) => {
  // A runtime of a few pods whose lists change at random: items appended, removed (often several
  // in a row, past the look-ahead), changing state (a new object), or a list rebuilt with its
  // same objects. The reference rebuilds every pod from the lists each relist (the upstream
  // algorithm as written); the PLEG under test rebuilds only the pods it finds dirty.
  type Item = { id: string; uid: string; sandbox: boolean; state: string };
  let seed = 12345;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const views = new Map<string, cri.PodSandbox | cri.Container>();
  const view = (it: Item): cri.PodSandbox | cri.Container => {
    const old = views.get(it.id);
    if (old && old.state === it.state) return old;
    const labels = { 'io.kubernetes.pod.uid': it.uid, 'io.kubernetes.pod.name': `p-${it.uid}`, 'io.kubernetes.pod.namespace': 'ns', 'io.kubernetes.container.name': `c-${it.id}` };
    const v = it.sandbox
      ? ({ id: it.id, metadata: { name: `p-${it.uid}`, uid: it.uid, namespace: 'ns', attempt: 0 }, state: it.state, createdAt: 0, labels, annotations: {} } as cri.PodSandbox)
      : ({ id: it.id, podSandboxId: 'x', metadata: { name: `c-${it.id}`, attempt: 0 }, image: { image: 'nginx' }, imageRef: 'x', state: it.state, createdAt: 0, labels, annotations: {} } as cri.Container);
    views.set(it.id, v);
    return v;
  };
  const sbItems: Item[] = [];
  const ctItems: Item[] = [];
  let sbList: cri.PodSandbox[] = [];
  let ctList: cri.Container[] = [];
  let next = 0;
  const mutate = () => {
    for (let k = rand(4); k > 0; k--) {
      const sandbox = rand(3) === 0;
      const items = sandbox ? sbItems : ctItems;
      switch (rand(5)) {
        case 0:
        case 1:
          items.push({ id: `i${next++}`, uid: `u${rand(8)}`, sandbox, state: sandbox ? 'SANDBOX_READY' : 'CONTAINER_RUNNING' });
          break;
        case 2:
          if (items.length > 0) items.splice(rand(items.length), 1 + rand(6));
          break;
        case 3:
          if (items.length > 0) {
            const i = rand(items.length);
            items[i] = { ...items[i], state: sandbox ? 'SANDBOX_NOTREADY' : ['CONTAINER_EXITED', 'CONTAINER_CREATED', 'CONTAINER_RUNNING'][rand(3)] };
          }
          break;
        default:
          break; // the list is rebuilt with the same objects
      }
    }
    sbList = sbItems.map((it) => view(it) as cri.PodSandbox);
    ctList = ctItems.map((it) => view(it) as cri.Container);
  };
  const env = new FakeEnv((req, reply) => {
    switch (req.type) {
      case 'ListPodSandbox': {
        const uid = req.filter?.labelSelector?.['io.kubernetes.pod.uid'];
        return reply({ type: 'ListPodSandboxResult', items: uid === undefined ? sbList : sbList.filter((s) => s.labels['io.kubernetes.pod.uid'] === uid) });
      }
      case 'ListContainers': {
        const uid = req.filter?.labelSelector?.['io.kubernetes.pod.uid'];
        return reply({ type: 'ListContainersResult', containers: uid === undefined ? ctList : ctList.filter((c) => c.labels['io.kubernetes.pod.uid'] === uid) });
      }
      case 'PodSandboxStatus':
        return reply({ type: 'PodSandboxStatusResult', status: { ...(views.get(req.podSandboxId) as cri.PodSandbox) } });
      case 'ContainerStatus':
        return reply({ type: 'ContainerStatusResult', status: { ...(views.get(req.containerId) as cri.Container), startedAt: 0, finishedAt: 0, exitCode: 0, reason: '', message: '' } });
      default:
        return reply({ type: `${req.type}Result` } as never);
    }
  });
  // The reference: every pod rebuilt from the lists (ids and states in list order, sandboxes first).
  type Pods = Map<string, { ids: string[]; states: string[] }>;
  const plegState = (s: string) => (s === 'SANDBOX_READY' || s === 'CONTAINER_RUNNING' ? 'running' : s === 'SANDBOX_NOTREADY' || s === 'CONTAINER_EXITED' ? 'exited' : 'unknown');
  const build = (): Pods => {
    const pods: Pods = new Map();
    for (const it of [...sbList, ...ctList]) {
      const uid = it.labels['io.kubernetes.pod.uid'];
      let p = pods.get(uid);
      if (!p) pods.set(uid, (p = { ids: [], states: [] }));
      p.ids.push(it.id);
      p.states.push(plegState(it.state));
    }
    return pods;
  };
  let refPods: Pods = new Map();
  const refEvents = (): string[] => {
    const pods = build();
    const out: string[] = [];
    const ev = (uid: string, cid: string, o: string, n: string) => {
      for (const e of generateEvents(uid, cid, o as never, n as never)) if (e.type !== 'ContainerChanged') out.push(`${e.id}/${e.type}/${e.data}`);
    };
    for (const [uid, p] of pods) {
      const old = refPods.get(uid) ?? { ids: [], states: [] };
      p.ids.forEach((cid, i) => {
        const j = old.ids.indexOf(cid);
        ev(uid, cid, j < 0 ? 'non-existent' : old.states[j], p.states[i]);
      });
      old.ids.forEach((cid, j) => {
        if (!p.ids.includes(cid)) ev(uid, cid, old.states[j], 'non-existent');
      });
    }
    for (const [uid, old] of refPods) if (!pods.has(uid)) old.ids.forEach((cid, j) => ev(uid, cid, old.states[j], 'non-existent'));
    refPods = pods;
    return out;
  };
  const refRunning = () =>
    [...refPods].filter(([, p]) => p.states.includes('running')).map(([uid, p]) => `${uid}:${p.ids.filter((_, i) => p.states[i] === 'running').join(',')}`);
  const cache = new PodCache();
  let got: string[] = [];
  const changed = new Set<string>();
  const pleg = new GenericPLEG(env, cache, S, (evs) => evs.forEach((e) => got.push(`${e.id}/${e.type}/${e.data}`)), undefined, (uid) => changed.add(uid));
  pleg.start();
  let relists = 0;
  for (let step = 1; step <= 300; step++) {
    const want = refEvents();
    env.runUntil(step * S - S / 2);
    t.deepEqual(got, want, `relist ${step}`);
    const running = pleg.runningPods().map((p) => `${p.uid}:${[...p.sandboxes.map((s) => s.id), ...p.containers.map((c) => c.id)].join(',')}`);
    t.deepEqual(running, refRunning(), `running pods after relist ${step}`);
    for (const r of refRunning()) {
      const uid = r.slice(0, r.indexOf(':'));
      t.true(pleg.hasRunning(uid));
    }
    // A pod whose events were emitted was reported changed.
    for (const e of got) t.true(changed.has(e.slice(0, e.indexOf('/'))), `${e} reported changed`);
    got = [];
    changed.clear();
    relists++;
    mutate();
  }
  t.is(relists, 300);
});
