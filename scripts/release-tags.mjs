#!/usr/bin/env node
// Image tags of a release (spec §1.4.2): the exact `vX.Y.Z` (immutable), `vX.Y`
// (moves on patch releases), `vX` (moves on minor and patch releases) and
// `latest` (the newest non-pre-release). A floating tag moves only when this
// version is the newest release it covers, so a patch of an old line does not
// pull `latest` (or `v1`) back. A pre-release (`vX.Y.Z-rc.1`) gets only its exact tag.
//   node scripts/release-tags.mjs v1.4.2                 # tags, one a line (released versions: `git tag -l 'v*'`)
//   node scripts/release-tags.mjs v1.4.2 --released "v1.4.1 v2.0.0"
//   node scripts/release-tags.mjs v1.4.2 --push registry.example/warehouse-emulator
// --push builds the linux/amd64 image once and pushes it under every tag (needs a Docker engine with buildx).
import { execFileSync } from 'node:child_process';

const VERSION = /^v(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

function parse(v) {
  const m = VERSION.exec(v);
  return m ? { major: +m[1], minor: +m[2], patch: +m[3], pre: m[4] } : undefined;
}

const newer = (a, b) => a.major - b.major || a.minor - b.minor || a.patch - b.patch;

/** Tags for `version` given the versions released so far (its own tag may be among them). */
export function tagsFor(version, released) {
  const v = parse(version);
  if (!v) throw new Error(`not a release version: ${version} (expected vX.Y.Z or vX.Y.Z-pre)`);
  if (v.pre) return [version];
  const finals = released.map(parse).filter((r) => r && !r.pre);
  const newestOf = (same) => finals.filter(same).every((r) => newer(v, r) >= 0);
  const tags = [version];
  if (newestOf((r) => r.major === v.major && r.minor === v.minor)) tags.push(`v${v.major}.${v.minor}`);
  if (newestOf((r) => r.major === v.major)) tags.push(`v${v.major}`);
  if (newestOf(() => true)) tags.push('latest');
  return tags;
}

function main(argv) {
  const version = argv[0];
  const opt = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] ?? '' : undefined;
  };
  const releasedArg = opt('--released');
  const released = (releasedArg ?? execFileSync('git', ['tag', '--list', 'v*'], { encoding: 'utf8' })).split(/\s+/).filter(Boolean);
  const tags = tagsFor(version, released);
  const image = opt('--push');
  if (!image) {
    console.log(tags.join('\n'));
    return;
  }
  const args = ['buildx', 'build', '--platform', 'linux/amd64', '--push', ...tags.flatMap((t) => ['--tag', `${image}:${t}`]), '.'];
  console.error(`docker ${args.join(' ')}`);
  execFileSync('docker', args, { stdio: 'inherit' });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    console.error(`release-tags: ${e.message}`);
    process.exit(1);
  }
}
