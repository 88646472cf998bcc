// The signature DSL and overload matcher shared by every family module.
//
//   sig(['INT64'], 'INT64', kernel)                 fixed types
//   sig(['T1', 'T1'], 'BOOL', kernel)               templated: all T1 args unify to a supertype
//   sig(['ARRAY<T1>', 'T1'], 'BOOL', kernel)        element types unify with T1
//   sig(['ANY'], 'STRING', kernel)                  any type, not unified
//   sig(['STRING', opt('STRING')], ...)             optional trailing argument
//   sig([rep('STRING')], ...)                       repeated argument (0..n)
//   sig(['JSON', named('wide_number_mode', 'STRING')], ...)  named argument
//   sigf(args, ret, ({argTypes, returnType, args}) => kernel)  kernel chosen per resolved types
//
// The matcher computes ZetaSQL-like coercion costs and picks the cheapest
// signature (ties: the first listed). On failure it produces the service's
// "No matching signature ..." message.
import { canCoerce, coercionCost, commonSupertype, type CoercibleArg } from '../types/coercion.js';
import { T, arrayOf, rangeOf, typeToSql, type ScalarKind, type ScalarType, type SqlType } from '../types/types.js';
import type {
  AggregateFunctionDef,
  AggregateOptions,
  ArgInfo,
  EvalContext,
  FunctionMismatch,
  FunctionResolution,
  GroupsAccumulator,
  ResolvedAggregate,
  ResolvedScalar,
  ScalarFunctionDef,
  ScalarKernel,
} from './registry.js';
import { registerFunction } from './registry.js';
import { parseDateString, parseDatetimeString, parseTimeString, parseTimestampString } from './civil.js';

export interface ArgSpec {
  readonly type: string;
  readonly optional?: boolean;
  readonly repeated?: boolean;
  readonly name?: string;
  /** The argument must be a constant (literal, parameter or folded expression). */
  readonly constant?: boolean;
  /** For constant STRING args: false when it is not a date part keyword slot. */
  readonly datePart?: boolean;
  /** The argument is a lambda (`x -> expr`) whose body has this type; only such slots take lambdas. */
  readonly lambda?: boolean;
  /** How the "Supported signatures" list names the slot's type, where the reference types it as an enum (ROUNDING_MODE). */
  readonly displayAs?: string;
}

export interface SigContext {
  readonly argTypes: readonly SqlType[];
  readonly returnType: SqlType;
  readonly args: readonly ArgInfo[];
  /** Concrete types bound to T1, T2, ... */
  readonly templates: ReadonlyMap<string, SqlType>;
  /** For each call argument, the index of the signature argument it bound to (named/optional args). */
  readonly assign: readonly number[];
}

export type RetSpec = string | ((c: Omit<SigContext, 'returnType'>) => SqlType);

export interface Signature<I> {
  readonly args: readonly ArgSpec[];
  readonly ret: RetSpec;
  readonly impl: I;
  /** Extra validity check after types are bound; return false to reject this signature. */
  readonly accept?: (c: Omit<SigContext, 'returnType'>) => boolean;
  /** Left out of the "Supported signatures" list: a coercion the service applies that the reference does not list. */
  readonly unlisted?: boolean;
}

export type KernelMaker = (c: SigContext) => ScalarKernel;

export const opt = (type: string, name?: string): ArgSpec => ({ type, optional: true, name });
export const rep = (type: string): ArgSpec => ({ type, repeated: true });
export const named = (name: string, type: string, optional = true): ArgSpec => ({ type, name, optional });
export const constArg = (type: string): ArgSpec => ({ type, constant: true });
export const lambdaArg = (bodyType: string): ArgSpec => ({ type: bodyType, lambda: true });

function toSpecs(args: readonly (string | ArgSpec)[]): ArgSpec[] {
  return args.map((a) => (typeof a === 'string' ? { type: a } : a));
}

export function sig(
  args: readonly (string | ArgSpec)[],
  ret: RetSpec,
  kernel: ScalarKernel,
  accept?: Signature<KernelMaker>['accept'],
): Signature<KernelMaker> {
  return { args: toSpecs(args), ret, impl: () => kernel, accept };
}

export function sigf(
  args: readonly (string | ArgSpec)[],
  ret: RetSpec,
  make: KernelMaker,
  accept?: Signature<KernelMaker>['accept'],
): Signature<KernelMaker> {
  return { args: toSpecs(args), ret, impl: make, accept };
}

