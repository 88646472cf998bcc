// Shared shapes of planned cases, groups and results.

import type { Client } from './client.js';

export type SourceName = 'googlesql' | 'recorded' | 'fixtures' | 'project';
export const ALL_SOURCES: SourceName[] = ['googlesql', 'recorded', 'fixtures', 'project'];

export type Status = 'pass' | 'fail' | 'skip';

export interface Outcome {
  status: Status;
  /** one-line cause of a failure (grouping key: its first line) */
  cause?: string;
  /** longer explanation (mismatch detail, the query's error text) */
  detail?: string;
  /** skips: the feature that is missing and why */
  skipFeature?: string;
  skipWhy?: string;
  /** error expectations: whether the emulator's message matched the expected one */
  errorExpected?: boolean;
  errorMessageMatched?: boolean;
  /** set when the expectation was adjusted to what BigQuery does (see README) */
  adjusted?: string;
  /** set when only schema and row count were compared (non-deterministic result) */
  shapeOnly?: boolean;
  /** why a non-deterministic result could only be compared by shape (see nondeterministicWhy) */
  shapeWhy?: string;
  /** a shape-only result's columns that still matched (alone and together), of all, and the names of those that did not */
  shapeColumns?: { compared: number; of: number; differing: string[] };
  /**
   * How a result the reference marks non-deterministic was compared: `exact` (it
   * matched as it stands), `unordered` (rows and nested arrays as multisets), `shape`.
   */
  nondeterministic?: 'exact' | 'unordered' | 'shape';
}

export interface CaseResult extends Outcome {
  id: string;
  source: SourceName;
  file: string;
  ms: number;
}

export interface RunContext {
  client: Client;
  /** the emulator is unreachable: every case fails with this cause */
  unavailable: string | null;
  /** suffix for names when running against a shared (--url) emulator */
  nonce: string;
}

export interface PlannedCase {
  id: string;
  /** planned skip, decided without the emulator */
  skip?: { feature: string; why: string };
  run(ctx: RunContext): Promise<Outcome>;
}

export interface Group {
  source: SourceName;
  /** file the cases come from (report grouping) */
  file: string;
  cases: PlannedCase[];
  /** shared setup run once before the group's cases (its failure fails them) */
  setup?(ctx: RunContext): Promise<void>;
  /** whether cases of this group may run in parallel after setup */
  parallel: boolean;
  /** remarks on the group's setup, printed with its file (after the run) */
  notes?(): string[];
}

export function fail(cause: string, detail?: string, extra: Partial<Outcome> = {}): Outcome {
  return { status: 'fail', cause, ...(detail !== undefined ? { detail } : {}), ...extra };
}
