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
