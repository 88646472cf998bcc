// Resident memory of the gateway and its engine child, from /proc (Linux).
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import type { RssSample } from '../lib/types.js';

/** VmRSS of a process in MB, or null when it is gone or /proc is unavailable. */
export function readRssMB(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

/** Direct children of a process: /proc/<pid>/task/<tid>/children, else `ps --ppid`. */
export function childPids(pid: number): number[] {
  const out = new Set<number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
      for (const p of text.split(/\s+/)) if (p) out.add(Number(p));
    }
  } catch {
    // Kernel without the children file: fall back to ps.
    try {
      const text = execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' });
      for (const p of text.split(/\s+/)) if (p) out.add(Number(p));
    } catch {
      // No children or no ps.
    }
  }
  return [...out];
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** The engine is the gateway's child whose command line names the engine; else its largest child. */
export function findEnginePid(gatewayPid: number): number | null {
  const kids = childPids(gatewayPid);
  if (kids.length === 0) return null;
  const named = kids.find((k) => /engine/i.test(cmdline(k)));
  if (named !== undefined) return named;
  return kids.reduce((best, k) => ((readRssMB(k) ?? 0) > (readRssMB(best) ?? 0) ? k : best), kids[0]!);
}

export function sampleRss(gatewayPid: number | null): RssSample {
  if (gatewayPid === null) return { gatewayMB: null, engineMB: null };
  const engine = findEnginePid(gatewayPid);
  return { gatewayMB: readRssMB(gatewayPid), engineMB: engine === null ? null : readRssMB(engine) };
}
