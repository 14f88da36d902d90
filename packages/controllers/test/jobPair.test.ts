/**
 * Job controller + real apiserver (pair test): an Indexed Job's pods see their index — the
 * apiserver-generated names `<job>-<index>-xxxxx`, the completion-index annotation, the hostname
 * and the JOB_COMPLETION_INDEX env var from the downward API; the template labels and selector
 * come from the apiserver's generateSelector (controller-uid, job-name).
 */
import test from 'ava';
import type { ApiRequest, Job, Pod } from '@podsim/api';
import { JOB_COMPLETION_INDEX_ANNOTATION } from '@podsim/api';
import { S, createNode, mkNode, runCluster } from './helpers/cluster.js';

const JOB: Job = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'idx', namespace: 'default' },
  spec: {
    completions: 3,
    parallelism: 3,
    completionMode: 'Indexed',
    template: { spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox' }] } },
  },
};

test('an Indexed Job (completions 3, parallelism 3): three pods, one per index, each seeing its index', (t) => {
  const run = runCluster({
    steps: [createNode(0, mkNode('n1')), { at: 1 * S, req: { type: 'ApiCreate', resource: 'jobs', namespace: 'default', object: JOB } as ApiRequest, label: 'create job' }],
    untilUs: 10 * S,
    kubelet: { nodes: ['n1'] },
  });
  const created = run.all('test.result', (r) => r.data?.label === 'create job')[0];
  t.is(created?.data?.code, 201);
  const job = created.data!.body as Job;
  t.deepEqual(job.spec.selector, { matchLabels: { 'controller-uid': job.metadata.uid } });
  const pods = [...run.live<Pod>('test-pods').values()].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  t.is(pods.length, 3);
  pods.forEach((p, i) => {
    t.regex(p.metadata.name ?? '', new RegExp(`^idx-${i}-[a-z0-9]{5}$`));
    t.is(p.metadata.annotations?.[JOB_COMPLETION_INDEX_ANNOTATION], String(i));
    t.is(p.spec.hostname, `idx-${i}`);
    t.is(p.metadata.labels?.['job-name'], 'idx');
    t.is(p.metadata.labels?.['controller-uid'], job.metadata.uid);
    t.deepEqual(
      p.spec.containers[0].env?.find((e) => e.name === 'JOB_COMPLETION_INDEX')?.valueFrom,
      { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX_ANNOTATION}']` } },
    );
    t.is(p.spec.nodeName, 'n1');
  });
});
