/**
 * Application (serving) behaviour annotations (`podsim.dev/*`, issue #18): how the process inside
 * a Service-backed pod treats connections while it shuts down, as spec endpoints-traffic §8.4
 * lists the behaviours. Not a Kubernetes API; pod-wide (the serving container is the pod's).
 * - `podsim.dev/close-listener-after`: how long after SIGTERM the process stops accepting new
 *   connections (a duration; default `0s`: at SIGTERM) or `never` (it accepts until it exits);
 * - `podsim.dev/drain`: how long after the listener closes in-flight requests may still finish
 *   (a duration; default `unbounded`: until the process exits); requests still running then are reset;
 * - `podsim.dev/service-time`: how long one request takes (a distribution; default `10ms`).
 * When the process exits, requests in flight on it are reset (RESET_INFLIGHT).
 */
import { type Distribution, parseDistribution, parseDurationUs } from './behavior.js';
import type { DurationUs } from './time.js';

export const APP_ANNOTATIONS = {
  closeListenerAfter: 'podsim.dev/close-listener-after',
  drain: 'podsim.dev/drain',
  serviceTime: 'podsim.dev/service-time',
} as const;

export interface AppBehavior {
  /** Virtual µs from SIGTERM to listener close; null = never (until exit). */
  readonly closeListenerAfterUs: DurationUs | null;
  /** Virtual µs in-flight requests may run after the close; null = unbounded. */
  readonly drainUs: DurationUs | null;
  readonly serviceTime: Distribution;
}

export const DEFAULT_APP_BEHAVIOR: AppBehavior = { closeListenerAfterUs: 0, drainUs: null, serviceTime: { kind: 'fixed', us: 10_000 } };

/** Parses the app annotations of a pod: the behaviour, and one message per bad value (key → message). */
export function parseAppAnnotations(annotations: Readonly<Record<string, string>> | undefined): { app: AppBehavior; errors: { annotation: string; message: string }[] } {
  const a = annotations ?? {};
  const errors: { annotation: string; message: string }[] = [];
  let { closeListenerAfterUs, drainUs, serviceTime } = DEFAULT_APP_BEHAVIOR;
  const bad = (k: string, why: string) => errors.push({ annotation: k, message: `annotation ${k}: invalid value ${JSON.stringify(a[k])}: ${why}` });
  const cl = a[APP_ANNOTATIONS.closeListenerAfter];
  if (cl !== undefined) {
    if (cl.trim() === 'never') closeListenerAfterUs = null;
    else {
      const us = parseDurationUs(cl);
      if (us === undefined) bad(APP_ANNOTATIONS.closeListenerAfter, 'expected a duration (0s, 500ms, 5s) or never');
      else closeListenerAfterUs = us;
    }
  }
  const dr = a[APP_ANNOTATIONS.drain];
  if (dr !== undefined) {
    if (dr.trim() === 'unbounded') drainUs = null;
    else {
      const us = parseDurationUs(dr);
      if (us === undefined) bad(APP_ANNOTATIONS.drain, 'expected a duration (0s, 2s) or unbounded');
      else drainUs = us;
    }
  }
  const st = a[APP_ANNOTATIONS.serviceTime];
  if (st !== undefined) {
    const d = parseDistribution(st);
    if (!d) bad(APP_ANNOTATIONS.serviceTime, 'expected a duration such as 10ms or uniform(5ms,20ms) / exp(10ms) / normal(10ms,2ms)');
    else serviceTime = d;
  }
  return { app: { closeListenerAfterUs, drainUs, serviceTime }, errors };
}
