// Public surface of the executor (see README.md).
export { executeRel, collect, materialize } from './execute.js';
export { makeExecContext, withOuter, checkpoint, type ExecContext } from './context.js';
export { evaluate, evaluateSync, evaluateLambda, lambdaOf, layoutOf, type LambdaHandle } from './expr.js';
export { checkResultArrays } from './result-check.js';
export { castVector, installCastVector, type CastVectorFn, type CastOptions } from './cast.js';
export { GroupTable, hashRows } from './hash.js';
export { compareValues, valuesEqual, hashValue, compareStrings } from './values-compare.js';
export { sortRows, rowsComparator, type KeySpec } from './sort-keys.js';