// ---------------------------------------------------------------- type patterns

const SCALAR_KINDS = new Set<string>(Object.keys(T));

/** Parses 'INT64', 'ARRAY<T1>', 'RANGE<T1>', 'ANY', 'ARRAY<ANY>', 'STRUCT', 'ARRAY<STRUCT>' etc. */
type Pattern =
  | { p: 'concrete'; t: SqlType }
  | { p: 'template'; name: string }
  | { p: 'any' }
  | { p: 'anyStruct' }
  | { p: 'anyArray' }
  | { p: 'anyRange' }
  | { p: 'array'; el: Pattern }
  | { p: 'range'; el: Pattern };

const patternCache = new Map<string, Pattern>();
function parsePattern(s: string): Pattern {
  let p = patternCache.get(s);
  if (p) return p;
  p = parsePatternUncached(s.trim());
  patternCache.set(s, p);
  return p;
}

function parsePatternUncached(s: string): Pattern {
  if (s === 'ANY') return { p: 'any' };
  if (s === 'STRUCT') return { p: 'anyStruct' };
  if (s === 'ARRAY') return { p: 'anyArray' };
  if (s === 'RANGE') return { p: 'anyRange' };
  if (/^T\d$/.test(s)) return { p: 'template', name: s };
  if (s.startsWith('ARRAY<') && s.endsWith('>')) {
    const el = parsePatternUncached(s.slice(6, -1));
    if (el.p === 'concrete') return { p: 'concrete', t: arrayOf(el.t) };
    if (el.p === 'any') return { p: 'anyArray' };
    return { p: 'array', el };
  }
  if (s.startsWith('RANGE<') && s.endsWith('>')) {
    const el = parsePatternUncached(s.slice(6, -1));
    if (el.p === 'concrete') return { p: 'concrete', t: rangeOf(el.t as ScalarType) };
    return { p: 'range', el };
  }
  if (SCALAR_KINDS.has(s)) return { p: 'concrete', t: T[s as ScalarKind] };
  throw new Error(`bad type pattern ${s}`);
}

function patternDisplay(s: string): string {
  const p = parsePattern(s);
  return displayOf(p);
}
function displayOf(p: Pattern): string {
  switch (p.p) {
    case 'concrete':
      return typeToSql(p.t);
    case 'template':
    case 'any':
      return 'ANY';
    case 'anyStruct':
      return 'STRUCT';
    case 'anyArray':
      return 'ARRAY';
    case 'anyRange':
      return 'RANGE';
    case 'array':
      return p.el.p === 'template' || p.el.p === 'any' ? 'ARRAY' : `ARRAY<${displayOf(p.el)}>`;
    case 'range':
      return 'RANGE';
  }
}

function substitute(p: Pattern, templates: Map<string, SqlType>): SqlType | undefined {
  switch (p.p) {
    case 'concrete':
      return p.t;
    case 'template':
      return templates.get(p.name) ?? T.INT64;
    case 'array': {
      const el = substitute(p.el, templates);
      return el && arrayOf(el);
    }
    case 'range': {
      const el = substitute(p.el, templates);
      return el && rangeOf(el as ScalarType);
    }
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------- matching

/** Assigns call arguments to spec positions; undefined when the arity does not fit. */
function assignArgs(specs: readonly ArgSpec[], args: readonly ArgInfo[]): number[] | undefined {
  const positional = args.filter((a) => !a.name);
  const out: number[] = new Array(args.length);
  // Named arguments bind by name (case-insensitive); the rest bind in order.
  const namedSpecIdx = new Set<number>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.name) continue;
    const idx = specs.findIndex((s) => s.name !== undefined && s.name.toLowerCase() === a.name!.toLowerCase());
    if (idx < 0) return undefined;
    out[i] = idx;
    namedSpecIdx.add(idx);
  }
  const posSpecs: number[] = [];
  for (let i = 0; i < specs.length; i++) if (!namedSpecIdx.has(i)) posSpecs.push(i);
  const required = posSpecs.filter((i) => !specs[i]!.optional && !specs[i]!.repeated).length;
  if (positional.length < required) return undefined;
  let extra = positional.length - required;
  let k = 0;
  for (const si of posSpecs) {
    const s = specs[si]!;
    if (s.repeated) {
      // Everything beyond the trailing fixed specs goes to the repeated slot.
      const after = posSpecs.filter((j) => j > si && !specs[j]!.optional && !specs[j]!.repeated).length;
      const take = positional.length - k - after;
      for (let t = 0; t < take; t++) out[args.indexOf(positional[k++]!)] = si;
      extra = 0;
      continue;
    }
    if (s.optional) {
      // Named-capable optionals may be skipped positionally only at the end.
      if (extra > 0 && k < positional.length) {
        out[args.indexOf(positional[k++]!)] = si;
        extra--;
      }
      continue;
    }
    if (k >= positional.length) return undefined;
    out[args.indexOf(positional[k++]!)] = si;
  }
  if (k !== positional.length) return undefined;
  return out;
}

