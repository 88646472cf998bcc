// The code that runs first in each JavaScript UDF's V8 isolate (sandbox.ts):
// it removes what could act after a call returned, then returns the one
// function the engine calls, `(op, ...args)`. Every op catches whatever the
// UDF code throws and answers plain data built here (null-prototype objects
// and arrays, primitives, Dates), so nothing of the UDF's making is ever read
// by the engine: isolated-vm copies only those answers out. (An exception
// that left the isolate would be copied by isolated-vm reading its `message`
// and `stack`, running the UDF's getters outside the time limit.)
//
// Values cross by structured clone: numbers, strings, booleans, null, Dates,
// plain objects and arrays as they are; a TIMESTAMP crosses as BigInt
// microseconds and becomes a Date with a `microsecond` field here (and back).
// Number columns (FLOAT64, INT64) cross as { f64: Float64Array, nulls:
// Uint8Array | null } and STRING columns as { str: all values joined, lens:
// Int32Array, nulls }, both ways when every value allows it: a typed array or
// one string is copied as one block, where an Array of 4,096 values is cloned
// value by value (1 M short strings: ~0.4 s against ~0.03 s).
//
// User code runs through one chain of evals: the first library by an indirect
// eval (global code: its `var`s and functions become globals, as in a script),
// each next library and then the body by a direct eval appended to the one
// before, so top-level `let`/`const`/`class` of a library are visible to the
// later ones and to the body, as between scripts, while the whole chain runs
// inside this runtime's try/catch. `//# sourceURL` names each source in stack
// traces, for the error positions.
export const RUNTIME = String.raw`(() => {
  'use strict';
  const g = globalThis;
  // Callbacks that would run after a call returned: Atomics.waitAsync's timer
  // (isolated-vm aborts the process on such a delayed task) and finalizers.
  delete Atomics.waitAsync;
  delete g.FinalizationRegistry;
  // Stack traces are V8's own text: a prepareStackTrace hook would run UDF code while an error is read.
  Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });
  // Debug output has nowhere to go.
  g.console = Object.freeze({ log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} });
  // Asynchronous WebAssembly compilation finishes in tasks this isolate never runs: compile synchronously.
  {
    const W = WebAssembly, Mod = W.Module, Inst = W.Instance;
    const later = (f) => new Promise((ok) => ok(f()));
    W.compile = (bytes) => later(() => new Mod(bytes));
    W.instantiate = (src, imports) => later(() => (src instanceof Mod ? new Inst(src, imports) : (() => { const module = new Mod(src); return { module, instance: new Inst(module, imports) }; })()));
    delete W.compileStreaming;
    delete W.instantiateStreaming;
  }

  const Arr = Array, isArray = Array.isArray, keys = Object.keys, create = Object.create, setProto = Object.setPrototypeOf;
  const F64 = Float64Array, U8 = Uint8Array, I32 = Int32Array, TWO53 = 2 ** 53, MAX_JOINED = 2 ** 28;
  const slice = String.prototype.slice, join = Array.prototype.join;
  const D = Date, getTime = Date.prototype.getTime, S = String, N = Number, BI = BigInt, isInt = Number.isInteger, floor = Math.floor;
  const defineProperty = Object.defineProperty, indirectEval = eval;
  const MAX_DEPTH = 1000, MAX_TEXT = 4096;

  const record = () => create(null);
  const list = (n) => { const a = new Arr(n); setProto(a, null); return a; };
  const isDate = (x) => { if (x === null || typeof x !== 'object') return false; try { getTime.call(x); return true; } catch { return false; } };
  const cut = (s) => (s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) : s);

  function describe(e) {
    const d = record();
    try {
      if (e !== null && typeof e === 'object' && typeof e.message === 'string') {
        d.name = cut(S(e.name === undefined ? 'Error' : e.name));
        d.message = cut(S(e.message));
        const st = e.stack;
        d.stack = typeof st === 'string' ? cut(st) : '';
      } else d.text = cut(S(e));
    } catch {
      d.text = 'Error';
    }
    return d;
  }
  const failure = (e, row) => { const r = record(); r.error = describe(e); r.row = row; return r; };

  const hasTimestamp = (t) => t.kind === 'TIMESTAMP' || (t.kind === 'ARRAY' && hasTimestamp(t.element)) || (t.kind === 'STRUCT' && t.fields.some((f) => hasTimestamp(f.type)));

  // An argument as the body sees it (only TIMESTAMPs need work).
  function dec(t, v) {
    if (v === null) return null;
    switch (t.kind) {
      case 'TIMESTAMP': {
        const ms = v >= 0n ? v / 1000n : -((-v + 999n) / 1000n);
        const d = new D(N(ms));
        let f = v % 1000000n;
        if (f < 0n) f += 1000000n;
        d.microsecond = N(f);
        return d;
      }
      case 'ARRAY':
        for (let i = 0; i < v.length; i++) v[i] = dec(t.element, v[i]);
        return v;
      case 'STRUCT':
        for (const f of t.fields) v[f.name] = dec(f.type, v[f.name]);
        return v;
      default:
        return v;
    }
  }

  // A result as plain data: own enumerable properties, Dates, primitives.
  function plain(v, depth) {
    switch (typeof v) {
      case 'number': case 'string': case 'boolean': case 'bigint': return v;
      case 'undefined': case 'function': case 'symbol': return undefined;
    }
    if (v === null) return null;
    if (depth > MAX_DEPTH) throw new RangeError('UDF result is nested more than ' + MAX_DEPTH + ' levels deep');
    if (isDate(v)) return new D(getTime.call(v));
    if (isArray(v)) {
      const n = v.length, a = list(n);
      for (let i = 0; i < n; i++) a[i] = plain(v[i], depth + 1);
      return a;
    }
    const o = record(), ks = keys(v);
    for (let i = 0; i < ks.length; i++) {
      const x = plain(v[ks[i]], depth + 1);
      if (x !== undefined) o[ks[i]] = x;
    }
    return o;
  }

  // A result by its declared type: TIMESTAMP Dates keep their microseconds, STRUCTs their fields.
  function enc(t, v, depth) {
    if (v === null || v === undefined) return null;
    if (depth > MAX_DEPTH) throw new RangeError('UDF result is nested more than ' + MAX_DEPTH + ' levels deep');
    switch (t.kind) {
      case 'TIMESTAMP':
        if (typeof v === 'bigint') return S(v);
        if (isDate(v)) {
          const ms = getTime.call(v), us = v.microsecond;
          if (ms === ms && typeof us === 'number' && isInt(us) && us >= 0 && us < 1e6) return BI(floor(ms / 1000)) * 1000000n + BI(us);
          return new D(ms);
        }
        break;
      case 'ARRAY':
        if (isArray(v)) {
          const n = v.length, a = list(n);
          for (let i = 0; i < n; i++) a[i] = enc(t.element, v[i], depth + 1);
          return a;
        }
        break;
      case 'STRUCT':
        if (typeof v === 'object' && !isArray(v) && !isDate(v)) {
          const o = record();
          for (const f of t.fields) o[f.name] = enc(f.type, v[f.name], depth + 1);
          return o;
        }
        break;
    }
    return typeof v === 'function' || typeof v === 'symbol' ? S(v) : plain(v, depth);
  }

  function decodeColumns(types, cols, n) {
    for (let j = 0; j < types.length; j++) {
      const c = cols[j];
      if (!isArray(c)) {
        const nulls = c.nulls, a = new Arr(n);
        if (c.f64 !== undefined) {
          const f = c.f64;
          for (let i = 0; i < n; i++) a[i] = nulls !== null && nulls[i] === 1 ? null : f[i];
        } else {
          const str = c.str, lens = c.lens;
          for (let i = 0, o = 0; i < n; i++) {
            const l = lens[i];
            a[i] = nulls !== null && nulls[i] === 1 ? null : slice.call(str, o, o + l);
            o += l;
          }
        }
        cols[j] = a;
      } else if (hasTimestamp(types[j])) {
        for (let i = 0; i < n; i++) c[i] = dec(types[j], c[i]);
      }
    }
  }

  // FLOAT64 and INT64 results as one Float64Array, when every value converts exactly as the engine
  // would convert it (numbers, booleans, null; INT64 integers within ±2^53); else null.
  function encodeNumbers(t, values, n) {
    const int = t.kind === 'INT64', f = new F64(n);
    let nulls = null;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v === null || v === undefined) {
        if (nulls === null) nulls = new U8(n);
        nulls[i] = 1;
      } else if (typeof v === 'number') {
        if (int && !(isInt(v) && v <= TWO53 && v >= -TWO53)) return null;
        f[i] = v;
      } else if (typeof v === 'boolean') f[i] = v ? 1 : 0;
      else return null;
    }
    const r = record();
    r.f64 = f;
    r.nulls = nulls;
    return r;
  }

  // STRING results as one joined string, when every value is a string or null; else null.
  function encodeStrings(values, n) {
    const parts = new Arr(n), lens = new I32(n);
    let nulls = null, total = 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v === null || v === undefined) {
        if (nulls === null) nulls = new U8(n);
        nulls[i] = 1;
        parts[i] = '';
      } else if (typeof v === 'string') {
        parts[i] = v;
        lens[i] = v.length;
        total += v.length;
      } else return null;
    }
    if (total > MAX_JOINED) return null;
    const r = record();
    r.str = join.call(parts, '');
    r.lens = lens;
    r.nulls = nulls;
    return r;
  }

  function encodeAll(t, values, n) {
    const fast = t.kind === 'FLOAT64' || t.kind === 'INT64' ? encodeNumbers(t, values, n) : t.kind === 'STRING' ? encodeStrings(values, n) : null;
    if (fast !== null) return fast;
    const out = list(n);
    for (let i = 0; i < n; i++) out[i] = enc(t, values[i], 0);
    const r = record();
    r.out = out;
    return r;
  }

  let spec = null; // { params, returns, consts? } of the loaded function
  let fn = null; // scalar: the function; aggregate: its exported functions
  let pending = null; // scalar: settles a batch whose results include promises
  const accumulators = new Map();
  let nextAccumulator = 0;

  // Libraries, then the body, through the eval chain; reports which source failed.
  function load(libraries, body, s) {
    const sources = libraries.map(([file, code]) => [file, code]);
    sources.push([body.file, body.code]);
    let at = -1;
    const next = () => {
      at++;
      const [file, code] = sources[at];
      const more = at + 1 < sources.length ? '\n;eval(__bqNextSource());' : '';
      return code + more + '\n//# sourceURL=' + file;
    };
    defineProperty(g, '__bqNextSource', { value: next, configurable: true, writable: true, enumerable: false });
    let value;
    try {
      value = indirectEval(next());
    } catch (e) {
      const r = failure(e, -1);
      r.file = sources[at] ? sources[at][0] : body.file;
      return r;
    } finally {
      delete g.__bqNextSource;
    }
    spec = s;
    fn = value;
    return null;
  }

  function call(cols, n) {
    const k = spec.params.length, f = fn;
    decodeColumns(spec.params, cols, n);
    const out = new Arr(n), c0 = cols[0], c1 = cols[1], c2 = cols[2];
    let waiting = 0, failed = null;
    for (let i = 0; i < n; i++) {
      let r;
      try {
        r = k === 0 ? f() : k === 1 ? f(c0[i]) : k === 2 ? f(c0[i], c1[i]) : k === 3 ? f(c0[i], c1[i], c2[i]) : f(...cols.map((c) => c[i]));
        if (r !== null && typeof r === 'object' && typeof r.then === 'function') {
          const row = i;
          waiting++;
          r.then((v) => { out[row] = v; }, (e) => { if (failed === null) failed = [e, row]; });
          continue;
        }
      } catch (e) {
        return failure(e, i);
      }
      out[i] = r;
    }
    // Promise results settle in the microtasks that run when this call returns; settle() reads them.
    if (waiting > 0) {
      pending = () => (failed !== null ? failure(failed[0], failed[1]) : encodeAll(spec.returns, out, n));
      const r = record();
      r.pending = true;
      return r;
    }
    return encodeAll(spec.returns, out, n);
  }

  function settle() {
    const p = pending;
    pending = null;
    return p();
  }

  // Aggregates: each batch folds into fresh partial states, merged into the groups' states
  // (through serialize/deserialize when defined), as the service combines partial aggregates.
  function open() {
    const id = ++nextAccumulator;
    accumulators.set(id, { states: [], consts: null });
    return id;
  }

  function update(id, cols, groups, n, consts) {
    const a = accumulators.get(id), ex = fn;
    if (a.consts === null && consts !== null) a.consts = consts.map((v, j) => dec(spec.consts[j], v));
    decodeColumns(spec.params, cols, n);
    const c = a.consts || [], st = a.states, init = ex.initialState, agg = ex.aggregate, merge = ex.merge, ser = ex.serialize, de = ex.deserialize;
    const k = cols.length, nc = c.length, c0 = cols[0];
    const parts = [], touched = [];
    try {
      for (let i = 0; i < n; i++) {
        const grp = groups[i];
        let s = parts[grp];
        if (s === undefined) { s = parts[grp] = init(...c); touched.push(grp); }
        const r = k === 1 && nc === 0 ? agg(s, c0[i]) : agg(s, ...cols.map((col) => col[i]), ...c);
        if (r !== undefined) parts[grp] = r;
      }
      for (const grp of touched) {
        const p0 = parts[grp], p = ser && de ? de(ser(p0)) : p0;
        let s = st[grp];
        if (s === undefined) s = st[grp] = init(...c);
        const r = merge(s, p, ...c);
        if (r !== undefined) st[grp] = r;
      }
    } catch (e) {
      return failure(e, -1);
    }
    return null;
  }

  function finish(id, numGroups) {
    const a = accumulators.get(id), ex = fn;
    accumulators.delete(id);
    const c = a.consts || [], st = a.states, out = new Arr(numGroups);
    try {
      for (let grp = 0; grp < numGroups; grp++) out[grp] = ex.finalize(st[grp] === undefined ? ex.initialState(...c) : st[grp], ...c);
      return encodeAll(spec.returns, out, numGroups);
    } catch (e) {
      return failure(e, -1);
    }
  }

  // Aggregates: the required functions the body did not define.
  const missing = (names) => {
    const m = list(0);
    for (let i = 0; i < names.length; i++) if (fn === null || typeof fn !== 'object' || typeof fn[names[i]] !== 'function') m[m.length] = names[i];
    return m;
  };

  const ops = { load, call, settle, open, update, finish, missing };
  return (op, a, b, c, d, e) => {
    try {
      return ops[op](a, b, c, d, e);
    } catch (err) {
      return failure(err, -1);
    }
  };
})()`;
