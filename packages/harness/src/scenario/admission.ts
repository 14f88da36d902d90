/**
 * What the apiserver will say about each manifest, said before the run: `validate` and `run`
 * both load a scenario through here, so a manifest the apiserver would refuse when the timeline
 * applies it (a name over 253 characters, `cpu: lots`, `memory: -16Gi`, a port out of range) is
 * a `file:line:column` error up front, not a failed `apply` step minutes into the run.
 *
 * Each manifest goes through podsim's own kube-apiserver (packages/apiserver `ApiServer`, the
 * machine the run uses) as a dry-run create — `?dryRun=All`, as `kubectl apply --dry-run=server`
 * sends it: decoding (`decode.ts`, 400), defaulting, the pod admission plugins and the
 * resource's strategy validation (422 with one cause per field). Answers that depend on the
 * cluster's state at the time of the step (404 namespace not found, 403 namespace terminating,
 * 409 already exists) are left to the run. Two manifests with the same kind, namespace and name
 * are an error too: `apply: all` would replace one with the other. So is a node port two Service
 * manifests ask for: a dry run stores nothing, so the allocator alone would not see the clash.
 *
 * Warnings for what v1.22.8 accepts but does not do as written: a negative
 * terminationGracePeriodSeconds (the apiserver stores it; every delete uses 1 s, kubernetes#98866).
 */
import type { KubeObject, ResourceName, Service, Status } from '@podsim/api';
import { Clock } from '@podsim/api';
import { ApiServer } from '@podsim/apiserver/apiServer';
import { decodeProblem } from '@podsim/apiserver/decode';
import { isClusterScoped, resourceOfKind } from '../driver/driver.js';
import type { LoadedScenario } from './load.js';
import type { Path, ScenarioIssue } from './source.js';

/** `spec.containers[0].resources.requests["cpu"]` / `…requests[memory]` → path segments. */
export function fieldPath(field: string): Path {
  const out: Array<string | number> = [];
  const re = /([^.[\]]+)|\[("(?:[^"\\]|\\.)*"|[^\]]*)\]/g;
  for (let m = re.exec(field); m; m = re.exec(field)) {
    if (m[1] !== undefined) out.push(m[1]);
    else {
      const k = m[2];
      out.push(/^\d+$/.test(k) ? Number(k) : k.startsWith('"') ? (JSON.parse(k) as string) : k);
    }
  }
  return out;
}

/** The pod spec of a manifest (a Pod's, a Deployment's / ReplicaSet's template), with its path. */
function podSpecOf(o: KubeObject): { spec: Record<string, unknown>; path: Path } | undefined {
  const x = o as unknown as { kind?: string; spec?: { template?: { spec?: unknown } } };
  if (x.kind === 'Pod' && x.spec) return { spec: x.spec as Record<string, unknown>, path: ['spec'] };
  if ((x.kind === 'Deployment' || x.kind === 'ReplicaSet' || x.kind === 'StatefulSet') && x.spec?.template?.spec) return { spec: x.spec.template.spec as Record<string, unknown>, path: ['spec', 'template', 'spec'] };
  return undefined;
}

/**
 * `portallocator.Allocate`'s answer to a Service manifest that asks for a node port (a service
 * port's `nodePort` or `healthCheckNodePort`) an earlier Service manifest asks for: whichever of
 * the two is created second gets `spec.ports[i].nodePort: Invalid value: N: provided port is
 * already allocated` (422). `owners` maps each port to the first manifest that asked for it.
 */
function nodePortClashes(
  svc: Service,
  owners: Map<number, { prefix: string; at: ScenarioIssue }>,
  prefix: string,
  m: LoadedScenario['manifests'][number],
  at: (path: Path, message: string) => void,
): void {
  const type = svc.spec?.type;
  if (type !== 'NodePort' && type !== 'LoadBalancer') return;
  const mine = new Set<number>();
  const claim = (port: number | undefined, path: Path) => {
    if (!port || mine.has(port)) return;
    mine.add(port);
    const first = owners.get(port);
    if (first) at(path, `Invalid value: ${port}: provided port is already allocated (${first.prefix} at ${first.at.file}:${first.at.line} asks for it too; the second of the two to be created is refused)`);
    else owners.set(port, { prefix, at: m.src.issue([...m.path, ...path], '') });
  };
  (svc.spec?.ports ?? []).forEach((p, i) => claim(p.nodePort, ['spec', 'ports', i, 'nodePort']));
  claim(svc.spec?.healthCheckNodePort, ['spec', 'healthCheckNodePort']);
}

