// Registers every built-in function family into the registry (import once, for its effect).
import { registerAggregates } from './aggregates.js';
import { registerHll } from './hll.js';
import { registerIntervalFunctions } from './interval.js';
import { registerOperators } from './operators.js';
import { registerMath } from './math.js';
import { registerStrings } from './string.js';
import { registerJson } from './json.js';
import { registerDatetime } from './datetime.js';
import { registerArrays } from './array.js';
import { registerRegexp } from './regexp.js';
import { registerMisc } from './misc.js';
import { registerKeys } from './keys.js';
import { registerGeography } from './geography.js';
import { registerCollationFunctions } from './collation.js';
import { registerCompression } from './compression.js';
import { registerArrayPath } from './array-path.js';
import { registerSearch } from './search.js';

let done = false;
export function registerAllFunctions(): void {
  if (done) return;
  done = true;
  registerOperators();
  registerIntervalFunctions();
  registerAggregates();
  registerHll();
  registerMath();
  registerStrings();
  registerJson();
  registerDatetime();
  registerArrays();
  registerRegexp();
  registerMisc();
  registerKeys();
  registerGeography();
  registerCollationFunctions();
  registerCompression();
  registerArrayPath();
  registerSearch();
}
registerAllFunctions();

export { castVector, castValue, canCast } from './conversion.js';

// The executor routes every CAST through its cast.ts hook; install the real conversions.
import { installCastVector } from '../executor/cast.js';
import { castVector as realCastVector } from './conversion.js';
installCastVector(realCastVector);
