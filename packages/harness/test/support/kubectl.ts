/**
 * The real `kubectl` against a `podsim serve` in tests: a client bound to a fresh discovery cache
 * (KUBECACHEDIR and HOME in a new directory, so no test reuses another's discovery), `run` to
 * completion or `background` (a `-w` watch), and `until` for wall-clock polling of what kubectl
 * prints. `$KUBECTL` overrides the binary; without a kubectl on PATH these tests fail (.ci/run
 * installs one).
 */
import type { ExecutionContext } from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';

export const KUBECTL = process.env.KUBECTL ?? 'kubectl';

/** One finished kubectl: exit code (null when killed at the timeout) and its output. */
export interface KubectlRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface KubectlClient {
  /** Runs kubectl to completion (killed after `timeoutMs` wall ms); logs the command on `t`. */
  run(args: string[], timeoutMs?: number): Promise<KubectlRun>;
  /** Starts kubectl in the background (e.g. `get pods -w`); `out()` is its stdout so far. */
  background(args: string[]): { proc: ChildProcess; out: () => string };
}

/** A kubectl talking to the server of `kubeconfig`, with a fresh cache directory under `dir`. */
export function kubectlClient(t: ExecutionContext, kubeconfig: string, dir: string): KubectlClient {
  const cache = mkdtempSync(join(dir, 'cache-'));
  const env = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: cache, HOME: cache };
  return {
    run: (args, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const p = spawn(KUBECTL, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
        p.on('error', reject);
        p.on('close', (code) => {
          clearTimeout(timer);
          t.log(`$ kubectl ${args.join(' ')} → ${code}`);
          resolve({ code, stdout, stderr });
        });
      }),
    background: (args) => {
      const proc = spawn(KUBECTL, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      return { proc, out: () => out };
    },
  };
}

/** Polls `cond` every 100 wall ms; throws `timed out waiting for <what>` after `ms`. */
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A `podsim serve` for a kubectl test: its scratch directory, kubeconfig and the kubectl's validate flags. */
export interface KubectlServer {
  readonly dir: string;
  readonly server: import('../../src/serve/server.js').RunningServer;
  readonly kubeconfig: string;
  /** `--validate=false` for a kubectl older than 1.22 (no OpenAPI v3 field validation), else none. */
  readonly validateFlags: string[];
  close(): Promise<void>;
}

/**
 * Checks that a kubectl runs, then starts `podsim serve` (speed ×20, epoch now) on a scenario
 * with `nodes` and a 1 s timeline, in a fresh directory named after `prefix`, and writes its
 * kubeconfig. Throws when no kubectl is found.
 */
export async function startKubectlServer(prefix: string, nodes: readonly string[]): Promise<KubectlServer> {
  const { spawnSync } = await import('node:child_process');
  const { rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { startServer } = await import('../../src/serve/server.js');
  const { servePlan } = await import('../../src/serve/servePlan.js');
  const { writeKubeconfig } = await import('../../src/serve/kubeconfig.js');
  const probe = spawnSync(KUBECTL, ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) throw new Error(`kubectl is required for these tests (${KUBECTL}: ${probe.error?.message ?? probe.stderr})`);
  const v = (JSON.parse(probe.stdout) as { clientVersion: { minor: string; gitVersion: string } }).clientVersion;
  const validateFlags = !v.gitVersion.includes('dispatcher') && Number.parseInt(v.minor, 10) < 22 ? ['--validate=false'] : [];
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const scenario = join(dir, 'cluster.yaml');
  writeFileSync(scenario, ['kind: Scenario', 'cluster:', '  seed: 1', `  nodes: [${nodes.map((n) => `{name: ${n}}`).join(', ')}]`, 'steps:', '  - sleep: 1s', ''].join('\n'));
  const server = await startServer(servePlan({ scenario, epochUnixSeconds: Math.floor(Date.now() / 1000) }), { speed: 20 });
  const kubeconfig = writeKubeconfig(server.url, join(dir, 'kubeconfig'));
  return {
    dir,
    server,
    kubeconfig,
    validateFlags,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
