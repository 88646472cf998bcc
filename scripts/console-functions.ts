// Build step of the web console: prints the function registry's names and
// signatures as JSON (served as /console/functions.json for the editor's
// completion), so the console lists exactly what the engine implements.
import '../src/functions/index.js';
import { allFunctions } from '../src/functions/registry.js';

interface FunctionEntry { name: string; kind: 'scalar' | 'aggregate'; signatures: readonly string[] }

const out: FunctionEntry[] = [];
for (const [name, def] of allFunctions()) {
  if (name.startsWith('$')) continue; // operators and internal helpers
  const canonical = def.signatures?.() ?? [];
  // An alias is listed under its own name, with the canonical overloads renamed.
  const signatures = name === def.name ? canonical : canonical.map((s) => (s.startsWith(def.name + '(') ? name + s.slice(def.name.length) : s));
  out.push({ name, kind: def.kind, signatures });
}
out.sort((a, b) => a.name.localeCompare(b.name));
process.stdout.write(JSON.stringify(out));
