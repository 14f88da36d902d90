/**
 * Injected CRI call faults: a call fails with a gRPC-style error, or answers late (a hanging CNI
 * teardown in StopPodSandbox, a slow runtime). Plain-data runtime actor config; the kubelet sees
 * what it would see from a misbehaving containerd (`pkg/kubelet/cri/remote/remote_runtime.go`
 * gets the error or waits). Windows are virtual time; attempts count the calls a fault matched.
 */
import type { CriError, CriErrorCode, DurationUs, VirtualTime, cri } from '@podsim/api';
import { NEVER } from '@podsim/api';
import { normalizeImage } from './images.js';

/**
 * One fault. It matches a call by name (`'*'` = any) and, optionally, by the pod (name,
 * namespace, uid), container name or image the call concerns; calls that concern no such thing
 * (ListContainers) match only faults without these selectors. While active it makes the call
 * return `error` and/or answer `delayUs` late. Active: inside `[startUs, endUs)` (default: the
 * whole run) and, if `attempts` is set, for the first `attempts` matching calls in the window.
 */
export interface CriFault {
  readonly call: cri.CriCallName | '*';
  readonly podName?: string;
  readonly podNamespace?: string;
  readonly podUid?: string;
  readonly container?: string;
  readonly image?: string;
  readonly error?: CriError;
  /** Extra virtual µs before the reply (after the call's own effects and wait). */
  readonly delayUs?: DurationUs;
  readonly attempts?: number;
  readonly startUs?: VirtualTime;
  readonly endUs?: VirtualTime;
}

/** What a call is about, for matching: the sandbox metadata, the container name, the image. */
export interface CallTarget {
  readonly pod?: cri.PodSandboxMetadata;
  readonly container?: string;
  readonly image?: string;
}

/** The outcome for one call: an error to return (first active fault with one), the summed delay, the matching fault indices. */
export interface FaultOutcome {
  readonly error?: CriError;
  readonly delayUs: DurationUs;
  readonly faults: readonly number[];
}

const CODES: readonly CriErrorCode[] = ['NotFound', 'Unknown', 'DeadlineExceeded', 'Unavailable', 'InvalidArgument', 'FailedPrecondition'];

/** Problems with a fault list, one sentence each naming `faults[i]` (empty = valid). */
export function validateCriFaults(faults: readonly CriFault[]): string[] {
  const errs: string[] = [];
  faults.forEach((f, i) => {
    const at = `faults[${i}]`;
    if (typeof f.call !== 'string' || (f.call as string) === '') errs.push(`${at}.call must name a CRI call or '*'`);
    if (f.error === undefined && f.delayUs === undefined) errs.push(`${at} needs an error or a delayUs`);
    if (f.error !== undefined && !CODES.includes(f.error.code)) errs.push(`${at}.error.code must be one of ${CODES.join(', ')}`);
    if (f.delayUs !== undefined && !(Number.isSafeInteger(f.delayUs) && f.delayUs >= 0)) errs.push(`${at}.delayUs must be a non-negative integer (µs)`);
    if (f.attempts !== undefined && !(Number.isSafeInteger(f.attempts) && f.attempts >= 1)) errs.push(`${at}.attempts must be a positive integer`);
    if ((f.endUs ?? NEVER) <= (f.startUs ?? 0)) errs.push(`${at}: endUs must be after startUs`);
  });
  return errs;
}

/** The faults of one runtime and how many calls each has matched so far. */
export class CriFaultBook {
  private readonly used: number[];

  private readonly faults: readonly CriFault[];

  /** `faults` must be valid ({@link validateCriFaults}); images are compared normalized. */
  constructor(faults: readonly CriFault[]) {
    this.faults = faults.map((f) => (f.image === undefined ? f : { ...f, image: normalizeImage(f.image) }));
    this.used = faults.map(() => 0);
  }

  /** No faults at all: every call is fault-free (lets the caller skip building `target`). */
  get empty(): boolean {
    return this.faults.length === 0;
  }

  /**
   * Applies the faults to one call `call` received at `now`; counts attempts. `target` says what
   * the call is about (image normalized); it is only computed when a fault could apply.
   */
  check(call: cri.CriCallName, target: () => CallTarget, now: VirtualTime): FaultOutcome {
    if (this.faults.length === 0) return NO_FAULT;
    let error: CriError | undefined;
    let delayUs = 0;
    const hit: number[] = [];
    let t: CallTarget | undefined;
    this.faults.forEach((f, i) => {
      if (f.call !== '*' && f.call !== call) return;
      if (now < (f.startUs ?? 0) || now >= (f.endUs ?? NEVER)) return;
      if (f.attempts !== undefined && this.used[i] >= f.attempts) return;
      if (!matches(f, (t ??= target()))) return;
      this.used[i]++;
      hit.push(i);
      error ??= f.error;
      delayUs += f.delayUs ?? 0;
    });
    return hit.length === 0 ? NO_FAULT : { error, delayUs, faults: hit };
  }
}

/** The outcome of a call no fault applies to (shared, never mutated). */
export const NO_FAULT: FaultOutcome = { delayUs: 0, faults: [] };

function matches(f: CriFault, t: CallTarget): boolean {
  if (f.podName !== undefined && f.podName !== t.pod?.name) return false;
  if (f.podNamespace !== undefined && f.podNamespace !== t.pod?.namespace) return false;
  if (f.podUid !== undefined && f.podUid !== t.pod?.uid) return false;
  if (f.container !== undefined && f.container !== t.container) return false;
  return f.image === undefined || f.image === t.image;
}
