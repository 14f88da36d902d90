export * from './heap.js';
export * from './digest.js';
export * from './hostCore.js';
export * from './localSimulation.js';
export * from './placement.js';
export * from './simulation.js';
export * from './freeze.js';
