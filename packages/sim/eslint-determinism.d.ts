/** Types of eslint-determinism.js (the determinism lint rules for actor logic). */
export declare const clockAndRandomRules: Record<string, ['error', ...unknown[]]>;
export declare const transportImportRules: Record<string, ['error', ...unknown[]]>;
/** Flat-config blocks applying both rule sets to `files` (globs), except `ignores`. */
export declare function podsimDeterminism(files: string[], ignores?: string[]): Array<{ files: string[]; ignores: string[]; rules: Record<string, ['error', ...unknown[]]> }>;
