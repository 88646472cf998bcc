// How much memory a running statement may leave the engine with. V8 aborts
// the process when its heap is full, and the kernel kills it when the machine
// is (column buffers live outside V8's heap): either way the engine would exit
// because of what a client sent, so a statement that yields (executor
// checkpoint) while memory is past these limits fails with the service's
// "resources exceeded" error instead, and its memory goes back.
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';

/**
 * Heap: well under V8's limit. V8 aborts the process after four mark-compacts
 * in a row that leave the old generation past 80% of its size limit
 * ("Ineffective mark-compacts near heap limit"), and its limit here
 * (heap_size_limit) includes the young generation: 0.7 of it put the refusal
 * past that point under a small heap (--max-old-space-size=256).
 */
const HEAP_SHARE = 0.6;
/**
 * Buffers outside the heap (column vectors) besides the table data cache
 * (its own budget, --memory-limit): well under the machine's memory. (Not
 * RSS: freed small buffers stay in the allocator's arenas, so RSS would stay
 * over the limit and refuse every statement after one big one.)
 */
const EXTERNAL_SHARE = 0.5;
/**
 * A forced full GC must bring memory under this share of the limits, or the
 * statement is refused: live data just under a limit would have every next
 * checkpoint collect again (a full GC of a big heap takes hundreds of ms).
 */
const AFTER_GC = 0.9;

/** `cached`: the bytes the table data cache holds now (evicted by its own budget, not by this check). */
export function memoryCheck(fullGc: (() => void) | undefined, cached: () => number = () => 0): () => boolean {
  const heapLimit = HEAP_SHARE * getHeapStatistics().heap_size_limit;
  const externalLimit = EXTERNAL_SHARE * totalmem();
  const over = (share: number): boolean => {
    const h = getHeapStatistics();
    return h.used_heap_size > share * heapLimit || h.external_memory - cached() > share * externalLimit;
  };
  // Garbage counts as used until a full GC runs: collect it before refusing a statement.
  return () => {
    if (!over(1)) return false;
    fullGc?.();
    return over(AFTER_GC);
  };
}