export interface MatchResult<I> {
  readonly sig: Signature<I>;
  readonly argTypes: SqlType[];
  readonly returnType: SqlType;
  readonly templates: Map<string, SqlType>;
  readonly assign: number[];
}

function asCoercible(a: ArgInfo): CoercibleArg {
  return {
    type: a.type,
    isLiteral: a.isLiteral ?? a.constant !== undefined,
    isParameter: a.isParameter,
    untypedNull: a.untypedNull,
    value: a.constant?.value,
  };
}

function tryMatch<I>(s: Signature<I>, args: readonly ArgInfo[]): { cost: number; res: MatchResult<I> } | undefined {
  const assign = assignArgs(s.args, args);
  if (!assign) return undefined;
  // Collect template contributions.
  const contrib = new Map<string, CoercibleArg[]>();
  const addC = (name: string, c: CoercibleArg) => {
    let l = contrib.get(name);
    if (!l) contrib.set(name, (l = []));
    l.push(c);
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const spec = s.args[assign[i]!]!;
    if (spec.constant && a.constant === undefined && !a.untypedNull) return undefined;
    const p = parsePattern(spec.type);
    if (!collect(p, a.type, asCoercible(a), addC)) return undefined;
  }
  const templates = new Map<string, SqlType>();
  for (const [name, list] of contrib) {
    const st = commonSupertype(list);
    if (!st) return undefined;
    templates.set(name, st);
  }
  let cost = 0;
  const argTypes: SqlType[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const p = parsePattern(s.args[assign[i]!]!.type);
    if (p.p === 'concrete' && !decimalSignatureApplies(p.t, args)) return undefined;
    const target = targetType(p, a, templates);
    if (!target) return undefined;
    const ca = asCoercible(a);
    const c = coercionCost(a.type, target, ca);
    if (c < 0) return undefined;
    if (c > 0 && !literalFits(a, target)) return undefined;
    // ZetaSQL ranks by how many non-literal arguments need a coercion, then their
    // distance, then how many literals (and parameters) do, then theirs.
    if (c > 0 && !a.untypedNull) cost += ca.isLiteral || ca.isParameter ? 100 + c : 1_000_000 + 10_000 * c;
    else cost += c;
    argTypes.push(target);
  }
  const partial = { argTypes, args, templates, assign };
  if (s.accept && !s.accept(partial)) return undefined;
  let returnType: SqlType;
  if (typeof s.ret === 'function') returnType = s.ret(partial);
  else {
    const rp = parsePattern(s.ret);
    const rt = substitute(rp, templates);
    if (!rt) throw new Error(`return pattern ${s.ret} not substitutable`);
    returnType = rt;
  }
  return { cost, res: { sig: s, argTypes, returnType, templates, assign } };
}

/**
 * A built-in's NUMERIC (BIGNUMERIC) signature is only a candidate when some
 * argument is NUMERIC (BIGNUMERIC), as the reference's signatures constrain
 * them: DIV(2.5, 1) and ROUND(2, 0, 'ROUND_HALF_EVEN') match nothing, and an
 * INT64 argument alone picks the FLOAT64 signature.
 */
function decimalSignatureApplies(t: SqlType, args: readonly ArgInfo[]): boolean {
  if (t.kind !== 'NUMERIC' && t.kind !== 'BIGNUMERIC') return true;
  return args.some((a) => a.type.kind === t.kind);
}

