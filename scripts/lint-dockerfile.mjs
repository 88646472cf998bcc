#!/usr/bin/env node
// Dockerfile lint. hadolint is on neither npm nor Debian, so this combines:
//  - dockerfile-utils' validator (the VS Code Docker language service's:
//    instruction syntax, flags, ports, durations, JSON forms, deprecations);
//  - the hadolint rules that matter for this image, checked here (ids as in hadolint):
//    DL3000 absolute WORKDIR, DL3002 last USER not root, DL3003 WORKDIR not `cd`,
//    DL3004 no sudo, DL3006/DL3007 base images tagged and not `latest`,
//    DL3009 apt lists removed in the same RUN, DL3014 `apt-get install -y`,
//    DL3015 --no-install-recommends, DL3020 COPY not ADD, DL3025 JSON form
//    ENTRYPOINT/CMD, DL3027 apt-get not apt, DL4006 pipefail before a pipe,
//    and spec §1.4.1: the final stage EXPOSEs 9050;
//  - shellcheck (Debian's package) on the entrypoint script, as hadolint would on RUN.
//   node scripts/lint-dockerfile.mjs [Dockerfile] [entrypoint.sh]
// Prints `file:line: rule message` per finding; exit 1 if any.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { validate } from 'dockerfile-utils';

const file = process.argv[2] ?? 'Dockerfile';
const entrypoint = process.argv[3] ?? 'docker/entrypoint.sh';
const text = readFileSync(file, 'utf8');
const findings = [];
const report = (line, rule, message) => findings.push(`${file}:${line}: ${rule} ${message}`);

for (const d of validate(text)) report(d.range.start.line + 1, d.severity === 1 ? 'error' : 'warning', d.message);

/** Instructions with continuation lines joined: { line, keyword, args }. */
function instructions(src) {
  const out = [];
  let buf = '';
  let start = 0;
  src.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (!buf && /^\s*(#|$)/.test(line)) return;
    if (buf && /^\s*#/.test(line)) return; // comment inside a continued instruction
    if (!buf) start = i + 1;
    buf += (buf ? ' ' : '') + line.trim();
    if (buf.endsWith('\\')) buf = buf.slice(0, -1).trimEnd();
    else {
      const m = /^(\S+)\s*(.*)$/.exec(buf);
      out.push({ line: start, keyword: m[1].toUpperCase(), args: m[2] });
      buf = '';
    }
  });
  return out;
}

const all = instructions(text);
const stages = [];
for (const ins of all) {
  if (ins.keyword === 'FROM') stages.push({ from: ins, body: [] });
  else stages.at(-1)?.body.push(ins);
}
const stageNames = new Set(stages.map((s) => /\sAS\s+(\S+)/i.exec(s.from.args)?.[1]?.toLowerCase()).filter(Boolean));
let pipefail = false;

for (const [si, stage] of stages.entries()) {
  const image = stage.from.args.replace(/--\S+\s*/g, '').split(/\s+/)[0];
  if (!stageNames.has(image.toLowerCase()) && image !== 'scratch') {
    if (!image.includes('@') && !/:[^/]+$/.test(image)) report(stage.from.line, 'DL3006', `always tag the version of an image explicitly (${image})`);
    if (/:latest$/.test(image)) report(stage.from.line, 'DL3007', `using latest is prone to errors; pin a version (${image})`);
  }
  let workdir = false;
  let user;
  for (const ins of stage.body) {
    const { line, keyword, args } = ins;
    if (keyword === 'SHELL' && /pipefail/.test(args)) pipefail = true;
    if (keyword === 'WORKDIR') {
      workdir = true;
      if (!args.startsWith('/') && !args.startsWith('$')) report(line, 'DL3000', 'use absolute WORKDIR');
    }
    if (keyword === 'USER') user = args.trim();
    if (keyword === 'ADD' && !/https?:\/\/|\.tar(\.\w+)?\b/.test(args)) report(line, 'DL3020', 'use COPY instead of ADD for files and folders');
    if ((keyword === 'ENTRYPOINT' || keyword === 'CMD') && !args.trim().startsWith('[')) report(line, 'DL3025', `use arguments JSON notation for ${keyword}`);
    if (keyword === 'COPY') {
      const dest = args.split(/\s+/).filter((a) => !a.startsWith('--')).at(-1) ?? '';
      if (!workdir && !dest.startsWith('/') && !dest.startsWith('$')) report(line, 'DL3045', 'COPY to a relative destination without WORKDIR set');
    }
    if (keyword !== 'RUN') continue;
    const cmds = args.split(/&&|;|\|\|/).map((c) => c.trim());
    if (cmds.some((c) => /^cd\s/.test(c))) report(line, 'DL3003', 'use WORKDIR to switch to a directory');
    if (/(^|\s)sudo\s/.test(args)) report(line, 'DL3004', 'do not use sudo');
    if (cmds.some((c) => /^apt\s/.test(c))) report(line, 'DL3027', 'do not use apt, use apt-get or apt-cache');
    const install = cmds.find((c) => /^apt-get\s+(\S+\s+)*install\b/.test(c));
    if (install) {
      if (!/\s(-y|--yes|-qq|--assume-yes)\b/.test(install)) report(line, 'DL3014', 'use the -y switch to avoid manual input `apt-get -y install <package>`');
      if (!/--no-install-recommends/.test(install)) report(line, 'DL3015', 'avoid additional packages by specifying `--no-install-recommends`');
      if (!/rm\s+-(r|f|rf|fr)+\s+\/var\/lib\/apt\/lists/.test(args)) report(line, 'DL3009', 'delete the apt-get lists after installing something');
    }
    if (/[^|]\|[^|]/.test(args.replace(/'[^']*'|"[^"]*"/g, '')) && !pipefail) report(line, 'DL4006', 'set the SHELL option -o pipefail before RUN with a pipe in it');
  }
  if (si === stages.length - 1) {
    if (user === undefined || user === 'root' || user === '0') report(stage.from.line, 'DL3002', 'the last USER of the final stage should not be root');
    if (!stage.body.some((i) => i.keyword === 'EXPOSE' && /\b9050\b/.test(i.args))) report(stage.from.line, 'spec-1.4.1', 'the final stage must EXPOSE 9050');
  }
}

// shellcheck on the entrypoint (CI installs Debian's shellcheck; elsewhere it is skipped with a note).
try {
  execFileSync('shellcheck', ['--format=gcc', entrypoint], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
} catch (e) {
  if (e.code === 'ENOENT') {
    if (process.env.CI) findings.push(`${entrypoint}: shellcheck is not installed (CI must install it)`);
    else console.error(`note: shellcheck not installed; ${entrypoint} not checked`);
  } else findings.push(...String(e.stdout).trim().split('\n').filter(Boolean));
}

if (findings.length) {
  console.error(findings.join('\n'));
  process.exit(1);
}
console.log(`lint ok: ${file} (${all.length} instructions, ${stages.length} stages), ${entrypoint}`);
