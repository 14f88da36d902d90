export * from './criRuntime.js';
export * from './criFaults.js';
export * from './execCommand.js';
export * from './images.js';
export * from './ipam.js';
export * from './probes.js';
export { createActor } from './actor/runtimeActor.js';
