/**
 * Deep-freeze test mode (issue #19): within one host thread a delivered message body is shared
 * by reference with its sender and every other recipient of a multicast (an apiserver reply or
 * watch event *is* the stored object), so a receiver that mutates a body corrupts everyone
 * else's copy. With `PODSIM_FREEZE=1` the engine deep-freezes every body before handing it to
 * the actor, so such a mutation throws (`TypeError: Cannot assign to read only property`) and
 * the run fails with the actor and message type. Production leaves it off: freezing costs a
 * walk of each new body.
 */

/** Is the deep-freeze test mode on in this process (`PODSIM_FREEZE=1`)? Read once per host. */
export function freezeModeFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.PODSIM_FREEZE === '1';
}

/**
 * Deep-freezes a JSON-shaped value in place and returns it. A subtree that is already frozen is
 * taken as deep-frozen (this module's own invariant), so re-delivering a shared stored object
 * costs O(1).
 */
export function deepFreezeBody<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreezeBody((v as Record<string, unknown>)[k]);
  }
  return v;
}
