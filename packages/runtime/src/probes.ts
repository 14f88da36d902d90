/**
 * What an httpGet / tcpSocket probe against a simulated process answers (the podsim
 * `ProbeContainer` extension; the kubelet's prober, `pkg/kubelet/prober/prober.go` `runProbe`,
 * would dial the container's IP). Both handlers give the same answer: the process is running, its
 * start-up time has passed, it is not hung (liveness/readiness), and, for readiness, it is outside
 * its not-ready windows and not draining after SIGTERM unless it keeps serving. Pure.
 */
import { type ContainerBehavior, type DurationUs, type VirtualTime, inIntervals } from '@podsim/api';

/** The process facts a probe depends on. Times are virtual µs. */
export interface ProbedProcess {
  readonly running: boolean;
  readonly startedAt: VirtualTime;
  /** Drawn start-up time of this run of the process. */
  readonly startupUs: DurationUs;
  /** Time since start from which the process is hung (NEVER if it never hangs). */
  readonly unhealthyAtUs: DurationUs;
  /** When SIGTERM was first delivered, if it was. */
  readonly termSignalledAt: VirtualTime | undefined;
  readonly behavior: ContainerBehavior;
}

/** The result of one probe of `kind` at `now`: true = success. */
export function probeResult(p: ProbedProcess, kind: 'readiness' | 'liveness' | 'startup', now: VirtualTime): boolean {
  if (!p.running) return false;
  const age = now - p.startedAt;
  if (age < p.startupUs) return false;
  if (kind === 'startup') return true;
  if (age >= p.unhealthyAtUs) return false;
  if (kind === 'liveness') return true;
  if (p.termSignalledAt !== undefined && !p.behavior.readyAfterSigterm) return false;
  return !inIntervals(p.behavior.notReady, age);
}
