/**
 * `podsim serve` as the CLI runs it: build the plan, start the simulation and the HTTP server,
 * write the kubeconfig, print how to use it, then serve until SIGINT / SIGTERM (or `until`
 * settles, for tests) or until the simulation fails. Shutdown ends every watch stream, closes
 * the connections and the engine's threads, and removes a temporary kubeconfig.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { US_PER_SECOND } from '@podsim/api';
import { formatDuration } from '../duration.js';
import { writeKubeconfig } from './kubeconfig.js';
import { startServer } from './server.js';
import { servePlan } from './servePlan.js';

export interface ServeCommandOptions {
  readonly port: number;
  readonly host: string;
  readonly scenario?: string;
  readonly nodes?: number;
  readonly speed: number;
  readonly seed?: number;
  readonly kubeconfig?: string;
  readonly timeline?: boolean;
  /** Virtual µs to fast-forward before serving. */
  readonly warpUs?: number;
  readonly verbose?: boolean;
}

export interface ServeIo {
  out(line: string): void;
  err(line: string): void;
}

/**
 * Runs the server until a signal (or `until`). Resolves to the exit code: 0 after a clean
 * shutdown, 1 if the simulation failed. Throws ScenarioError for a bad scenario file and the
 * listen error (EADDRINUSE, …) if the port cannot be bound.
 */
export async function runServe(o: ServeCommandOptions, io: ServeIo, until?: Promise<unknown>): Promise<number> {
  const warpUs = o.warpUs ?? 0;
  // Virtual time `warp` is "now" on the wall clock when serving starts, so object timestamps
  // (and the ages kubectl computes from them, e.g. in describe) look current.
  const epochUnixSeconds = Math.floor(Date.now() / 1000 - warpUs / US_PER_SECOND);
  const plan = servePlan({ scenario: o.scenario, nodes: o.nodes, seed: o.seed, timeline: o.timeline, epochUnixSeconds });
  // As `podsim run`: what the scenario holds that podsim skips or does not simulate (was silent here).
  for (const w of plan.warnings) io.err(w);
  // Every virtual second of the warp is simulated (Leases, node status, resyncs): say so before
  // the wait rather than stay silent (a week takes ~30 s on an idle 2-node cluster).
  if (warpUs >= 24 * 3600 * US_PER_SECOND) io.err(`podsim serve: fast-forwarding ${formatDuration(warpUs)} of virtual time before serving (about a virtual day per 3-5 s of wall time)…`);
  let failure: string | undefined;
  let onFail: () => void = () => undefined;
  const failed = new Promise<void>((resolve) => (onFail = resolve));
  const server = await startServer(plan, {
    host: o.host,
    port: o.port,
    speed: o.speed,
    warpUs,
    log: o.verbose ? (l) => io.err(l) : undefined,
    onFailure: (m) => {
      failure = m;
      onFail();
    },
  });
  for (const w of server.warnings) io.err(`podsim serve: could not create ${w}`);
  let kubeconfig: string;
  try {
    kubeconfig = writeKubeconfig(server.url, o.kubeconfig);
  } catch (err) {
    await server.close();
    throw err;
  }
  io.out(
    `podsim serve: ${plan.source} (nodes ${plan.nodes.join(', ')}; seed ${plan.seed}), ` +
      `speed ${o.speed}x${warpUs > 0 ? `, warped to ${formatDuration(warpUs)}` : ''}, listening on ${server.url}`,
  );
  io.out(`kubeconfig: ${kubeconfig}`);
  io.out(`export KUBECONFIG=${kubeconfig}`);
  io.out('Ctrl-C stops the server.');

  const signalled = new Promise<string>((resolve) => {
    const on = (sig: string) => () => resolve(sig);
    const int = on('SIGINT');
    const term = on('SIGTERM');
    process.once('SIGINT', int);
    process.once('SIGTERM', term);
    void Promise.race([failed, until ?? new Promise(() => undefined)]).finally(() => {
      process.off('SIGINT', int);
      process.off('SIGTERM', term);
      resolve('stop');
    });
  });
  const why = await signalled;
  await server.close();
  if (o.kubeconfig === undefined) rmSync(dirname(kubeconfig), { recursive: true, force: true });
  if (failure) {
    io.err(`podsim serve: the simulation failed: ${failure}`);
    return 1;
  }
  io.out(`podsim serve: stopped (${why}) at virtual ${formatDuration(server.gateway.now)}`);
  return 0;
}