/** A STRING literal only coerces to a date/time type when its text parses as one. */
function literalFits(a: ArgInfo, target: SqlType): boolean {
  if (a.type.kind !== 'STRING' || !a.constant || typeof a.constant.value !== 'string') return true;
  // A parameter is no literal: its coercion (conversion_rules.md, query parameter coercion) is a cast that fails when
  // it runs, with the cast's words, as the reference resolves it.
  if (a.isParameter) return true;
  const s = a.constant.value;
  switch (target.kind) {
    case 'DATE':
      return parseDateString(s) !== undefined;
    case 'TIME':
      return parseTimeString(s) !== undefined;
    case 'DATETIME':
      return parseDatetimeString(s) !== undefined;
    case 'TIMESTAMP':
      return parseTimestampString(s, 'UTC') !== undefined;
    default:
      return true;
  }
}

function collect(p: Pattern, t: SqlType, a: CoercibleArg, add: (n: string, c: CoercibleArg) => void): boolean {
  switch (p.p) {
    case 'template':
      add(p.name, a);
      return true;
    case 'array':
      if (a.untypedNull && t.kind !== 'ARRAY') return true;
      if (t.kind !== 'ARRAY') return false;
      if (a.untypedNull) return true; // untyped [] contributes nothing
      return collect(p.el, t.element, { type: t.element, isLiteral: a.isLiteral }, add);
    case 'range':
      if (a.untypedNull) return true;
      if (t.kind !== 'RANGE') {
        // A STRING literal may become a RANGE; it does not bind the element type.
        return t.kind === 'STRING' && !!a.isLiteral;
      }
      return collect(p.el, t.element, { type: t.element }, add);
    case 'anyStruct':
      return a.untypedNull || t.kind === 'STRUCT';
    case 'anyArray':
      return a.untypedNull || t.kind === 'ARRAY';
    case 'anyRange':
      return a.untypedNull || t.kind === 'RANGE';
    default:
      return true;
  }
}

function targetType(p: Pattern, a: ArgInfo, templates: Map<string, SqlType>): SqlType | undefined {
  switch (p.p) {
    case 'any':
      return a.untypedNull && a.type.kind !== 'ARRAY' ? T.INT64 : a.type;
    case 'anyStruct':
    case 'anyArray':
    case 'anyRange':
      return a.type;
    case 'array':
      // ARRAY<STRUCT>: any array of structs, as given.
      if (p.el.p === 'anyStruct') return a.type.kind === 'ARRAY' ? a.type : undefined;
      return substitute(p, templates);
    default:
      return substitute(p, templates);
  }
}

export interface Display {
  /** How a signature is printed in the "Supported signatures" list. */
  readonly signature: (name: string, argStrs: readonly string[]) => string;
  /** "function ABS" or "operator +". */
  readonly what: string;
  /** The given argument types as the mismatch names them, when not a comma list ("DATE_TIME_PART FROM INT64"). */
  readonly given?: (argStrs: readonly string[]) => string;
}

/** `aggregate`: an aggregate function is named so in a mismatch ("No matching signature for aggregate function SUM ..."). */
export function functionDisplay(name: string, aggregate = false): Display {
  return { what: `${aggregate ? 'aggregate function' : 'function'} ${name}`, signature: (n, a) => `${n}(${a.join(', ')})` };
}

export function operatorDisplay(symbol: string, form: 'infix' | 'prefix' | 'postfix' | 'between' | 'in' | 'custom' = 'infix', custom?: (a: readonly string[]) => string): Display {
  return {
    what: `operator ${symbol}`,
    signature: (_n, a) => {
      switch (form) {
        case 'infix':
          return `${a[0]} ${symbol} ${a[1]}`;
        case 'prefix':
          return `${symbol}${a[0]}`;
        case 'postfix':
          return `${a[0]} ${symbol}`;
        case 'between':
          return `${a[0]} BETWEEN ${a[1]} AND ${a[2]}`;
        case 'in':
          return `${a[0]} IN (${a.slice(1).join(', ')})`;
        default:
          return custom!(a);
      }
    },
  };
}

function specDisplay(s: ArgSpec): string {
  const base = s.displayAs ?? patternDisplay(s.type);
  const withName = s.name ? `${s.name} => ${base}` : base;
  if (s.repeated) return `[${base}, ...]`;
  if (s.optional) return `[${withName}]`;
  return base;
}

export function argTypeDisplay(a: ArgInfo): string {
  if (a.lambda) return `LAMBDA(${typeToSql(a.type)})`;
  if (a.untypedNull) return a.type.kind === 'ARRAY' ? 'ARRAY<INT64>' : 'NULL';
  return typeToSql(a.type);
}

