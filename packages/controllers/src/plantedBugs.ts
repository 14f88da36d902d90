/**
 * Test-only: bugs a test may plant in the controller manager (`KubeControllerManagerConfig.
 * plantedBugs`, scenario `cluster.controllerManager.plantedBugs`) to check that the node-lifecycle
 * invariant checkers (harness `checkers/nodeLifecycleInvariants.ts`) catch the real component
 * going wrong. None is ever on unless a test names it; each one breaks exactly one upstream rule:
 * - `nlcAdvanceHeartbeat`: the NLC's Unknown update also sets every condition's
 *   lastHeartbeatTime to now (upstream keeps the kubelet's; spec node-lifecycle §3.3, §8.2);
 * - `nlcIgnoreEvictionLimiter`: the NoExecute tainting pass takes no token from the zone's
 *   limiter (upstream `RateLimitedTimedQueue.Try` needs one; §3.5, §8.4, §8.5);
 * - `taintManagerEvictForeverTolerating`: a pod that tolerates every taint forever is deleted at
 *   once (upstream `getMinTolerationTime` −1 cancels; §5.2, §8.6);
 * - `taintManagerNoCancel`: a node losing its NoExecute taints does not cancel pending deletions
 *   (upstream `handleNodeUpdate` cancels them; §5.2, §8.9);
 * - `podgcSkipQuarantine`: pod GC force-deletes the pods of a missing node at first sight, with
 *   no 40 s quarantine and no live GET (upstream `gcOrphaned` / `discoverDeletedNodes`; §6.3, §8.10);
 * - `replicaSetNotReadyInactive`: the ReplicaSet controller counts a pod whose Ready condition is
 *   False as not active, so it replaces it at T_U (upstream `IsPodActive` looks only at the phase
 *   and deletionTimestamp; §6.5, §8.12).
 */
export const CONTROLLER_PLANTED_BUGS = [
  'nlcAdvanceHeartbeat',
  'nlcIgnoreEvictionLimiter',
  'taintManagerEvictForeverTolerating',
  'taintManagerNoCancel',
  'podgcSkipQuarantine',
  'replicaSetNotReadyInactive',
] as const;

export type ControllerPlantedBug = (typeof CONTROLLER_PLANTED_BUGS)[number];

/** The set of planted bugs of a config (validated: an unknown name throws, naming the known ones). */
export function plantedBugSet(bugs: readonly string[] | undefined): ReadonlySet<ControllerPlantedBug> {
  for (const b of bugs ?? []) {
    if (!(CONTROLLER_PLANTED_BUGS as readonly string[]).includes(b)) throw new Error(`kube-controller-manager: unknown planted bug ${JSON.stringify(b)} (known: ${CONTROLLER_PLANTED_BUGS.join(', ')})`);
  }
  return new Set(bugs as readonly ControllerPlantedBug[] | undefined);
}
