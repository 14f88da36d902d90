/**
 * What `podsim serve` says about itself before kubectl asks for anything real: `/version`,
 * discovery (aggregated `apidiscovery.k8s.io/v2` when asked, else the legacy APIVersions /
 * APIGroupList / APIResourceList) and a minimal `/openapi/v3`. Mirrors kube-apiserver v1.22.8
 * `pkg/endpoints/discovery` (legacy) and the aggregated format of k8s.io/api/apidiscovery/v2;
 * shapes and required fields are those of shared/spec/kubectl-rest.md §1, §2, §7.1.
 */
import { componentSchemas } from './openapi.js';
import { encodeOpenApiV2, openApiV2Doc } from './openapiV2.js';
import type { ResourceName, Subresource } from '@podsim/api';

/** One served resource, as discovery describes it. */
export interface ServedResource {
  readonly resource: ResourceName;
  /** API group ('' for core). */
  readonly group: '' | 'apps' | 'policy' | 'batch' | 'discovery.k8s.io' | 'coordination.k8s.io';
  readonly version: 'v1';
  readonly kind: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  /** Subresources served (`status`, `scale`, `binding`, `eviction`) with their verbs and response kind. */
  readonly subresources: readonly { readonly name: Subresource; readonly verbs: readonly string[]; readonly group: string; readonly kind: string }[];
}

const ALL_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] as const;

/** The resources podsim serves (packages/api ResourceName), in discovery order. */
export const SERVED_RESOURCES: readonly ServedResource[] = [
  {
    resource: 'pods',
    group: '',
    version: 'v1',
    kind: 'Pod',
    singular: 'pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    verbs: ALL_VERBS,
    subresources: [
      { name: 'status', verbs: ['get', 'patch', 'update'], group: '', kind: 'Pod' },
      { name: 'binding', verbs: ['create'], group: '', kind: 'Binding' },
      // kubectl drain's CheckEvictionSupport looks for `pods/eviction` of kind Eviction with a
      // group and version in GET /api/v1.
      { name: 'eviction', verbs: ['create'], group: 'policy', kind: 'Eviction' },
    ],
  },
  {
    resource: 'nodes',
    group: '',
    version: 'v1',
    kind: 'Node',
    singular: 'node',
    namespaced: false,
    shortNames: ['no'],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], group: '', kind: 'Node' }],
  },
  {
    resource: 'namespaces',
    group: '',
    version: 'v1',
    kind: 'Namespace',
    singular: 'namespace',
    namespaced: false,
    shortNames: ['ns'],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [
      // The namespace controller's spec.finalizers update (PUT only) and status conditions.
      { name: 'finalize', verbs: ['update'], group: '', kind: 'Namespace' },
      { name: 'status', verbs: ['get', 'patch', 'update'], group: '', kind: 'Namespace' },
    ],
  },
  {
    resource: 'events',
    group: '',
    version: 'v1',
    kind: 'Event',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [],
  },
  {
    resource: 'deployments',
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    singular: 'deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    verbs: ALL_VERBS,
    subresources: [
      { name: 'scale', verbs: ['get', 'patch', 'update'], group: 'autoscaling', kind: 'Scale' },
      { name: 'status', verbs: ['get', 'patch', 'update'], group: 'apps', kind: 'Deployment' },
    ],
  },
  {
    resource: 'replicasets',
    group: 'apps',
    version: 'v1',
    kind: 'ReplicaSet',
    singular: 'replicaset',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    verbs: ALL_VERBS,
    subresources: [
      { name: 'scale', verbs: ['get', 'patch', 'update'], group: 'autoscaling', kind: 'Scale' },
      { name: 'status', verbs: ['get', 'patch', 'update'], group: 'apps', kind: 'ReplicaSet' },
    ],
  },
  {
    resource: 'daemonsets',
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    singular: 'daemonset',
    namespaced: true,
    shortNames: ['ds'],
    categories: ['all'],
    verbs: ALL_VERBS,
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], group: 'apps', kind: 'DaemonSet' }],
  },
  {
    resource: 'jobs',
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    singular: 'job',
    namespaced: true,
    shortNames: [],
    categories: ['all'],
    verbs: ALL_VERBS,
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], group: 'batch', kind: 'Job' }],
  },
  {
    resource: 'poddisruptionbudgets',
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    singular: 'poddisruptionbudget',
    namespaced: true,
    shortNames: ['pdb'],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], group: 'policy', kind: 'PodDisruptionBudget' }],
  },
  {
    resource: 'persistentvolumeclaims',
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    singular: 'persistentvolumeclaim',
    namespaced: true,
    shortNames: ['pvc'],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], group: '', kind: 'PersistentVolumeClaim' }],
  },
  {
    resource: 'statefulsets',
    group: 'apps',
    version: 'v1',
    kind: 'StatefulSet',
    singular: 'statefulset',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    verbs: ALL_VERBS,
    subresources: [
      { name: 'scale', verbs: ['get', 'patch', 'update'], group: 'autoscaling', kind: 'Scale' },
      { name: 'status', verbs: ['get', 'patch', 'update'], group: 'apps', kind: 'StatefulSet' },
    ],
  },
  {
    resource: 'controllerrevisions',
    group: 'apps',
    version: 'v1',
    kind: 'ControllerRevision',
    singular: 'controllerrevision',
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [],
  },
  // Issue #18: Services and their endpoints.
  {
    resource: 'services',
    group: '',
    version: 'v1',
    kind: 'Service',
    singular: 'service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    verbs: ALL_VERBS,
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], group: '', kind: 'Service' }],
  },
  { resource: 'endpoints', group: '', version: 'v1', kind: 'Endpoints', singular: 'endpoints', namespaced: true, shortNames: ['ep'], categories: [], verbs: ALL_VERBS, subresources: [] },
  {
    resource: 'endpointslices',
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    singular: 'endpointslice',
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [],
  },
  {
    resource: 'leases',
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    singular: 'lease',
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ALL_VERBS,
    subresources: [],
  },
];

