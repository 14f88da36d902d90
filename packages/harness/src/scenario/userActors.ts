/**
 * `cluster.actors`: actors of the user's own (an operator, a controller under test) that run in
 * the simulated cluster beside podsim's. Each names a module exporting
 * `createActor(id, config): Actor` (the {@link ActorFactory} of @podsim/api), resolved here, at
 * load time, so that a missing file is a scenario error naming the field rather than a failure
 * inside a worker thread:
 *
 * - `./x.js`, `../x.js` or an absolute path: relative to the scenario file; the file must exist.
 * - anything else: a package specifier, resolved from the scenario file's folder as Node
 *   resolves an `import` there (its `exports` map, `node_modules` up the tree).
 *
 * The actor gets its config as plain data (structured-cloned; it crosses threads). Its id must
 * not be one of podsim's own ids (`apiserver`, `kube-controller-manager`, `kube-scheduler`, the
 * driver, `kubelet/<node>`, `runtime/<node>`) and must be unique; faults (`crash`, `disconnect`
 * patterns, latency links) may name it like any other actor.
 */
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ScenarioIssue } from './source.js';
import type { SourceDoc } from './source.js';

/** One user actor as the plan carries it: `module` is a `file:` URL. */
export interface UserActorPlan {
  readonly id: string;
  readonly module: string;
  readonly config: unknown;
}

export interface UserActorSpec {
  readonly id: string;
  readonly module: string;
  readonly config?: unknown;
}

/**
 * Resolves `cluster.actors` for the scenario at `file`; problems go to `issues` (field paths
 * `cluster.actors[i].id` / `.module`), and such an entry is left out.
 */
export function resolveUserActors(specs: readonly UserActorSpec[], file: string, src: SourceDoc, builtinIds: readonly string[], issues: ScenarioIssue[]): UserActorPlan[] {
  const out: UserActorPlan[] = [];
  const seen = new Set<string>();
  specs.forEach((a, i) => {
    const path = ['cluster', 'actors', i];
    if (builtinIds.includes(a.id)) {
      issues.push(src.issue([...path, 'id'], `actor id ${JSON.stringify(a.id)} is one of podsim's own actors; choose another`));
      return;
    }
    if (seen.has(a.id)) {
      issues.push(src.issue([...path, 'id'], `actor id ${JSON.stringify(a.id)} is listed twice`));
      return;
    }
    seen.add(a.id);
    const url = resolveModuleFrom(a.module, file);
    if (typeof url !== 'string') {
      issues.push(src.issue([...path, 'module'], url.error));
      return;
    }
    out.push({ id: a.id, module: url, config: a.config ?? {} });
  });
  return out;
}

function resolveModuleFrom(spec: string, file: string): string | { error: string } {
  const base = dirname(resolve(file));
  if (spec.startsWith('./') || spec.startsWith('../') || isAbsolute(spec)) {
    const p = resolve(base, spec);
    if (!existsSync(p) || !statSync(p).isFile()) return { error: `cannot find module ${JSON.stringify(spec)} (looked for ${p}; a compiled .js file, relative to the scenario file)` };
    return pathToFileURL(p).href;
  }
  try {
    return pathToFileURL(createRequire(resolve(base, 'scenario.js')).resolve(spec)).href;
  } catch {
    return { error: `cannot resolve module ${JSON.stringify(spec)} from ${base} (a package name, or a path starting with ./)` };
  }
}
