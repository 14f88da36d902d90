/**
 * The piscina worker of `podsim explore` and shrinking: each task is one whole simulation (every
 * actor in this worker thread, LocalSimulation — the reference engine, same trace digest as the
 * threaded one), so a sweep runs as many seeds in parallel as the pool has threads.
 */
import { runSeed, type SeedResult, type SeedTask } from './runSeed.js';

export default async function runTask(task: SeedTask): Promise<SeedResult> {
  return runSeed(task);
}
