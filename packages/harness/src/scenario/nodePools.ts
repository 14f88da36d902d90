/**
 * `cluster.nodePools`: groups of identical nodes, as a managed node group / pool of a cloud
 * cluster (GKE node pools, EKS managed node groups) is, expanded beside `cluster.nodes` into one
 * node per member. A pool of `count: 300, namePrefix: node-` is `node-1 … node-300`; each member
 * registers with the pool's capacity, kubelet settings, labels (`--node-labels`) and taints
 * (KubeletConfiguration `registerWithTaints`). Explicit nodes come first, then the pools in
 * order. Names must be unique over both; a cluster has 1 to {@link MAX_NODES} nodes.
 */
import type { ClusterSpec, NodeSpecEntry } from './schema.js';
import type { SourceDoc, ScenarioIssue } from './source.js';

/** One node of the cluster, explicit or from a pool, with where it was written (for messages). */
export interface ExpandedNode extends NodeSpecEntry {
  /** Path of the entry that made it: `cluster.nodes[i]` or `cluster.nodePools[j]`. */
  readonly path: readonly (string | number)[];
}

/** Nodes a cluster may have in all (Kubernetes' scalability limit: 5,000 nodes). */
export const MAX_NODES = 5000;

/** Every node of the cluster; problems (duplicate names, no node at all) go to `issues`. */
export function expandNodes(cluster: ClusterSpec, src: SourceDoc, issues: ScenarioIssue[]): ExpandedNode[] {
  const out: ExpandedNode[] = [];
  (cluster.nodes ?? []).forEach((n, i) => out.push({ ...n, path: ['cluster', 'nodes', i] }));
  (cluster.nodePools ?? []).forEach((p, j) => {
    for (let k = 1; k <= p.count; k++) {
      out.push({
        name: `${p.namePrefix}${k}`,
        ...(p.capacity ? { capacity: p.capacity } : {}),
        ...(p.kubelet ? { kubelet: p.kubelet } : {}),
        ...(p.labels ? { labels: p.labels } : {}),
        ...(p.taints ? { taints: p.taints } : {}),
        ...(p.runtime ? { runtime: p.runtime } : {}),
        path: ['cluster', 'nodePools', j],
      });
    }
  });
  if (out.length === 0) issues.push(src.issue(['cluster', cluster.nodePools ? 'nodePools' : 'nodes'], 'a cluster needs at least one node (cluster.nodes or cluster.nodePools)'));
  if (out.length > MAX_NODES) {
    // Each node is two actors and a few MB of heap: a cluster past Kubernetes' own limit would
    // only run out of memory later (and, named pools of 5000 each, it is easy to write).
    issues.push(src.issue(['cluster', cluster.nodePools ? 'nodePools' : 'nodes'], `the cluster has ${out.length} nodes; podsim runs at most ${MAX_NODES} (the largest cluster Kubernetes v1.22 supports)`));
    return out.slice(0, MAX_NODES);
  }
  const seen = new Map<string, ExpandedNode>();
  const reported = new Set<string>();
  for (const n of out) {
    // Report a problem once per entry, where it was written.
    const where = n.path[1] === 'nodes' ? [...n.path, 'name'] : [...n.path, 'namePrefix'];
    const key = where.join('.');
    if (n.name.length > 253 && !reported.has(`${key} long`)) {
      reported.add(`${key} long`);
      issues.push(src.issue(where, `node name ${JSON.stringify(`${n.name.slice(0, 40)}…`)} is longer than 253 characters`));
    }
    const first = seen.get(n.name);
    if (first === undefined) {
      seen.set(n.name, n);
      continue;
    }
    if (reported.has(key)) continue;
    reported.add(key);
    const other = `cluster.${String(first.path[1])}[${String(first.path[2])}]`;
    issues.push(src.issue(where, `duplicate node name ${JSON.stringify(n.name)} (also from ${other})`));
  }
  return out;
}
