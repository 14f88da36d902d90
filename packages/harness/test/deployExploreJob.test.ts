/**
 * The packaging of `podsim explore` for a cluster (issue #22): the `Dockerfile` is linted
 * (dockerfile-utils, the validator of the VS Code Docker language server) and its stages checked
 * (Node 20 slim, `pnpm deploy` of the harness, a numeric non-root user, the CLI as the
 * exec-form entrypoint); no image is built here (no Docker daemon in CI). `deploy/explore-job.yaml`
 * is parsed and checked as the apiserver would (batch/v1 `ValidateJob` rules for an Indexed Job,
 * podsim's own `validatePodSpec` for its pod template), and its container's command line is run
 * as the pod would run it — JOB_COMPLETION_INDEX set, the ConfigMap's file at its mount path —
 * with `--for` cut to 1 ms, and its stdout merged. (`kubectl apply --dry-run=server` against
 * `podsim serve` waits for serve to serve batch/v1 Jobs.)
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { parse } from 'yaml';
import { setDefaultsPodSpec, validatePodSpec } from '@podsim/apiserver';
import type { PodSpec } from '@podsim/api';
import type { ShardResult } from '../src/explore/shard.js';

const CLI = 'packages/harness/dist/src/cli.js';
const dockerfile = readFileSync('Dockerfile', 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'podsim-deploy-test-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

interface Container {
  name: string;
  image: string;
  args: string[];
  env?: Array<{ name: string; value?: string }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean };
}
interface Job {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    completionMode?: string;
    completions?: number;
    parallelism?: number;
    backoffLimit?: number;
    activeDeadlineSeconds?: number;
    template: {
      metadata?: { labels?: Record<string, string> };
      spec: PodSpec & { containers: Container[]; securityContext?: { runAsNonRoot?: boolean; runAsUser?: number }; volumes?: Array<{ name: string; configMap?: { name: string } }> };
    };
  };
}
const job = parse(readFileSync('deploy/explore-job.yaml', 'utf8')) as Job;
const container = job.spec.template.spec.containers[0];

test('the Dockerfile passes the linter and builds from Node 20 slim, pnpm deploy of the harness, a numeric non-root user', (t) => {
  const diagnostics = validate(dockerfile);
  t.deepEqual(
    diagnostics.map((d) => `line ${d.range.start.line + 1}: ${d.message}`),
    [],
  );
  const df = DockerfileParser.parse(dockerfile);
  const froms = df.getFROMs();
  t.true(froms.length >= 2, 'a build stage and a runtime stage');
  for (const f of froms) t.regex(f.getImage() ?? '', /^node:20(\.\d+)*(-bookworm)?-slim$/, 'every stage is Node 20 slim');
  // toString: the instruction on one line, flags included (the argument getters leave `--from=` out).
  const instr = df.getInstructions().map((i) => ({ keyword: i.getKeyword(), args: i.toString().replace(/^\S+\s+/, ''), line: i.getRange().start.line }));
  const runs = instr.filter((i) => i.keyword === 'RUN').map((i) => i.args);
  t.true(
    runs.some((r) => /pnpm install --frozen-lockfile/.test(r)),
    'the lockfile as it is',
  );
  t.true(
    runs.some((r) => /pnpm --filter @podsim\/harness deploy --prod \/app/.test(r)),
    'pnpm deploy of the harness package',
  );
  // The runtime stage: everything after the last FROM.
  const lastFrom = froms[froms.length - 1].getRange().start.line;
  const final = instr.filter((i) => i.line > lastFrom);
  t.true(final.some((i) => i.keyword === 'COPY' && /--from=build \/app \/app/.test(i.args)));
  const users = final.filter((i) => i.keyword === 'USER');
  t.is(users.length, 1);
  const uid = Number(users[0].args.split(':')[0]);
  t.true(Number.isInteger(uid) && uid > 0, `USER ${users[0].args} is numeric and not root (runAsNonRoot can only check a numeric user)`);
  const entry = df.getENTRYPOINTs();
  t.is(entry.length, 1);
  // Exec form: node is PID 1 and gets the kubelet's SIGTERM itself.
  t.regex(entry[0].getArgumentsContent() ?? '', /^\["node", "\/app\/dist\/src\/cli\.js"\]$/);
  // pnpm deploy copies the package as it is: the entrypoint is the harness's own dist/src/cli.js.
  t.truthy(readFileSync('packages/harness/dist/src/cli.js', 'utf8'));
  // And the image's build context leaves out host installs and builds.
  const ignore = readFileSync('.dockerignore', 'utf8').split('\n');
  for (const p of ['**/node_modules', '**/dist']) t.true(ignore.includes(p), `.dockerignore has ${p}`);
  // The Job's pod runs as the image's user.
  t.is(job.spec.template.spec.securityContext?.runAsUser, uid);
});

/**
 * batch/v1 `ValidateJob` (v1.22 pkg/apis/batch/validation/validation.go `validateJobSpec`) for
 * the fields this Job sets: non-negative counts, Indexed needs completions (at most 10^5, and
 * parallelism at most 10^5), the template's restartPolicy OnFailure or Never. Returns field errors.
 */
