#!/bin/sh
# Builds the image, runs it with a named volume, and runs the spec §1.4.5 smoke
# check against it, twice (the second start reuses the volume). Needs a Docker
# engine; .ci/run calls it only where `docker info` answers.
#   scripts/container-smoke.sh [image-tag]
set -eu
cd "$(dirname "$0")/.."
tag="${1:-warehouse-emulator:smoke}"
name="warehouse-emulator-smoke-$$"
volume="$name-data"
port="${SMOKE_PORT:-19050}"

cleanup() {
  docker rm -f "$name" >/dev/null 2>&1 || true
  docker volume rm "$volume" >/dev/null 2>&1 || true
}
trap cleanup EXIT

docker build --platform linux/amd64 --tag "$tag" .
for round in 1 2; do
  docker run --detach --name "$name" --publish "127.0.0.1:$port:9050" --volume "$volume:/var/lib/warehouse-emulator" "$tag" --project-id=smoke >/dev/null
  i=0
  until node scripts/smoke.mjs "http://127.0.0.1:$port" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -ge 60 ]; then
      docker logs "$name"
      echo "container-smoke: not healthy after 60 s (round $round)" >&2
      exit 1
    fi
    sleep 1
  done
  rows=$(node -e "fetch('http://127.0.0.1:$port/bigquery/v2/projects/warehouse-public-data/queries',{method:'POST',body:JSON.stringify({query:'SELECT COUNT(*) FROM samples.cities',useLegacySql:false})}).then(r=>r.json()).then(j=>console.log(j.rows[0].f[0].v))")
  # The bundled samples are seeded once: a restart on the same volume does not append them again.
  [ "$rows" = 6 ] || { echo "container-smoke: samples.cities has $rows rows in round $round, expected 6" >&2; exit 1; }
  docker stop "$name" >/dev/null
  docker rm "$name" >/dev/null
done
echo "container-smoke ok: $tag"
