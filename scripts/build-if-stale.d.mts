// Types of build-if-stale.mjs for the TypeScript that imports it (its unit test).

export interface BuildTarget {
  readonly inputs: readonly string[];
  readonly outDir: string;
  readonly command: readonly string[];
}

export declare const TARGETS: { readonly service: BuildTarget; readonly examples: BuildTarget };

export declare function inputsDigest(root: string, inputs: readonly string[]): string;

export declare function isStale(root: string, target: BuildTarget, digest?: string): boolean;

export declare function buildIfStale(
  root: string,
  target: BuildTarget,
  options?: {
    readonly always?: boolean;
    readonly run?: (root: string, command: readonly string[]) => number;
    readonly onBuild?: (target: BuildTarget, reason: 'asked for' | 'no build yet' | 'its sources changed since the last build') => void;
  },
): boolean;