export function mismatchMessage<I>(name: string, sigs: readonly Signature<I>[], args: readonly ArgInfo[], display: Display): string {
  const argStrs = args.map(argTypeDisplay);
  const argStr = display.given?.(argStrs) ?? argStrs.join(', ');
  const list = sigs.filter((s) => !s.unlisted).map((s) => display.signature(name, s.args.map(specDisplay)));
  const uniq = [...new Set(list)];
  const given = args.length ? ` for argument types: ${argStr}` : ' with no arguments';
  return `No matching signature for ${display.what}${given}. Supported signature${uniq.length === 1 ? '' : 's'}: ${uniq.join('; ')}`;
}

/** The overloads as people read them: the "Supported signatures" forms, with the result type when it is fixed by a pattern. */
function signatureList<I>(name: string, sigs: readonly Signature<I>[], display: Display): string[] {
  const out = sigs.map((s) => display.signature(name, s.args.map(specDisplay)) + (typeof s.ret === 'string' ? ` -> ${patternDisplay(s.ret)}` : ''));
  return [...new Set(out)];
}

/** A NULL that already carries a concrete type (CAST(NULL AS TIMESTAMP)) is not an untyped NULL. */
function typedNullFix(a: ArgInfo): ArgInfo {
  if (!a.untypedNull) return a;
  const t = a.type;
  if (t.kind === 'INT64' || (t.kind === 'ARRAY' && t.element.kind === 'INT64')) return a;
  return { ...a, untypedNull: false };
}

export function matchSignature<I>(
  name: string,
  sigs: readonly Signature<I>[],
  args: readonly ArgInfo[],
  display: Display = functionDisplay(name),
): { ok: true; match: MatchResult<I> } | FunctionMismatch {
  args = args.map(typedNullFix);
  let best: { cost: number; res: MatchResult<I> } | undefined;
  for (const s of sigs) {
    const m = tryMatch(s, args);
    // A lambda fits a lambda slot only, and a lambda slot nothing else.
    if (m && !args.every((a, i) => !!a.lambda === !!s.args[m.res.assign[i]!]?.lambda)) continue;
    if (m && (!best || m.cost < best.cost)) best = m;
  }
  if (!best) return { ok: false, message: (display.what.startsWith('function ') || COMPARISONS.has(name) ? badLiteralMessage(sigs, args) : undefined) ?? mismatchMessage(name, sigs, args, display) };
  return { ok: true, match: best.res };
}

const CIVIL_KINDS = new Set(['DATE', 'TIME', 'DATETIME', 'TIMESTAMP']);
const COMPARISONS = new Set(['$equal', '$not_equal', '$less', '$less_or_equal', '$greater', '$greater_or_equal', '$in', '$between']);

/**
 * A function's STRING literal argument that some signature takes as a date/time type by
 * its type, but whose text is no such value: the service coerces the literal, and its
 * cast fails ('Could not cast literal "2024-01-01x" to type DATE'). So do the comparison
 * operators (`d = 'x'`, `d IN ('x')`, `d BETWEEN 'x' AND ...`); arithmetic keeps the signature
 * mismatch (`1 + 'a'`), as the reference implementation does.
 */
