export * from './heap.js';
export * from './digest.js';
export * from './hostCore.js';
export * from './localSimulation.js';
