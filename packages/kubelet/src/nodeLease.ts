/**
 * The kubelet's Node Lease heartbeat: `k8s.io/component-helpers/apimachinery/lease/controller.go`
 * v0.22.8 (`NewController`, `Run`, `sync`, `backoffEnsureLease`, `ensureLease`,
 * `retryUpdateLease`, `newLease`; node-lifecycle spec §2.2) as the kubelet wires it in
 * `NewMainKubelet` (`pkg/kubelet/kubelet.go`, with `util.SetNodeOwnerFunc`). One sync at start,
 * then the next one `renewInterval × (1 + U[0, 0.04))` after the previous sync returned
 * (`wait.JitterUntil(…, 0.04, sliding=true)`). A sync UPDATEs the cached lease with a fresh
 * `renewTime` (MicroTime); without one, or when that fails, it GETs (CREATEs on NotFound) with
 * backoff 200 ms doubling to 7 s, forever; up to 5 UPDATE attempts per sync, a 409 re-GETs.
 * Only holderIdentity, leaseDurationSeconds, renewTime and the Node ownerReference are written.
 * Requests go through the unthrottled heartbeat client (timeout 10 s). Allocation when nothing
 * failed: one Lease object per renewal (the UPDATE body).
 */
import type { ApiRequest, ApiResult, Lease, Node, VirtualTime } from '@podsim/api';
import { NAMESPACE_NODE_LEASE, US_PER_SECOND } from '@podsim/api';

/** `maxUpdateRetries`. */
export const LEASE_MAX_UPDATE_RETRIES = 5;
/** `maxBackoff` of `backoffEnsureLease`. */
export const LEASE_MAX_BACKOFF_US = 7 * US_PER_SECOND;
/** The first sleep of `backoffEnsureLease` (200 ms, doubling). */
export const LEASE_INITIAL_BACKOFF_US = 200_000;
/** `nodeLeaseRenewIntervalFraction` (pkg/kubelet/kubelet.go). */
export const NODE_LEASE_RENEW_INTERVAL_FRACTION = 0.25;
/** `JitterUntil` factor of the renew loop (#101652, in 1.22). */
export const LEASE_RENEW_JITTER = 0.04;

/** What the lease controller needs from the kubelet. */
export interface NodeLeaseDeps {
  now(): VirtualTime;
  /** Virtual µs → MicroTime. */
  formatMicro(t: VirtualTime): string;
  setTimer(delayUs: number, fn: () => void): void;
  /** `wait.Jitter(d, factor)`. */
  jitter(d: number, factor: number): number;
  /** One request through the heartbeat client (unthrottled). */
  send(req: ApiRequest, cb: (res: ApiResult) => void): void;
  /** `onRepeatedHeartbeatFailure` (the kubelet closes its connections). */
  onRepeatedHeartbeatFailure(): void;
  trace(kind: string, msg: string, data?: Record<string, unknown>): void;
}

export class NodeLeaseController {
  /** `latestLease`: the lease of the last successful create/update (undefined until then). */
  latestLease: Lease | undefined;
  /** Successful renewals (creates and updates), for tests and metrics. */
  renewals = 0;
  /** The owner Node's UID once known (`SetNodeOwnerFunc` GETs it). */
  private nodeUid: string | undefined;
  private readonly renewIntervalUs: number;

  constructor(
    private readonly deps: NodeLeaseDeps,
    readonly holderIdentity: string,
    readonly leaseDurationSeconds: number,
  ) {
    this.renewIntervalUs = leaseDurationSeconds * NODE_LEASE_RENEW_INTERVAL_FRACTION * US_PER_SECOND;
  }

  /** `Run`: the first sync now, then sliding jittered periods. */
  start(): void {
    this.sync(() => this.scheduleNext());
  }

  private scheduleNext(): void {
    this.deps.setTimer(this.deps.jitter(this.renewIntervalUs, LEASE_RENEW_JITTER), () => this.sync(() => this.scheduleNext()));
  }

  /** `sync`: update the cached lease; else ensure (create) it, then update unless just created. */
  sync(done: () => void): void {
    if (this.latestLease) {
      this.retryUpdateLease(this.latestLease, (ok) => {
        if (ok) done();
        else this.ensureThenUpdate(done);
      });
      return;
    }
    this.ensureThenUpdate(done);
  }

