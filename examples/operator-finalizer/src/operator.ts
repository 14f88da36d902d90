/**
 * An operator as a user would write one, run inside podsim's simulated cluster through the
 * scenario's `cluster.actors` (scenario.yaml beside this package). It watches pods; to each pod
 * labelled `hold=true` it adds the finalizer `example.com/hold`, and once it sees the pod's
 * deletionTimestamp it waits `holdSeconds` (virtual seconds, default 20) and removes the
 * finalizer, so the pod stays `Terminating` that long after its containers stopped.
 *
 * It is built on what podsim's own controllers use (`@podsim/controllers`): `shellActor` for the
 * actor, an informer (list + watch) for pods, a rate-limited client for writes, the engine's
 * timers. Like every actor it never reads the wall clock or Math.random (the determinism lint
 * rule, `@podsim/sim/eslint`, checks it), so the run's trace digest depends only on the seed.
 */
import type { Actor, ApiResult, Pod } from '@podsim/api';
import { isConflict, isNotFound, shellActor } from '@podsim/controllers';

export interface OperatorConfig {
  /** Label `key=value` that marks the pods to hold (default `hold=true`). */
  readonly selector?: string;
  /** The finalizer it adds (default `example.com/hold`). */
  readonly finalizer?: string;
  /** Virtual seconds between seeing the deletionTimestamp and removing the finalizer (default 20). */
  readonly holdSeconds?: number;
}

const US_PER_SECOND = 1_000_000;

/** The factory podsim calls for a `cluster.actors` entry: `createActor(id, config)`. */
export function createActor(id: string, config: unknown): Actor {
  const c = (config ?? {}) as OperatorConfig;
  const [labelKey, labelValue] = (c.selector ?? 'hold=true').split('=');
  const finalizer = c.finalizer ?? 'example.com/hold';
  const holdUs = (c.holdSeconds ?? 20) * US_PER_SECOND;

  return shellActor({}, (shell) => {
    const client = shell.client(id, 20, 30);
    const pods = shell.informer<Pod>('pods', () => shell.env.trace('operator.synced', 'pod informer synced'));
    /** UIDs whose release timer is set. */
    const releasing = new Set<string>();

    /** A merge patch of the finalizer list, guarded by the resourceVersion it was computed from. */
    const patchFinalizers = (pod: Pod, finalizers: string[], onConflict: () => void) => {
      client.send(
        {
          type: 'ApiPatch',
          resource: 'pods',
          namespace: pod.metadata.namespace,
          name: pod.metadata.name!,
          patchType: 'merge',
          patch: { metadata: { finalizers, resourceVersion: pod.metadata.resourceVersion } },
        },
        (res: ApiResult) => {
          if (isConflict(res)) onConflict();
          else if (res.code >= 300 && !isNotFound(res)) shell.env.trace('operator.error', `patch ${pod.metadata.name}: ${res.code}`);
        },
      );
    };
    const latest = (pod: Pod) => pods.get(`${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`);

    const consider = (pod: Pod) => {
      if (pod.metadata.labels?.[labelKey] !== labelValue) return;
      const finalizers = pod.metadata.finalizers ?? [];
      const uid = pod.metadata.uid!;
      if (!pod.metadata.deletionTimestamp) {
        // Retry on a conflict from the newest cached version (the next watch event brings it).
        if (!finalizers.includes(finalizer)) patchFinalizers(pod, [...finalizers, finalizer], () => shell.env.after(US_PER_SECOND, () => latest(pod) && consider(latest(pod)!)));
        return;
      }
      if (!finalizers.includes(finalizer) || releasing.has(uid)) return;
      releasing.add(uid);
      shell.env.trace('operator.hold', `holding ${pod.metadata.name} for ${holdUs / US_PER_SECOND}s`, { pod: pod.metadata.name, uid });
      const release = () => {
        const now = latest(pod);
        if (!now || now.metadata.uid !== uid) return;
        patchFinalizers(now, (now.metadata.finalizers ?? []).filter((f) => f !== finalizer), () => shell.env.after(US_PER_SECOND, release));
      };
      shell.env.after(holdUs, release);
    };
    pods.addEventHandler({ onAdd: consider, onUpdate: (_old, pod) => consider(pod) });
  });
}
