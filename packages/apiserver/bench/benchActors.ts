/**
 * Actors for `pnpm bench:apiserver` (apiserverBench.ts), loaded by URL in host threads.
 * `createWatcher`: one watch on pods (optionally `spec.nodeName=<node>`, like a kubelet) that
 * counts the events it receives. `createLoad`: drives pods through a kubelet-shaped life —
 * create (bound), status PATCH, graceful DELETE, final DELETE grace 0 with UID precondition —
 * starting one pod every `periodUs`, and counts completed lifecycles.
 */
import type { Actor, ActorContext, ApiResult, ApiWatchEvent, Message, Pod } from '@podsim/api';

export interface WatcherConfig {
  /** `spec.nodeName=<node>` for a kubelet-like watch; absent = every pod. */
  readonly fieldSelector?: string;
}

export function createWatcher(_id: string, config: unknown): Actor {
  const c = (config ?? {}) as WatcherConfig;
  return {
    start(ctx) {
      ctx.request('apiserver', { type: 'ApiWatch', resource: 'pods', watchId: 'pods', fieldSelector: c.fieldSelector } as Message, (r) => {
        if ((r as ApiResult).code !== 200) throw new Error(`watch failed: ${(r as ApiResult).code}`);
      });
    },
    receive(ctx, env) {
      if ((env.body as ApiWatchEvent).type === 'ApiWatchEvent') ctx.count('bench.watchEvents');
    },
  };
}

export interface LoadConfig {
  readonly index: number;
  readonly pods: number;
  readonly nodes: number;
  readonly periodUs: number;
}

export function createLoad(_id: string, config: unknown): Actor {
  const c = config as LoadConfig;
  let started = 0;
  const call = (ctx: ActorContext, body: object, then: (r: ApiResult) => void) =>
    ctx.request('apiserver', body as Message, (r) => {
      const res = r as ApiResult;
      if (res.code >= 300) throw new Error(`${(body as Message).type} failed: ${res.code} ${JSON.stringify(res.body)}`);
      then(res);
    });
  const lifecycle = (ctx: ActorContext, n: number) => {
    const name = `load-${c.index}-${n}`;
    const nodeName = `node-${String((c.index * 7919 + n) % c.nodes).padStart(4, '0')}`;
    const pod: Pod = {
      metadata: { name, labels: { app: 'bench' } },
      spec: { nodeName, containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', '3600'] }] },
    };
    call(ctx, { type: 'ApiCreate', resource: 'pods', namespace: 'default', object: pod }, (created) => {
      const uid = (created.body as Pod).metadata.uid;
      const status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], podIPs: [{ ip: '10.0.0.1' }] };
      call(ctx, { type: 'ApiPatch', resource: 'pods', namespace: 'default', name, subresource: 'status', patchType: 'strategic', patch: { metadata: { uid }, status } }, () => {
        call(ctx, { type: 'ApiDelete', resource: 'pods', namespace: 'default', name, options: { propagationPolicy: 'Background' } }, () => {
          call(ctx, { type: 'ApiDelete', resource: 'pods', namespace: 'default', name, options: { gracePeriodSeconds: 0, preconditions: { uid } } }, () => ctx.count('bench.lifecycles'));
        });
      });
    });
  };
  return {
    start(ctx) {
      ctx.setTimer(1_000 + c.index);
    },
    receive() {},
    onTimer(ctx) {
      lifecycle(ctx, started++);
      if (started < c.pods) ctx.setTimer(c.periodUs);
    },
  };
}