  private ensureThenUpdate(done: () => void): void {
    this.backoffEnsureLease(LEASE_INITIAL_BACKOFF_US, (lease, created) => {
      if (created) {
        this.latestLease = lease;
        done();
        return;
      }
      this.retryUpdateLease(lease, () => done());
    });
  }

  /** `backoffEnsureLease`: `ensureLease` until it succeeds, sleeping 200 ms × 2ⁿ (≤ 7 s) between. */
  private backoffEnsureLease(sleepUs: number, cb: (lease: Lease, created: boolean) => void): void {
    this.ensureLease((lease, created) => {
      if (lease) {
        cb(lease, created);
        return;
      }
      this.deps.setTimer(sleepUs, () => this.backoffEnsureLease(Math.min(sleepUs * 2, LEASE_MAX_BACKOFF_US), cb));
    });
  }

  /** `ensureLease`: GET; on NotFound CREATE a new lease (after the owner Node's UID is known). */
  private ensureLease(cb: (lease: Lease | undefined, created: boolean) => void): void {
    this.deps.send({ type: 'ApiGet', resource: 'leases', namespace: NAMESPACE_NODE_LEASE, name: this.holderIdentity }, (res) => {
      if (res.code === 200) {
        cb(res.body as Lease, false);
        return;
      }
      if (res.code !== 404) {
        cb(undefined, false);
        return;
      }
      this.withNodeUid((uid) => {
        // SetNodeOwnerFunc: a Node that cannot be read means no lease is created this round.
        if (uid === undefined) {
          cb(undefined, false);
          return;
        }
        this.deps.send({ type: 'ApiCreate', resource: 'leases', namespace: NAMESPACE_NODE_LEASE, object: this.newLease(undefined) }, (c) => {
          if (c.code === 201) {
            this.renewals++;
            cb(c.body as Lease, true);
          } else cb(undefined, false);
        });
      });
    });
  }

  private withNodeUid(cb: (uid: string | undefined) => void): void {
    if (this.nodeUid !== undefined) {
      cb(this.nodeUid);
      return;
    }
    this.deps.send({ type: 'ApiGet', resource: 'nodes', name: this.holderIdentity }, (res) => {
      if (res.code === 200) this.nodeUid = (res.body as Node).metadata.uid;
      cb(this.nodeUid);
    });
  }

  /**
   * `retryUpdateLease`: up to 5 UPDATEs of `base` with a fresh renewTime; a 409 re-GETs the lease
   * and gives up this round (the caller ensures), any failure after the first calls
   * `onRepeatedHeartbeatFailure`.
   */
  private retryUpdateLease(base: Lease, cb: (ok: boolean) => void, attempt = 0): void {
    if (attempt >= LEASE_MAX_UPDATE_RETRIES) {
      this.deps.trace('kubelet.lease', `failed ${LEASE_MAX_UPDATE_RETRIES} attempts to update lease`, { node: this.holderIdentity });
      cb(false);
      return;
    }
    const lease = this.newLease(base);
    this.deps.send({ type: 'ApiUpdate', resource: 'leases', namespace: NAMESPACE_NODE_LEASE, name: this.holderIdentity, object: lease }, (res) => {
      if (res.code === 200) {
        this.latestLease = res.body as Lease;
        this.renewals++;
        cb(true);
        return;
      }
      if (res.code === 409) {
        // Optimistic lock failure: the cached copy is stale; drop it so the next round re-GETs.
        this.latestLease = undefined;
        cb(false);
        return;
      }
      if (attempt > 0) this.deps.onRepeatedHeartbeatFailure();
      this.retryUpdateLease(base, cb, attempt + 1);
    });
  }

  /** `newLease`: a copy of `base` (or a new Lease) with the holder, duration, renewTime and owner. */
  private newLease(base: Lease | undefined): Lease {
    const renewTime = this.deps.formatMicro(this.deps.now());
    const spec = { ...base?.spec, holderIdentity: this.holderIdentity, leaseDurationSeconds: this.leaseDurationSeconds, renewTime };
    const meta = base ? base.metadata : { name: this.holderIdentity, namespace: NAMESPACE_NODE_LEASE };
    const owned = (meta.ownerReferences ?? []).length > 0 || this.nodeUid === undefined;
    const metadata = owned
      ? meta
      : { ...meta, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.holderIdentity, uid: this.nodeUid! }] };
    return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec };
  }
}