function validateJobSpec(j: Job): string[] {
  const errs: string[] = [];
  const s = j.spec;
  for (const f of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit'] as const) {
    if (s[f] !== undefined && (!Number.isInteger(s[f]) || s[f]! < 0)) errs.push(`spec.${f}: must be greater than or equal to 0`);
  }
  if (s.completionMode !== undefined && s.completionMode !== 'NonIndexed' && s.completionMode !== 'Indexed') errs.push('spec.completionMode: Unsupported value');
  if (s.completionMode === 'Indexed') {
    if (s.completions === undefined) errs.push('spec.completions: Required value: when completion mode is Indexed');
    else if (s.completions > 100_000) errs.push('spec.completions: must be less than or equal to 100000 when completion mode is Indexed');
    if ((s.parallelism ?? 1) > 100_000) errs.push('spec.parallelism: must be less than or equal to 100000 when completion mode is Indexed');
  }
  const rp = s.template.spec.restartPolicy;
  if (rp !== 'OnFailure' && rp !== 'Never') errs.push(`spec.template.spec.restartPolicy: Unsupported value: ${JSON.stringify(rp)}: supported values: "OnFailure", "Never"`);
  return errs;
}

test('deploy/explore-job.yaml is a valid Indexed Job whose completions are the shards podsim is told', (t) => {
  t.is(job.apiVersion, 'batch/v1');
  t.is(job.kind, 'Job');
  t.deepEqual(validateJobSpec(job), []);
  // The pod template as the apiserver checks it, after its defaulting (SetDefaults_PodSpec).
  const spec = structuredClone(job.spec.template.spec);
  setDefaultsPodSpec(spec);
  t.deepEqual(validatePodSpec(spec, 'spec.template.spec'), []);
  t.is(job.spec.completionMode, 'Indexed');
  const shards = container.env?.find((e) => e.name === 'PODSIM_SHARDS')?.value;
  t.is(Number(shards), job.spec.completions ?? -1, 'PODSIM_SHARDS = completions');
  t.true((job.spec.parallelism ?? 1) <= job.spec.completions!);
  t.true((job.spec.backoffLimit ?? 6) >= 1, 'a crashed or evicted shard is retried');
  t.is(job.spec.template.spec.securityContext?.runAsNonRoot, true);
  t.is(container.securityContext?.allowPrivilegeEscalation, false);
  // A CPU per simulation thread, memory above the measured peak (~200 MiB for one worker).
  const workers = Number(container.args[container.args.indexOf('--workers') + 1]);
  t.is(Number(container.resources?.requests?.cpu), workers);
  t.true(Number.parseInt(container.resources?.limits?.memory ?? '0', 10) >= 256 * workers);
  t.true(container.args.includes('--exit-zero'), 'a failing seed completes its shard; the merge gives the verdict');
  t.false(container.args.includes('--shard'), 'the shard comes from JOB_COMPLETION_INDEX');
  // The scenario is the ConfigMap's key at the mount path, and the README creates that ConfigMap.
  const mount = container.volumeMounts!.find((m) => container.args[1].startsWith(`${m.mountPath}/`))!;
  t.truthy(mount, `${container.args[1]} is on a mounted volume`);
  const cm = job.spec.template.spec.volumes!.find((v) => v.name === mount.name)!.configMap!.name;
  const readme = readFileSync('README.md', 'utf8');
  t.true(readme.includes(`kubectl create configmap ${cm} --from-file=${basename(container.args[1])}=`), 'README creates the ConfigMap the Job mounts');
  t.true(readme.includes(`kubectl logs -l job-name=${job.metadata.name} --prefix`), 'README collects the logs of this Job');
});

test("the Job's command line runs as its pod would (JOB_COMPLETION_INDEX, the ConfigMap file) and its stdout merges", (t) => {
  t.timeout(120_000);
  const mountDir = join(dir, 'scenario');
  mkdirSync(mountDir);
  writeFileSync(join(mountDir, basename(container.args[1])), readFileSync('examples/explore-planted-bug.yaml'));
  const args = container.args.map((a) => (a === container.args[1] ? join(mountDir, basename(a)) : a));
  // The same flags, only --for cut from 10m to 1 ms (the seeds in flight still finish).
  args[args.indexOf('--for') + 1] = '1ms';
  const env = { ...process.env, JOB_COMPLETION_INDEX: '3', PODSIM_SHARDS: container.env!.find((e) => e.name === 'PODSIM_SHARDS')!.value! };
  const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', timeout: 110_000 });
  t.is(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout) as ShardResult;
  t.deepEqual(result.shard, { index: 3, count: job.spec.completions });
  t.is(result.stopped, 'for');
  t.true(result.results.every((x) => x.seed % job.spec.completions! === 3));
  const log = join(dir, 'logs.txt');
  writeFileSync(log, `${r.stderr}${r.stdout}`.split('\n').map((l) => `[pod/${job.metadata.name}-3-abcde/${container.name}] ${l}`).join('\n'));
  const m = spawnSync(process.execPath, [CLI, 'explore', 'merge', log], { encoding: 'utf8' });
  t.regex(m.stdout, new RegExp(`^explore merge: 1 of ${job.spec.completions} shards `, 'm'));
  t.regex(m.stdout, /^missing shards: 0, 1, 2, 4, 5, 6, 7 of 0\.\.7/m);
});
