/**
 * Every fault kind end to end: a pod that drains for a few seconds on SIGTERM is deleted while a
 * fault is active, and the test checks what a user would see — when the pod is gone from the API,
 * which signals the container got, its exit code — plus every invariant. Each fault is placed by
 * the timeline's static clock (the sleeps before it), as compile.ts requires.
 *
 * The mutation pass (issue #25 items 1 and 6): every case is run again with its fault kinds
 * unwired (compile.ts `unwiredFaultKinds`: the step stays, the fault takes no effect) and must
 * then fail, so no case's expectations equal the no-fault baseline; and every fault kind of the
 * scenario schema has a case here.
 */
import test from 'ava';
import type { TraceModel } from '../../src/checkers/model.js';
import { FAULT_KINDS } from '../../src/scenario/schema.js';
import { S, runText, stepTimes, why } from './helpers.js';

/**
 * One node, one pod `app` (TGPS 30, exits 0 `exit` after SIGTERM), deleted at t=12s (step id
 * `del`). `pre` goes right before the delete, `post` right after it; `expect` is the scenario's
 * expect block body (pod alias `p`).
 */
function scenario(o: { pre?: string; post?: string; exit?: string; expect: string; timeout?: string }): string {
  return `kind: Scenario
cluster:
  nodes: [{ name: node-1 }]
steps:
  - apply: all
  - sleep: 10s
  - watch: start
  - sleep: 2s
${o.pre ?? ''}  - id: del
    delete: { kind: pod, name: app }
${o.post ?? ''}  - wait: { for: gone, name: app, timeout: ${o.timeout ?? '3m'} }
  - sleep: 1s
  - watch: stop
expect:
  pods: [p]
${o.expect}
  invariants: clean
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations: { podsim.dev/on-sigterm: "exit:${o.exit ?? '3s'}:0" }
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: app
      image: nginx:1.21
      readinessProbe: { httpGet: { port: 80, path: / }, periodSeconds: 2 }
      volumeMounts: [{ name: data, mountPath: /data }]
  volumes: [{ name: data, emptyDir: {} }]
`;
}

