// Hash joins past the memory budget (grace hash join). The build side is
// read with a reservation; when it passes half its share of the engine's
// memory limit (its index takes ~12 bytes a row more), its rows so far and
// the rest go to spillOptions.partitions files by the hash of their join
// keys, then the probe side's rows go to as many files by the hash of
// theirs, so that every pair of matching rows is in files of the same
// number. Each pair of files is then joined on its own, as the in-memory
// join would: RIGHT/FULL padding per build file and LEFT/FULL/ANTI padding
// per probe file cover every row once, since each row is in one file.
// NULL keys hash alike on both sides (null-safe keys still match).
import type { Expr, JoinRel } from '../../analyzer/resolved.js';
import { memoryBudget, type Reservation } from '../../storage/memory-budget.js';
import type { Batch, Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { SpillPartitions, spillOptions } from '../spill.js';
import { batchBytes, concatBatches } from '../vectors.js';

export interface JoinKey {
  readonly left: Expr;
  readonly right: Expr;
  readonly nullSafe: boolean;
}

/** The build side held whole (and its key vectors), or its rows in files by key hash. */
export type BuildSide = { readonly kind: 'memory'; readonly build: Batch; readonly keys: Vector[] } | { readonly kind: 'spilled'; readonly files: SpillPartitions };

/** Bytes of a build row's index entries (hash, chain link, dense slot), reserved beside its columns. */
const INDEX_ROW_BYTES = 12;

/** Join counters (tests): build sides that went to files. */
export const joinSpillCounters = { spilled: 0 };

/** Reads `rel.right` (the build side), held in `held`; past its share of the budget, into files by key hash. */
export async function readBuildSide(rel: JoinRel, keys: readonly JoinKey[], ctx: ExecContext, held: Reservation): Promise<BuildSide> {
  const layout = layoutOf(rel.right.columns);
  const right = keys.map((k) => k.right);
  const keysOf = (b: Batch): Promise<Vector[]> => keyVectors(right, b, layout, ctx);
  const parts: Batch[] = [];
  let bytes = 0;
  let rows = 0;
  let files: SpillPartitions | null = null;
  for await (const b of executeRel(rel.right, ctx)) {
    await checkpoint(ctx);
    if (b.length === 0) continue;
    if (files) {
      files.writeKeyed(b, await keysOf(b));
      held.set(files.bytes());
      continue;
    }
    parts.push(b);
    bytes += batchBytes(b);
    rows += b.length;
    held.set(bytes + rows * INDEX_ROW_BYTES);
    if (memoryBudget.limit > 0 && bytes + rows * INDEX_ROW_BYTES > (spillOptions.share / 2) * memoryBudget.limit) {
      files = new SpillPartitions(spillOptions.partitions);
      joinSpillCounters.spilled++;
      for (const p of parts) files.writeKeyed(p, await keysOf(p));
      parts.length = 0;
      held.set(files.bytes());
    }
  }
  if (files) return { kind: 'spilled', files };
  // The parts and their concatenation live side by side for a moment.
  held.set(2 * bytes + rows * INDEX_ROW_BYTES);
  const build = concatBatches(
    rel.right.columns.map((c) => c.type),
    parts,
  );
  held.set(bytes + rows * INDEX_ROW_BYTES);
  return { kind: 'memory', build, keys: await keysOf(build) };
}

/** The probe side's rows (`rel.left`) in files by the hash of their keys, numbered as the build side's. */
export async function partitionProbeSide(rel: JoinRel, keys: readonly JoinKey[], ctx: ExecContext, held: Reservation, build: SpillPartitions): Promise<SpillPartitions> {
  const layout = layoutOf(rel.left.columns);
  const left = keys.map((k) => k.left);
  const files = new SpillPartitions(build.n);
  for await (const b of executeRel(rel.left, ctx)) {
    await checkpoint(ctx);
    if (b.length === 0) continue;
    files.writeKeyed(b, await keyVectors(left, b, layout, ctx));
    held.set(build.bytes() + files.bytes());
  }
  build.flush();
  files.flush();
  return files;
}

/** Build file `p`'s rows whole, and their key vectors. */
export async function buildFile(rel: JoinRel, keys: readonly JoinKey[], ctx: ExecContext, files: SpillPartitions, p: number, held: Reservation): Promise<{ build: Batch; keys: Vector[] }> {
  const parts = [...files.files[p]!.read()];
  const build = concatBatches(
    rel.right.columns.map((c) => c.type),
    parts,
  );
  held.set(batchBytes(build) + build.length * INDEX_ROW_BYTES);
  const right = keys.map((k) => k.right);
  return { build, keys: await keyVectors(right, build, layoutOf(rel.right.columns), ctx) };
}

/** The join key vectors of a batch of one side. */
async function keyVectors(exprs: readonly Expr[], b: Batch, layout: ReturnType<typeof layoutOf>, ctx: ExecContext): Promise<Vector[]> {
  const out: Vector[] = [];
  for (const e of exprs) out.push(await evaluate(e, b, layout, ctx));
  return out;
}
