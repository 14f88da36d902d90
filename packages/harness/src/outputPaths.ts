/**
 * Output paths (`--json`, `--trace`, `--out`, `--kubeconfig`) checked before a command starts its
 * run, so that a 13-minute run does not end in a failed write, and no output overwrites an input:
 * the directory must exist and be writable, the path must not be a directory, must not be one of
 * the run's input files (the scenario, its `manifestFiles`) and must not be named by two outputs.
 * Problems are {@link ScenarioError}s naming the path and the flag (exit 2, no stack trace). A path
 * that does not exist yet is created and removed again (the only sure test that it can be); an
 * existing file is replaced, with a warning on stderr naming it.
 */
import { accessSync, closeSync, constants, openSync, realpathSync, statSync, unlinkSync, type Stats } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ScenarioError, type ScenarioIssue } from './scenario/source.js';

/** One output the command will write: the flag that named it and the path as given. */
export interface OutputPath {
  readonly flag: string;
  readonly path: string;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** The path with its directory's symlinks resolved (the file itself may not exist yet). */
function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return resolve(realpathSync(dirname(abs)), basename(abs));
    } catch {
      return abs;
    }
  }
}

/** Same file: same canonical path, or (for existing files) the same device and inode (a hard link). */
function sameFile(a: string, b: string): boolean {
  if (canonical(a) === canonical(b)) return true;
  const sa = statOrUndefined(a);
  const sb = statOrUndefined(b);
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
}

/** The problems of `outputs` (empty when every one can be written). */
export function outputPathIssues(outputs: readonly OutputPath[], inputs: readonly string[]): ScenarioIssue[] {
  const issues: ScenarioIssue[] = [];
  const issue = (o: OutputPath, message: string) => issues.push({ file: o.path, line: 0, column: 0, field: o.flag, message });
  outputs.forEach((o, i) => {
    if (o.path === '') return issue(o, 'an empty path');
    const input = inputs.find((f) => sameFile(f, o.path));
    if (input !== undefined) {
      const also = canonical(input) === canonical(o.path) ? '' : ` (the same file as ${input})`;
      return issue(o, `is an input of this run${also}: refusing to overwrite it; write the output elsewhere`);
    }
    const earlier = outputs.slice(0, i).find((p) => p.path !== '' && sameFile(p.path, o.path));
    if (earlier) return issue(o, `${earlier.flag} writes the same file: give each output its own path`);
    const st = statOrUndefined(o.path);
    if (st?.isDirectory()) return issue(o, 'is a directory: give a file name');
    const dir = dirname(resolve(o.path));
    const ds = statOrUndefined(dir);
    if (!ds) return issue(o, `directory ${dir} does not exist`);
    if (!ds.isDirectory()) return issue(o, `${dir} is not a directory`);
    try {
      accessSync(st ? o.path : dir, constants.W_OK);
    } catch {
      return issue(o, st ? 'is not writable' : `directory ${dir} is not writable`);
    }
    // A directory can pass access(W_OK) and still refuse a new file (/proc, a read-only mount
    // seen as writable by root): create the file now and remove it, so the run does not end in a
    // failed write.
    if (!st) {
      try {
        closeSync(openSync(o.path, 'wx'));
        unlinkSync(o.path);
      } catch (e) {
        return issue(o, `cannot be created (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
      }
    }
  });
  return issues;
}

/** The outputs that already exist as files (they will be replaced). */
export function existingOutputs(outputs: ReadonlyArray<OutputPath | undefined>): OutputPath[] {
  return outputs.filter((o): o is OutputPath => o !== undefined && o.path !== '' && statOrUndefined(o.path)?.isFile() === true);
}

/**
 * Throws a {@link ScenarioError} listing every output that cannot be written (see
 * {@link outputPathIssues}); then says through `warn` (the command's stderr) which existing files
 * will be replaced.
 */
export function checkOutputPaths(outputs: ReadonlyArray<OutputPath | undefined>, inputs: readonly string[], warn: (line: string) => void): void {
  const issues = outputPathIssues(
    outputs.filter((o): o is OutputPath => o !== undefined),
    inputs,
  );
  if (issues.length > 0) throw new ScenarioError(issues);
  // An existing file named by an output is replaced, as `-o FILE` replaces it; say so, so that
  // nothing is overwritten silently.
  for (const o of existingOutputs(outputs)) warn(`podsim: warning: ${o.flag} ${o.path} exists and will be replaced`);
}

/** `{ flag, path }` when the flag was given. */
export function output(flag: string, path: string | undefined): OutputPath | undefined {
  return path === undefined ? undefined : { flag, path };
}