const cases: Array<{ title: string; text: string; check?: (r: Awaited<ReturnType<typeof runText>>) => void }> = [
  {
    title: 'no fault: SIGTERM at once, exit 0 after 3 s, gone a moment later (baseline)',
    text: scenario({
      expect: `  timings:
    - { pod: p, event: TERM, since: del, within: [0s, 1500ms] }
    - { pod: p, event: gone, since: del, within: [3s, 5s] }
  exitCodes: [{ pod: p, code: 0 }]
  signals: [{ pod: p, TERM: 1, KILL: 0 }]`,
    }),
  },
  {
    title: 'kubeletRestart during termination: the new kubelet terminates again with the full grace (second SIGTERM)',
    text: scenario({
      exit: '10s',
      post: '  - sleep: 2s\n  - fault: { kind: kubeletRestart, node: node-1, downFor: 2s }\n',
      expect: `  timings:
    - { pod: p, event: exit, since: del, within: [10s, 11500ms] }
    - { pod: p, event: gone, since: del, within: [10s, 15s] }
  exitCodes: [{ pod: p, code: 0 }]
  signals: [{ pod: p, TERM: 2, KILL: 0 }]`,
    }),
    check: ({ model }) => {
      const kills = model.spansOf('kubelet.killPod');
      // One killPod per kubelet incarnation, both with the full grace of 30 s (spec §15).
      if (kills.length < 2 || new Set(kills.map((k) => k.incarnation)).size !== 2) throw new Error(`killPod spans: ${kills.length}`);
      if (!kills.every((k) => k.data.gracePeriod === 30)) throw new Error('grace not 30');
    },
  },
  {
    title: 'runtimeError on StopContainer: the kill fails and StopPodSandbox SIGKILLs the container at once (exit 137)',
    text: scenario({
      pre: '  - fault: { kind: runtimeError, node: node-1, call: StopContainer, code: Unknown, for: 5s }\n',
      expect: `  timings:
    - { pod: p, event: KILL, since: del, within: [0s, 1500ms] }
  exitCodes: [{ pod: p, code: 137 }]
  signals: [{ pod: p, TERM: 0, KILL: 1 }]`,
    }),
  },
  {
    title: 'runtimeError on StopPodSandbox: syncTerminatingPod fails and is retried after the 10–15 s backoff (R6)',
    text: scenario({
      pre: '  - fault: { kind: runtimeError, node: node-1, call: StopPodSandbox, code: Unknown, for: 5s }\n',
      expect: `  timings:
    - { pod: p, event: gone, since: del, within: [10s, 20s] }
  exitCodes: [{ pod: p, code: 0 }]
  signals: [{ pod: p, TERM: 1, KILL: 0 }]`,
    }),
  },
  {
    title: 'runtimeDelay on StopPodSandbox (hanging CNI teardown): the pod stays Terminating until it answers',
    text: scenario({
      pre: '  - fault: { kind: runtimeDelay, node: node-1, call: StopPodSandbox, delay: 20s }\n',
      expect: `  timings:
    - { pod: p, event: exit, since: del, within: [3s, 4500ms] }
    - { pod: p, event: gone, since: del, within: [20s, 27s] }`,
    }),
  },
  {
    title: 'slowUnmount: volumes that fail to unmount keep the pod 0/1 Terminating (C18)',
    text: scenario({
      pre: '  - fault: { kind: slowUnmount, node: node-1, volume: data, for: 30s }\n',
      expect: `  watch:
    match: ordered
    rows: ["p 1/1 Terminating", "p 0/1 Terminating"]
  timings:
    - { pod: p, event: exit, since: del, within: [3s, 4500ms] }
    - { pod: p, event: gone, since: del, within: [30s, 50s] }`,
    }),
  },
  {
    title: 'delay apiserver → kubelet: the kubelet learns of the delete late, so SIGTERM comes late',
    text: scenario({
      pre: '  - fault: { kind: delay, from: apiserver, to: kubelet/node-1, delay: 5s, for: 10s }\n',
      expect: `  timings:
    - { pod: p, event: TERM, since: del, within: [5s, 7s] }
    - { pod: p, event: gone, since: del, within: [8s, 20s] }`,
    }),
  },
  {
    title: 'drop kubelet → apiserver: the status updates and the final DELETE are lost until the kubelet retries',
    text: scenario({
      pre: '  - fault: { kind: drop, from: kubelet/node-1, to: apiserver, for: 10s }\n',
      expect: `  timings:
    - { pod: p, event: exit, since: del, within: [3s, 4500ms] }
    - { pod: p, event: gone, since: del, within: [10s, 2m] }`,
    }),
  },
  {
    title: 'duplicate apiserver → kubelet: every watch event arrives twice, and the kubelet acts once',
    text: scenario({
      pre: '  - fault: { kind: duplicate, from: apiserver, to: kubelet/node-1, delay: 1ms, for: 20s }\n',
      expect: `  timings:
    - { pod: p, event: gone, since: del, within: [3s, 5s] }
  signals: [{ pod: p, TERM: 1, KILL: 0 }]`,
    }),
    check: ({ model }) => {
      // The engine delivered the watch events twice (the only thing a duplicate fault does)…
      const dups = duplicated(model, 'apiserver', 'kubelet/node-1');
      if (!dups.some((d) => d.includes('ApiWatchEvent'))) throw new Error(`no duplicated watch event: ${dups.join('; ')}`);
      // …and the kubelet still sent one final DELETE, not one per copy of the MODIFIED.
      const finals = kubeletDeletes(model);
      if (finals.join() !== '200') throw new Error(`kubelet DELETEs answered ${finals.join(', ')}`);
    },
  },
  {
    title: 'partition kubelet ⇹ apiserver after the delete reached the node: the container stops, the pod object waits for the partition to heal',
    text: scenario({
      post: '  - sleep: 1s\n  - fault: { kind: partition, a: kubelet/node-1, b: apiserver, for: 20s }\n',
      expect: `  timings:
    - { pod: p, event: TERM, since: del, within: [0s, 1s] }
    - { pod: p, event: exit, since: del, within: [3s, 4500ms] }
    - { pod: p, event: gone, since: del, within: [21s, 2m] }`,
    }),
  },
  {
    title: 'kubeletDown for 20 s: the container keeps running and gets no SIGTERM until the restarted kubelet syncs the deletion',
    text: scenario({
      pre: '  - fault: { kind: kubeletDown, node: node-1, for: 20s }\n',
      expect: `  timings:
    - { pod: p, event: TERM, since: del, within: [20s, 23s] }
    - { pod: p, event: exit, after: TERM, within: [3s, 3s] }
    - { pod: p, event: gone, since: del, within: [23s, 30s] }
  signals: [{ pod: p, TERM: 1, KILL: 0 }]`,
    }),
  },
  {
    title: 'networkPartition of the node after the delete reached it: the kubelet stops the container, the pod object waits for the heal',
    text: scenario({
      post: '  - sleep: 1s\n  - fault: { kind: networkPartition, node: node-1, for: 20s }\n',
      expect: `  timings:
    - { pod: p, event: TERM, since: del, within: [0s, 1s] }
    - { pod: p, event: exit, since: del, within: [3s, 4500ms] }
    - { pod: p, event: gone, since: del, within: [21s, 2m] }`,
    }),
  },
  {
    title: 'nodeDown for 20 s: nothing on the node answers; after the reboot the fresh kubelet finishes the deletion',
    text: scenario({
      pre: '  - fault: { kind: nodeDown, node: node-1, for: 20s }\n',
      expect: `  timings:
    - { pod: p, event: gone, since: del, within: [20s, 25s] }
  signals: [{ pod: p, TERM: 0, KILL: 0 }]`,
    }),
  },
  {
    title: 'nodeDown for good, then nodeDeleted: pod GC force-deletes the pod after the 40 s quarantine (C12)',
    text: scenario({
      pre: '  - fault: { kind: nodeDown, node: node-1 }\n',
      post: '  - sleep: 5s\n  - id: node-deleted\n    fault: { kind: nodeDeleted, node: node-1 }\n',
      expect: `  timings:
    - { pod: p, event: gone, since: node-deleted, within: [40s, 65s] }
  signals: [{ pod: p, TERM: 0, KILL: 0 }]`,
    }),
    check: ({ model }) => {
      const del = model.requests.find((r) => r.verb === 'delete' && r.resource === 'pods' && r.client === 'kube-controller-manager');
      if (!del || del.gracePeriodSeconds !== 0) throw new Error('pod GC did not force-delete the pod');
      const nodeGone = stepTimes(model, 'node-deleted').end;
      if (del.t - nodeGone < 40 * S) throw new Error('deleted before the quarantine');
    },
  },
  {
    title: 'disconnect kubelet ⇹ apiserver after SIGTERM: the status update is lost with the connection, times out after 60 s and is retried; the kubelet relists',
    text: scenario({
      post: '  - sleep: 1s\n  - fault: { kind: disconnect, client: kubelet/node-1, for: 20s }\n',
      expect: `  timings:
    - { pod: p, event: TERM, since: del, within: [0s, 1s] }
    - { pod: p, event: exit, since: del, within: [3s, 4500ms] }
    - { pod: p, event: gone, since: del, within: [60s, 70s] }
  exitCodes: [{ pod: p, code: 0 }]
  signals: [{ pod: p, TERM: 1, KILL: 0 }]`,
    }),
    check: ({ model }) => {
      // The kubelet's pod watch ended with the connection: it lists again once it is back.
      const lists = model.requests.filter((r) => r.client === 'kubelet/node-1' && r.verb === 'list' && r.resource === 'pods');
      if (lists.length < 2) throw new Error(`kubelet pod lists: ${lists.length}`);
    },
  },
];

