/**
 * The `kube-scheduler` actor (cmd/kube-scheduler, one `default-scheduler` profile): pod and
 * node informers, the scheduling queue and `scheduleOne` loop, and a client with the
 * KubeSchedulerConfiguration defaults (qps 50, burst 100). Scheduling starts once both
 * informers have synced.
 */
import type { Actor, Node, Pod } from '@podsim/api';
import { Scheduler, type SchedulerOptions } from '../scheduler/scheduler.js';
import { shellActor, type ApiConnectionConfig } from './shell.js';

export interface KubeSchedulerConfig extends SchedulerOptions, ApiConnectionConfig {
  /** Client QPS (default 50; ≤ 0 = unlimited). */
  readonly kubeAPIQPS?: number;
  /** Client burst (default 100). */
  readonly kubeAPIBurst?: number;
}

export const KUBE_SCHEDULER = 'kube-scheduler';
export const DEFAULT_SCHEDULER_QPS = 50;
export const DEFAULT_SCHEDULER_BURST = 100;

export function createActor(_id: string, config: unknown): Actor {
  const cfg = (config ?? {}) as KubeSchedulerConfig;
  if (typeof cfg !== 'object') throw new Error(`kube-scheduler: config must be an object, got ${typeof config}`);
  const actor: Actor & { scheduler?: Scheduler } = shellActor(cfg, (shell) => {
    let pending = 2;
    const synced = () => {
      if (--pending === 0) actor.scheduler!.start();
    };
    const pods = shell.informer<Pod>('pods', synced);
    const nodes = shell.informer<Node>('nodes', synced);
    actor.scheduler = new Scheduler(shell.env, pods, nodes, shell.client('kube-scheduler', cfg.kubeAPIQPS ?? DEFAULT_SCHEDULER_QPS, cfg.kubeAPIBurst ?? DEFAULT_SCHEDULER_BURST), cfg);
  });
  return actor;
}
