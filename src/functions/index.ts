// Registers every built-in function family into the registry (import once, for its effect).
import { registerAggregates } from './aggregates.js';
import { registerIntervalFunctions } from './interval.js';
import { registerOperators } from './operators.js';

let done = false;
export function registerAllFunctions(): void {
  if (done) return;
  done = true;
  registerOperators();
  registerIntervalFunctions();
  registerAggregates();
}
registerAllFunctions();

export { castVector, castValue, canCast } from './conversion.js';