/** The engine's `fault.duplicate` records for messages `from → to` (their messages). */
function duplicated(model: TraceModel, from: string, to: string): string[] {
  return model.records.filter((r) => r.kind === 'fault.duplicate' && r.actor === from && r.msg.endsWith(` to ${to}`)).map((r) => r.msg);
}

/** Status codes of the kubelet's DELETEs of pod `app`, in order. */
function kubeletDeletes(model: TraceModel): number[] {
  return model.requests.filter((r) => r.client === 'kubelet/node-1' && r.verb === 'delete' && r.resource === 'pods' && r.name === 'app').map((r) => r.code);
}

/** The fault kinds a case's scenario uses. */
const kindsOf = (text: string) => [...new Set([...text.matchAll(/fault: \{ kind: (\w+)/g)].map((m) => m[1]))];

/** Runs a case; `unwired` fault kinds take no effect. Passed = every step, expectation, invariant and the check held. */
async function runCase(c: (typeof cases)[number], unwired: readonly string[] = []) {
  const r = await runText(c.title.split(':')[0].replace(/\W+/g, '-'), c.text, { unwiredFaultKinds: unwired });
  let checkError: string | undefined;
  try {
    c.check?.(r);
  } catch (e) {
    checkError = (e as Error).message;
  }
  return { r, checkError, passed: r.report.ok && checkError === undefined };
}

for (const c of cases) {
  test(c.title, async (t) => {
    const { r, checkError } = await runCase(c);
    t.true(r.report.ok, why(r.report));
    t.true(r.report.expectations.length > 0);
    t.is(checkError, undefined);
  });
  for (const kind of kindsOf(c.text)) {
    test(`mutation: with ${kind} unwired, "${c.title.split(':')[0]}" fails`, async (t) => {
      const { r, checkError, passed } = await runCase(c, [kind]);
      t.false(passed, `still passes without its ${kind}: the case cannot tell it from the no-fault baseline (${r.report.expectations.length} expectations${checkError ? `; check: ${checkError}` : ''})`);
    });
  }
}

test('every fault kind of the scenario schema has a case above, so the mutation pass covers it', (t) => {
  const covered = new Set(cases.flatMap((c) => kindsOf(c.text)));
  t.deepEqual(FAULT_KINDS.filter((k) => !covered.has(k)), []);
});