/** The served resource `resource` of API group `group`, if any. */
export function servedResource(group: string, resource: string): ServedResource | undefined {
  return SERVED_RESOURCES.find((r) => r.group === group && r.resource === resource);
}

/** `apiVersion` string of a group/version (`v1`, `apps/v1`). */
export function groupVersion(group: string, version = 'v1'): string {
  return group ? `${group}/${version}` : version;
}

/**
 * The reported version. kube-apiserver v1.22.8 is what podsim simulates (`gitVersion`), but
 * `minor` is "32": the team's `kubectl` is gcloud's dispatcher, which runs the installed
 * `kubectl.1.<minor>` and falls back to its default for a minor it does not have (spec §1). "32"
 * pins the kubectl the HTTP contract was verified with, whatever the dispatcher's default becomes;
 * a plain kubectl ignores `minor` (only `kubectl version` prints it, with a skew warning).
 */
export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.22.8-podsim',
  gitCommit: '7061dbbf75f9f82e8ab21f9be7e8ffcaae8e0d44',
  gitTreeState: 'clean',
  buildDate: '2022-03-16T14:04:34Z',
  goVersion: 'go1.16.15',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

/** Content-Type (and Accept entry) of aggregated discovery v2. */
export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

function groupResources(group: string): readonly ServedResource[] {
  return SERVED_RESOURCES.filter((r) => r.group === group);
}

/** `APIGroupDiscoveryList` for `/api` (group '') or `/apis` (every named group). */
export function aggregatedDiscovery(legacy: boolean): unknown {
  const groups = legacy ? [''] : [...new Set(SERVED_RESOURCES.map((r) => r.group).filter((g) => g !== ''))];
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: groups.map((g) => ({
      metadata: { name: g },
      versions: [
        {
          version: 'v1',
          resources: groupResources(g).map((r) => ({
            resource: r.resource,
            responseKind: { group: r.group, version: r.version, kind: r.kind },
            scope: r.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: r.singular,
            verbs: r.verbs,
            ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
            ...(r.categories.length ? { categories: r.categories } : {}),
            ...(r.subresources.length
              ? {
                  subresources: r.subresources.map((s) => ({
                    subresource: s.name,
                    responseKind: { group: s.group, version: 'v1', kind: s.kind },
                    verbs: s.verbs,
                  })),
                }
              : {}),
          })),
          freshness: 'Current',
        },
      ],
    })),
  };
}

