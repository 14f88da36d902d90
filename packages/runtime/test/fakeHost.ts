/**
 * Test driver for {@link CriRuntime} without the engine: a virtual clock with a timer queue
 * (ordered by time, then by the order timers were set, like the engine orders one actor's own
 * timers), seeded streams and ids, and a record of every reply and trace.
 */
import { type Message, type Prng, type TimerId, IdGenerator, deriveStream, type cri } from '@podsim/api';
import { MinHeap } from '@podsim/sim';
import { CriRuntime, type RuntimeConfig, type RuntimeHost } from '../src/index.js';

interface Timer {
  at: number;
  seq: number;
  id: TimerId;
  payload: unknown;
}

export interface Trace {
  t: number;
  kind: string;
  msg: string;
  data?: Record<string, unknown>;
}

export interface Reply {
  at: number;
  body: cri.CriResult;
}

export class RuntimeDriver implements RuntimeHost<number> {
  now = 0;
  readonly runtime: CriRuntime<number>;
  readonly traces: Trace[] = [];
  private readonly replies = new Map<number, Reply>();
  private readonly queue = new MinHeap<Timer>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
  private readonly cancelled = new Set<TimerId>();
  private readonly streams = new Map<string, Prng>();
  private readonly ids: IdGenerator;
  private nextTimer = 1;
  private nextToken = 1;

  constructor(
    config: Partial<RuntimeConfig> = {},
    readonly seed = 1,
  ) {
    this.ids = new IdGenerator(deriveStream(seed, 'ids'));
    this.runtime = new CriRuntime<number>({ nodeName: 'node-1', ...config });
    this.runtime.start(this);
  }

  // ---- RuntimeHost ----
  setTimer(delayUs: number, payload?: unknown): TimerId {
    const id = this.nextTimer++;
    this.queue.push({ at: this.now + delayUs, seq: id, id, payload });
    return id;
  }
  cancelTimer(id: TimerId): void {
    this.cancelled.add(id);
  }
  stream(name: string): Prng {
    let s = this.streams.get(name);
    if (!s) this.streams.set(name, (s = deriveStream(this.seed, name)));
    return s;
  }
  newId(size?: number, alphabet?: string): string {
    return this.ids.id(size, alphabet);
  }
  trace(kind: string, msg: string, data?: Record<string, unknown>): void {
    this.traces.push({ t: this.now, kind, msg, data });
  }
  tracing(): boolean {
    return true;
  }
  reply(token: number, body: Message): void {
    if (this.replies.has(token)) throw new Error(`call ${token} answered twice`);
    this.replies.set(token, { at: this.now, body: body as cri.CriResult });
  }

  // ---- driving ----
  /** Sends a request now; returns its token. */
  call(req: cri.CriRequest): number {
    const token = this.nextToken++;
    this.runtime.handle(this, req, token);
    return token;
  }
  /** The reply to `token`, if sent yet. */
  answer(token: number): Reply | undefined {
    return this.replies.get(token);
  }
  /** Sends a request that must be answered at once, and returns the answer. */
  sync<K extends keyof cri.CriResultOf>(req: cri.CriRequest & { type: K }): cri.CriResultOf[K] {
    const r = this.replies.get(this.call(req));
    if (!r) throw new Error(`${req.type} was not answered at once`);
    return r.body as cri.CriResultOf[K];
  }
  /** Fires every timer due before or at `t`, then sets the clock to `t`. */
  runUntil(t: number): void {
    for (;;) {
      const top = this.queue.peek();
      if (!top || top.at > t) break;
      this.queue.pop();
      if (this.cancelled.has(top.id)) continue;
      this.now = top.at;
      this.runtime.onTimer(this, top.payload);
    }
    this.now = t;
  }
  runFor(us: number): void {
    this.runUntil(this.now + us);
  }

  /** Process records (`cri.signal`, `cri.exit`, `cri.start`, `cri.exec`) of one container. */
  proc(containerId: string, kind?: string): Trace[] {
    return this.traces.filter((r) => r.kind !== 'cri.call' && r.data?.containerId === containerId && (kind === undefined || r.kind === kind));
  }

  // ---- fixtures ----
  /** RunPodSandbox for pod `name` (uid `uid-<name>`) with `annotations`; returns the sandbox id. */
  runPod(name: string, annotations: Record<string, string> = {}, attempt = 0): string {
    const r = this.sync({ type: 'RunPodSandbox', config: sandboxConfig(name, annotations, attempt) });
    if (r.error || !r.podSandboxId) throw new Error(`RunPodSandbox failed: ${r.error?.message}`);
    return r.podSandboxId;
  }
  /** Pulls (instantly, unless the image is new and the pull takes time: then runs the clock), creates and starts a container. */
  startContainer(sandboxId: string, pod: string, container: string, annotations: Record<string, string> = {}, attempt = 0): string {
    const image = 'nginx:1.21';
    const pull = this.call({ type: 'PullImage', image: { image } });
    while (!this.answer(pull)) this.runFor(100_000);
    const id = this.createContainer(sandboxId, pod, container, annotations, attempt, image);
    const s = this.sync({ type: 'StartContainer', containerId: id });
    if (s.error) throw new Error(`StartContainer failed: ${s.error.message}`);
    return id;
  }
  createContainer(sandboxId: string, pod: string, container: string, annotations: Record<string, string> = {}, attempt = 0, image = 'nginx:1.21'): string {
    const r = this.sync({ type: 'CreateContainer', podSandboxId: sandboxId, config: containerConfig(container, annotations, attempt, image), sandboxConfig: sandboxConfig(pod, annotations) });
    if (r.error || !r.containerId) throw new Error(`CreateContainer failed: ${r.error?.message}`);
    return r.containerId;
  }
  status(containerId: string): cri.ContainerStatus {
    const r = this.sync({ type: 'ContainerStatus', containerId });
    if (!r.status) throw new Error(`ContainerStatus failed: ${r.error?.message}`);
    return r.status;
  }
}

export function sandboxConfig(name: string, annotations: Record<string, string> = {}, attempt = 0): cri.PodSandboxConfig {
  return {
    metadata: { name, uid: `uid-${name}`, namespace: 'default', attempt },
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': `uid-${name}` },
    annotations,
  };
}

export function containerConfig(name: string, annotations: Record<string, string> = {}, attempt = 0, image = 'nginx:1.21'): cri.ContainerConfig {
  return {
    metadata: { name, attempt },
    image: { image },
    labels: { 'io.kubernetes.container.name': name },
    annotations: { 'io.kubernetes.container.restartCount': String(attempt), ...annotations },
  };
}

export const S = 1_000_000;
