/**
 * The thin part every podsim control-plane actor shares: a {@link ControllerEnv} over the
 * ActorContext (timers as closures keyed by timer id), the apiserver transport for
 * {@link ApiClient} (a missing reply becomes a 504 Timeout result), routing of
 * `ApiWatchEvent`s to the reflectors that own their watch ids, and the actor around it all
 * ({@link shellActor}).
 */
import type { Actor, ActorContext, ApiResult, ApiRequest, ApiWatchEvent, Envelope, KubeObject, Message, Status } from '@podsim/api';
import { APISERVER_ACTOR, Clock } from '@podsim/api';
import { ApiClient, type Transport } from '../client.js';
import type { ControllerEnv } from '../env.js';
import { Informer } from '../informer.js';
import { Reflector, type ReflectorOptions } from '../reflector.js';

/** Virtual µs after which an unanswered request counts as failed (504). */
export const DEFAULT_REQUEST_TIMEOUT_US = 60_000_000;

/** How a control-plane actor's API client talks to the apiserver (config of every such actor). */
export interface ApiConnectionConfig {
  /** Virtual µs before an unanswered API call fails with 504 (default 60 s). */
  readonly requestTimeoutUs?: number;
  /** client-go `minWatchTimeout` for the informers' watches, virtual µs (default 5 min; 0 = never). */
  readonly minWatchTimeoutUs?: number;
  /** Virtual times at which the connection to the apiserver breaks (scenario fault `disconnect`). */
  readonly apiConnectionLossesUs?: readonly number[];
}

function timeoutStatus(req: string): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Timeout', code: 504, message: `request ${req} timed out` };
}

export class ActorShell {
  readonly env: ControllerEnv;
  private readonly timers = new Map<number, () => void>();
  private readonly reflectors: Reflector<KubeObject>[] = [];

  constructor(
    private readonly ctx: ActorContext,
    private readonly requestTimeoutUs: number = DEFAULT_REQUEST_TIMEOUT_US,
    /** Watch timeout and connection losses for every reflector of this actor. */
    private readonly reflectorOptions: ReflectorOptions = {},
  ) {
    const clock = new Clock(ctx.epochUnixSeconds);
    const timers = this.timers;
    this.env = {
      get now() {
        return ctx.now;
      },
      clock,
      after(delayUs, fn) {
        const id = ctx.setTimer(Math.max(0, delayUs));
        timers.set(id, fn);
        return id;
      },
      cancel(id) {
        timers.delete(id);
        ctx.cancelTimer(id);
      },
      stream: (name) => ctx.stream(name),
      trace: (kind, msg, data) => ctx.trace(kind, msg, data),
      tracing: (kind) => ctx.tracing(kind),
      count: (name, delta) => ctx.count(name, delta),
    };
  }

  /** Sends one request to the apiserver; the callback always fires once. */
  readonly transport: Transport = (req, onResult, timeoutUs) => {
    this.ctx.request<ApiResult>(
      APISERVER_ACTOR,
      req as ApiRequest & Message,
      (reply) => {
        if (reply.type === 'RequestTimedOut') onResult({ type: 'ApiResult', code: 504, body: timeoutStatus(req.type) });
        else onResult(reply as ApiResult);
      },
      { timeoutUs },
    );
  };

  /** A rate-limited client for one controller. */
  client(name: string, qps: number, burst: number): ApiClient {
    return new ApiClient(this.env, this.transport, { name, qps, burst, timeoutUs: this.requestTimeoutUs });
  }

  /** Creates an informer with a reflector (list + watch) that calls `onSynced` after its first list. */
  informer<T extends KubeObject>(resource: Informer<T>['resource'], onSynced: () => void): Informer<T> {
    const inf = new Informer<T>(resource);
    const r = new Reflector<T>(
      this.env,
      inf,
      (req, cb) => {
        if (req.type === 'ApiUnwatch') {
          this.ctx.send(APISERVER_ACTOR, req);
          cb({ type: 'ApiResult', code: 200, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 } });
        } else this.transport(req, cb, this.requestTimeoutUs);
      },
      this.ctx.self,
      onSynced,
      this.reflectorOptions,
    );
    this.reflectors.push(r as unknown as Reflector<KubeObject>);
    return inf;
  }

  /** Starts every reflector. */
  startReflectors(): void {
    for (const r of this.reflectors) r.start();
  }

  /** Handles a message; returns false if it was not for the shell. */
  receive(env: Envelope): boolean {
    if (env.body.type !== 'ApiWatchEvent') return false;
    const ev = env.body as unknown as ApiWatchEvent;
    for (const r of this.reflectors) {
      if (ev.watchIds.some((id) => r.owns(id))) r.handleEvent(ev.event as never);
    }
    return true;
  }

  onTimer(id: number): void {
    const fn = this.timers.get(id);
    if (!fn) return;
    this.timers.delete(id);
    fn();
  }
}

/**
 * The actor of a control-plane component: each incarnation's `start` builds a fresh
 * {@link ActorShell} with the connection settings of `cfg`, lets `setup` create the informers,
 * clients and controllers on it, then starts the reflectors; messages and timers go to the shell.
 */
export function shellActor(cfg: ApiConnectionConfig, setup: (shell: ActorShell) => void): Actor {
  let shell: ActorShell;
  return {
    start(ctx: ActorContext) {
      shell = new ActorShell(ctx, cfg.requestTimeoutUs ?? DEFAULT_REQUEST_TIMEOUT_US, {
        minWatchTimeoutUs: cfg.minWatchTimeoutUs,
        connectionLossesUs: cfg.apiConnectionLossesUs,
      });
      setup(shell);
      shell.startReflectors();
    },
    receive(_ctx: ActorContext, env: Envelope) {
      shell.receive(env);
    },
    onTimer(_ctx: ActorContext, _payload: unknown, id: number) {
      shell.onTimer(id);
    },
  };
}
