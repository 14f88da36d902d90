/**
 * Actor shell of the scenario driver (actor id `driver`, docs/conventions.md): decodes nothing,
 * owns nothing — it hands the engine's callbacks to {@link Driver} (`src/driver/driver.ts`).
 * `config` is a {@link DriverConfig} (plain data, compiled from the scenario file).
 */
import type { Actor, ActorContext, Envelope } from '@podsim/api';
import { Driver } from '../driver/driver.js';
import type { DriverConfig } from '../driver/steps.js';

export function createActor(_id: string, config: unknown): Actor {
  const driver = new Driver(config as DriverConfig);
  return {
    start: (ctx: ActorContext) => driver.start(ctx),
    receive: (ctx: ActorContext, env: Envelope) => driver.receive(ctx, env),
    onTimer: (ctx: ActorContext, payload: unknown) => driver.onTimer(ctx, payload),
  };
}
