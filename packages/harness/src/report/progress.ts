/**
 * Progress of a long `podsim run` on stderr: the virtual time reached, the timeline step it is in,
 * the pods by phase as the apiserver stored them (Pending, Running, Terminating — a
 * deletionTimestamp, as kubectl's STATUS column — Succeeded / Failed, and gone: DELETED) and the
 * engine's events per wall second. On a terminal a cli-progress bar over the timeline's steps,
 * redrawn in place; otherwise one line every {@link LINE_EVERY_MS}. Nothing for runs shorter than
 * {@link SHOW_AFTER_MS}, and nothing with `--quiet` (the CLI does not create one). The tally
 * reads the `api.write` records of each run segment; it never touches the run (wall clock only
 * here, outside the actors).
 */
import { SingleBar } from 'cli-progress';
import type { TraceRecord } from '@podsim/api';
import { formatDuration } from '../duration.js';

/** Wall ms a run must last before progress shows. */
export const SHOW_AFTER_MS = 3_000;
/** Wall ms between two progress lines when stderr is not a terminal. */
export const LINE_EVERY_MS = 5_000;

/** What the engine reports after each run segment. */
export interface SegmentReport {
  readonly virtualUs: number;
  /** Events processed since the run began (all hosts). */
  readonly events: number;
  /** The segment's trace records (only those the run collects). */
  readonly records: readonly TraceRecord[];
}

const PHASES = ['Pending', 'Running', 'Terminating', 'Succeeded', 'Failed'] as const;

/** Pods by phase from `api.write` records, fed segment by segment in trace order. */
export class PodPhaseTally {
  private readonly phase = new Map<string, string>();
  gone = 0;
  /** Timeline steps begun (a sleep records its end when it begins, so "done" would run ahead). */
  stepsBegun = 0;

  add(records: readonly TraceRecord[]): void {
    for (const r of records) {
      if (r.kind === 'driver.step') {
        if ((r.data as { ph?: string } | undefined)?.ph === 'B') this.stepsBegun++;
        continue;
      }
      if (r.kind !== 'api.write') continue;
      const d = r.data as { resource?: string; uid?: string; event?: string; phase?: string; deletionTimestamp?: string } | undefined;
      if (d?.resource !== 'pods' || !d.uid) continue;
      if (d.event === 'DELETED') {
        if (this.phase.delete(d.uid)) this.gone++;
        continue;
      }
      this.phase.set(d.uid, d.deletionTimestamp !== undefined ? 'Terminating' : (d.phase ?? 'Pending'));
    }
  }

  /** `12000 Running, 300 Pending, 7700 Terminating, 40 gone` (phases with no pod left out). */
  describe(): string {
    const n = new Map<string, number>();
    for (const p of this.phase.values()) n.set(p, (n.get(p) ?? 0) + 1);
    const parts = PHASES.filter((p) => n.get(p)).map((p) => `${n.get(p)} ${p}`);
    if (this.gone > 0) parts.push(`${this.gone} gone`);
    return parts.length ? parts.join(', ') : 'no pods';
  }
}

const compact = (x: number) => (x >= 1e6 ? `${(x / 1e6).toFixed(1)}M` : x >= 1e3 ? `${(x / 1e3).toFixed(0)}k` : String(Math.round(x)));

/** A progress display for one run; `onSegment` goes to the engine, `stop` before the report prints. */
export interface RunProgress {
  onSegment(s: SegmentReport): void;
  stop(): void;
}

/**
 * Progress on `stream` (default process.stderr) for a run of `steps` timeline steps. `tty`
 * chooses the bar or the lines (default: whether the stream is a terminal); `now` is the wall
 * clock in ms (tests pass their own).
 */
export function runProgress(
  steps: number,
  opts: {
    readonly tty?: boolean;
    readonly write?: (line: string) => void;
    readonly now?: () => number;
    readonly stream?: NodeJS.WriteStream;
    /** Override {@link SHOW_AFTER_MS} and {@link LINE_EVERY_MS} (tests). */
    readonly showAfterMs?: number;
    readonly lineEveryMs?: number;
  } = {},
): RunProgress {
  const stream = opts.stream ?? process.stderr;
  const tty = opts.tty ?? stream.isTTY === true;
  const now = opts.now ?? (() => performance.now());
  const write = opts.write ?? ((l: string) => void stream.write(`${l}\n`));
  const started = now();
  const showAfterMs = opts.showAfterMs ?? SHOW_AFTER_MS;
  const lineEveryMs = opts.lineEveryMs ?? LINE_EVERY_MS;
  const tally = new PodPhaseTally();
  let bar: SingleBar | undefined;
  let lastLine = started;
  let last = { t: started, events: 0 };
  let rate = 0;
  return {
    onSegment(s) {
      tally.add(s.records);
      const t = now();
      if (t - last.t >= 1000) {
        rate = ((s.events - last.events) * 1000) / (t - last.t);
        last = { t, events: s.events };
      }
      if (t - started < showAfterMs) return;
      const payload = { virtual: formatDuration(s.virtualUs), pods: tally.describe(), rate: compact(rate) };
      if (tty) {
        if (!bar) {
          bar = new SingleBar({
            stream,
            format: 'step {value}/{total} |{bar}| virtual {virtual} | {pods} | {rate} events/s',
            hideCursor: true,
            clearOnComplete: true,
            fps: 5,
          });
          bar.start(steps, Math.min(tally.stepsBegun, steps), payload);
        }
        bar.update(Math.min(tally.stepsBegun, steps), payload);
      } else if (t - lastLine >= lineEveryMs) {
        lastLine = t;
        write(`podsim run: virtual ${payload.virtual}, step ${Math.min(tally.stepsBegun, steps)}/${steps}, pods: ${payload.pods}, ${payload.rate} events/s, wall ${((t - started) / 1000).toFixed(0)}s`);
      }
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}
