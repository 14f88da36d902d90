/**
 * Sandbox IP allocation, after the CNI `host-local` IPAM plugin (containernetworking/plugins
 * `plugins/ipam/host-local/backend/allocator`): addresses of the node's pod CIDR from network+2
 * (network+1 is the bridge gateway) to broadcast−1, handed out round-robin after the last one
 * reserved, so a freed address is not reused at once. Deterministic: the result depends only on
 * the sequence of allocate/release calls. IPv4 only.
 */

/** Parses a dotted IPv4 address to a 32-bit number; undefined if malformed. */
function parseIp(ip: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const o = m.slice(1, 5).map(Number);
  return o.some((x) => x > 255) ? undefined : ((o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]) >>> 0;
}

/** Parses `a.b.c.d/len` (len ≤ 30) → [network address as a 32-bit number, prefix length]; undefined if malformed. */
export function parseCidr(cidr: string): [number, number] | undefined {
  const [ip, bits, extra] = cidr.trim().split('/');
  const addr = parseIp(ip);
  const len = Number(bits);
  if (addr === undefined || extra !== undefined || !/^\d{1,2}$/.test(bits ?? '') || len > 30) return undefined;
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return [(addr & mask) >>> 0, len];
}

const format = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

export class HostLocalIpam {
  private readonly first: number;
  private readonly last: number;
  private readonly inUse = new Set<number>();
  private lastReserved: number;

  /** Throws for a malformed CIDR (runtime configuration is validated before the actor starts). */
  constructor(readonly cidr: string) {
    const p = parseCidr(cidr);
    if (!p) throw new Error(`invalid pod CIDR ${JSON.stringify(cidr)}`);
    const [net, len] = p;
    this.first = net + 2;
    this.last = net + 2 ** (32 - len) - 2;
    this.lastReserved = this.first - 1;
  }

  /** Reserves the next free address, or returns undefined when the range is exhausted. */
  allocate(): string | undefined {
    const size = this.last - this.first + 1;
    for (let i = 1; i <= size; i++) {
      const n = this.first + ((this.lastReserved - this.first + i) % size);
      if (!this.inUse.has(n)) {
        this.inUse.add(n);
        this.lastReserved = n;
        return format(n);
      }
    }
    return undefined;
  }

  /**
   * After a reboot: continue the round-robin after the last address `before` reserved (host-local
   * keeps `last_reserved_ip` on disk), with none in use — the pod network namespaces are gone.
   * Simplified: host-local's per-IP reservation files also survive until the kubelet's
   * StopPodSandbox runs CNI DEL; podsim frees them at once (the new sandbox gets the next address
   * either way).
   */
  continueAfter(before: HostLocalIpam): void {
    this.lastReserved = before.lastReserved;
  }

  /** Frees an address (unknown addresses are ignored: teardown is idempotent). */
  release(ip: string): void {
    const n = parseIp(ip);
    if (n !== undefined) this.inUse.delete(n);
  }
}
