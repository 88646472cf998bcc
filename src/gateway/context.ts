// What every route plugin receives: configuration, the engine client guarded
// by the supervisor's state, the job registry, logging, and family helpers.
import type { GatewayConfig } from './cli.js';
import type { CallOpts, EngineMethod, EngineRpcs, TimestampFormat } from './engine-client.js';
import type { EngineConnection } from './engine-local.js';
import { invalid, unavailable } from './errors.js';
import type { JobRegistry } from './jobs/registry.js';
import type { EngineSupervisor } from './supervisor.js';

/** Name family of a request (naming.md): kinds and TIMESTAMP defaults follow it. */
export type Family = 'warehouse' | 'bigquery';

export const EMULATOR_PRINCIPAL_EMAIL = 'emulator@warehouse-emulator.local';

export interface Principal {
  email: string;
  anonymous: boolean;
  /** The bearer value (scheme stripped) or the verbatim header for other schemes. */
  credential: string | undefined;
}

export class GatewayContext {
  constructor(
    readonly config: GatewayConfig,
    readonly engine: EngineConnection,
    readonly supervisor: EngineSupervisor | undefined,
    readonly jobs: JobRegistry,
    readonly log: (msg: string) => void,
    readonly debug: (msg: string) => void,
  ) {}

  /** Engine call that fails fast with a 503 while the engine is known to be down. */
  call<M extends EngineMethod>(method: M, req: EngineRpcs[M][0], opts?: CallOpts): Promise<EngineRpcs[M][1]> {
    const s = this.supervisor;
    if (s && !s.external && s.state !== 'serving') {
      return Promise.reject(unavailable(`The service is currently unavailable: ${s.downReason}. Retry shortly.`));
    }
    return this.engine.call(method, req, opts);
  }
}

export function kind(family: Family, what: string): string {
  return `${family}#${what}`;
}

/** TIMESTAMP cell form: int64 micros when asked, else the family default of naming.md. */
export function timestampFormat(family: Family, useInt64: unknown, outputFormat?: unknown): TimestampFormat {
  const int64 = useInt64 === true || useInt64 === 'true';
  // Newer clients send formatOptions.timestampOutputFormat instead of the boolean; the service refuses both
  // at once unless they agree (INT64) or the format is left unspecified.
  if (int64 && (outputFormat === 'FLOAT64' || outputFormat === 'ISO8601_STRING')) throw invalid('Cannot specify both use_int64_timestamp and timestamp_output_format.');
  if (outputFormat === 'INT64') return 'TIMESTAMP_INT64_MICROS';
  if (outputFormat === 'ISO8601_STRING') return 'TIMESTAMP_RFC3339';
  if (outputFormat === 'FLOAT64') return 'TIMESTAMP_FLOAT_SECONDS';
  if (int64) return 'TIMESTAMP_INT64_MICROS';
  return family === 'bigquery' ? 'TIMESTAMP_FLOAT_SECONDS' : 'TIMESTAMP_RFC3339';
}
