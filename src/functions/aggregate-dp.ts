// The per-privacy-unit aggregation of the differentially private AVG (aggregate-dp-functions.md: it "first computes
// the average per privacy unit column, and then computes the final result by averaging these averages"), without
// the noise: SELECT WITH DIFFERENTIAL_PRIVACY lowers AVG(x) to `$dp_avg(x, privacy unit)` (analyzer/privacy.ts).
import { typeToSql } from '../types/types.js';
import type { Value } from '../types/values.js';
import { valueKey } from './compare.js';
import { collect, toNum } from './aggregate-collect.js';
import type { ArgInfo } from './registry.js';
import { asig, defineAggregate } from './signature.js';

const NUMERIC_INPUT = new Set(['INT64', 'NUMERIC', 'BIGNUMERIC', 'FLOAT64']);

/** AVG's own refusal of a non-numeric input, as the page's "any numeric input type". */
const numericInput = (args: readonly ArgInfo[]): string | undefined => {
  const t = args[0]?.type;
  return t && !NUMERIC_INPUT.has(t.kind) ? `No matching signature for aggregate function AVG (differential privacy) for argument types: ${typeToSql(t)}` : undefined;
};

export function registerDp(): void {
  defineAggregate('$dp_avg', [
    asig(['ANY', 'ANY'], 'FLOAT64', collect((rows) => {
      // NULL and NaN values are skipped; a unit with no value left has no average and does not count.
      const units = new Map<string, { sum: number; n: number }>();
      for (const [x, unit] of rows as [Value, Value][]) {
        if (x === null) continue;
        const v = toNum(x);
        if (Number.isNaN(v)) continue;
        const k = valueKey(unit ?? null);
        const u = units.get(k) ?? { sum: 0, n: 0 };
        u.sum += v;
        u.n++;
        units.set(k, u);
      }
      if (units.size === 0) return null;
      let total = 0;
      for (const u of units.values()) total += u.sum / u.n;
      return total / units.size;
    })),
  ], { validate: numericInput, analytic: false });
}
