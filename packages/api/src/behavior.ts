/**
 * Container behaviour annotations (`podsim.dev/*`): podsim's stand-in for the application inside
 * an image — how long it takes to start, what it does on SIGTERM, when it crashes, how long exec
 * commands take, what its probes answer. Not a Kubernetes API. The kubelet copies the pod's
 * `podsim.dev/*` annotations into each `ContainerConfig.annotations` (and, like upstream
 * `kuberuntime_sandbox.go` `generatePodSandboxConfig`, all pod annotations into the sandbox
 * config); the CRI runtime parses them here. Pure: no state, randomness only via a caller's Prng.
 */
import type { Prng } from './prng.js';
import { type DurationUs, NEVER, US_PER_HOUR, US_PER_MINUTE, US_PER_MS, US_PER_SECOND } from './time.js';

/** Every behaviour annotation starts with this. */
export const BEHAVIOR_PREFIX = 'podsim.dev/';

/** A duration that may be random: fixed, or drawn per use from a seeded stream (virtual µs). */
export type Distribution =
  | { readonly kind: 'fixed'; readonly us: DurationUs }
  | { readonly kind: 'uniform'; readonly minUs: DurationUs; readonly maxUs: DurationUs }
  | { readonly kind: 'exp'; readonly meanUs: DurationUs }
  | { readonly kind: 'normal'; readonly meanUs: DurationUs; readonly stddevUs: DurationUs };

/** What the process does when the stop signal (SIGTERM) arrives. */
export type SigtermBehavior =
  /** No handler: the kernel's default action kills it at once, exit 143 (128 + 15). */
  | { readonly action: 'default' }
  /** Handler that ignores it (or a shell as PID 1): only SIGKILL ends it (exit 137). */
  | { readonly action: 'ignore' }
  /** Handler that shuts down and exits with `exitCode` after `after`. */
  | { readonly action: 'exit'; readonly after: Distribution; readonly exitCode: number };

/** On which container attempts (`ContainerMetadata.attempt`, 0-based) a misbehaviour happens: the first n, or all. */
export type Attempts = number | 'always';

/** A window of virtual time relative to the process start, `[fromUs, toUs)`; `toUs` = NEVER when open-ended. */
export interface Interval {
  readonly fromUs: DurationUs;
  readonly toUs: DurationUs;
}

/** The fully resolved behaviour of one container (defaults filled in). Plain data. */
export interface ContainerBehavior {
  /** Start-up time: from StartContainer until startup/readiness/liveness probes can pass. */
  readonly startup: Distribution;
  readonly onSigterm: SigtermBehavior;
  /** Exits on its own `after` its start with `exitCode` (0 = a normal completion), or never (null). */
  readonly crash: { readonly after: Distribution; readonly exitCode: number } | null;
  readonly crashAttempts: Attempts;
  /** From this long after start, liveness probes fail (the process hangs but keeps running); null = never. */
  readonly unhealthyAfter: Distribution | null;
  readonly unhealthyAttempts: Attempts;
  /** Readiness probes fail inside these windows (after start-up), relative to the process start. */
  readonly notReady: readonly Interval[];
  /** Does readiness keep passing once SIGTERM was delivered (the app keeps serving while it drains)? */
  readonly readyAfterSigterm: boolean;
  /** How long exec commands other than `sleep` take; null = the runtime's configured default. */
  readonly execDuration: Distribution | null;
  /** Exit code of exec commands other than `sleep` (0 = they succeed). */
  readonly execExitCode: number;
}

/** Parsed annotations of one pod: pod-wide values and per-container overrides (only the fields set). */
export interface PodBehavior {
  /** Image pull time for this pod's images (pod-wide only: PullImage carries no container name). */
  readonly imagePull: Distribution | null;
  readonly pod: Partial<ContainerBehavior>;
  readonly containers: Readonly<Record<string, Partial<ContainerBehavior>>>;
}

/** One bad annotation: its full key, its value, and a sentence saying what is wrong. */
export interface BehaviorError {
  readonly annotation: string;
  readonly value: string;
  readonly message: string;
}