/** Legacy `GET /api`: `APIVersions`. */
export function apiVersions(serverAddress: string): unknown {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

/** One legacy `APIGroup` (the items of `/apis`, and `GET /apis/<group>`). */
export function apiGroup(group: string): unknown {
  const gv = { groupVersion: groupVersion(group), version: 'v1' };
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: [gv], preferredVersion: gv };
}

/** Legacy `GET /apis`: `APIGroupList` of the named groups. */
export function apiGroupList(): unknown {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: NAMED_GROUPS.map((g) => {
      const { kind: _k, apiVersion: _a, ...rest } = apiGroup(g) as Record<string, unknown>;
      return rest;
    }),
  };
}

/** Legacy `GET /api/v1` or `/apis/<group>/v1`: `APIResourceList` with subresources as `pods/status`. */
export function apiResourceList(group: string): unknown {
  const resources: unknown[] = [];
  for (const r of groupResources(group)) {
    resources.push({
      name: r.resource,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
      ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
      ...(r.categories.length ? { categories: r.categories } : {}),
    });
    for (const s of r.subresources) {
      resources.push({
        name: `${r.resource}/${s.name}`,
        singularName: '',
        namespaced: r.namespaced,
        ...(s.group !== r.group ? { group: s.group, version: 'v1' } : {}),
        kind: s.kind,
        verbs: s.verbs,
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(group), resources };
}

/** The named API groups podsim serves (every group of SERVED_RESOURCES but core), in table order: what discovery lists and HTTP routes. */
export const NAMED_GROUPS: readonly string[] = [...new Set(SERVED_RESOURCES.map((r) => r.group).filter((g) => g !== ''))];

/** The groups podsim serves, core ('') first. */
function servedGroups(): string[] {
  return ['', ...NAMED_GROUPS];
}

/** `GET /openapi/v3`: where each group-version's document is (one per served group). */
export function openApiV3Root(): unknown {
  const paths: Record<string, unknown> = {};
  for (const g of servedGroups()) {
    const p = g === '' ? 'api/v1' : `apis/${g}/v1`;
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}` };
  }
  return { paths };
}

/**
 * `GET /openapi/v3/api/v1` / `/openapi/v3/apis/apps/v1`: the kinds' `components.schemas`
 * (openapi.ts, for `kubectl explain`) and one PATCH operation per
 * kind carrying `x-kubernetes-group-version-kind` and a `fieldValidation` parameter. That is what
 * kubectl's QueryParamVerifierV3 looks for: it then trusts server-side validation
 * (`fieldValidation=Strict`) instead of downloading `/openapi/v2` (spec §7.1). Undefined for
 * other paths.
 */
export function openApiV3Doc(path: string): unknown {
  const group = servedGroups().find((g) => (g === '' ? 'api/v1' : `apis/${g}/v1`) === path);
  if (group === undefined) return undefined;
  const paths: Record<string, unknown> = {};
  for (const r of groupResources(group)) {
    const base = group ? `/apis/${group}/v1` : '/api/v1';
    const url = r.namespaced ? `${base}/namespaces/{namespace}/${r.resource}/{name}` : `${base}/${r.resource}/{name}`;
    paths[url] = {
      patch: {
        'x-kubernetes-group-version-kind': { group: r.group, version: r.version, kind: r.kind },
        parameters: [
          { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
        ],
        responses: {},
      },
    };
  }
  // The kinds' schemas (openapi.ts), so kubectl explain finds them by x-kubernetes-group-version-kind.
  const components = { schemas: componentSchemas(group, [...new Set(groupResources(group).map((r) => r.kind))]) };
  return { openapi: '3.0.0', info: { title: 'Kubernetes (podsim)', version: VERSION_INFO.gitVersion }, paths, components };
}

let openApiV2Cache: { json: Record<string, unknown>; protobuf: Uint8Array } | undefined;

/** `GET /openapi/v2` (openapiV2.ts): the Swagger 2.0 document of every served kind, as JSON and as gnostic protobuf; built once. */
export function openApiV2(): { json: Record<string, unknown>; protobuf: Uint8Array } {
  if (!openApiV2Cache) {
    const json = openApiV2Doc(
      servedGroups().map((group) => ({ group, kinds: [...new Set(groupResources(group).map((r) => r.kind))] })),
      VERSION_INFO.gitVersion,
    );
    openApiV2Cache = { json, protobuf: encodeOpenApiV2(json) };
  }
  return openApiV2Cache;
}
