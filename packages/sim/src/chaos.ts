/**
 * Test-only scheduling noise for the threaded engine (Simulation option `chaos`, or the
 * PODSIM_SIM_CHAOS environment variable `seed:level`): at each synchronisation point of the
 * window protocol (hostShell.ts, syncBoard.ts) a host may spin, yield or sleep briefly, which
 * widens the race windows between posting a batch, publishing figures, arriving and waking.
 * Seeded per host, so a failing setting can be pinned; off by default and free when off.
 * Perturbs wall-clock timing only: a correct engine gives the same digest with any setting.
 */

/** `level` is the probability of a perturbation at each point (0 = off, 1 = at every point). */
export interface ChaosConfig {
  readonly seed: number;
  readonly level: number;
}

/** Parses `seed:level` (e.g. `7:0.3`); undefined for an empty or absent value. Throws on garbage. */
export function parseChaos(text: string | undefined): ChaosConfig | undefined {
  if (text === undefined || text === '') return undefined;
  const m = /^(\d+):(0|1|0?\.\d+)$/.exec(text);
  if (!m) throw new Error(`PODSIM_SIM_CHAOS=${JSON.stringify(text)}: expected seed:level with level in [0, 1], e.g. 7:0.3`);
  return { seed: Number(m[1]), level: Number(m[2]) };
}

/** One host's noise source. `point()` is called at every synchronisation point. */
export class Chaos {
  private s: number;
  private readonly nap = new Int32Array(new SharedArrayBuffer(4));
  /** Perturbations injected so far (diagnostics). */
  injected = 0;

  constructor(
    private readonly cfg: ChaosConfig,
    host: number,
  ) {
    // xorshift32 state from (seed, host); never 0.
    this.s = (Math.imul(cfg.seed + 1, 0x9e3779b1) ^ Math.imul(host + 1, 0x85ebca6b)) | 1;
  }

  private next(): number {
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x;
    return (x >>> 0) / 4294967296;
  }

  point(): void {
    if (this.next() >= this.cfg.level) return;
    this.injected++;
    const k = this.next();
    if (k < 0.45) {
      // Busy spin: up to ~50 µs.
      const n = Math.floor(this.next() * 20_000);
      let x = 0;
      for (let i = 0; i < n; i++) x = (x + i) | 0;
      if (x === 42) this.injected++;
    } else if (k < 0.85) {
      // Give the core away briefly (a timed futex wait on a private word is a yield).
      Atomics.wait(this.nap, 0, 0, 0.02);
    } else {
      // A short sleep: up to 2 ms.
      Atomics.wait(this.nap, 0, 0, this.next() * 2);
    }
  }
}
