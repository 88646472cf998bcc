// A plan's scan served from listed parts (storage's ScanPart: a row group's
// rows or a batch held in memory), on whichever thread runs the plan.
import type { ScanRel } from '../../analyzer/resolved.js';
import type { ScanFilter, ScanOptions } from '../../storage/api.js';
import { newScanPass } from '../../storage/chunk-cache.js';
import { partMayMatch, readPart, type ScanPart } from '../../storage/table-state.js';
import type { Column } from '../../types/schema.js';
import type { Batch } from '../../types/vector.js';
import type { ExecContext } from '../context.js';
import { concatBatches } from '../vectors.js';

/**
 * Columns `cols` (of table schema `columns`) of the parts' rows, in order;
 * parts `filters` rule out (a runtime join filter added since the listing,
 * a top-N's threshold) are skipped. `pass`: the scan pass they belong to
 * (one per query and thread: all morsels of one scan).
 */
export async function* readParts(parts: readonly ScanPart[], columns: readonly Column[], cols: readonly number[], filters: readonly ScanFilter[] = [], pass = 0): AsyncGenerator<Batch> {
  for (const p of parts) if (await partMayMatch(p, columns, filters)) yield* readPart(p, columns, cols, pass, filters);
}

/** `ctx` with `scan` reading `source` instead of the catalog. */
export function withScanSource(ctx: ExecContext, scan: ScanRel, source: (opts: ScanOptions) => AsyncIterable<Batch>): ExecContext {
  const m = new Map(ctx.scanSources ?? []);
  m.set(scan, source);
  return { ...ctx, scanSources: m };
}

/** `ctx` with `scan` reading `parts` (read in table schema `columns`) as scan pass `pass` (default: a pass of their own). */
export function withParts(ctx: ExecContext, scan: ScanRel, columns: readonly Column[], parts: readonly ScanPart[], pass = newScanPass()): ExecContext {
  return withScanSource(ctx, scan, (opts) => readParts(parts, columns, opts.columns, opts.filters, pass));
}

/**
 * A source that reads `parts` once, as one batch, and hands that same batch
 * to every scan of it (a join's build side read by every morsel: the join
 * index built over it is cached by its key column's memory, join.ts).
 */
export function broadcastSource(columns: readonly Column[], parts: readonly ScanPart[]): (opts: ScanOptions) => AsyncIterable<Batch> {
  let whole: Promise<Batch> | null = null;
  return (opts) => {
    whole ??= (async () => {
      const bs: Batch[] = [];
      for await (const b of readParts(parts, columns, opts.columns)) bs.push(b);
      return concatBatches(
        opts.columns.map((c) => columns[c]!.type),
        bs,
      );
    })();
    const p = whole;
    return (async function* () {
      yield await p;
    })();
  };
}

export const partRows = (p: ScanPart): number => (p.kind === 'mem' ? p.batch.length : p.end - p.start);
