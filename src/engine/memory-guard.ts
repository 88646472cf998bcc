// How much memory a running statement may leave the engine with. V8 aborts
// the process when its heap is full, and the kernel kills it when the machine
// is (column buffers live outside V8's heap): either way the engine would exit
// because of what a client sent, so a statement that yields (executor
// checkpoint) while memory is past these limits fails with the service's
// "resources exceeded" error instead, and its memory goes back.
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';

/** Heap: well under V8's limit (room for the GC and a growing array's copy). */
const HEAP_SHARE = 0.7;
/**
 * Buffers outside the heap (column vectors) besides the table data cache
 * (its own budget, --memory-limit): well under the machine's memory. (Not
 * RSS: freed small buffers stay in the allocator's arenas, so RSS would stay
 * over the limit and refuse every statement after one big one.)
 */
const EXTERNAL_SHARE = 0.5;

/** `cached`: the bytes the table data cache holds now (evicted by its own budget, not by this check). */
export function memoryCheck(fullGc: (() => void) | undefined, cached: () => number = () => 0): () => boolean {
  const heapLimit = HEAP_SHARE * getHeapStatistics().heap_size_limit;
  const externalLimit = EXTERNAL_SHARE * totalmem();
  const over = (): boolean => {
    const h = getHeapStatistics();
    return h.used_heap_size > heapLimit || h.external_memory - cached() > externalLimit;
  };
  // Garbage counts as used until a full GC runs: collect it before refusing a statement.
  // (The GC is its own rate limit: once it runs, memory is under the limits unless live data is not.)
  return () => {
    if (!over()) return false;
    fullGc?.();
    return over();
  };
}
