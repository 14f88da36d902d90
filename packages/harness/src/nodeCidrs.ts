/**
 * Node pod CIDRs as kube-controller-manager's node IPAM controller hands them out
 * (`--allocate-node-cidrs`, `--cluster-cidr`, `--node-cidr-mask-size-ipv4` 24): the RangeAllocator
 * of pkg/controller/nodeipam/ipam/range_allocator.go (v1.22.8) takes the next free subnet of the
 * cluster CIDR from a CIDRSet (ipam/cidrset/cidr_set.go, `AllocateNext`: subnets in order from
 * the start of the range) for each node in the order the nodes are registered.
 *
 * Simplified: podsim registers the scenario's nodes in order and never releases a CIDR, so node
 * i gets subnet i; the runtime of the node uses it for its sandboxes (host-local IPAM). The
 * cluster CIDR 10.224.0.0/11 holds 8,192 /24 subnets of 254 pod IPs — more than the 5,000 nodes
 * Kubernetes supports — and overlaps neither the node IPs (10.0.0.0/16) nor kubeadm's service
 * CIDR (10.96.0.0/12).
 */

/** The cluster CIDR (`--cluster-cidr`) node CIDRs are allocated from. */
export const CLUSTER_CIDR = '10.224.0.0/11';
/** `--node-cidr-mask-size-ipv4` (the upstream default). */
export const NODE_CIDR_MASK_SIZE = 24;

const [CLUSTER_BASE, CLUSTER_PREFIX] = ((): [number, number] => {
  const [ip, bits] = CLUSTER_CIDR.split('/');
  const o = ip.split('.').map(Number);
  return [((o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]) >>> 0, Number(bits)];
})();

/** How many node CIDRs the cluster CIDR holds (cidr_set.go maxCIDRs = 2^(mask − cluster prefix)). */
export const MAX_NODE_CIDRS = 2 ** (NODE_CIDR_MASK_SIZE - CLUSTER_PREFIX);

/** The pod CIDR of the `index`-th registered node (0-based); throws past {@link MAX_NODE_CIDRS} (`CIDRSet.AllocateNext`'s "CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range"). */
export function nodePodCidr(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_NODE_CIDRS) {
    throw new RangeError(`node ${index}: no remaining CIDRs left to allocate in the cluster CIDR ${CLUSTER_CIDR} (${MAX_NODE_CIDRS} node CIDRs of /${NODE_CIDR_MASK_SIZE})`);
  }
  const n = (CLUSTER_BASE + index * 2 ** (32 - NODE_CIDR_MASK_SIZE)) >>> 0;
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}/${NODE_CIDR_MASK_SIZE}`;
}