export interface BehaviorParseResult {
  readonly behavior: PodBehavior;
  /** Empty when every `podsim.dev/` behaviour annotation is valid. */
  readonly errors: readonly BehaviorError[];
  /** `podsim.dev/` keys that are not behaviour annotations (other components may own them). */
  readonly unknown: readonly string[];
}

/** Defaults for a container with no behaviour annotations: ready at once, dies on SIGTERM (143). */
export const DEFAULT_CONTAINER_BEHAVIOR: ContainerBehavior = {
  startup: { kind: 'fixed', us: 0 },
  onSigterm: { action: 'default' },
  crash: null,
  crashAttempts: 1,
  unhealthyAfter: null,
  unhealthyAttempts: 1,
  notReady: [],
  readyAfterSigterm: true,
  execDuration: null,
  execExitCode: 0,
};

// ---- parsing --------------------------------------------------------------------------------

/** A parse failure inside this module (never escapes it). */
class Bad {
  constructor(readonly why: string) {}
}

const UNIT_US: Record<string, number> = {
  ns: 0.001,
  us: 1,
  µs: 1,
  μs: 1,
  ms: US_PER_MS,
  s: US_PER_SECOND,
  m: US_PER_MINUTE,
  h: US_PER_HOUR,
};
const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/**
 * Parses a Go `time.ParseDuration` string without sign (`2s`, `1.5s`, `500ms`, `2m30s`, `0`) to
 * virtual µs, rounded to the nearest µs. Returns undefined if malformed.
 */
export function parseDurationUs(text: string): DurationUs | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < s.length) {
    const m = DURATION_PART.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_US[m[2]];
  }
  const us = Math.round(total);
  return Number.isSafeInteger(us) ? us : undefined;
}

function duration(text: string): DurationUs | Bad {
  const us = parseDurationUs(text);
  return us === undefined ? new Bad(`"${text.trim()}" is not a duration (use Go syntax with a unit: 500ms, 2s, 1m30s)`) : us;
}

const FUNC = /^(uniform|exp|normal)\((.*)\)$/;

/**
 * Parses a distribution: `<duration>` (fixed), `uniform(<min>,<max>)`, `exp(<mean>)` or
 * `normal(<mean>,<stddev>)` (samples below 0 become 0). Returns a Bad with the reason if malformed.
 */
function distribution(text: string): Distribution | Bad {
  const s = text.trim();
  const m = FUNC.exec(s);
  if (!m) {
    const us = duration(s);
    return us instanceof Bad ? new Bad(`"${s}" is neither a duration nor uniform(a,b) / exp(mean) / normal(mean,sd)`) : { kind: 'fixed', us };
  }
  const args = m[2].split(',').map((a) => duration(a));
  const bad = args.find((a): a is Bad => a instanceof Bad);
  if (bad) return bad;
  const n = args as number[];
  const want = m[1] === 'exp' ? 1 : 2;
  if (n.length !== want) return new Bad(`${m[1]}(…) takes ${want} duration${want > 1 ? 's' : ''}, got ${n.length}`);
  switch (m[1]) {
    case 'uniform':
      if (n[0] > n[1]) return new Bad(`uniform(${m[2]}): the minimum is larger than the maximum`);
      return { kind: 'uniform', minUs: n[0], maxUs: n[1] };
    case 'exp':
      return { kind: 'exp', meanUs: n[0] };
    default:
      return { kind: 'normal', meanUs: n[0], stddevUs: n[1] };
  }
}

/** Public form of the distribution parser: the Distribution, or undefined if malformed. */
export function parseDistribution(text: string): Distribution | undefined {
  const d = distribution(text);
  return d instanceof Bad ? undefined : d;
}

function exitCode(text: string): number | Bad {
  const s = text.trim();
  if (!/^\d+$/.test(s) || Number(s) > 255) return new Bad(`exit code "${s}" is not an integer in 0–255`);
  return Number(s);
}

