/**
 * One window's envelopes for one destination host, as one msgpackr buffer (DESIGN.md §5, §10).
 * Layout: `[bodies, numbers]`. `bodies` lists each distinct body object once — a multicast (the
 * same body sent to several actors of the destination) is encoded once per batch. `numbers`
 * holds 9 numbers per envelope: from, to, sentAt, at, seq, body index, kind (0 plain,
 * 1 request, 2 reply, 3 request sent with `failFast`), then requestId + incarnation
 * (kinds 1, 3) or replyTo + incarnation (kind 2).
 */
import { decode, encode, type Message } from '@podsim/api';
import type { WireEnvelope } from '@podsim/api/protocol/control';

const COLS = 9;

/** Encodes envelopes into a fresh Uint8Array (safe to transfer). */
export function encodeBatch(envs: readonly WireEnvelope[]): Uint8Array {
  const bodies: Message[] = [];
  const index = new Map<Message, number>();
  const nums = new Array<number>(envs.length * COLS);
  let k = 0;
  for (const e of envs) {
    let bi = index.get(e.b);
    if (bi === undefined) {
      bi = bodies.length;
      bodies.push(e.b);
      index.set(e.b, bi);
    }
    nums[k] = e.f;
    nums[k + 1] = e.t;
    nums[k + 2] = e.s;
    nums[k + 3] = e.a;
    nums[k + 4] = e.q;
    nums[k + 5] = bi;
    if (e.r !== undefined) {
      nums[k + 6] = e.u === 1 ? 3 : 1;
      nums[k + 7] = e.r;
      nums[k + 8] = e.fi ?? 0;
    } else if (e.p !== undefined) {
      nums[k + 6] = 2;
      nums[k + 7] = e.p;
      nums[k + 8] = e.i ?? 0;
    } else {
      nums[k + 6] = 0;
      nums[k + 7] = 0;
      nums[k + 8] = 0;
    }
    k += COLS;
  }
  return encode([bodies, nums]);
}

/** Decodes a batch; envelopes that shared a body in the sender share the decoded body. */
export function decodeBatch(bytes: Uint8Array): WireEnvelope[] {
  const [bodies, nums] = decode<[Message[], number[]]>(bytes);
  const n = nums.length / COLS;
  const out = new Array<WireEnvelope>(n);
  for (let j = 0, k = 0; j < n; j++, k += COLS) {
    const kind = nums[k + 6];
    // One object shape for every envelope (the engine's hot paths stay monomorphic).
    out[j] = {
      f: nums[k],
      t: nums[k + 1],
      s: nums[k + 2],
      a: nums[k + 3],
      q: nums[k + 4],
      b: bodies[nums[k + 5]],
      r: kind === 1 || kind === 3 ? nums[k + 7] : undefined,
      fi: kind === 1 || kind === 3 ? nums[k + 8] : undefined,
      u: kind === 3 ? 1 : undefined,
      p: kind === 2 ? nums[k + 7] : undefined,
      i: kind === 2 ? nums[k + 8] : undefined,
    };
  }
  return out;
}
