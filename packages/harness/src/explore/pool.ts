/**
 * A piscina pool of seed runners (DESIGN.md §5: piscina runs independent simulations side by
 * side; it never hosts the actors of one simulation). Each task is one whole seed
 * ({@link runSeed} in `worker.ts`), results come back as plain data.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { SeedResult, SeedTask } from './runSeed.js';

export class SeedPool {
  private readonly pool: Piscina;
  readonly workers: number;
  /** Tasks run so far. */
  runs = 0;

  /** `workers` defaults to the number of cores. */
  constructor(workers?: number) {
    this.workers = Math.max(1, workers ?? availableParallelism());
    this.pool = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      minThreads: this.workers,
      maxThreads: this.workers,
      idleTimeout: 60_000,
    });
  }

  async run(task: SeedTask): Promise<SeedResult> {
    this.runs++;
    return (await this.pool.run(task)) as SeedResult;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