function badLiteralMessage<I>(sigs: readonly Signature<I>[], args: readonly ArgInfo[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.type.kind !== 'STRING' || typeof a.constant?.value !== 'string' || a.isLiteral === false) continue;
    const loose = args.map((x, k): ArgInfo => (k === i ? { type: x.type, isLiteral: true, ...(x.name ? { name: x.name } : {}) } : x));
    for (const s of sigs) {
      const t = tryMatch(s, loose)?.res.argTypes[i];
      if (t && CIVIL_KINDS.has(t.kind)) return `Could not cast literal ${JSON.stringify(a.constant.value)} to type ${typeToSql(t)}`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- definitions

export interface ScalarOptions {
  readonly aliases?: readonly string[];
  readonly display?: Display;
  readonly volatile?: boolean;
  /** Defaults to true for functions, false for operators. */
  readonly safeCallable?: boolean;
  /** A check run after a match; return an error message to reject the call. */
  readonly validate?: (args: readonly ArgInfo[], m: MatchResult<KernelMaker>) => string | undefined;
  /** A message replacing "No matching signature ..." for calls the reference refuses in its own words. */
  readonly mismatch?: (args: readonly ArgInfo[]) => string | undefined;
  /** Argument positions taking a date part keyword (see ScalarFunctionDef.datePartArgs). */
  readonly datePartArgs?: readonly number[];
  /** See ResolvedScalar.pure. */
  readonly pure?: boolean;
}

export function defineScalar(name: string, sigs: readonly Signature<KernelMaker>[], opts: ScalarOptions = {}): ScalarFunctionDef {
  const display = opts.display ?? functionDisplay(name);
  const def: ScalarFunctionDef = {
    kind: 'scalar',
    name,
    safeCallable: opts.safeCallable ?? !name.startsWith('$'),
    volatile: opts.volatile,
    datePartArgs: opts.datePartArgs ?? datePartPositions(sigs),
    signatures: () => signatureList(name, sigs, display),
    resolve(args: readonly ArgInfo[]): FunctionResolution<ResolvedScalar> | FunctionMismatch {
      const firstNamed = args.findIndex((a) => a.name !== undefined);
      if (firstNamed >= 0 && args.slice(firstNamed).some((a) => a.name === undefined))
        return {
          ok: false,
          message: `Call to function ${name} must not specify positional arguments after named arguments; named arguments must be specified last in the argument list`,
        };
      const r = matchSignature(name, sigs, args, display);
      if (!r.ok) {
        const msg = opts.mismatch?.(args);
        return msg ? { ok: false, message: msg } : r;
      }
      const m = r.match;
      if (opts.validate) {
        const msg = opts.validate(args, m);
        if (msg) return { ok: false, message: msg };
      }
      const kernel = m.sig.impl({ argTypes: m.argTypes, returnType: m.returnType, args, templates: m.templates, assign: m.assign });
      return { ok: true, resolved: { returnType: m.returnType, argTypes: m.argTypes, kernel, ...(opts.pure ? { pure: true } : {}) } };
    },
  };
  registerFunction(def, ...(opts.aliases ?? []));
  return def;
}

/** Positions whose spec is a constant STRING in some signature: the date-part slots. */
function datePartPositions(sigs: readonly Signature<KernelMaker>[]): number[] | undefined {
  const out = new Set<number>();
  for (const s of sigs) s.args.forEach((a, i) => { if (a.constant && a.type === 'STRING' && a.datePart !== false) out.add(i); });
  return out.size > 0 ? [...out].sort() : undefined;
}

export type AccumulatorMaker = (c: SigContext, aggOpts: AggregateOptions) => (ctx: EvalContext, opts: AggregateOptions) => GroupsAccumulator;

export function asig(args: readonly (string | ArgSpec)[], ret: RetSpec, make: AccumulatorMaker, accept?: Signature<AccumulatorMaker>['accept']): Signature<AccumulatorMaker> {
  return { args: toSpecs(args), ret, impl: make, accept };
}

export interface AggregateDefOptions {
  readonly aliases?: readonly string[];
  readonly analytic?: boolean;
  readonly validate?: (args: readonly ArgInfo[], m: MatchResult<AccumulatorMaker>, opts: AggregateOptions) => string | undefined;
}

export function defineAggregate(name: string, sigs: readonly Signature<AccumulatorMaker>[], opts: AggregateDefOptions = {}): AggregateFunctionDef {
  const def: AggregateFunctionDef = {
    kind: 'aggregate',
    name,
    safeCallable: true,
    analytic: opts.analytic ?? true,
    signatures: () => signatureList(name, sigs, functionDisplay(name)),
    resolve(args, aggOpts): FunctionResolution<ResolvedAggregate> | FunctionMismatch {
      const r = matchSignature(name, sigs, args, functionDisplay(name, true));
      if (!r.ok) return r;
      const m = r.match;
      if (opts.validate) {
        const msg = opts.validate(args, m, aggOpts);
        if (msg) return { ok: false, message: msg };
      }
      const create = m.sig.impl({ argTypes: m.argTypes, returnType: m.returnType, args, templates: m.templates, assign: m.assign }, aggOpts);
      return { ok: true, resolved: { returnType: m.returnType, argTypes: m.argTypes, create } };
    },
  };
  registerFunction(def, ...(opts.aliases ?? []));
  return def;
}

export { canCoerce };