function attempts(text: string): Attempts | Bad {
  const s = text.trim();
  if (s === 'always') return 'always';
  if (!/^\d+$/.test(s) || Number(s) < 1) return new Bad(`"${s}" is neither a positive number of attempts nor "always"`);
  return Number(s);
}

function bool(text: string): boolean | Bad {
  const s = text.trim();
  if (s === 'true') return true;
  if (s === 'false') return false;
  return new Bad(`"${s}" is neither true nor false`);
}

/** `default` | `ignore` | `exit` | `exit:<dist>` | `exit:<dist>:<code>`. */
function sigterm(text: string): SigtermBehavior | Bad {
  const s = text.trim();
  if (s === 'default') return { action: 'default' };
  if (s === 'ignore') return { action: 'ignore' };
  const parts = s.split(':');
  if (parts[0] !== 'exit' || parts.length > 3) {
    return new Bad(`"${s}" is not one of default, ignore, exit, exit:<delay>, exit:<delay>:<code>`);
  }
  const after = parts.length > 1 ? distribution(parts[1]) : ({ kind: 'fixed', us: 0 } as const);
  if (after instanceof Bad) return after;
  const code = parts.length > 2 ? exitCode(parts[2]) : 0;
  if (code instanceof Bad) return code;
  return { action: 'exit', after, exitCode: code };
}

/** `<dist>` or `<dist>:<code>` (code default 1). */
function crash(text: string): ContainerBehavior['crash'] | Bad {
  const parts = text.trim().split(':');
  if (parts.length > 2) return new Bad(`"${text.trim()}" is not <delay> or <delay>:<exit code>`);
  const after = distribution(parts[0]);
  if (after instanceof Bad) return after;
  const code = parts.length > 1 ? exitCode(parts[1]) : 1;
  if (code instanceof Bad) return code;
  return { after, exitCode: code };
}

/** Comma-separated `<from>-<to>` or `<from>-` windows, relative to the process start. */
function intervals(text: string): Interval[] | Bad {
  const out: Interval[] = [];
  for (const part of text.split(',')) {
    const p = part.trim();
    const dash = p.indexOf('-');
    if (dash < 0) return new Bad(`"${p}" is not a window <from>-<to> or <from>-`);
    const from = duration(p.slice(0, dash));
    if (from instanceof Bad) return from;
    const rest = p.slice(dash + 1).trim();
    const to = rest === '' ? NEVER : duration(rest);
    if (to instanceof Bad) return to;
    if (to <= from) return new Bad(`window "${p}" ends before it starts`);
    out.push({ fromUs: from, toUs: to });
  }
  return out;
}

type FieldParser = (value: string) => Partial<ContainerBehavior> | Bad;
const wrap =
  <T>(parse: (v: string) => T | Bad, set: (v: T) => Partial<ContainerBehavior>): FieldParser =>
  (v) => {
    const r = parse(v);
    return r instanceof Bad ? r : set(r);
  };

/** The per-container behaviour keys (usable as `podsim.dev/<key>` and `podsim.dev/<container>.<key>`). */
const CONTAINER_KEYS: Record<string, FieldParser> = {
  startup: wrap(distribution, (startup) => ({ startup })),
  'on-sigterm': wrap(sigterm, (onSigterm) => ({ onSigterm })),
  crash: wrap(crash, (c) => ({ crash: c })),
  'crash-attempts': wrap(attempts, (crashAttempts) => ({ crashAttempts })),
  'unhealthy-after': wrap(distribution, (unhealthyAfter) => ({ unhealthyAfter })),
  'unhealthy-attempts': wrap(attempts, (unhealthyAttempts) => ({ unhealthyAttempts })),
  'not-ready': wrap(intervals, (notReady) => ({ notReady })),
  'ready-after-sigterm': wrap(bool, (readyAfterSigterm) => ({ readyAfterSigterm })),
  'exec-duration': wrap(distribution, (execDuration) => ({ execDuration })),
  'exec-exit-code': wrap(exitCode, (execExitCode) => ({ execExitCode })),
};
const POD_KEYS = new Set(['image-pull']);