/**
 * The issues (errors and warnings) the apiserver's create path finds in the scenario's manifests.
 * `objects[i]` is `sc.manifests[i]`'s object with its namespace filled in.
 */
export function admissionIssues(sc: LoadedScenario, objects: readonly KubeObject[]): ScenarioIssue[] {
  const issues: ScenarioIssue[] = [];
  const api = new ApiServer({}, 0);
  let ids = 0;
  const rctx = (namespace?: string) => ({
    now: 0,
    clock: new Clock(0),
    newId: (size: number, alphabet: string) => Array.from({ length: size }, (_, i) => alphabet[(ids + i) % alphabet.length]).join(''),
    uuid: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
    ...(namespace !== undefined ? { namespace } : {}),
  });
  api.bootstrap(rctx());
  const seen = new Map<string, ScenarioIssue>();
  // Node ports requested by the Services admitted so far: a dry run stores nothing, so the
  // allocator (`allocateNodePorts`) cannot see that an earlier manifest already holds one.
  const nodePortOwners = new Map<number, { prefix: string; at: ScenarioIssue }>();
  // Namespaces first, for real, so that what goes into them is admitted (NamespaceLifecycle).
  const order = objects.map((_, i) => i).sort((a, b) => Number(objects[b].kind === 'Namespace') - Number(objects[a].kind === 'Namespace'));
  for (const i of order) {
    const o = objects[i];
    const m = sc.manifests[i];
    const name = o.metadata.name;
    const prefix = `${o.kind}/${name ?? o.metadata.generateName}`;
    const at = (path: Path, message: string, warning = false) => issues.push(m.src.issue([...m.path, ...path], message, { prefix, ...(warning ? { warning: true } : {}) }));
    const resource = resourceOfKind(o.kind) as ResourceName;
    const namespace = isClusterScoped(resource) ? undefined : o.metadata.namespace;
    if (name !== undefined) {
      const key = `${o.kind}/${namespace ?? ''}/${name}`;
      const first = seen.get(key);
      if (first) {
        at(['metadata', 'name'], `duplicate manifest: ${prefix}${namespace && namespace !== 'default' ? ` in namespace ${namespace}` : ''} is also defined at ${first.file}:${first.line} (apply would replace one with the other): give each its own name`);
        continue;
      }
      seen.set(key, m.src.issue([...m.path, 'metadata', 'name'], ''));
    }
    const kind = o.kind ?? '';
    const decode = decodeProblem(o, kind);
    if (decode) {
      // The decoder's words (kube-apiserver's 400), at the field it stopped on.
      const version = (o.apiVersion ?? 'v1').split('/').pop();
      const message = decode.message.startsWith('cannot unmarshal') ? `json: ${decode.message.replace('Go struct field ', `Go struct field ${kind}.`)}` : decode.message;
      at(fieldPath(decode.path), `${kind} in version "${version}" cannot be handled as a ${kind}: ${message}`);
      continue;
    }
    // A namespace no manifest creates is the run's business (404 when the step runs).
    if (namespace !== undefined && !api.storage.get(`/registry/namespaces/${namespace}`)) {
      api.handle({ type: 'ApiCreate', resource: 'namespaces', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } }, 'driver', rctx());
    }
    const r = api.handle({ type: 'ApiCreate', resource, ...(namespace !== undefined ? { namespace } : {}), object: o, dryRun: o.kind !== 'Namespace' }, 'driver', rctx(namespace));
    if (r.code === 400 || r.code === 422) {
      const st = r.body as Status;
      const causes = st.details?.causes ?? [];
      if (causes.length === 0) at([], st.message ?? `refused: ${r.code}`);
      // The issue names the field (its path in the file); the cause says what is wrong with it.
      for (const c of causes) at(c.field ? fieldPath(c.field) : [], c.message ?? c.reason ?? 'invalid');
    }
    if (o.kind === 'Service' && (r.code === 200 || r.code === 201)) nodePortClashes(o as Service, nodePortOwners, prefix, m, at);
    const ps = podSpecOf(o);
    const tgps = ps?.spec.terminationGracePeriodSeconds;
    if (typeof tgps === 'number' && tgps < 0) {
      at([...ps!.path, 'terminationGracePeriodSeconds'], `${tgps} is negative: Kubernetes v1.22.8 accepts it and treats it as 1 s on every delete (kubernetes#98866), so the containers get 1 s after SIGTERM`, true);
    }
  }
  return issues;
}
