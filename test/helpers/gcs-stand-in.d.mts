// Types of ./gcs-stand-in.mjs (plain JavaScript so that it also runs as a worker or a script).
import type { Server } from 'node:http';
export function objectFile(root: string, bucket: string, name: string): string;
export function createGcsStandIn(root: string): Server;