/** Names of every behaviour key, for documentation and validators. */
export const BEHAVIOR_KEYS: readonly string[] = [...Object.keys(CONTAINER_KEYS), ...POD_KEYS];

/**
 * Parses the `podsim.dev/*` behaviour annotations of a pod (or of a ContainerConfig / sandbox
 * config carrying them). Other annotations are ignored; `podsim.dev/` keys that are not behaviour
 * keys are listed in `unknown` (not errors: other components may define their own). Every
 * malformed value gives one {@link BehaviorError}; the bad key is then left unset.
 */
export function parseBehaviorAnnotations(annotations: Readonly<Record<string, string>> | undefined): BehaviorParseResult {
  let pod: Partial<ContainerBehavior> = {};
  const containers: Record<string, Partial<ContainerBehavior>> = {};
  let imagePull: Distribution | null = null;
  const errors: BehaviorError[] = [];
  const unknown: string[] = [];
  for (const [annotation, value] of Object.entries(annotations ?? {})) {
    if (!annotation.startsWith(BEHAVIOR_PREFIX)) continue;
    const name = annotation.slice(BEHAVIOR_PREFIX.length);
    const dot = name.indexOf('.');
    const container = dot < 0 ? undefined : name.slice(0, dot);
    const key = dot < 0 ? name : name.slice(dot + 1);
    const fail = (why: string) => errors.push({ annotation, value, message: `annotation ${annotation}: invalid value ${JSON.stringify(value)}: ${why}` });
    if (POD_KEYS.has(key)) {
      if (container !== undefined) {
        fail(`${key} is pod-wide; use ${BEHAVIOR_PREFIX}${key}`);
        continue;
      }
      const d = distribution(value);
      if (d instanceof Bad) fail(d.why);
      else imagePull = d;
      continue;
    }
    const parse = Object.hasOwn(CONTAINER_KEYS, key) ? CONTAINER_KEYS[key] : undefined;
    if (!parse || container === '') {
      unknown.push(annotation);
      continue;
    }
    const field = parse(value);
    if (field instanceof Bad) {
      fail(field.why);
      continue;
    }
    if (container === undefined) pod = { ...pod, ...field };
    else containers[container] = { ...containers[container], ...field };
  }
  return { behavior: { imagePull, pod, containers }, errors, unknown };
}

/** The behaviour of container `name`: defaults, overridden by pod-wide values, overridden by its own. */
export function resolveContainerBehavior(b: PodBehavior, name: string): ContainerBehavior {
  return { ...DEFAULT_CONTAINER_BEHAVIOR, ...b.pod, ...(Object.hasOwn(b.containers, name) ? b.containers[name] : undefined) };
}

/** Does a misbehaviour limited to `a` attempts apply to the container attempt `attempt` (0-based)? */
export function appliesToAttempt(a: Attempts, attempt: number): boolean {
  return a === 'always' || attempt < a;
}

/** Draws one duration (integer virtual µs ≥ 0) from `d` using `prng` (fixed values draw nothing). */
export function sampleUs(d: Distribution, prng: Prng): DurationUs {
  switch (d.kind) {
    case 'fixed':
      return d.us;
    case 'uniform':
      return d.minUs + Math.floor(prng.float() * (d.maxUs - d.minUs + 1));
    case 'exp':
      return Math.round(-d.meanUs * Math.log(1 - prng.float()));
    case 'normal': {
      // Box–Muller; 1 − u keeps the logarithm's argument in (0, 1].
      const u = 1 - prng.float();
      const v = prng.float();
      const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
      return Math.max(0, Math.round(d.meanUs + z * d.stddevUs));
    }
  }
}

/** Is `t` (µs since the process start) inside one of `windows`? */
export function inIntervals(windows: readonly Interval[], t: DurationUs): boolean {
  return windows.some((w) => t >= w.fromUs && t < w.toUs);
}
