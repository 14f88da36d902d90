export * from './boundedFrequencyRunner.js';
export * from './proxier.js';
