/**
 * @podsim/controllers: kube-controller-manager (ReplicaSet, Deployment, pod GC, garbage
 * collector, namespace) and kube-scheduler as podsim actors. Pure controller logic lives in the subsystem
 * folders; `src/actor/` holds the two actor shells.
 */
export * from './coroutine.js';
export * from './client.js';
export * from './env.js';
export * from './informer.js';
export * from './reflector.js';
export * from './workqueue.js';
export * from './expectations.js';
export * from './objects.js';
export * from './podutil.js';
export * from './intstr.js';
export * from './events.js';
export * from './plantedBugs.js';
export * from './replicaset/replicaSet.js';
export * from './replicaset/podsToDelete.js';
export * from './replicaset/replicaSetUtils.js';
export * from './deployment/deploymentController.js';
export * from './deployment/deploymentUtil.js';
export * from './podgc/gcController.js';
export * from './garbagecollector/garbageCollector.js';
export * from './namespace/namespaceController.js';
export * from './namespace/namespacedResourcesDeleter.js';
export * from './statefulset/statefulSet.js';
export * from './statefulset/statefulSetControl.js';
export * from './statefulset/statefulSetUtils.js';
export * from './scheduler/scheduler.js';
export * from './scheduler/framework.js';
export * from './scheduler/nodeInfo.js';
export * from './scheduler/schedulingQueue.js';
export { createActor as createKubeControllerManager, KUBE_CONTROLLER_MANAGER, type KubeControllerManagerConfig } from './actor/kubeControllerManagerActor.js';
export { createActor as createKubeScheduler, KUBE_SCHEDULER, type KubeSchedulerConfig } from './actor/kubeSchedulerActor.js';
/**
 * For actors of your own (a scenario's `cluster.actors`): `shellActor(cfg, setup)` builds an
 * Actor whose `setup(shell)` creates informers (`shell.informer('pods', onSynced)`), rate-limited
 * clients (`shell.client(name, qps, burst)`) and timers (`shell.env.after`) exactly as podsim's
 * controllers do; see README "Your own actor in the cluster".
 */
export { shellActor, ActorShell, DEFAULT_REQUEST_TIMEOUT_US, type ApiConnectionConfig } from './actor/shell.js';
