/**
 * Actor shell of the benchmark driver (actor id `driver` in `podsim bench` runs): hands the
 * engine's callbacks to {@link StormDriver} (`src/driver/stormDriver.ts`). `config` is a
 * {@link StormDriverConfig} (plain data, built by `src/bench/stormPlan.ts`).
 */
import type { Actor, ActorContext, Envelope } from '@podsim/api';
import { StormDriver, type StormDriverConfig } from '../driver/stormDriver.js';

export function createActor(_id: string, config: unknown): Actor {
  const driver = new StormDriver(config as StormDriverConfig);
  return {
    start: (ctx: ActorContext) => driver.start(ctx),
    receive: (ctx: ActorContext, env: Envelope) => driver.receive(ctx, env),
    onTimer: (ctx: ActorContext, payload: unknown) => driver.onTimer(ctx, payload),
  };
}
