// GEOGRAPHY values arriving as text (insertAll and Storage Write rows, load
// jobs, LOAD DATA, query parameters, WAL replay) are stored in the service's
// canonical WKT, so a column read directly (tabledata.list, SELECT g, the
// Storage Read API) shows `POINT(1 2)` for `POINT(1.0 2.0)` or a GeoJSON
// point, as the real service does. The engine hands this to
// `convertJsonValue` (src/types/json-values.ts), the one converter every
// such path uses; parsing and printing are the function library's (the same
// as ST_GEOGFROMTEXT / ST_GEOGFROMGEOJSON and ST_ASTEXT).
import { QueryError } from '../planner/api.js';
import { parseStoredGeography, toWkt } from '../functions/geography/io.js';
import { checkLL, GeoError, normalize } from '../functions/geography/model.js';
import { ValueConversionError } from '../types/json-values.js';

const NUM = String.raw`([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)`;
/** `POINT(x y)`, by far the most common text, without building a parse tree (~3x cheaper). */
const POINT = new RegExp(String.raw`^POINT\s*\(\s*${NUM}\s+${NUM}\s*\)$`, 'i');

/** Canonical WKT of a GEOGRAPHY text; a ValueConversionError (a row error on insert) when it is not one. */
export function canonicalGeographyText(text: string): string {
  try {
    const s = text.trim();
    const m = POINT.exec(s);
    if (m) return toWkt({ points: [checkLL(Number(m[1]), Number(m[2]))], lines: [], polys: [] });
    return toWkt(normalize(parseStoredGeography(s)));
  } catch (e) {
    if (e instanceof GeoError || e instanceof QueryError) throw new ValueConversionError(`Invalid geography value: ${e.message}`);
    throw e;
  }
}
